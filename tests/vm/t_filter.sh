#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Filters in a real kernel (docs/FILTERS.md).
#  1. Keys and precedence with magnet_selftest.ko (abstract ID = CPU, pid 0
#     in hardirq): a CPU filter, a more specific drop filter (refused early
#     through magnet_wants()), an abstract-ID + pid filter whose priority
#     beats an equally specific one and that feeds two streams (each event
#     with one timestamp in both); what no filter takes goes to the probe's
#     stream.  Every event lands exactly where it should and nowhere else
#     (sequence numbers complete).
#  2. pid, tgid and cgroup keys with UDP senders: a process in a child of
#     a cgroup v2 gets the stream of that cgroup's filter (a subtree
#     match); a cgroup ID that does not exist is refused; a datagram
#     received in softirq, while the sender's task runs, matches the
#     cgroup filter of its receiving socket at dev_recv, ip_recv and
#     udp_recv, and a socket of another cgroup's does not; and, once the
#     receiver made a call on its socket, names the receiving process
#     there (the socket's last user), so a tgid filter of the receiver
#     takes all its datagrams at every receive layer.
#  3. 1-in-40 count sampling delivers exactly ceil(N/40); time sampling
#     keeps events at least one period apart.
#  4. Removing a filter, and a stream a filter feeds, while events flow.
#  5. Bad requests are refused with messages naming the problem.
# Python starts once per phase (it is slow in an emulated guest).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
need_magnet
need_tools
[ -f "$MAGNET_MODDIR/magnet_selftest.ko" ] || skip_all "magnet_selftest.ko not built"
[ "$(nproc)" -ge 2 ] || skip_all "needs 2 CPUs"
dmesg_mark
netns_setup || bail_out "network namespaces"
magnet_load || bail_out "cannot load the modules"
R=$MAGNET_RESULTS
ST=$MAGNET_MODDIR/magnet_selftest.ko

# record_start STREAM...: one recorder per stream; record_stop STREAM...
record_start() { local s; for s; do bg "rec_$s" "$MAGNETCTL" record "$s" -o "$R/$s.trace"; done; sleep 0.5; }
record_stop() {
	local s
	for s; do kill -INT "${BG_PID[rec_$s]}" 2>/dev/null; done
	for s; do bg_wait "rec_$s" 20 || diag "recorder of $s: exit $?"; done
}
# pycheck NAME: run the python checks of stdin with T[stream] = summary of
# $R/stream.trace for the streams named in $TRACES, F[name] = filter
# (from $R/NAME.filters.json), P = the probes, and env as os.environ.
# The script calls ok(desc), nok(desc, why), diag(text).  A script that
# stops before its end (an exception) fails the test.
pycheck() {
	local name=$1 line done=
	magnetctl -j filter list >"$R/$name.filters.json"
	magnetctl -j probe list >"$R/$name.probes.json"
	while IFS= read -r line; do
		case $line in
		"ok|"*) ok "${line#ok|}" ;;
		"nok|"*) line=${line#nok|}; not_ok "${line%%|*}" "${line#*|}" ;;
		"end|") done=1 ;;
		*) diag "$line" ;;
		esac
	done < <(python3 - "$MAGNET_REPO/tests/tools" "$R" "$name" $TRACES 2>&1 <<PY
import json, os, sys
sys.path.insert(0, sys.argv[1])
from filter_trace import summarize
R, name = sys.argv[2], sys.argv[3]
T = {s: summarize("%s/%s.trace" % (R, s)) for s in sys.argv[4:]}
F = {f["name"]: f for f in json.load(open("%s/%s.filters.json" % (R, name)))}
P = json.load(open("%s/%s.probes.json" % (R, name)))
P = {p["name"]: p for p in (P["probes"] if isinstance(P, dict) else P)}
env = os.environ
def ok(d): print("ok|" + d)
def nok(d, why): print("nok|%s|%s" % (d, why))
def diag(t): print(t)
def check(c, d, why=""): ok(d) if c else nok(d, why)
$(cat)
print("end|")
PY
)
	[ -n "$done" ] || not_ok "$name: the checks ran to their end" "see the traceback above"
}

# ---- 1. keys and precedence ----------------------------------------------
COUNT=20000
check "load magnet_selftest" insmod "$ST" count=$COUNT period_us=200
_magnet_loaded+=(magnet_selftest)
for s in st c1 a1 both; do
	magnetctl stream create $s subbuf-size 1M subbuf-count 4 || bail_out "stream $s"
