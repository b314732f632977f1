#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Context switches per CPU (the papers' Figures 12-13): run times and
switch durations.

    bench/cswitch_plot.py RESULTS_DIR OUT.png

RESULTS_DIR holds cswitch-idle.trace and cswitch-busy.trace from
bench/cswitch-guest.sh.  Each trace is decoded with magnetctl -j dump.
Two quantities per CPU, each named for what it is:
  - run time: the sched_switch records sorted by time; the time between
    two consecutive switches is how long the task switched in by the
    first one ran (the idle task included);
  - switch duration: each sched_switch_end record's switch_ns, the
    switch itself, from sched_switch in the old task to the entry of
    finish_task_switch() in the new one (the papers' context-switch time).
Writes RESULTS_DIR/cswitch.dat (one CDF block per quantity, condition and
CPU), prints a per-CPU summary and plots with gnuplot: a row per quantity,
a panel per CPU, curves for idle, busy (all tasks) and busy counting only
the busy loops ("sh") switched in.
"""
import collections
import json
import os
import subprocess
import sys

repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
magnetctl = os.environ.get("MAGNETCTL", os.path.join(repo, "build/magnetctl/magnetctl"))
rdir, png = sys.argv[1], sys.argv[2]
kver = ""
if os.path.exists(os.path.join(rdir, "env.txt")):
    kver = open(os.path.join(rdir, "env.txt")).readline().strip()

QTY = ("run", "switch")
CONDS = ("idle", "busy", "loops")
data = {q: {} for q in QTY}     # data[qty][cond][cpu] = sorted values, us
for cond in ("idle", "busy"):
    dump = subprocess.run([magnetctl, "-j", "dump", os.path.join(rdir, "cswitch-%s.trace" % cond)],
                          check=True, capture_output=True, text=True).stdout
    percpu = collections.defaultdict(list)
    sw = collections.defaultdict(list)
    swl = collections.defaultdict(list)
    lost = 0
    for line in dump.splitlines():
        r = json.loads(line)
        if r["name"] == "LOST":
            lost += r["lost"]["count"]
        elif r["name"] == "sched_switch":
            percpu[r["cpu"]].append((r["timestamp"], r["sched_switch"]["next_comm"]))
        elif r["name"] == "sched_switch_end":
            e = r["sched_switch_end"]
            sw[r["cpu"]].append(e["switch_ns"] / 1e3)
            comm = r.get("comm", "")
            if comm == "sh":
                swl[r["cpu"]].append(e["switch_ns"] / 1e3)
    runs, loops = {}, {}
    for cpu, ts in percpu.items():
        ts.sort()
        runs[cpu] = sorted((b[0] - a[0]) / 1e3 for a, b in zip(ts, ts[1:]))
        # the busy loops alone (sh -c 'while :; do :; done'): their time slices
        loops[cpu] = sorted((b[0] - a[0]) / 1e3 for a, b in zip(ts, ts[1:]) if a[1] == "sh")
    data["run"][cond] = runs
    data["switch"][cond] = {c: sorted(v) for c, v in sw.items()}
    if cond == "busy":
        data["run"]["loops"] = loops
        data["switch"]["loops"] = {c: sorted(v) for c, v in swl.items()}
    if lost:
        print("%s: %d events lost" % (cond, lost))

cpus = sorted(set(data["run"]["idle"]) | set(data["run"]["busy"]))
dat = os.path.join(rdir, "cswitch.dat")
index = {}
with open(dat, "w") as f:
    # one gnuplot data block per (quantity, condition, cpu): value_us cdf
    n = 0
    for q in QTY:
        for cond in CONDS:
            for cpu in cpus:
                v = data[q].get(cond, {}).get(cpu, [])
                f.write("# %s %s cpu%d\n" % (q, cond, cpu))
                for i, d in enumerate(v):
                    f.write("%.3f %.5f\n" % (max(d, 0.01), (i + 1) / len(v)))
                if not v:
                    f.write("0.01 0\n")
                f.write("\n\n")
                index[(q, cond, cpu)] = n
                n += 1
print("%-6s %-5s %3s %8s %10s %10s %10s" % ("what", "cond", "cpu", "n", "p50_us", "p90_us", "max_us"))
for q in QTY:
    for cond in CONDS:
        for cpu in cpus:
            v = data[q].get(cond, {}).get(cpu, [])
            if v:
                print("%-6s %-5s %3d %8d %10.1f %10.1f %10.1f" % (q, cond, cpu, len(v), v[len(v) // 2],
                                                                 v[int(len(v) * 0.9)], v[-1]))

title = {"run": "run time between two switches (sched\\_switch)",
         "switch": "switch duration (sched\\_switch\\_end switch\\_ns)"}
gp = ["set terminal pngcairo size %d,860 font 'sans,10'" % (420 * len(cpus) + 80),
      "set output '%s'" % png,
      "set multiplot layout 2,%d title 'context switches per CPU (%s)'"
      % (len(cpus), kver.replace("_", "\\_")),
      "set logscale x", "set ylabel 'CDF'", "set yrange [0:1]",
      "set key below", "set grid"]
for q in QTY:
    gp.append("set xlabel '%s (us)'" % ("run time" if q == "run" else "switch duration"))
    for cpu in cpus:
        cnt = [len(data[q].get(c, {}).get(cpu, [])) for c in CONDS]
        gp.append("set title 'CPU %d: %s'" % (cpu, title[q]))
        gp.append("plot '%s' index %d using 1:2 with steps lw 2 title 'idle VM, all tasks (%d)', "
                  "'' index %d using 1:2 with steps lw 2 title 'CPU-bound, all tasks (%d)', "
                  "'' index %d using 1:2 with steps lw 2 dt 2 title 'CPU-bound, busy loops only (%d)'"
                  % (dat, index[(q, "idle", cpu)], cnt[0], index[(q, "busy", cpu)], cnt[1],
                     index[(q, "loops", cpu)], cnt[2]))
gp.append("unset multiplot")
subprocess.run(["gnuplot"], input="\n".join(gp), text=True, check=True)
print("wrote", png)
