#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# magnet_sched.ko in a real kernel: a process forks N children one after
# another (each exits with status 7), then forks 3 that exec /bin/true.
# The trace must hold exactly N+3 sched_fork events from that parent with
# the children's pids, their sched_exit events with the right exit code,
# the 3 execs, and sched_switch records that chain on every CPU (the next
# task of one switch is the previous task of the following one), from
# which per-CPU run times are computed, and sched_switch_end records that
# end each of those switches on its CPU, in the new task, with the
# switch's duration (at most the time between the two records).  The
# module is unloaded and loaded again while a reader records, and the
# documented example module (probes/example.c) records context switches.
MAGNET_MODULES="magnet magnet_sched"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
need_magnet
need_tools
[ -x "$MAGNET_TOOLS/proc_load" ] || skip_all "proc_load not built"
dmesg_mark
magnet_load || bail_out "cannot load the modules"

R=$MAGNET_RESULTS
N=20
EVENTS="sched_fork sched_exec sched_exit sched_switch sched_switch_end"

n=$(magnetctl -j probe list | python3 -c '
import json, sys
ps = json.load(sys.stdin)
ps = ps["probes"] if isinstance(ps, dict) else ps
print(" ".join(sorted(p["name"] for p in ps if p.get("module") == "magnet_sched")))')
check_eq "magnet_sched registers its five probes" "sched_exec sched_exit sched_fork sched_switch sched_switch_end" "$n"

check "stream create sched (1 MiB x 4)" magnetctl stream create sched subbuf-size 1M subbuf-count 4
# shellcheck disable=SC2086
check "enable the sched probes" magnetctl probe enable $EVENTS stream sched
bg rec "$MAGNETCTL" record sched -o "$R/sched.trace"
sleep 0.5

"$MAGNET_TOOLS/proc_load" fork "$N" >"$R/fork.out" 2>&1
check_eq "fork $N children that exit 7" 0 $?
"$MAGNET_TOOLS/proc_load" fork 3 /bin/true >"$R/exec.out" 2>&1
check_eq "fork 3 children that exec /bin/true" 0 $?
sleep 0.3
# shellcheck disable=SC2086
check "disable the sched probes" magnetctl probe disable $EVENTS
kill -INT "${BG_PID[rec]}"
bg_wait rec 20
check_eq "record stops cleanly" 0 $?

magnetctl -j dump "$R/sched.trace" >"$R/sched.jsonl"
python3 - "$R/sched.jsonl" "$R/fork.out" "$R/exec.out" "$N" >"$R/check.tap" <<'PY'
import json, sys, collections
recs = [json.loads(l) for l in open(sys.argv[1])]
def kv(path):
    return dict(w.split("=", 1) for w in open(path).read().split() if "=" in w)
f, e, N = kv(sys.argv[2]), kv(sys.argv[3]), int(sys.argv[4])
ppid, kids = int(f["pid"]), [int(x) for x in f["children"].split(",")]
eppid, ekids = int(e["pid"]), [int(x) for x in e["children"].split(",")]
out = []
def ok(cond, what, why=""):
    out.append(("ok" if cond else "not ok") + " - " + what + ("" if cond else " # " + why))
def ev(name):
    return [r for r in recs if r["name"] == name]
lost = sum(r["lost"]["count"] for r in recs if r["name"] == "LOST")
ok(lost == 0, "no events lost", "lost=%d" % lost)
forks = [r for r in ev("sched_fork") if r["sched_proc"]["ppid"] == ppid]
ok(len(forks) == N, "%d sched_fork events with parent pid %d" % (N, ppid), "got %d" % len(forks))
ok(sorted(r["sched_proc"]["pid"] for r in forks) == sorted(kids), "fork events name the children", str([r["sched_proc"]["pid"] for r in forks]))
ok(all(r["pid"] == ppid and r["abstract_id"] == r["sched_proc"]["pid"] and r["sched_proc"]["ptgid"] == ppid and r["sched_proc"]["flags"] == 0 for r in forks),
   "fork: recorded in the parent, abstract ID = child, not a thread")
exits = [r for r in ev("sched_exit") if r["sched_proc"]["pid"] in kids]
ok(len(exits) == N, "%d sched_exit events of the children" % N, "got %d" % len(exits))
ok(all(r["sched_proc"]["exit_code"] == 7 << 8 and r["sched_proc"]["ppid"] == ppid and r["pid"] == r["sched_proc"]["pid"] for r in exits),
   "exit: status 7, parent, recorded in the child", str([r["sched_proc"] for r in exits][:2]))
ok(all(f["timestamp"] < x["timestamp"] for f in forks for x in exits if f["sched_proc"]["pid"] == x["sched_proc"]["pid"]),
   "each child's fork precedes its exit")
execs = [r for r in ev("sched_exec") if r["sched_exec"]["pid"] in ekids]
ok(len(execs) == 3 and all(r["sched_exec"]["filename"] == "/bin/true" and r["sched_exec"]["comm"] == "true" for r in execs),
   "3 sched_exec events running /bin/true", str([r["sched_exec"] for r in execs]))
sw = ev("sched_switch")
ok(len(sw) > 0, "sched_switch events recorded (%d)" % len(sw))
ok(all(r["sched_switch"]["cpu"] == r["cpu"] and r["abstract_id"] == r["sched_switch"]["next_pid"] for r in sw),
   "sched_switch: cpu field = record CPU, abstract ID = next pid")
ok(all(r["sched_switch"]["prev_pid"] != r["sched_switch"]["next_pid"] for r in sw), "prev != next")
percpu = collections.defaultdict(list)
for r in sw:
    percpu[r["cpu"]].append(r)
breaks, runs = 0, collections.defaultdict(list)
for cpu, l in percpu.items():
    l.sort(key=lambda r: r["timestamp"])
    for a, b in zip(l, l[1:]):
        if a["sched_switch"]["next_pid"] != b["sched_switch"]["prev_pid"]:
            breaks += 1
        runs[cpu].append(b["timestamp"] - a["timestamp"])
ok(breaks == 0, "switches chain on every CPU (next of one = prev of the next)", "%d breaks" % breaks)
kidsw = [r for r in sw if r["sched_switch"]["next_pid"] in kids]
ok(len(kidsw) >= N, "every child was switched in (%d switches to children)" % len(kidsw))
# sched_switch_end: each switch's end on its CPU, in the new task
ends = ev("sched_switch_end")
ok(len(ends) > 0, "sched_switch_end events recorded (%d)" % len(ends))
ok(all(r["sched_switch_end"]["cpu"] == r["cpu"] and r["abstract_id"] == r["sched_switch_end"]["next_pid"]
       and r["sched_switch_end"]["switch_ns"] > 0 for r in ends),
   "sched_switch_end: cpu field = record CPU, abstract ID = next pid, a duration > 0")
unpaired, bad_time, durs = [], [], collections.defaultdict(list)
for cpu in percpu:
    mine = sorted([(r["timestamp"], 0, r) for r in percpu[cpu]] +
                  [(r["timestamp"], 1, r) for r in ends if r["cpu"] == cpu], key=lambda x: x[:2])
    et = [t for t, k, _ in mine if k == 1]
    if not et:
        continue
    # between the first and the last end on this CPU, every switch is
    # followed by its end before the next switch (both hooks attached)
    last = None
    for t, k, r in mine:
        if k == 0:
            if last is not None and et[0] <= last["timestamp"] <= et[-1]:
                unpaired.append(last["sched_switch"])
            last = r
            continue
        e = r["sched_switch_end"]
        if last is None or (last["sched_switch"]["prev_pid"], last["sched_switch"]["next_pid"]) != (e["prev_pid"], e["next_pid"]):
            if last is not None:
                unpaired.append(e)
            continue
        if e["switch_ns"] > r["timestamp"] - last["timestamp"] + 20000:
            bad_time.append((e["switch_ns"], r["timestamp"] - last["timestamp"]))
        durs[cpu].append(e["switch_ns"])
        last = None
ok(not unpaired, "every switch between the first and last sched_switch_end on a CPU ends there, same tasks (%d paired)"
   % sum(len(v) for v in durs.values()), str(unpaired[:3]))
ok(not bad_time, "each switch's duration is at most the time between its two records (+20 us)", str(bad_time[:3]))
for cpu in sorted(runs):
    v = sorted(runs[cpu])
    d = sorted(durs.get(cpu, []))
    if v:
        print("# cpu %d: %d context switches, run time median %.1f us, max %.1f us; switch duration median %.1f us, max %.1f us (%d)" %
              (cpu, len(v) + 1, v[len(v) // 2] / 1e3, v[-1] / 1e3,
               d[len(d) // 2] / 1e3 if d else 0, d[-1] / 1e3 if d else 0, len(d)))
print("\n".join(out))
PY
tap_import "$R/check.tap" $?

# load/unload while a reader records
check "enable sched_switch again" magnetctl probe enable sched_switch stream sched
bg rec2 "$MAGNETCTL" record sched -o "$R/sched2.trace"
sleep 0.5
check "rmmod magnet_sched while recording" rmmod magnet_sched
n=$(list_count probe '^sched_switch$')
check_eq "its probes are gone" 0 "$n"
check "insmod magnet_sched while recording" insmod "$MAGNET_MODDIR/magnet_sched.ko"
check "enable the new sched_switch into the same stream" magnetctl probe enable sched_switch sched_fork stream sched
"$MAGNET_TOOLS/proc_load" fork 2 >/dev/null
sleep 0.3
check "rmmod with the probes enabled" rmmod magnet_sched
check "insmod again" insmod "$MAGNET_MODDIR/magnet_sched.ko"
kill -INT "${BG_PID[rec2]}"
bg_wait rec2 20
check_eq "the reader ends cleanly" 0 $?
n=$(magnetctl -j dump "$R/sched2.trace" | python3 -c '
import json, sys
print(sum(json.loads(l)["name"] == "sched_fork" for l in sys.stdin))')
check "forks recorded after the reload" test "$n" -ge 2

# the documented example module (docs/WRITING_PROBES.md)
if [ -f "$MAGNET_MODDIR/magnet_example.ko" ]; then
	check "insmod magnet_example" insmod "$MAGNET_MODDIR/magnet_example.ko"
	check "enable example_switch" magnetctl probe enable example_switch stream sched
	bg rec3 "$MAGNETCTL" record sched -o "$R/example.trace"
	sleep 1
	# disable before the reader stops: its own writes are context switches
	check "disable example_switch" magnetctl probe disable example_switch
	kill -INT "${BG_PID[rec3]}"
	bg_wait rec3 20
	n=$(magnetctl -j dump "$R/example.trace" | python3 -c '
import json, sys
print(sum(json.loads(l)["name"] == "example_switch" and json.loads(l)["size"] == 40 for l in sys.stdin))')
	check "example_switch records (8-byte payload): $n" test "$n" -gt 0
	check "enable example_switch again" magnetctl probe enable example_switch stream sched
	check "rmmod magnet_example while enabled" rmmod magnet_example
fi
check "stream delete sched" magnetctl stream delete sched
check "modules unload" magnet_unload
check_dmesg_clean
done_testing
