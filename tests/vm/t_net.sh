#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# MAGNET end to end in a real kernel: load the modules, enable the ten
# network probes into a stream, record while a TCP sender writes 10 KB
# every 20 ms (the FTP example of the papers) and a UDP flood runs between
# two namespaces, then check the trace with the independent decoder:
# SYSINFO first, 10240-byte writes at the socket layer, wire-sized packets
# at IP and device, the sender's pid, per-CPU time order, no kernel
# addresses, and produced = read + lost exactly; the receive path's events
# carry the receiving socket's ID at every layer; failed socket and transport calls are
# recorded with their negated errnos; every send-side event of 200 timed
# sendto() calls is stamped between the call's two CLOCK_MONOTONIC
# readings (docs/FORMAT.md "Clocks").  A second, tiny stream
# with no reader forces losses and checks that they are all reported.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
need_magnet
need_tools
dmesg_mark

netns_setup || bail_out "network namespaces"
magnet_load || bail_out "cannot load the modules"

R=$MAGNET_RESULTS
NET_EVENTS="sock_send sock_recv tcp_send udp_send tcp_recv udp_recv ip_send ip_recv dev_send dev_recv"
# opt-in: failed sends at the socket and transport layers (return hooks)
FAIL_EVENTS="sock_send_fail tcp_send_fail udp_send_fail"

