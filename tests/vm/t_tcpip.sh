#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# magnet_tcpip.ko (extended TCP and IP data, the papers' magnet_tcp and
# magnet_ip) in a real kernel: a TCP sender in one namespace writes 50 x
# 10 KB to a sink in another.  tcp_state (received segments) and
# tcp_state_tx (sent packets) must carry the connection's ports, a
# congestion window, an RTT once measured, the RTO, growing sequence
# numbers and the segments' flags; ip_hdr_send / ip_hdr_recv the IPv4
# header fields, and with hdr_bytes=40 the first 40 bytes of each packet.
# The module is unloaded and loaded while a reader records.
MAGNET_MODULES="magnet"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
need_magnet
need_tools
dmesg_mark
netns_setup || bail_out "network namespaces"
magnet_load || bail_out "cannot load the modules"
R=$MAGNET_RESULTS
EVENTS="tcp_state tcp_state_tx ip_hdr_send ip_hdr_recv"

insmod "$MAGNET_MODDIR/magnet_tcpip.ko" hdr_bytes=65 >/dev/null 2>&1
check_eq "hdr_bytes=65 is refused" 1 $?
check "insmod magnet_tcpip hdr_bytes=40" insmod "$MAGNET_MODDIR/magnet_tcpip.ko" hdr_bytes=40
on_exit "rmmod magnet_tcpip 2>/dev/null"

check "stream create tcpip (1 MiB x 4)" magnetctl stream create tcpip subbuf-size 1M subbuf-count 4
# shellcheck disable=SC2086
check "enable the TCP/IP probes" magnetctl probe enable $EVENTS stream tcpip
bg rec "$MAGNETCTL" record tcpip -o "$R/tcpip.trace"
sleep 0.5
tcp_sink_start sink 5001 || bail_out "tcp_sink did not start"
check "TCP sender: 50 writes of 10240 bytes" tcp_send tcp 50
bg_wait sink 10
sleep 0.3
# shellcheck disable=SC2086
check "disable the probes" magnetctl probe disable $EVENTS
kill -INT "${BG_PID[rec]}"
bg_wait rec 20
check_eq "record stops cleanly" 0 $?

magnetctl -j dump "$R/tcpip.trace" >"$R/tcpip.jsonl"
python3 - "$R/tcpip.jsonl" "$(kv "$(out tcp)" ino)" "$(kv "$(out sink)" ino)" \
	"$(kv "$(out tcp)" retrans_bytes)" >"$R/check.tap" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
sino, rino = int(sys.argv[2] or 0), int(sys.argv[3] or 0)
# data the kernel sent twice (a tail loss probe on a slow host): in the trace too
rb = int(sys.argv[4] or 0)
out = []
def ok(cond, what, why=""):
    out.append(("ok" if cond else "not ok") + " - " + what + ("" if cond else " # " + why))
def ev(n): return [r for r in recs if r["name"] == n]
# every check below that names a socket needs its inode: 0 matches nothing
ok(sino > 0 and rino > 0, "the sender and the receiver printed their sockets' inodes",
   "sender %d, receiver %d" % (sino, rino))
lost = sum(r["lost"]["count"] for r in recs if r["name"] == "LOST")
ok(lost == 0, "no events lost", "lost=%d" % lost)
tx = [r for r in ev("tcp_state_tx") if r["abstract_id"] == sino]
ok(len(tx) >= 50, "tcp_state_tx: packets of the sender's socket (%d)" % len(tx))
ok(all(r["tcp"]["dport"] == 5001 and r["tcp"]["family"] == 2 and r["tcp"]["snd_cwnd"] > 0 and r["tcp"]["mss_cache"] > 0
       and r["tcp"]["rto_us"] >= 200000 for r in tx), "ports, family, cwnd, MSS and RTO (>= 200 ms)", str(tx[:1]))
ok(tx and tx[0]["tcp"]["tcp_flags"] & 0x02, "the first is the SYN", str(tx[:1]))
data = [r for r in tx if r["tcp"]["len"] > 0]
ok(sum(r["tcp"]["len"] for r in data) == 512000 + rb,
   "data bytes sent = 50 x 10240 + %d retransmitted (tcp_info)" % rb, str(sum(r["tcp"]["len"] for r in data)))
ok(any(r["tcp"]["srtt_us"] > 0 for r in data), "an RTT is measured")
seq = [r["tcp"]["write_seq"] for r in data]
ok(all(a <= b for a, b in zip(seq, seq[1:])) or any(b < a and a - b > 1 << 31 for a, b in zip(seq, seq[1:])),
   "write_seq never goes back")
ok(all(r["tcp"]["state"] == 1 and r["tcp"]["snd_una"] == r["tcp"]["snd_nxt"] or r["tcp"]["packets_out"] > 0 for r in data),
   "state established; unacknowledged data only with packets in flight")
rx = [r for r in ev("tcp_state") if r["tcp"]["sport"] == 5001]
ok(512000 <= sum(r["tcp"]["len"] for r in rx) <= 512000 + rb,
   "tcp_state at the receiver: 512000 bytes (+ duplicates of the %d retransmitted) in %d segments" % (rb, len(rx)),
   str(sum(r["tcp"]["len"] for r in rx)))