done
check "filter f_cpu: event selftest cpu 1 -> c1" \
	magnetctl filter add f_cpu event selftest cpu 1 stream c1
check "filter f_aid: id 1 pid 0 priority 5 -> a1 + both" \
	magnetctl filter add f_aid id 1 pid 0 priority 5 stream a1 stream both
check "filter f_drop: event selftest cpu 0 pid 0 drop" \
	magnetctl filter add f_drop event selftest cpu 0 pid 0 drop
magnetctl filter list | sed 's/^/# /'
record_start st c1 a1 both
check "enable selftest into st" magnetctl probe enable selftest stream st
selftest_wait >/dev/null
check "disable selftest" magnetctl probe disable selftest
record_stop st c1 a1 both
TRACES="st c1 a1 both" COUNT=$COUNT pycheck phase1 <<'PY'
n = int(env["COUNT"])
st, c1, a1, both = (T[s]["selftest"] for s in ("st", "c1", "a1", "both"))
diag("st %s c1 %s a1 %s" % (st, c1, a1))
check(sorted(st) == ["0/0"] and st["0/0"]["n"] == n and st["0/0"]["contig"],
      "probe's stream: only CPU 0 task events, all %d" % n, st)
check(sorted(c1) == ["1/0"] and c1["1/0"]["n"] == n and c1["1/0"]["contig"],
      "cpu filter: only CPU 1 task events, all %d" % n, c1)
check(sorted(a1) == ["1/1"] and a1["1/1"]["contig"] and a1["1/1"]["min"] == 0,
      "abstract ID + pid filter (priority beats the cpu filter): only CPU 1 hardirq events, none missing", a1)
check(a1 == both, "one event feeds two streams: both == a1", (a1, both))
ta, tb = T["a1"]["ts"].get("1", []), T["both"]["ts"].get("1", [])
check(ta and ta == tb,
      "one event in two streams has one timestamp in both (the filter reads the clock once)",
      (len(ta), len(tb), [(x, y) for x, y in zip(ta, tb) if x != y][:3]))
fc, fa, fd = F["f_cpu"], F["f_aid"], F["f_drop"]
check((fc["matched"], fc["delivered"], fc["dropped"]) == (n, n, 0),
      "f_cpu counters: matched = delivered = %d, dropped 0" % n, fc)
check(fa["delivered"] == T["a1"]["records"] and fa["dropped"] == 0,
      "f_aid counters: delivered = records in a1", fa)
check(fd["matched"] == fd["dropped"] > 0 and fd["delivered"] == 0,
      "drop filter: %d CPU 0 hardirq events refused (magnet_wants), none recorded" % fd["dropped"], fd)
total = sum(T[s]["records"] for s in ("st", "c1", "a1")) + fd["dropped"]
check(P["selftest"]["hits"] == total,
      "probe hits = st + c1 + a1 + dropped (every event accounted once)", (P["selftest"]["hits"], total))
check(all(T[s]["lost"] == 0 for s in T), "no stream lost anything")
PY
for f in f_cpu f_aid f_drop; do magnetctl filter del $f; done
check_eq "filters deleted" "[]" "$(magnetctl -j filter list | tr -d ' \n')"
diag "phase 1 done at ${SECONDS}s"

# ---- 2. pid, tgid, cgroup --------------------------------------------------
CG=/sys/fs/cgroup
if [ ! -f $CG/cgroup.controllers ]; then
	CG=/tmp/mgcg2
	mkdir -p $CG
	mount -t cgroup2 none $CG || bail_out "cannot mount cgroup2"
	on_exit "umount $CG"