# probe list: the thirteen events, IDs in the probe range, all unique
n=$(magnetctl -j probe list | python3 -c '
import json, sys
ps = json.load(sys.stdin)
ps = ps["probes"] if isinstance(ps, dict) else ps
ids = [p["id"] for p in ps]
assert len(ids) == len(set(ids)) and all(16 <= i <= 1023 for i in ids), ids
print(len([p for p in ps if p.get("module") == "magnet_net"]))')
check_eq "magnet_net registers 13 probes with unique event IDs" 13 "$n"

check "stream create net (1 MiB x 4)" magnetctl stream create net subbuf-size 1M subbuf-count 4
# shellcheck disable=SC2086
check "enable the network probes into net" magnetctl probe enable $NET_EVENTS stream net
# shellcheck disable=SC2086
check "enable the failed-send probes into net" magnetctl probe enable $FAIL_EVENTS stream net

bg rec "$MAGNETCTL" record net -o "$R/net.trace"
sleep 1

tcp_sink_start sink 5001 || bail_out "tcp_sink did not start"
check "TCP sender: 50 writes of 10240 bytes every 20 ms" tcp_send tcp 50
pid=$(kv "$(out tcp)" pid)
ino=$(kv "$(out tcp)" ino)
bg_wait sink 10
udp_sink_start usink 5002 || bail_out "udp_sink did not start"
check "UDP flood: 2000 datagrams of 1000 bytes" udp_send udp 2000 1000
bg_wait usink 10
# failed calls: an oversized datagram (EMSGSIZE), a send after the peer's
# port said unreachable (ECONNREFUSED), a non-blocking read of nothing
# (EAGAIN), a TCP send after shutdown(SHUT_WR) (EPIPE); the errnos as the
# application saw them
in_a python3 - "$IP_B" >"$(out fail)" 2>&1 <<'PY'
import errno, os, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect((sys.argv[1], 5999))
print("ino=%d" % os.fstat(s.fileno()).st_ino)
errs = []
l = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
l.bind(("127.0.0.1", 0))
l.listen(1)
print("lino=%d" % os.fstat(l.fileno()).st_ino)
t = socket.create_connection(l.getsockname())
print("tino=%d" % os.fstat(t.fileno()).st_ino)
t.send(b"y")
t.shutdown(socket.SHUT_WR)
try:
    t.send(b"y", socket.MSG_NOSIGNAL)
except OSError as e:
    errs.append(errno.errorcode[e.errno])
for data in (b"x" * 70000, b"x", None, b"x"):
    try:
        if data is None:
            time.sleep(0.5)     # the ICMP port unreachable arrives
        else:
            s.send(data)
    except OSError as e:
        errs.append(errno.errorcode[e.errno])
s.setblocking(False)
try:
    s.recv(100)
except OSError as e:
    errs.append(errno.errorcode[e.errno])
print("errs=" + ",".join(errs))
PY
check_eq "failing calls fail as expected" "EPIPE,EMSGSIZE,ECONNREFUSED,EAGAIN" "$(kv "$(out fail)" errs)"
# the clock: 200 datagrams, each sendto() between two clock_gettime
# (CLOCK_MONOTONIC) readings; every event of the call is stamped between
# them (docs/FORMAT.md "Clocks": on a trusted TSC, the kernel's clock
# extrapolated from it)
in_a python3 - "$IP_B" >"$R/clock.sends" 2>&1 <<'PY'
import os, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
print("ino=%d" % os.fstat(s.fileno()).st_ino)
for i in range(200):
    t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    s.sendto(b"c" * 100, (sys.argv[1], 5997))
    t1 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    print(t0, t1)
PY

# stop the producers before taking the final counts
# shellcheck disable=SC2086
check "disable the probes" magnetctl probe disable $NET_EVENTS $FAIL_EVENTS
kill -INT "${BG_PID[rec]}"
bg_wait rec 20
check_eq "record stops cleanly on SIGINT" 0 $?
stats=$(magnetctl -j stream show net)
echo "$stats" >"$R/net.stats.json"
produced=$(python3 -c 'import json,sys; d=json.load(sys.stdin); d=d.get("stream",d); print(d["produced"])' <<<"$stats")
lost=$(python3 -c 'import json,sys; d=json.load(sys.stdin); d=d.get("stream",d); print(d["lost"])' <<<"$stats")
diag "stream net: produced=$produced lost=$lost sender pid=$pid ino=$ino"

check "trace: format, order, pid, 10 KB writes, MTU, accounting" \
	check_trace "$R/net.trace" --stream net --release "$(uname -r)" \
	--expect-pid "$pid" --ino "$ino" --proto tcp --send-len 10240 \
	--send-count 50 --mtu 1500 --expect-produced "$produced" \
	--expect-lost "$lost" $(for e in $NET_EVENTS; do echo --require "$e"; done)
check_trace "$R/net.trace" --summary >"$R/net.summary" 2>&1
diag "$(cat "$R/net.summary")"

# --- the receive path carries the receiving socket's ID at every layer ---
# dev_recv and ip_recv look the socket up (probes/rx_sock.c): for the UDP
# sink's socket, each layer sees the same datagrams; for the TCP sink's
# connection, the device and IP layers see the segments the transport
# layer does (tcp_recv's coalesced backlog skbs counted by gso_segs; at
# most two apart: a segment that arrives while accept() attaches the
# socket, one the stack takes without tcp_v4_do_rcv); every other non-zero receive-side ID is one of the test's
# sockets.
uino=$(kv "$(out usink)" ino)
urcv=$(kv "$(out usink)" datagrams)
tino=$(kv "$(out sink)" ino)
magnetctl -j dump "$R/net.trace" >"$R/net.jsonl"
python3 - "$R/net.jsonl" "$uino" "$urcv" "$tino" "$ino" "$(kv "$(out fail)" tino)" \
	"$(kv "$(out fail)" lino)" "$(kv "$(out usink)" pid)" "$(kv "$(out sink)" pid)" "$pid" \
	"$(kv "$(out udp)" pid)" >"$R/rx.tap" <<'PY'
import json, sys
from collections import Counter
path, uino, urcv, tino, sino = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
# the failed-call test's TCP connection over lo: its socket and listener
lo_ids = {int(sys.argv[6]), int(sys.argv[7])}
# the processes: UDP sink, TCP sink, TCP sender (the sockets' users), UDP flood
upid, tpid, spid, fpid = (int(a or 0) for a in sys.argv[8:12])
n = Counter()
ids = set()
# per socket: its softirq receive events (time, pid), its first task-context event
irq = {uino: [], tino: [], sino: []}
first = {}
for line in open(path):
    r = json.loads(line)
    a = r.get("abstract_id")
    if a in irq and r.get("name") in ("dev_recv", "ip_recv", "udp_recv"):
        irq[a].append((r["timestamp"], r["pid"]))
    if (a, r.get("name")) in ((uino, "sock_recv"), (tino, "sock_recv"), (sino, "tcp_send")):
        first[a] = min(first.get(a, r["timestamp"]), r["timestamp"])
    if r.get("name") in ("dev_recv", "ip_recv", "udp_recv", "tcp_recv", "sock_recv"):
        # TCP coalesces segments queued to a busy socket's backlog into one
        # skb (tcp_add_backlog) and counts them in gso_segs
        n[(r["name"], r["abstract_id"])] += (r["net"]["gso_segs"] or 1) if r["name"] == "tcp_recv" else 1
        if r["name"] in ("dev_recv", "ip_recv") and r["abstract_id"]:
            ids.add(r["abstract_id"])
out = []
def ok(cond, what, why=""):
    out.append(("ok" if cond else "not ok") + " - " + what + ("" if cond else " # " + why))
u = [n[(e, uino)] for e in ("dev_recv", "ip_recv", "udp_recv")]
ok(u[0] == u[1] == u[2] >= urcv > 0,
   "UDP: dev_recv, ip_recv and udp_recv carry the sink's socket %d for the same datagrams (%d; %d read)" % (uino, u[0], urcv),
   "dev_recv %d ip_recv %d udp_recv %d, read %d" % (u[0], u[1], u[2], urcv))
ok(n[("sock_recv", uino)] == urcv, "UDP: sock_recv %d times for the sink's socket" % urcv, str(n[("sock_recv", uino)]))
t = [n[(e, tino)] for e in ("dev_recv", "ip_recv", "tcp_recv")]
ok(t[0] == t[1] and t[0] > 0 and abs(t[0] - t[2]) <= 2,
   "TCP: dev_recv and ip_recv carry the sink connection's socket %d for the segments tcp_recv sees (%d, %d)" % (tino, t[0], t[2]),
   "dev_recv %d ip_recv %d tcp_recv %d" % tuple(t))
ok(n[("dev_recv", sino)] > 0 and n[("dev_recv", sino)] == n[("ip_recv", sino)],
   "TCP: the sender's socket %d receives its ACKs at dev_recv and ip_recv (%d)" % (sino, n[("dev_recv", sino)]),
   "dev_recv %d ip_recv %d" % (n[("dev_recv", sino)], n[("ip_recv", sino)]))
# the listener gets the SYN; anything else must be one of ours
ok(len(ids - {uino, tino, sino} - lo_ids) <= 1, "no other receive-side socket IDs than the test's (and the listener's)", str(ids))
# dev_recv, ip_recv and udp_recv run in softirq (in_task() false): they name
# the socket's last user, the task of its last event in task context
# (docs/PROBES.md "Which process an event names"), never the interrupted
# task; 0 only before the first such event (1 ms of slack: a record's
# time is taken after its last-user lookup)
for sock, who, pname, fn in ((uino, upid, "UDP sink", "sock_recv"), (tino, tpid, "TCP sink", "sock_recv"),
                             (sino, spid, "TCP sender", "tcp_send")):
    t0 = first.get(sock)
    late = [p for t, p in irq[sock] if t0 is not None and t > t0 + 1000000]
    ok(who > 0 and fpid > 0 and len(late) >= 10 and all(p == who for p in late)
       and all(p in (0, who) for t, p in irq[sock]),
       "%s's socket: its %d softirq receive events after its first %s carry its pid %d (the others 0)"
       % (pname, len(late), fn, who),
       "pids %s (the UDP flood %d)" % (dict(Counter(p for t, p in irq[sock])), fpid))
print("\n".join(out))
PY
tap_import "$R/rx.tap" $?

# every send-side event of the 200 timed sendto() calls lies between its
# call's two CLOCK_MONOTONIC readings (1 us of slack for the clock's
# documented error)
python3 - "$R/net.jsonl" "$R/clock.sends" >"$R/clock.tap" <<'PY'
import json, sys
lines = open(sys.argv[2]).read().split("\n")
ino = int(lines[0].split("=")[1])
calls = [tuple(map(int, l.split())) for l in lines[1:] if l.strip()]
ev = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("name") in ("sock_send", "udp_send", "ip_send", "dev_send") and r["abstract_id"] == ino:
        ev.setdefault(r["name"], []).append(r["timestamp"])
out = []
for name in ("sock_send", "udp_send", "ip_send", "dev_send"):
    ts = sorted(ev.get(name, []))
    bad = [(t, c) for t, c in zip(ts, calls) if not c[0] - 1000 <= t <= c[1] + 1000]
    good = len(ts) == len(calls) and not bad
    gap = sorted(t - c[0] for t, c in zip(ts, calls))
    out.append("%s - %s: all %d timed calls stamped within their CLOCK_MONOTONIC readings (median %d ns after the first)%s"
               % ("ok" if good else "not ok", name, len(calls), gap[len(gap) // 2] if gap else -1,
                  "" if good else " # %d events, outside: %s" % (len(ts), bad[:3])))
print("\n".join(out))
PY
tap_import "$R/clock.tap" $?

# the failed calls are in the trace with their errnos, per event: the
# *_send_fail events (return hooks) and sock_send itself (the send's return:
# 6.12's tracepoint, 6.1's kretprobe) on both kernels; udp_send and tcp_send
# record the bytes asked (entry hooks); sock_recv on both
fino=$(kv "$(out fail)" ino)
tfino=$(kv "$(out fail)" tino)
got=$(python3 - "$R/net.jsonl" "$fino" "$tfino" <<'PY'
import json, sys
ino, tino = int(sys.argv[2]), int(sys.argv[3])
names = ("sock_send", "udp_send", "tcp_send", "sock_send_fail", "udp_send_fail",
         "tcp_send_fail", "sock_recv")
seen = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("name") in names and r["abstract_id"] in (ino, tino):
        n = r["net"]
        v = n["error"] + str(n["err"]) if n["flags"] & 4 else str(n["len"])
        seen.setdefault((r["abstract_id"] == tino, r["name"]), []).append(v)
print(" ".join("%s%s=%s" % ("tcp:" if t else "udp:", name, ",".join(seen[(t, name)]))
               for t in (False, True) for name in names if (t, name) in seen))
PY
)
want_sock="udp:sock_send=EMSGSIZE-90,1,ECONNREFUSED-111"
want_tsock="tcp:sock_send=1,EPIPE-32"
want="$want_sock udp:udp_send=70000,1,1 udp:sock_send_fail=EMSGSIZE-90,ECONNREFUSED-111"
want+=" udp:udp_send_fail=EMSGSIZE-90,ECONNREFUSED-111 udp:sock_recv=EAGAIN-11"
want+=" $want_tsock tcp:tcp_send=1,1 tcp:sock_send_fail=EPIPE-32 tcp:tcp_send_fail=EPIPE-32"
check_eq "failed calls recorded with their negated errnos at the socket and transport layers" "$want" "$got"
check "magnetctl dump names the error" \
	bash -c "'$MAGNETCTL' dump '$R/net.trace' | grep -q 'err=EAGAIN(-11)'"

out_dump=$(magnetctl dump "$R/net.trace" | awk -F'\t' -v ino="$ino" '$4 == "tcp_send" && $5 == ino && $6 == 10240' | wc -l)
check_eq "magnetctl dump shows the 50 tcp_send writes of 10240 bytes" 50 "$out_dump"

# --- losses: a tiny stream nobody reads during the traffic -------------
check "stream create tiny (4 KiB x 2)" magnetctl stream create tiny subbuf-size 4096 subbuf-count 2
check "enable dev_send and dev_recv into tiny" magnetctl probe enable dev_send dev_recv stream tiny
udp_sink_start usink2 5002 || bail_out "udp_sink did not start"
check "UDP flood into the tiny stream" udp_send udp2 1000 200
bg_wait usink2 10
check "disable" magnetctl probe disable dev_send dev_recv
stats=$(magnetctl -j stream show tiny)
produced=$(python3 -c 'import json,sys; d=json.load(sys.stdin); d=d.get("stream",d); print(d["produced"])' <<<"$stats")
lost=$(python3 -c 'import json,sys; d=json.load(sys.stdin); d=d.get("stream",d); print(d["lost"])' <<<"$stats")
diag "stream tiny: produced=$produced lost=$lost"
if [ "$lost" -gt 0 ]; then ok "a full ring drops and counts ($lost lost)"; else not_ok "a full ring drops and counts" "lost=0"; fi
bg rec2 "$MAGNETCTL" record tiny -o "$R/tiny.trace" --duration 2
bg_wait rec2 20
check_eq "record --duration ends by itself" 0 $?
check "tiny trace: every loss reported, produced = read + lost" \
	check_trace "$R/tiny.trace" --expect-produced "$produced" --expect-lost "$lost"

check "stream delete net" magnetctl stream delete net
check "stream delete tiny" magnetctl stream delete tiny
check "modules unload" magnet_unload
check_dmesg_clean
done_testing
