#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Filters in a real kernel (docs/FILTERS.md).
#  1. Keys and precedence with magnet_selftest.ko (abstract ID = CPU, pid 0
#     in hardirq): a CPU filter, a more specific drop filter (refused early
#     through magnet_wants()), an abstract-ID + pid filter whose priority
#     beats an equally specific one and that feeds two streams; what no
#     filter takes goes to the probe's stream.  Every event lands exactly
#     where it should and nowhere else (sequence numbers complete).
#  2. pid, tgid and cgroup keys with UDP senders: a process in its own
#     cgroup v2 gets its own stream.
#  3. 1-in-40 count sampling delivers exactly ceil(N/40); time sampling
#     keeps events at least one period apart.
#  4. Removing a filter, and a stream a filter feeds, while events flow.
#  5. Bad requests are refused with messages naming the problem.
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
FT=(python3 "$MAGNET_REPO/tests/tools/filter_trace.py")

# js JSON|FILE EXPR: evaluate EXPR on the parsed JSON "d" (a string or a file)
js() {
	python3 -c "import json,sys; a=sys.argv[1]; d=json.load(open(a)) if a.startswith('/') else json.loads(a); print($2)" "$1"
}
fshow() { magnetctl -j filter show "$1"; }
st_wait() {
	local i
	for i in $(seq 1 600); do
		[ "$(cat /sys/module/magnet_selftest/parameters/running)" = 0 ] && return 0
		sleep 0.1
	done
	return 1
}
# record_start STREAM...: one recorder per stream; record_stop STREAM...
record_start() { local s; for s; do bg "rec_$s" "$MAGNETCTL" record "$s" -o "$R/$s.trace"; done; sleep 0.5; }
record_stop() {
	local s
	for s; do kill -INT "${BG_PID[rec_$s]}" 2>/dev/null; done
	for s; do bg_wait "rec_$s" 20 || diag "recorder of $s: exit $?"; done
}
summary() { "${FT[@]}" "$R/$1.trace" >"$R/$1.sum.json" && echo "$R/$1.sum.json"; }

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
st_wait
check "disable selftest" magnetctl probe disable selftest
record_stop st c1 a1 both
st=$(summary st); c1=$(summary c1); a1=$(summary a1); both=$(summary both)
diag "st: $(js "$st" 'd["selftest"]')"
diag "c1: $(js "$c1" 'd["selftest"]')  a1: $(js "$a1" 'd["selftest"]')"
check_eq "probe's stream: only CPU 0 task events, all $COUNT" \
	"['0/0'] $COUNT True" "$(js "$st" 'sorted(d["selftest"]), d["selftest"]["0/0"]["n"], d["selftest"]["0/0"]["contig"]' | tr -d '(),')"
check_eq "cpu filter: only CPU 1 task events, all $COUNT" \
	"['1/0'] $COUNT True" "$(js "$c1" 'sorted(d["selftest"]), d["selftest"]["1/0"]["n"], d["selftest"]["1/0"]["contig"]' | tr -d '(),')"
check_eq "abstract ID + pid filter (priority beats the cpu filter): only CPU 1 hardirq events, none missing" \
	"['1/1'] True 0" "$(js "$a1" 'sorted(d["selftest"]), d["selftest"]["1/1"]["contig"], d["selftest"]["1/1"]["min"]' | tr -d '(),')"
check_eq "one event feeds two streams: both == a1" \
	"$(js "$a1" 'd["selftest"]')" "$(js "$both" 'd["selftest"]')"
fa=$(fshow f_aid); fc=$(fshow f_cpu); fd=$(fshow f_drop)
echo "$fa $fc $fd" >"$R/phase1.filters.json"
check_eq "f_cpu counters: matched = delivered = $COUNT, dropped 0" "$COUNT $COUNT 0" \
	"$(js "$fc" 'd["matched"], d["delivered"], d["dropped"]' | tr -d '(),')"
check_eq "f_aid counters: delivered = records in a1" \
	"$(js "$a1" 'd["records"]') 0" "$(js "$fa" 'd["delivered"], d["dropped"]' | tr -d '(),')"
if [ "$(js "$fd" 'd["matched"] == d["dropped"] > 0 and d["delivered"] == 0')" = True ]; then
	ok "drop filter: $(js "$fd" 'd["dropped"]') CPU 0 hardirq events refused (magnet_wants), none recorded"
else
	not_ok "drop filter counters" "$fd"
fi
hits=$(magnetctl -j probe list | python3 -c 'import json,sys; d=json.load(sys.stdin); d=d["probes"] if isinstance(d,dict) else d; print([p["hits"] for p in d if p["name"]=="selftest"][0])')
check_eq "probe hits = st + c1 + a1 + dropped (every event accounted once)" "$hits" \
	"$(($(js "$st" 'd["records"]') + $(js "$c1" 'd["records"]') + $(js "$a1" 'd["records"]') + $(js "$fd" 'd["dropped"]')))"
