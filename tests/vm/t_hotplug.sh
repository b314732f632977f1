#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# CPU hotplug: rings are allocated for every possible CPU when a stream is
# created, so a CPU that goes offline and comes back online records into
# them.  Stream hp1 (sched_fork, sched_exit) is created with both CPUs
# online, CPU 1 is taken offline, stream hp2 (sched_switch) is created
# while it is offline, CPU 1 comes back, and a process pinned to CPU 1
# (taskset -c 1) forks 5 children.  Both traces must hold records with
# cpu == 1 of that process and its children; nothing may be lost.  Then
# magnet_selftest's per-CPU producers run across a second offline/online
# and, enabled again, fill CPU 1's ring.  The kernel log must stay clean.
MAGNET_MODULES="magnet magnet_sched"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
need_magnet
need_cmd taskset
[ -x "$MAGNET_TOOLS/proc_load" ] || skip_all "proc_load not built"
CPU1=/sys/devices/system/cpu/cpu1/online
[ -w "$CPU1" ] || skip_all "CPU 1 cannot be taken offline ($CPU1)"
plan 30
dmesg_mark
magnet_load || bail_out "cannot load the modules"
on_exit "echo 1 > $CPU1"
R=$MAGNET_RESULTS

check "stream create hp1 (256 KiB x 4)" magnetctl stream create hp1 subbuf-size 256K subbuf-count 4
check "enable sched_fork, sched_exit into hp1" magnetctl probe enable sched_fork sched_exit stream hp1
bg rec1 "$MAGNETCTL" record hp1 -o "$R/hp1.trace"
record_started rec1 || diag "rec1: $(cat "$(out rec1)")"
sleep 0.3
check "CPU 1 offline" sh -c "echo 0 > $CPU1"
check_eq "CPU 1 is offline" 0 "$(cat $CPU1)"
"$MAGNET_TOOLS/proc_load" fork 2 >/dev/null
check "stream create hp2 while CPU 1 is offline" magnetctl stream create hp2 subbuf-size 256K subbuf-count 4
check "enable sched_switch into hp2" magnetctl probe enable sched_switch stream hp2
bg rec2 "$MAGNETCTL" record hp2 -o "$R/hp2.trace"
record_started rec2 || diag "rec2: $(cat "$(out rec2)")"
sleep 0.3
check "CPU 1 online again" sh -c "echo 1 > $CPU1"
sleep 0.2
taskset -c 1 "$MAGNET_TOOLS/proc_load" fork 5 >"$R/fork.out" 2>&1
check_eq "fork 5 children pinned to CPU 1" 0 $?
sleep 0.3
check "disable the probes" magnetctl probe disable sched_fork sched_exit sched_switch
kill -INT "${BG_PID[rec1]}" "${BG_PID[rec2]}"
bg_wait rec1 20
r1=$?
bg_wait rec2 20
check_eq "both recorders stop cleanly" "0 0" "$r1 $?"

magnetctl -j dump "$R/hp1.trace" >"$R/hp1.jsonl"
magnetctl -j dump "$R/hp2.trace" >"$R/hp2.jsonl"
python3 - "$R/hp1.jsonl" "$R/hp2.jsonl" "$R/fork.out" >"$R/check.tap" <<'PY'
import json, sys
h1 = [json.loads(l) for l in open(sys.argv[1])]
h2 = [json.loads(l) for l in open(sys.argv[2])]
f = dict(w.split("=", 1) for w in open(sys.argv[3]).read().split() if "=" in w)
ppid, kids = int(f["pid"]), [int(x) for x in f["children"].split(",")]
out = []
def ok(cond, what, why=""):
    out.append(("ok" if cond else "not ok") + " - " + what + ("" if cond else " # " + why))
lost = sum(r["lost"]["count"] for r in h1 + h2 if r["name"] == "LOST")
ok(lost == 0, "no events lost", "lost=%d" % lost)
forks = [r for r in h1 if r["name"] == "sched_fork" and r["sched_proc"]["ppid"] == ppid]
ok(len(forks) == 5 and all(r["cpu"] == 1 for r in forks),
   "hp1 (created before the offline): 5 forks of the pinned process, all on CPU 1",
   str([(r["cpu"], r["sched_proc"]["pid"]) for r in forks]))
