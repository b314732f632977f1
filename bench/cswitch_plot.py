#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Context-switch durations per CPU (the papers' Figures 12-13).

    bench/cswitch_plot.py RESULTS_DIR OUT.png

RESULTS_DIR holds cswitch-idle.trace and cswitch-busy.trace from
bench/cswitch-guest.sh.  Each trace is decoded with magnetctl -j dump; on
every CPU the sched_switch records are sorted by time and the time between
two consecutive switches is how long the task switched in by the first one
ran (the idle task included).  Writes RESULTS_DIR/cswitch.dat (condition,
cpu, duration in us), prints a per-CPU summary and plots with gnuplot:
the distribution (CDF) of the durations, one panel per CPU: idle, busy
(all tasks) and busy counting only the busy loops ("sh") switched in.
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

runs = {}
for cond in ("idle", "busy"):
    dump = subprocess.run([magnetctl, "-j", "dump", os.path.join(rdir, "cswitch-%s.trace" % cond)],
                          check=True, capture_output=True, text=True).stdout
    percpu = collections.defaultdict(list)
    lost = 0
    for line in dump.splitlines():
        r = json.loads(line)
        if r["name"] == "LOST":
            lost += r["lost"]["count"]
        elif r["name"] == "sched_switch":
            percpu[r["cpu"]].append((r["timestamp"], r["sched_switch"]["next_comm"]))
    durs, loops = {}, {}
    for cpu, ts in percpu.items():
        ts.sort()
        durs[cpu] = sorted((b[0] - a[0]) / 1e3 for a, b in zip(ts, ts[1:]))
        # the busy loops alone (sh -c 'while :; do :; done'): their time slices
        loops[cpu] = sorted((b[0] - a[0]) / 1e3 for a, b in zip(ts, ts[1:]) if a[1] == "sh")
    runs[cond] = durs
    if cond == "busy":
        runs["loops"] = loops
    if lost:
        print("%s: %d events lost" % (cond, lost))

cpus = sorted(set(runs["idle"]) | set(runs["busy"]))
dat = os.path.join(rdir, "cswitch.dat")
with open(dat, "w") as f:
    # one gnuplot data block per (condition, cpu): duration_us cdf
    for cond in ("idle", "busy", "loops"):
        for cpu in cpus:
            v = runs[cond].get(cpu, [])
            f.write("# %s cpu%d\n" % (cond, cpu))
            for i, d in enumerate(v):
                f.write("%.3f %.5f\n" % (max(d, 0.1), (i + 1) / len(v)))
            f.write("\n\n")
print("%-5s %3s %8s %10s %10s %10s" % ("cond", "cpu", "switches", "p50_us", "p90_us", "max_us"))
for cond in ("idle", "busy", "loops"):
    for cpu in cpus:
        v = runs[cond].get(cpu, [])
        if v:
            print("%-5s %3d %8d %10.1f %10.1f %10.1f" % (cond, cpu, len(v) + 1, v[len(v) // 2],
                                                        v[int(len(v) * 0.9)], v[-1]))

gp = ["set terminal pngcairo size %d,480 font 'sans,10'" % (420 * len(cpus) + 80),
      "set output '%s'" % png,
      "set multiplot layout 1,%d title 'sched\\_switch: run time between two context switches per CPU (%s)'"
      % (len(cpus), kver.replace("_", "\\_")),
      "set logscale x", "set xlabel 'duration (us)'", "set ylabel 'CDF'", "set yrange [0:1]",
      "set key below", "set grid"]
for j, cpu in enumerate(cpus):
    n_i, n_b, n_l = (len(runs[c].get(cpu, [])) for c in ("idle", "busy", "loops"))
    gp.append("set title 'CPU %d'" % cpu)
    gp.append("plot '%s' index %d using 1:2 with steps lw 2 title 'idle VM, all tasks (%d)', "
              "'' index %d using 1:2 with steps lw 2 title 'CPU-bound, all tasks (%d)', "
              "'' index %d using 1:2 with steps lw 2 dt 2 title 'CPU-bound, busy loops only (%d)'"
              % (dat, j, n_i, len(cpus) + j, n_b, 2 * len(cpus) + j, n_l))
gp.append("unset multiplot")
subprocess.run(["gnuplot"], input="\n".join(gp), text=True, check=True)
print("wrote", png)