for f in f_cpu f_aid f_drop; do magnetctl filter del $f; done
check_eq "filters deleted" 0 "$(magnetctl -j filter list | js "$(cat)" 'len(d)')"

diag "phase 1 done at ${SECONDS}s"
# ---- 2. pid, tgid, cgroup --------------------------------------------------
CG=/sys/fs/cgroup
if [ ! -f $CG/cgroup.controllers ]; then
	CG=/tmp/mgcg2
	mkdir -p $CG
	mount -t cgroup2 none $CG || bail_out "cannot mount cgroup2"
	on_exit "umount $CG"
fi
mkdir -p $CG/mgfilt
on_exit "rmdir $CG/mgfilt"
check "cgroup v2 directory $CG/mgfilt" test -f $CG/mgfilt/cgroup.procs
for s in net pf cg; do magnetctl stream create $s subbuf-size 1M subbuf-count 4; done
check "enable sock_send udp_send into net" magnetctl probe enable sock_send udp_send stream net
udp_sink_start usink 5002 || bail_out "udp_sink"
record_start net pf cg
N=300
# each sender waits until its filter is in place, then execs udp_flood (same pid)
bg s_pid in_a sh -c "sleep 3; exec $MAGNET_TOOLS/udp_flood $IP_B 5002 $N 200"
bg s_cg in_a sh -c "sleep 3; exec $MAGNET_TOOLS/udp_flood $IP_B 5002 $N 200"
bg s_tgid in_a sh -c "sleep 3; exec $MAGNET_TOOLS/udp_flood $IP_B 5002 $N 200"
bg s_none in_a sh -c "sleep 3; exec $MAGNET_TOOLS/udp_flood $IP_B 5002 $N 200"
P1=${BG_PID[s_pid]} P2=${BG_PID[s_cg]} P3=${BG_PID[s_tgid]} P4=${BG_PID[s_none]}
# (ip netns exec has its own /sys: move it from here)
check "move sender $P2 into $CG/mgfilt" sh -c "echo $P2 > $CG/mgfilt/cgroup.procs"
check "filter f_pid: pid $P1 -> pf" magnetctl filter add f_pid pid "$P1" stream pf
check "filter f_cg: cgroup $CG/mgfilt -> cg" magnetctl filter add f_cg cgroup $CG/mgfilt stream cg
check "filter f_tgid: tgid $P3 drop" magnetctl filter add f_tgid tgid "$P3" drop
for s in s_pid s_cg s_tgid s_none; do bg_wait $s 60 || diag "$s: exit $?"; done
check "disable" magnetctl probe disable sock_send udp_send
kill "${BG_PID[usink]}" 2>/dev/null
record_stop net pf cg
net=$(summary net); pf=$(summary pf); cg=$(summary cg)
diag "tgids: net $(js "$net" 'd["tgid"]') pf $(js "$pf" 'd["tgid"]') cg $(js "$cg" 'd["tgid"]')"
check_eq "pid filter: its stream has the process's $N sends and nothing else" \
	"{'$P1': $N}" "$(js "$pf" 'd["tgid"].get("sock_send")')"
check_eq "cgroup filter: the process in its own cgroup has its own stream" \
	"{'$P2': $N}" "$(js "$cg" 'd["tgid"].get("sock_send")')"
check_eq "default stream: the unfiltered sender's $N sends, none of the others'" \
	"{'$P4': $N}" "$(js "$net" "{k: v for k, v in d['tgid'].get('sock_send', {}).items() if k in ('$P1', '$P2', '$P3', '$P4')}")"
ft=$(fshow f_tgid)
check_eq "tgid drop filter: all $((2 * N)) task events of its process refused" \
	"$((2 * N)) $((2 * N)) 0" "$(js "$ft" 'd["matched"], d["dropped"], d["delivered"]' | tr -d '(),')"
for f in f_pid f_cg f_tgid; do magnetctl filter del $f; done

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
st_wait
magnetctl probe disable selftest
record_stop samp tsamp
s40=$(fshow s40); t2=$(fshow t2)
samp=$(summary samp); tsamp=$(summary tsamp)
m=$(js "$s40" 'd["matched"]'); dl=$(js "$s40" 'd["delivered"]')
diag "s40: matched $m delivered $dl recorded $(js "$samp" 'd["records"]')"
if [ $((m / 40)) -le "$dl" ] && [ "$dl" -le $(((m + 39) / 40)) ] && [ "$m" -gt 40000 ]; then
	ok "1-in-40: $dl of $m delivered (floor $((m / 40)), ceil $(((m + 39) / 40)))"
else
	not_ok "1-in-40 count sampling" "matched $m delivered $dl"