fi
mkdir -p $CG/mgfilt/sub
on_exit "rmdir $CG/mgfilt/sub $CG/mgfilt"
check "cgroup v2 directories $CG/mgfilt and $CG/mgfilt/sub" test -f $CG/mgfilt/sub/cgroup.procs
out=$(magnetctl filter add f_nocg cgroup 987654321 stream net 2>&1)
rc=$?
case $out in
*"no cgroup v2 with ID 987654321"*) check_eq "a cgroup ID that does not exist is refused: $out" 1 $((rc != 0)) ;;
*) not_ok "a cgroup ID that does not exist is refused with the reason" "exit $rc: $out" ;;
esac
for s in net pf cg; do magnetctl stream create $s subbuf-size 1M subbuf-count 4; done
check "enable sock_send udp_send into net" magnetctl probe enable sock_send udp_send stream net
udp_sink_start usink 5002 || bail_out "udp_sink"
record_start net pf cg
N=300
# each sender waits until its filter is in place (the file go2, made after
# the filters), then execs udp_flood (same pid)
rm -f "$R/go2"
for s in s_pid s_cg s_tgid s_none; do
	bg $s in_a sh -c "while [ ! -e '$R/go2' ]; do sleep 0.1; done; exec $MAGNET_TOOLS/udp_flood $IP_B 5002 $N 200"
done
P1=${BG_PID[s_pid]} P2=${BG_PID[s_cg]} P3=${BG_PID[s_tgid]} P4=${BG_PID[s_none]}
# (ip netns exec has its own /sys: move it from here)
# the sender sits in a child of the filter's cgroup: a cgroup key matches
# its whole subtree
check "move sender $P2 into $CG/mgfilt/sub" sh -c "echo $P2 > $CG/mgfilt/sub/cgroup.procs"
check "filter f_pid: pid $P1 -> pf" magnetctl filter add f_pid pid "$P1" stream pf
check "filter f_cg: cgroup $CG/mgfilt -> cg" magnetctl filter add f_cg cgroup $CG/mgfilt stream cg
check "filter f_tgid: tgid $P3 drop" magnetctl filter add f_tgid tgid "$P3" drop
touch "$R/go2"
for s in s_pid s_cg s_tgid s_none; do bg_wait $s 60 || diag "$s: exit $?"; done
check "disable" magnetctl probe disable sock_send udp_send
kill "${BG_PID[usink]}" 2>/dev/null
record_stop net pf cg
# each sender's send calls: N sent plus the failed ones it counted (ENOBUFS
# when four floods share the veth in a slow kernel), each an event
# calls FILE: N plus the failed sends udp_flood reported in FILE
calls() { sed -n 's/.* errors=\([0-9]*\).*/\1/p' "$1" | awk -v n=$N '{ print n + $1 }'; }
TRACES="net pf cg" N=$N P1=$P1 P2=$P2 P3=$P3 P4=$P4 C1=$(calls "$(out s_pid)") \
	C2=$(calls "$(out s_cg)") C3=$(calls "$(out s_tgid)") C4=$(calls "$(out s_none)") pycheck phase2 <<'PY'
p = [env["P%d" % i] for i in range(1, 5)]
c = [int(env.get("C%d" % i) or -1) for i in range(1, 5)]
tg = {s: T[s]["tgid"].get("sock_send", {}) for s in T}
diag("sock_send per tgid: %s; send calls per sender %s" % (tg, c))
check(tg["pf"] == {p[0]: c[0]}, "pid filter: its stream has the process's %d sends and nothing else" % c[0], tg["pf"])
check(tg["cg"] == {p[1]: c[1]}, "cgroup filter: the process in a child of the filter's cgroup has its own stream", tg["cg"])
mine = {k: v for k, v in tg["net"].items() if k in p}
check(mine == {p[3]: c[3]}, "default stream: the unfiltered sender's %d sends, none of the others'" % c[3], mine)
ft = F["f_tgid"]
check((ft["matched"], ft["dropped"], ft["delivered"]) == (2 * c[2], 2 * c[2], 0),
      "tgid drop filter: all %d task events of its process refused" % (2 * c[2]), ft)
PY
for f in f_pid f_cg f_tgid; do magnetctl filter del $f; done

# receive side: no task is the event's in softirq, the receiving socket's
# cgroup is.  Two sinks, one in a child of the filter's cgroup (moved there
# before it makes its socket, which takes its creator's cgroup), one not;
# the sender (the task the softirq runs on) is in neither.
magnetctl stream create rx subbuf-size 1M subbuf-count 4
# (it waits, at most 20 s, until it is in the cgroup, then makes its socket)
bg rsink_cg in_b sh -c "for i in \$(seq 200); do grep -q '^0::/mgfilt/sub\$' /proc/self/cgroup && break; sleep 0.1; done; exec $MAGNET_TOOLS/udp_sink -q 3000 5003 $N"
check "move receiver ${BG_PID[rsink_cg]} into $CG/mgfilt/sub" \
	sh -c "echo ${BG_PID[rsink_cg]} > $CG/mgfilt/sub/cgroup.procs"