sw = [r for r in h2 if r["name"] == "sched_switch" and r["cpu"] == 1
      and (r["sched_switch"]["next_pid"] == ppid or r["sched_switch"]["next_pid"] in kids)]
ok(len(sw) >= 5, "hp2 (created while offline): %d switches on CPU 1 to the pinned process or its children" % len(sw))
c1 = [r for r in h2 if r["name"] == "sched_switch" and r["cpu"] == 1]
ok(all(r["sched_switch"]["cpu"] == 1 for r in c1), "hp2: CPU 1's ring holds CPU 1's switches only")
print("# hp1: %d records (%d on CPU 1); hp2: %d records (%d on CPU 1)" %
      (len(h1), sum(r.get("cpu") == 1 for r in h1), len(h2), len(c1)))
print("\n".join(out))
PY
tap_import "$R/check.tap" $?
magnetctl stream delete hp1 >/dev/null 2>&1
magnetctl stream delete hp2 >/dev/null 2>&1

# magnet_selftest's per-CPU producers (a bound kthread and a pinned hrtimer
# per online CPU) while CPU 1 goes offline and comes back; enabled again
# afterwards, it starts a producer on CPU 1 whose events land in its ring.
if [ -f "$MAGNET_MODDIR/magnet_selftest.ko" ]; then
	check "insmod magnet_selftest count=20000" insmod "$MAGNET_MODDIR/magnet_selftest.ko" count=20000 period_us=500
	_magnet_loaded+=(magnet_selftest)
	check "stream create hp3 (1 MiB x 2)" magnetctl stream create hp3 subbuf-size 1M subbuf-count 2
	bg rec3 "$MAGNETCTL" record hp3 -o "$R/hp3.trace"
	record_started rec3 || diag "rec3: $(cat "$(out rec3)")"
	sleep 0.3
	check "enable selftest into hp3" magnetctl probe enable selftest stream hp3
	check "CPU 1 offline with selftest enabled" sh -c "echo 0 > $CPU1"
	sleep 0.3
	check "CPU 1 online again" sh -c "echo 1 > $CPU1"
	check "the producers finish" selftest_wait
	check "disable selftest" magnetctl probe disable selftest
	kill -INT "${BG_PID[rec3]}"
	bg_wait rec3 30
	check_eq "the hp3 recorder stops cleanly" 0 $?
	check "stream create hp4 (1 MiB x 2) after the online" magnetctl stream create hp4 subbuf-size 1M subbuf-count 2
	bg rec4 "$MAGNETCTL" record hp4 -o "$R/hp4.trace"
	record_started rec4 || diag "rec4: $(cat "$(out rec4)")"
	sleep 0.3
	check "enable selftest into hp4: a producer on each online CPU" magnetctl probe enable selftest stream hp4
	check "the producers finish again" selftest_wait
	check "disable selftest again" magnetctl probe disable selftest
	kill -INT "${BG_PID[rec4]}"
	bg_wait rec4 30
	check_eq "the hp4 recorder stops cleanly" 0 $?
	n=$(magnetctl -j dump "$R/hp4.trace" | python3 -c '
import json, sys
print(sum(1 for l in sys.stdin if (lambda r: r["name"] == "selftest" and r["cpu"] == 1 and r["abstract_id"] == 1)(json.loads(l))))')
	check "hp4: CPU 1's producer wrote $n events into CPU 1's ring (>= 20000)" test "${n:-0}" -ge 20000
	magnetctl stream delete hp4 >/dev/null 2>&1
	magnetctl stream delete hp3 >/dev/null 2>&1
else
	for i in $(seq 1 14); do skip "magnet_selftest under hotplug" "magnet_selftest.ko not built"; done
fi
check "modules unload" magnet_unload
check_dmesg_clean
done_testing