fi
check_eq "1-in-40: every delivered event recorded, dropped = matched - delivered" \
	"$dl $((m - dl))" "$(js "$samp" 'd["records"]') $(js "$s40" 'd["dropped"]')"
res=$(js "$tsamp" '(lambda t: "%d %d %.3f %.1f" % (len(t), (t[-1]-t[0])//(2*10**6) + 1, min(b-a for a,b in zip(t,t[1:]))/1e6, (t[-1]-t[0])/1e6))(sorted(d["ts"]["0"]))')
diag "t2: records, bound, min gap ms, span ms: $res (filter: $(js "$t2" 'd["delivered"], d["matched"]'))"
set -- $res
if [ "$1" -ge 2 ] && [ "$1" -le "$2" ] && python3 -c "import sys; sys.exit(not float('$3') >= 1.98)" &&
	[ "$1" -ge $(($2 / 4)) ]; then
	ok "time sampling: $1 events in $4 ms, at least $3 ms apart"
else
	not_ok "time sampling 2 ms" "$res"
fi
magnetctl filter del s40
magnetctl filter del t2

diag "phase 3 done at ${SECONDS}s"
# ---- 4. removal while events flow ----------------------------------------------
rmmod magnet_selftest
check "reload magnet_selftest (long run)" insmod "$ST" count=5000000 period_us=50
for s in rm rm2; do magnetctl stream create $s subbuf-size 4M subbuf-count 4; done
magnetctl filter add r3 event selftest every 3 stream rm
magnetctl filter add r2 event selftest cpu 1 stream rm2
record_start st rm rm2
magnetctl probe enable selftest stream st
sleep 0.3
running=$(cat /sys/module/magnet_selftest/parameters/running)
d1=$(js "$(fshow r3)" 'd["delivered"]')
check "delete filter r3 while events flow" magnetctl filter del r3
check "delete stream rm2 (fed by filter r2) while events flow" magnetctl stream delete rm2
if [ "$running" -gt 0 ]; then ok "events were flowing during the removals ($running producers)"; else not_ok "events were flowing during the removals"; fi
check_eq "filter r2 went with its stream" "[]" "$(magnetctl -j filter list | js "$(cat)" '[f["name"] for f in d]')"
sleep 0.3
magnetctl probe disable selftest
bg_wait rec_rm2 20
check_eq "recorder of the deleted stream ends cleanly" 0 $?
record_stop st rm
rm=$(summary rm); rmst=$(magnetctl -j stream show rm | js "$(cat)" 'json.dumps(d.get("stream", d))')
if [ "$(js "$rm" 'd["records"]')" -ge "$d1" ] && [ "$(js "$rmst" 'd["lost"]')" = 0 ] &&
	[ "$(js "$rmst" 'd["read"]')" = "$(js "$rmst" 'd["written"]')" ]; then
	ok "nothing r3 delivered is lost: $(js "$rm" 'd["records"]') records >= $d1 counted before removal"
else
	not_ok "nothing delivered lost" "rm $(js "$rm" 'd["records"]') d1 $d1 $rmst"
fi
check "default stream trace well formed after the removals" check_trace "$R/st.trace" --stream st

diag "phase 4 done at ${SECONDS}s"
# ---- 5. bad input ----------------------------------------------------------------
bad() {
	local desc=$1 want=$2 msg
	shift 2
	msg=$(magnetctl "$@" 2>&1)
	if [ $? -eq 2 ] && grep -q -- "$want" <<<"$msg"; then
		ok "refused: $desc"
	else
		not_ok "refused: $desc" "$msg"
	fi
}
magnetctl filter add ok1 event selftest stream st
bad "unknown stream" "no stream named 'nope'" filter add x1 stream nope
bad "taken name" "filter 'ok1' already exists" filter add ok1 drop
bad "CPU out of range" "cpu 4096: must be below" filter add x2 cpu 4096 drop
bad "drop with a stream" "a drop filter delivers to no stream" filter add x3 drop stream st
bad "drop with sampling" "a drop filter does not sample" filter add x4 drop every 3
bad "both samplers" "exclude each other" filter add x5 every 3 period 1ms
bad "bad name" "bad filter name" filter add -x drop
bad "event ID out of range" "out of range\|bigger\|exceed\|range" filter add x6 event 4000 drop
bad "unknown filter" "no filter named 'nope'" filter del nope
bad "same stream twice" "named twice" filter add x7 stream st stream st
check_eq "nothing half-made: only ok1 exists" "['ok1']" "$(magnetctl -j filter list | js "$(cat)" '[f["name"] for f in d]')"
magnetctl filter del ok1

for s in st c1 a1 both net pf cg samp tsamp rm; do magnetctl stream delete $s; done
check "modules unload" magnet_unload
check_dmesg_clean
done_testing