udp_sink_start rsink_root 5004 -q 3000 $N || bail_out "udp_sink"
wait_line "$(out rsink_cg)" 'ino=' 20 || not_ok "receiver in the cgroup ready" "$(cat "$(out rsink_cg)")"
wait_line "$(out rsink_root)" 'ino=' 20
ino() { sed -n 's/.*ino=\([0-9]*\).*/\1/p' "$(out "$1")" | head -1; }
I_CG=$(ino rsink_cg) I_ROOT=$(ino rsink_root)
diag "receiver sockets: in the cgroup $I_CG, in the root $I_ROOT"
check "filter f_rx: cgroup $CG/mgfilt -> rx" magnetctl filter add f_rx cgroup $CG/mgfilt stream rx
check "enable dev_recv ip_recv udp_recv into net" magnetctl probe enable dev_recv ip_recv udp_recv stream net
record_start net rx
check "$N datagrams to the receiver in the cgroup" in_a "$MAGNET_TOOLS/udp_flood" "$IP_B" 5003 $N 200
check "$N datagrams to the receiver in the root" in_a "$MAGNET_TOOLS/udp_flood" "$IP_B" 5004 $N 200
bg_wait rsink_cg 30 || diag "rsink_cg: exit $?"
bg_wait rsink_root 30 || diag "rsink_root: exit $?"
check "disable" magnetctl probe disable dev_recv ip_recv udp_recv
record_stop net rx
TRACES="net rx" N=$N I_CG=$I_CG I_ROOT=$I_ROOT pycheck phase2rx <<'PY'
n, cg, root = int(env["N"]), env["I_CG"], env["I_ROOT"]
for ev in ("dev_recv", "ip_recv", "udp_recv"):
    rx = T["rx"]["irq"].get(ev, {})
    net = T["net"]["irq"].get(ev, {})
    diag("%s in softirq per socket: rx %s, net %s" % (ev, rx, net))
    check(rx == {cg: n}, "%s: the %d datagrams of the socket in the cgroup, received in softirq, "
          "went to its cgroup's filter, and nothing else" % (ev, n), rx)
    check(net.get(root) == n and cg not in net,
          "%s: the other socket's %d datagrams stayed in the probe's stream" % (ev, n), net)
    check(ev not in T["rx"]["tgid"], "%s: no task-context record in rx" % ev, T["rx"]["tgid"])
check(F["f_rx"]["matched"] == 3 * n, "f_rx matched 3 x %d" % n, F["f_rx"])
PY
magnetctl filter del f_rx

# receive side, the process: in softirq an event about a socket names the
# socket's last user in task context (kmod/sock_user.c).  The receiver
# sends one datagram from its socket first (a task-context sock_send about
# it), then receives; a tgid filter of the receiver then takes all its
# datagrams at every receive layer, and none is left in the probe's stream
# without a process.  The sender's events keep the sender.
magnetctl stream create own subbuf-size 1M subbuf-count 4
# the hooks first: the receiver's one send must find sock_send attached
check "enable sock_send sock_recv dev_recv ip_recv udp_recv into net" \
	magnetctl probe enable sock_send sock_recv dev_recv ip_recv udp_recv stream net
record_start net own
bg rpy in_b python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
s.bind(("0.0.0.0", 5005))
s.sendto(b"hello", (sys.argv[1], 9))
print("pid=%d ino=%d" % (os.getpid(), os.fstat(s.fileno()).st_ino), flush=True)
s.settimeout(60)         # the flood starts once the filter is in place
n = 0
try:
    while n < int(sys.argv[2]):
        s.recv(4096)
        n += 1
except socket.timeout:
    pass