ok(all(r["tcp"]["sport"] == 5001 and r["tcp"]["rcv_wnd"] > 0 and r["tcp"]["tcp_flags"] & 0x10 for r in rx),
   "receiver side: local port 5001, a receive window, ACK flag")
ok(any(r["abstract_id"] == rino for r in rx), "the receiver's segments carry its socket once accepted")
ipt = [r for r in ev("ip_hdr_send") if r["ip"]["protocol"] == 6]
ipr = [r for r in ev("ip_hdr_recv") if r["ip"]["protocol"] == 6]
ok(len(ipt) >= 100 and len(ipr) >= 100, "IPv4 TCP packets sent (%d) and received (%d)" % (len(ipt), len(ipr)))
ok(all(r["ip"]["version"] == 4 and r["ip"]["ihl"] == 5 and r["ip"]["ttl"] == 64 and r["ip"]["frag_flags"] == 2
       and r["ip"]["frag_off"] == 0 and r["ip"]["tot_len"] <= 1500 for r in ipt + ipr),
   "version 4, 20-byte header, TTL 64, DF, no fragments, at most the MTU", str((ipt + ipr)[:1]))
ok(all(r["ip"]["hdr_len"] == 40 and r["ip"]["bytes"].startswith("45") and len(r["ip"]["bytes"]) == 80 and
       int(r["ip"]["bytes"][4:8], 16) == r["ip"]["tot_len"] and int(r["ip"]["bytes"][8:12], 16) == r["ip"]["id"]
       for r in ipt + ipr), "40 header bytes recorded, matching the decoded fields")
ok(all(r["ip"]["flags"] == 1 for r in ipt) and all(r["ip"]["flags"] == 2 for r in ipr), "direction flags")
ok(all(r["abstract_id"] in (0, sino, rino) for r in ipt) and any(r["abstract_id"] == sino for r in ipt),
   "sent packets carry their local socket (sender's data, receiver's ACKs)")
print("# tcp_state_tx %d, tcp_state %d, ip_hdr_send %d, ip_hdr_recv %d" % (len(tx), len(rx), len(ipt), len(ipr)))
# ip_hdr_recv: the socket the packet still belongs to when the device
# delivers it, which over the veth pair is its local sender (veth keeps the
# skb's owner into the peer namespace, docs/PROBES.md): each received packet
# carries the ID its ip_hdr_send carried (the 40 header bytes name the
# packet); the sink's data the sender's socket, the ACKs the receiver's (0
# before accept() gave the connection a socket: the listener's SYN-ACK)
sent = {}
for r in ipt:
    sent.setdefault(r["ip"]["bytes"], set()).add(r["abstract_id"])
unmatched = [r for r in ipr if sent.get(r["ip"]["bytes"]) != {r["abstract_id"]}]
ok(not unmatched, "ip_hdr_recv: each of the %d packets carries the ID its ip_hdr_send carried" % len(ipr),
   "%d differ, e.g. %s" % (len(unmatched), unmatched[:1]))
port = lambda r, i: int(r["ip"]["bytes"][40 + 4 * i:44 + 4 * i], 16)
to_sink = [r for r in ipr if port(r, 1) == 5001]
to_sender = [r for r in ipr if port(r, 0) == 5001]
ok(len(to_sink) >= 50 and all(r["abstract_id"] == sino for r in to_sink),
   "ip_hdr_recv at the receiver: its %d packets carry the sending socket %d" % (len(to_sink), sino),
   str(sorted({r["abstract_id"] for r in to_sink})))
first = min([r["timestamp"] for r in to_sender if r["abstract_id"] == rino] or [0])
ok(sum(r["abstract_id"] == rino for r in to_sender) >= 10
   and all(r["abstract_id"] == rino or r["abstract_id"] == 0 and r["timestamp"] < first for r in to_sender),
   "ip_hdr_recv at the sender: its %d packets carry the receiver's socket %d (0 before accept() gave it one)"
   % (len(to_sender), rino), str(sorted((r["abstract_id"], r["timestamp"] - first) for r in to_sender if r["abstract_id"] != rino)))
print("\n".join(out))
PY
tap_import "$R/check.tap" $?

# unload/load while recording with the hooks attached
check "enable again" magnetctl probe enable tcp_state_tx ip_hdr_send stream tcpip
bg rec2 "$MAGNETCTL" record tcpip -o "$R/tcpip2.trace"
sleep 0.3
tcp_sink_start sink2 5001 || bail_out "tcp_sink did not start"
check "TCP sender during the reload" tcp_send tcp2 10
check "rmmod magnet_tcpip while recording" rmmod magnet_tcpip
check "insmod magnet_tcpip again" insmod "$MAGNET_MODDIR/magnet_tcpip.ko"
bg_wait sink2 10
kill -INT "${BG_PID[rec2]}"
bg_wait rec2 20
check_eq "the reader ends cleanly" 0 $?
check "stream delete tcpip" magnetctl stream delete tcpip
check "rmmod magnet_tcpip" rmmod magnet_tcpip
check "modules unload" magnet_unload
check_dmesg_clean
done_testing
