#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# IPv6 at every layer (docs/PROBES.md): the test network gets IPv6
# addresses too (fd00:77::1 in mgA, fd00:77::2 in mgB, static neighbours,
# no router solicitation, no DAD) and the ten network events are recorded
# while 200 UDP datagrams of 500 bytes and 20 TCP writes of 10240 bytes
# go over IPv6.  For each flow, each layer's events carry the right
# socket's ID (send side: the sender's; receive side, device and IP layers
# included: the receiver's) with the sizes of IPv6: 500 at the socket and
# UDP layers, 548 at IP (40-byte header), 562 at the device, EtherType
# 0x86dd at IP and device; TCP's bytes add up to 204800 at both sockets.
# The probe list names both functions of each hook that has an IPv6 twin.
# magnet_tcpip.ko: ip_hdr_send/ip_hdr_recv decode the IPv6 header (version
# 6, hop limit, next header, length, the addresses in the packet bytes),
# tcp_state/tcp_state_tx carry family 10.  magnetctl convert --to pcapng
# turns the IPv6 packets into a pcapng file that tshark decodes.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
need_magnet
need_tools
dmesg_mark

[ -d /proc/sys/net/ipv6 ] || skip_all "the kernel has no IPv6"
netns_setup || bail_out "network namespaces"
IP6_A=fd00:77::1
IP6_B=fd00:77::2
for ns in "$NS_A:$VETH_A:$IP6_A" "$NS_B:$VETH_B:$IP6_B"; do
	IFS=: read -r n dev _ <<<"$ns"
	addr=${ns#*:*:}
	ip netns exec "$n" sysctl -qw "net.ipv6.conf.$dev.disable_ipv6=0" \
		"net.ipv6.conf.$dev.accept_ra=0" "net.ipv6.conf.$dev.router_solicitations=0" \
		"net.ipv6.conf.$dev.accept_dad=0" || bail_out "IPv6 sysctls in $n"
	ip -n "$n" -6 addr add "$addr/64" dev "$dev" nodad || bail_out "address $addr"
done
mac_a=$(ip -n "$NS_A" -br link show "$VETH_A" | awk '{print $3}')
mac_b=$(ip -n "$NS_B" -br link show "$VETH_B" | awk '{print $3}')
ip -n "$NS_A" -6 neigh replace "$IP6_B" lladdr "$mac_b" dev "$VETH_A" nud permanent
ip -n "$NS_B" -6 neigh replace "$IP6_A" lladdr "$mac_a" dev "$VETH_B" nud permanent

magnet_load || bail_out "cannot load the modules"
R=$MAGNET_RESULTS
NET_EVENTS="sock_send sock_recv tcp_send udp_send tcp_recv udp_recv ip_send ip_recv dev_send dev_recv"
TCPIP_EVENTS="tcp_state tcp_state_tx ip_hdr_send ip_hdr_recv"
FAIL_EVENTS="sock_send_fail udp_send_fail"
check "insmod magnet_tcpip hdr_bytes=40" insmod "$MAGNET_MODDIR/magnet_tcpip.ko" hdr_bytes=40
on_exit "rmmod magnet_tcpip 2>/dev/null"

hooks=$(magnetctl -j probe list | python3 -c '
import json, sys
ps = json.load(sys.stdin)
ps = ps["probes"] if isinstance(ps, dict) else ps
h = {p["name"]: p["hook"] for p in ps if p.get("module") == "magnet_net"}
print(" ".join(h[e] for e in ("udp_send", "tcp_recv", "ip_send", "ip_recv", "udp_send_fail")))')
check_eq "hooks with an IPv6 twin name both functions" \
	"ftrace:udp_sendmsg+udpv6_sendmsg ftrace:tcp_v4_do_rcv+tcp_v6_do_rcv ftrace:ip_output+ip6_output ftrace:ip_rcv+ipv6_rcv kretprobe:udp_sendmsg+udpv6_sendmsg" \
	"$hooks"

check "stream create net (1 MiB x 4)" magnetctl stream create net subbuf-size 1M subbuf-count 4
check "stream create tcpip (1 MiB x 4)" magnetctl stream create tcpip subbuf-size 1M subbuf-count 4
# shellcheck disable=SC2086
check "enable the network probes into net" magnetctl probe enable $NET_EVENTS $FAIL_EVENTS stream net
# shellcheck disable=SC2086
check "enable the TCP/IP probes into tcpip" magnetctl probe enable $TCPIP_EVENTS stream tcpip
bg rec "$MAGNETCTL" record net -o "$R/net.trace"
bg rectcpip "$MAGNETCTL" record tcpip -o "$R/tcpip.trace"
sleep 1

# receivers in mgB print their socket's inode, then what they read
bg usink in_b python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.bind(("::", 5102))
print("ino=%d" % os.fstat(s.fileno()).st_ino, flush=True)
s.settimeout(20)
n = b = 0
while n < 200:
    d = s.recv(2000)
    n += 1
    b += len(d)
print("datagrams=%d bytes=%d" % (n, b), flush=True)'
bg tsink in_b python3 -c '
import os, socket
l = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("::", 5101))
l.listen(1)
print("listening", flush=True)
c, _ = l.accept()
print("ino=%d" % os.fstat(c.fileno()).st_ino, flush=True)
b = 0
while True:
    d = c.recv(65536)
    if not d:
        break
    b += len(d)
print("bytes=%d" % b, flush=True)'
wait_line "$(out usink)" '^ino=' 10 || bail_out "UDP receiver"
wait_line "$(out tsink)" '^listening' 10 || bail_out "TCP receiver"
in_a python3 - "$IP6_B" >"$(out send)" 2>&1 <<'PY'
import errno, os, socket, sys, time
u = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
u.connect((sys.argv[1], 5102))
print("uino=%d" % os.fstat(u.fileno()).st_ino)
for _ in range(200):
    u.send(b"u" * 500)
    time.sleep(0.001)
f = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
f.connect((sys.argv[1], 5102))
print("fino=%d" % os.fstat(f.fileno()).st_ino)
try:
    f.send(b"f" * 70000)
    print("ferr=none")
except OSError as e:
    print("ferr=%s" % errno.errorcode[e.errno])
t = socket.create_connection((sys.argv[1], 5101))
print("tino=%d" % os.fstat(t.fileno()).st_ino)
for _ in range(20):
    t.sendall(b"t" * 10240)
    time.sleep(0.02)
t.close()
print("done")
PY
check_eq "the IPv6 sender finished" done "$(tail -n 1 "$(out send)")"
check_eq "an oversized IPv6 datagram fails" EMSGSIZE "$(kv "$(out send)" ferr)"
bg_wait usink 30
check_eq "the UDP receiver read 200 datagrams of 500 bytes" "200 100000" \
	"$(kv "$(out usink)" datagrams) $(kv "$(out usink)" bytes)"
bg_wait tsink 30
check_eq "the TCP receiver read 204800 bytes" 204800 "$(kv "$(out tsink)" bytes)"
sleep 0.3
# shellcheck disable=SC2086
check "disable the probes" magnetctl probe disable $NET_EVENTS $TCPIP_EVENTS $FAIL_EVENTS
kill -INT "${BG_PID[rec]}" "${BG_PID[rectcpip]}"
bg_wait rec 30
check_eq "record stops cleanly" 0 $?
bg_wait rectcpip 30
check_eq "record of tcpip stops cleanly" 0 $?
check "trace: format, order, accounting" check_trace "$R/net.trace" --stream net

magnetctl -j dump "$R/net.trace" "$R/tcpip.trace" >"$R/net.jsonl"
python3 - "$R/net.jsonl" "$(kv "$(out send)" uino)" "$(kv "$(out usink)" ino)" \
	"$(kv "$(out send)" tino)" "$(kv "$(out tsink)" ino)" "$(kv "$(out send)" fino)" \
	>"$R/v6.tap" <<'PY'
import json, sys
from collections import defaultdict
path, us, ur, ts, tr, fs = sys.argv[1], *map(int, sys.argv[2:])
ev = defaultdict(list)          # (name, id) -> [net payload]
tcpip = defaultdict(list)       # name -> [records]
for line in open(path):
    r = json.loads(line)
    if "net" in r:
        ev[(r["name"], r["abstract_id"])].append(r["net"])
    elif r.get("name") in ("tcp_state", "tcp_state_tx", "ip_hdr_send", "ip_hdr_recv"):
        tcpip[r["name"]].append(r)
out = []
def ok(cond, what, why=""):
    out.append(("ok" if cond else "not ok") + " - " + what + ("" if cond else " # " + str(why)[:300]))
def lens(name, sid):
    return sorted({n["len"] for n in ev[(name, sid)]})
# UDP: every layer, 200 each, IPv6 sizes
for name, sid, want, proto in (("sock_send", us, 500, 17), ("udp_send", us, 500, 17),
                               ("ip_send", us, 548, 0x86dd), ("dev_send", us, 562, 0x86dd),
                               ("dev_recv", ur, 548, 0x86dd), ("ip_recv", ur, 548, 0x86dd),
                               ("udp_recv", ur, 500, 17), ("sock_recv", ur, 500, 17)):
    e = ev[(name, sid)]
    good = [n for n in e if n["len"] == want and n["proto"] == proto]
    ok(len(e) == 200 and len(good) == 200,
       "UDP over IPv6: %s carries socket %d for 200 datagrams, len %d, proto 0x%x" % (name, sid, want, proto),
       "%d events, %d right; lens %s protos %s" % (len(e), len(good), lens(name, sid)[:5],
                                                    sorted({n["proto"] for n in e})))
# TCP: bytes at the sockets, segments at every layer of the receiver
tx = sum(n["len"] for n in ev[("sock_send", ts)])
ok(tx == 204800 and len(ev[("tcp_send", ts)]) == 20,
   "TCP over IPv6: 20 tcp_send and 204800 bytes of sock_send on the sender's socket %d" % ts,
   "%d tcp_send, %d bytes" % (len(ev[("tcp_send", ts)]), tx))
rx = sum(n["len"] for n in ev[("sock_recv", tr)])
ok(rx == 204800, "TCP over IPv6: 204800 bytes of sock_recv on the receiver's socket %d" % tr, rx)
for name, sid in (("ip_send", ts), ("dev_send", ts), ("dev_recv", tr), ("ip_recv", tr)):
    e = ev[(name, sid)]
    ok(e and all(n["proto"] == 0x86dd for n in e),
       "TCP over IPv6: %s carries socket %d (%d packets, EtherType 0x86dd)" % (name, sid, len(e)),
       sorted({n["proto"] for n in e}))
d, i = len(ev[("dev_recv", tr)]), len(ev[("ip_recv", tr)])
t = sum(n["gso_segs"] or 1 for n in ev[("tcp_recv", tr)])
ok(d == i and abs(d - t) <= 2,
   "TCP over IPv6: dev_recv and ip_recv see the receiver's segments tcp_recv sees (%d, %d)" % (d, t),
   "dev_recv %d ip_recv %d tcp_recv %d" % (d, i, t))
ok(all(n["len"] <= 1514 for n in ev[("dev_send", ts)]), "TCP over IPv6: dev_send packets wire sized",
   max([n["len"] for n in ev[("dev_send", ts)]] or [0]))
# the oversized datagram's failure at the socket and transport layers
for name in ("sock_send_fail", "udp_send_fail"):
    e = ev[(name, fs)]
    ok([(n["flags"], n["err"], n["len"]) for n in e] == [(1 | 4, -90, 0)],
       "UDP over IPv6: %s records the oversized datagram's -EMSGSIZE on socket %d" % (name, fs),
       e)
# magnet_tcpip.ko: the IPv6 header in the ip payload, both families in tcp
A = bytes.fromhex("fd000077000000000000000000000001")
B = bytes.fromhex("fd000077000000000000000000000002")
for name, src, dst in (("ip_hdr_send", A, B), ("ip_hdr_recv", A, B)):
    u = [r for r in tcpip[name] if r["ip"]["protocol"] == 17 and r["ip"]["version"] == 6]
    good = [r for r in u if r["ip"]["ihl"] == 10 and r["ip"]["tot_len"] == 548 and
            r["ip"]["ttl"] == 64 and r["ip"]["hdr_len"] == 40 and
            bytes.fromhex(r["ip"]["bytes"])[8:24] == src and bytes.fromhex(r["ip"]["bytes"])[24:40] == dst]
    ok(len(u) >= 200 and len(good) == len(u),
       "%s: the 200 UDP datagrams' IPv6 headers (version 6, ihl 10, tot_len 548, hop limit 64, fd00:77::1 -> ::2)" % name,
       "%d records, %d right; first %s" % (len(u), len(good), u[:1]))
tx = [r for r in tcpip["tcp_state_tx"] if r["abstract_id"] == ts]
ok(tx and all(r["tcp"]["family"] == 10 and r["tcp"]["dport"] == 5101 for r in tx),
   "tcp_state_tx: the IPv6 sender's packets, family 10, dport 5101 (%d)" % len(tx), tx[:1])
rx = [r for r in tcpip["tcp_state"] if r["tcp"]["sport"] == 5101]
ok(rx and all(r["tcp"]["family"] == 10 for r in rx),
   "tcp_state: the IPv6 receiver's segments, family 10 (%d)" % len(rx), rx[:1])
print("\n".join(out))
PY
tap_import "$R/v6.tap" $?

# pcapng of IPv6 packets: tshark reads one packet per ip_hdr record (as many
# per event as the dump), and decodes the UDP datagrams' IPv6 headers
if command -v tshark >/dev/null; then
	check "convert --to pcapng of the IPv6 packets" \
		magnetctl convert --to pcapng -o "$R/v6.pcapng" "$R/tcpip.trace"
	tshark -r "$R/v6.pcapng" -T fields -E separator=/t -e ipv6.src -e ipv6.dst \
		-e ipv6.nxt -e ipv6.plen -e ipv6.hlim -e frame.comment \
		>"$R/v6.tshark" 2>"$R/v6.tshark.err"
	check_eq "tshark reads it" 0 $?
	for ev in ip_hdr_send ip_hdr_recv; do
		nd=$(dump_count "$R/tcpip.trace" "$ev")
		nt=$(awk -F'\t' -v e="$ev" 'index($6, e " ") == 1' "$R/v6.tshark" | wc -l)
		check_eq "pcapng: one packet per $ev record ($nd)" "$nd" "$nt"
		# hdr_bytes=40: the IPv6 header alone (UDP's is not captured)
		nu=$(awk -F'\t' -v e="$ev" 'index($6, e " ") == 1 && $1 == "fd00:77::1" &&
			$2 == "fd00:77::2" && $3 == 17 && $4 == 508 && $5 == 64' \
			"$R/v6.tshark" | wc -l)
		check "pcapng: tshark decodes the 200 UDP datagrams' IPv6 headers in $ev ($nu)" \
			test "$nu" -ge 200
	done
else
	skip "convert --to pcapng of the IPv6 packets" "no tshark"
fi

check "stream delete net" magnetctl stream delete net
check "stream delete tcpip" magnetctl stream delete tcpip
check "rmmod magnet_tcpip" rmmod magnet_tcpip
check "modules unload" magnet_unload
check_dmesg_clean
done_testing