print("datagrams=%d" % n, flush=True)
sys.exit(0 if n == int(sys.argv[2]) else 1)' "$IP_A" "$N"
wait_line "$(out rpy)" 'ino=' 20 || not_ok "python receiver ready" "$(cat "$(out rpy)")"
RPID=$(sed -n 's/.*pid=\([0-9]*\).*/\1/p' "$(out rpy)" | head -1)
I_PY=$(sed -n 's/.*ino=\([0-9]*\).*/\1/p' "$(out rpy)" | head -1)
check "filter f_own: tgid $RPID (the receiver) -> own" magnetctl filter add f_own tgid "$RPID" stream own
in_a "$MAGNET_TOOLS/udp_flood" -i 1000 "$IP_B" 5005 $N 200 >"$R/flood_own.out" 2>&1
check_eq "$N datagrams to the receiver" 0 $?
FPID=$(sed -n 's/.*pid=\([0-9]*\).*/\1/p' "$R/flood_own.out" | head -1)
FCALLS=$(calls "$R/flood_own.out")
bg_wait rpy 30
check_eq "the receiver got all $N datagrams" 0 $?
check "disable" magnetctl probe disable sock_send sock_recv dev_recv ip_recv udp_recv
record_stop net own
TRACES="net own" N=$N RPID=$RPID FPID=$FPID FCALLS=$FCALLS I_PY=$I_PY pycheck phase2own <<'PY'
n, rpid, fpid, ino = int(env["N"]), env["RPID"], env["FPID"], env["I_PY"]
fcalls = int(env.get("FCALLS") or -1)
own, net = T["own"], T["net"]
diag("own: %s; net irq: %s" % (own["tgid"], {e: net["irq"].get(e) for e in ("dev_recv", "ip_recv", "udp_recv")}))
for ev in ("dev_recv", "ip_recv", "udp_recv"):
    check(own["tgid"].get(ev) == {rpid: n},
          "%s: the receiver's %d datagrams, in softirq, name it and reach its tgid filter" % (ev, n),
          own["tgid"].get(ev))
    check(ino not in net["irq"].get(ev, {}),
          "%s: none of the receiver's datagrams left in the probe's stream without a process" % ev,
          net["irq"].get(ev))
check(own["tgid"].get("sock_recv") == {rpid: n}, "sock_recv: its %d receive calls" % n, own["tgid"].get("sock_recv"))
snd = net["tgid"].get("sock_send", {})
check(snd.get(rpid) == 1, "sock_send: its one send, made before the filter existed, in the probe's stream", snd)
check(snd.get(fpid) == fcalls and "sock_send" not in own["tgid"],
      "the sender's %d send calls name the sender (%s)" % (fcalls, fpid), snd)
check(F["f_own"]["matched"] == 4 * n, "f_own matched 4 x %d" % n, F["f_own"])
PY
magnetctl filter del f_own
diag "phase 2 done at ${SECONDS}s"

# ---- 3. sampling ---------------------------------------------------------------
rmmod magnet_selftest
check "reload magnet_selftest" insmod "$ST" count=100000 period_us=200
for s in samp tsamp; do magnetctl stream create $s subbuf-size 1M subbuf-count 4; done
check "filter s40: event selftest every 40 -> samp" \
	magnetctl filter add s40 event selftest every 40 stream samp
check "filter t2: event selftest cpu 0 period 2ms -> tsamp" \
	magnetctl filter add t2 event selftest cpu 0 period 2ms stream tsamp
record_start samp tsamp
magnetctl probe enable selftest stream st
selftest_wait >/dev/null
magnetctl probe disable selftest
record_stop samp tsamp
TRACES="samp tsamp" pycheck phase3 <<'PY'
s, t = F["s40"], F["t2"]
m, d = s["matched"], s["delivered"]
diag("s40: matched %d delivered %d recorded %d" % (m, d, T["samp"]["records"]))
check(m // 40 <= d <= (m + 39) // 40 and m > 40000,
      "1-in-40: %d of %d delivered (floor %d, ceil %d)" % (d, m, m // 40, (m + 39) // 40), s)
check(T["samp"]["records"] == d and s["dropped"] == m - d,
      "1-in-40: every delivered event recorded, dropped = matched - delivered", s)
ts = sorted(T["tsamp"]["ts"].get("0", [0]))
span = ts[-1] - ts[0]
bound = span // 2000000 + 1
gap = min([b - a for a, b in zip(ts, ts[1:])] or [0]) / 1e6
diag("t2: %d records in %.1f ms (at most %d), min gap %.3f ms; filter %s" % (len(ts), span / 1e6, bound, gap, t))
# no lower bound: an emulated, loaded guest may not run CPU 0 for many ms.
# The sampler keeps its decisions a period apart; a record's timestamp is
# taken a little later, inside the ring's interrupts-off section, and that
# lag varies by tens of microseconds in the emulated guest (1.978 ms seen),
# so the gap between records gets 5 % of slack; the count bound above
# checks "at most one per period" over the whole run.
check(2 <= len(ts) <= bound and gap >= 1.9 and t["delivered"] == len(ts),
      "time sampling: %d events in %.1f ms, at least %.3f ms apart" % (len(ts), span / 1e6, gap))
PY
magnetctl filter del s40
magnetctl filter del t2
diag "phase 3 done at ${SECONDS}s"

# ---- 4. removal while events flow ----------------------------------------------
rmmod magnet_selftest
check "reload magnet_selftest (long run)" insmod "$ST" count=5000000 period_us=50
for s in rm rm2; do magnetctl stream create $s subbuf-size 4M subbuf-count 4; done
magnetctl filter add r3 event selftest every 30 stream rm
magnetctl filter add r2 event selftest cpu 1 stream rm2
record_start rm rm2
magnetctl probe enable selftest stream st
sleep 0.3
running=$(cat /sys/module/magnet_selftest/parameters/running)
magnetctl -j filter show r3 >"$R/r3.json"
check "delete filter r3 while events flow" magnetctl filter del r3
check "delete stream rm2 (fed by filter r2) while events flow" magnetctl stream delete rm2
if [ "$running" -gt 0 ]; then ok "events were flowing during the removals ($running producers)"; else not_ok "events were flowing during the removals"; fi
check_eq "filter r2 went with its stream" "[]" "$(magnetctl -j filter list | tr -d ' \n')"
sleep 0.3
magnetctl probe disable selftest
bg_wait rec_rm2 20
check_eq "recorder of the deleted stream ends cleanly" 0 $?
record_stop rm
magnetctl -j stream show rm >"$R/rm.json"
TRACES="rm" pycheck phase4 <<'PY'
r3 = json.load(open(R + "/r3.json"))
rm = json.load(open(R + "/rm.json"))
rm = rm.get("stream", rm)
n = T["rm"]["records"]
check(n >= r3["delivered"] and rm["lost"] == 0 and rm["read"] == rm["written"] == n,
      "nothing r3 delivered is lost: %d records >= %d counted before removal" % (n, r3["delivered"]), (r3, rm))
PY
diag "phase 4 done at ${SECONDS}s"

# ---- 5. bad input ----------------------------------------------------------------
# bad DESC MESSAGE ARGS...: refused by the kernel, exit 2 (5 for a name
# that does not exist: BAD_EXIT=5 bad ...)
bad() {
	local desc=$1 want=$2 msg rc
	shift 2
	msg=$(magnetctl "$@" 2>&1)
	rc=$?
	if [ $rc -eq "${BAD_EXIT:-2}" ] && grep -q -- "$want" <<<"$msg"; then
		ok "refused: $desc"
	else
		not_ok "refused: $desc (exit ${BAD_EXIT:-2})" "exit $rc: $msg"
	fi
}
magnetctl filter add ok1 event selftest stream st
BAD_EXIT=5 bad "unknown stream" "no stream named 'nope'" filter add x1 stream nope
bad "taken name" "filter 'ok1' already exists" filter add ok1 drop
bad "CPU out of range" "cpu 4096: must be below" filter add x2 cpu 4096 drop
bad "drop with a stream" "a drop filter delivers to no stream" filter add x3 drop stream st
bad "drop with sampling" "a drop filter does not sample" filter add x4 drop every 3
bad "both samplers" "exclude each other" filter add x5 every 3 period 1ms
bad "bad name" "bad filter name" filter add -x drop
bad "event ID out of range" "out of range" filter add x6 event 4000 drop
BAD_EXIT=5 bad "unknown filter" "no filter named 'nope'" filter del nope
bad "same stream twice" "named twice" filter add x7 stream st stream st
check_eq "nothing half-made: only ok1 exists" 1 "$(magnetctl filter list | grep -c '^ok1 ')"
check_eq "... and nothing else" 2 "$(magnetctl filter list | wc -l)"
magnetctl filter del ok1

for s in st c1 a1 both net pf cg samp tsamp rm; do magnetctl stream delete $s; done
check "modules unload" magnet_unload
check_dmesg_clean
done_testing
