#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turns bench/results/<kver>/*.csv into docs/benchmarks.md and
docs/img/bench-*.png (gnuplot).  Run by bench/run.sh; can be rerun alone:

    python3 bench/report.py [--results DIR] [--doc FILE]

(defaults: bench/results, docs/benchmarks.md; the plots go to img/ beside
FILE).  Statistics: per configuration the median over repetitions, the
spread as min..max, and the ratio of the median to the baseline's median
measured in the same VM run; for the perturbation part also a bootstrap
interval of each goodput ratio and an A/A control.  Nothing here judges a
number, except that the A/A control says whether a run can be trusted.
"""
import argparse
import csv
import os
import random
import statistics
import subprocess
import sys
import zlib

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RES = os.path.join(TOP, "bench", "results")
IMG = os.path.join(TOP, "docs", "img")
DOC = os.path.join(TOP, "docs", "benchmarks.md")
TEMPLATE = os.path.join(TOP, "bench", "benchmarks.md.in")
BOOT_N = 10000     # bootstrap resamples
AA_TOL = 0.03      # the A/A control's tolerance


def col(r, name):
    """A row's number in column NAME; NaN if absent (older CSV files)."""
    return fnum(r.get(name))


def fnum(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return float("nan")


def read_csv(kver, name):
    p = os.path.join(RES, kver, name)
    if not os.path.exists(p):
        return []
    with open(p) as f:
        return list(csv.DictReader(f))


def env(kver):
    """The VM's description: env.txt, or a subset run's env-PARTS.txt."""
    d = {}
    p = os.path.join(RES, kver, "env.txt")
    if not os.path.exists(p):
        subsets = sorted(n for n in os.listdir(os.path.join(RES, kver))
                         if n.startswith("env-") and n.endswith(".txt"))
        p = os.path.join(RES, kver, subsets[0]) if subsets else p
    if os.path.exists(p):
        for line in open(p):
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                d[k] = v
    return d


def med(xs):
    xs = [x for x in xs if x == x]
    return statistics.median(xs) if xs else float("nan")


def spread(xs, fmt):
    xs = [x for x in xs if x == x]
    if not xs:
        return "n/a"
    return (fmt + "..." + fmt) % (min(xs), max(xs))


def group(rows, *keys):
    out = {}
    for r in rows:
        out.setdefault(tuple(r[k] for k in keys), []).append(r)
    return out


def gnuplot(script):
    try:
        subprocess.run(["gnuplot"], input=script, text=True, check=True,
                       capture_output=True)
        return True
    except (OSError, subprocess.CalledProcessError) as e:
        sys.stderr.write("report: gnuplot failed: %s\n" % getattr(e, "stderr", e))
        return False


def lost_pct(cfg, events, lost):
    """% of a configuration's events lost: bpftrace counts only what it
    printed as events, so its losses come on top; the others count all."""
    if not events:
        return float("nan")
    return 100.0 * lost / (events + (lost if cfg == "bpftrace" else 0))


def record_bytes(payload):
    """A MAGNET record's size: 32-byte header plus payload, 8-byte aligned."""
    return (int(payload) + 32 + 7) // 8 * 8


def fmt(x, spec):
    return "n/a" if x != x else spec % x


def boot_interval(seed, draw):
    """5th and 95th percentile of BOOT_N values of DRAW(rnd), rnd seeded
    from SEED (the same interval on every run of the report)."""
    rnd = random.Random(zlib.crc32(seed.encode()))
    rs = sorted(draw(rnd) for _ in range(BOOT_N))
    return rs[int(0.05 * BOOT_N)], rs[int(0.95 * BOOT_N) - 1]


def bootstrap(num, den, seed):
    """Ratio of the medians of NUM and DEN, each resampled with replacement
    BOOT_N times: (5th, 95th percentile).  NaN if either has < 2 values."""
    num = [x for x in num if x == x]
    den = [x for x in den if x == x]
    if len(num) < 2 or len(den) < 2:
        return float("nan"), float("nan")
    return boot_interval(seed, lambda rnd: statistics.median(rnd.choices(num, k=len(num))) /
                         statistics.median(rnd.choices(den, k=len(den))))


def bound_text(lo, hi):
    """A bootstrap interval as the tables show it: lower bound (...upper)."""
    return "%s (...%s)" % (fmt(lo, "%.2f"), fmt(hi, "%.2f"))


def short(kver):
    return kver.split("-")[0].split("+")[0]


PERTURB_ORDER = ["none", "none2", "loaded", "m1", "m2", "m3", "m4", "m4drop", "m4fr", "m4local", "m4eager",
                 "ftrace", "ftraceoff", "tcpdump", "bpftrace", "lttng", "lttngctx"]
# configurations without a consumer process: m4's cost taken apart, and
# the kernel's tracer on the same hooks into a ring nobody reads
NO_CONSUMER = ["m4drop", "m4fr", "ftrace", "ftraceoff"]
PERTURB_DESC = {
    "none": "no monitoring (no MAGNET module loaded)",
    "none2": "no monitoring, again (A/A control)",
    "loaded": "MAGNET loaded, probes off",
    "m1": "MAGNET, 1 event/packet (sock_send)",
    "m2": "MAGNET, 2 events (+ udp_send)",
    "m3": "MAGNET, 3 events (+ ip_send)",
    "m4": "MAGNET, 4 events (+ dev_send)",
    "m4drop": "MAGNET's 4 hooks, every event refused by a drop filter (nothing written)",
    "m4fr": "MAGNET, 4 events into a ring nobody reads (no consumer)",
    "m4local": "MAGNET, 4 events, stream on the local clock",
    "m4eager": "MAGNET, 4 events, record --watermark 0 (a read per record)",
    "ftrace": "the kernel's ftrace, same 4 hooks, into its ring nobody reads (no consumer)",
    "ftraceoff": "the kernel's ftrace, same 4 hooks, recording off (the hooks' floor)",
    "tcpdump": "tcpdump -s 96 -w FILE on the sender's veth",
    "bpftrace": "bpftrace, same 4 hooks, printf to a file",
    "lttng": "LTTng 2.13 kernel tracing, 4 kprobe events, to a file",
    "lttngctx": "LTTng 2.13, 4 kprobe events + 6 context fields (48 B), to a file",
}
AA_CONTROLS = ["none2", "loaded"]


def goodputs(rs):
    return [fnum(r["goodput_mbps"]) for r in rs]


def paired_bootstrap(ratios, seed):
    """The median of per-repetition RATIOS, resampled (whole repetitions,
    with replacement) BOOT_N times: (5th, 95th percentile).  NaN if there
    are fewer than 2."""
    ratios = [x for x in ratios if x == x]
    if len(ratios) < 2:
        return float("nan"), float("nan")
    return boot_interval(seed, lambda rnd: statistics.median(rnd.choices(ratios, k=len(ratios))))


def rep_ratios(g, num, den):
    """NUM's goodput over DEN's of the same repetition, for each of NUM's
    repetitions that DEN ran too."""
    den_by_rep = {r.get("rep"): fnum(r["goodput_mbps"]) for r in g.get((den,), [])}
    return [fnum(r["goodput_mbps"]) / den_by_rep[r.get("rep")] for r in g.get((num,), [])
            if den_by_rep.get(r.get("rep"))]


def perturb_ratios(kv, g):
    """Per configuration: (median ratio to none, bootstrap 5th, 95th
    percentile).  Paired: each repetition's goodput over the baseline's
    of the same repetition (run minutes apart, so a slow phase of the
    host cancels), the median of those ratios, repetitions resampled for
    the interval.  Rows without a baseline run of their repetition fall
    back to the ratio of the medians, each side resampled on its own."""
    base = goodputs(g.get(("none",), []))
    out = {}
    for (c,), rs in g.items():
        gp = goodputs(rs)
        pairs = rep_ratios(g, c, "none")
        if len(pairs) == len(rs) and len(pairs) >= 2:
            lo, hi = paired_bootstrap(pairs, "%s/%s" % (kv, c))
            out[c] = (med(pairs), lo, hi)
        else:
            lo, hi = bootstrap(gp, base, "%s/%s" % (kv, c))
            out[c] = (med(gp) / med(base) if base else float("nan"), lo, hi)
    return out


# paired ratios that do not involve the baseline: MAGNET against the
# other recording tracers in the run and the kernel's own tracer on the
# same four hooks, repetition by repetition
PEER_PAIRS = [
    ("m4", "lttngctx", "MAGNET vs. LTTng, 4 events of 48 bytes per datagram to a file each"),
    ("m4", "tcpdump", "MAGNET's 4 events to a file vs. tcpdump's one 96-byte capture per packet"),
    ("m4local", "lttngctx", "the same with MAGNET's stream on the local clock (an option) vs. LTTng"),
    ("m4fr", "ftrace", "4 events into MAGNET's ring vs. into ftrace's, neither read"),
    ("m4drop", "ftraceoff", "MAGNET's hooks and filter refusal vs. the bare hooks"),
    ("m4fr", "ftraceoff", "MAGNET recording 4 events vs. the bare hooks"),
    ("m4", "ftraceoff", "MAGNET recording 4 events to a file vs. the bare hooks"),
    ("ftraceoff", "none", "the bare hooks vs. no monitoring (the floor of any tracer on them)"),
]


def peer_ratios(kv, g):
    """The PEER_PAIRS this run has: (num, den, what, median of the paired
    ratios, bootstrap 5th, 95th percentile, pairs)."""
    out = []
    for num, den, what in PEER_PAIRS:
        if (num,) not in g or (den,) not in g:
            continue
        pairs = rep_ratios(g, num, den)
        lo, hi = paired_bootstrap(pairs, "%s/%s/%s" % (kv, num, den))
        out.append((num, den, what, med(pairs) if pairs else float("nan"), lo, hi, len(pairs)))
    return out


def peer_table(kv, g):
    """peer_ratios() as table lines."""
    md = ["| %s / %s | %s | %d | %s | %s |" % (num, den, what, n, fmt(r, "%.2f"), bound_text(lo, hi))
          for num, den, what, r, lo, hi, n in peer_ratios(kv, g)]
    if not md:
        return []
    return ["\nThe same repetitions paired against the other recording tracers and the kernel's tracer "
            "on the same hooks (no baseline in these ratios, so they stand even where the A/A control "
            "fails):\n",
            "| ratio of goodputs | what it compares | pairs | median | bootstrap 5th percentile (...95th) |",
            "| --- | --- | --- | --- | --- |"] + md


def aa_check(ratios):
    """The A/A controls' verdict: (text, trustworthy)."""
    parts, ok = [], True
    for c in AA_CONTROLS:
        if c in ratios:
            r, lo, hi = ratios[c]
            agree = abs(r - 1) <= AA_TOL
            ok = ok and agree
            parts.append("%s/none %.3f (bootstrap 5-95 %%: %s...%s)%s" % (
                c, r, fmt(lo, "%.3f"), fmt(hi, "%.3f"), "" if agree else " **outside**"))
    if not parts:
        return "no A/A control in this run", False
    return ", ".join(parts), ok


def cpu_pct(r, name):
    """COLUMN's nanoseconds as % of the run's seconds."""
    return 100.0 * col(r, name) / 1e9 / col(r, "seconds")


def consumer_pct(r):
    """The consumer's CPU %: schedstat's, or the ticks' of older rows."""
    x = cpu_pct(r, "consumer_ns")
    return x if x == x else fnum(r["consumer_cpu"])


def consumer_cells(c, rs, kw_base):
    """Consumer CPU % (schedstat; ticks for older rows), kworkers' CPU %
    above none's, and µs per event recorded of both together."""
    if c.startswith("none") or c == "loaded" or c in NO_CONSUMER:
        return ["-", "%.1f" % med([cpu_pct(r, "kworker_ns") - kw_base for r in rs])
                if kw_base == kw_base else "n/a", "-"]
    sched = med([cpu_pct(r, "consumer_ns") for r in rs])
    cons = "%.1f" % sched if sched == sched else \
        "%.1f (ticks)" % med([fnum(r["consumer_cpu"]) for r in rs])
    extra = [col(r, "kworker_ns") - kw_base / 100 * 1e9 * col(r, "seconds") for r in rs]
    per_ev = [1e-3 * (col(r, "consumer_ns") + x) / col(r, "trace_events")
              if col(r, "trace_events") else float("nan") for r, x in zip(rs, extra)]
    return [cons, fmt(med([cpu_pct(r, "kworker_ns") - kw_base for r in rs]), "%.1f"),
            fmt(med(per_ev), "%.2f")]


def trace_cells(c, rs):
    """Events recorded (tracer's count), per datagram sent (in the trace),
    bytes per event, events lost % (tracer's count), lost in the trace."""
    if c.startswith("none") or c in ("loaded", "ftraceoff"):
        return ["-"] * 5
    ev = [fnum(r["events"]) for r in rs]
    lostpct = [lost_pct(c, e, fnum(r["events_lost"])) for e, r in zip(ev, rs)]
    # m4drop writes nothing: its events are those the filter refused
    tev = ev if c == "m4drop" else [col(r, "trace_events") for r in rs]
    per_dg = [t / col(r, "sent_packets") if col(r, "sent_packets") else float("nan")
              for t, r in zip(tev, rs)]
    per_ev = [col(r, "trace_bytes") / t if t else float("nan") for t, r in zip(tev, rs)]
    if c == "lttng":    # no count of the trace's events
        counted = "n/a (%.0f KiB of trace)" % med([fnum(r["file_kb"]) for r in rs])
        lost = "%.0f discarded" % med([fnum(r["events_lost"]) for r in rs])
    else:
        counted, lost = fmt(med(ev), "%.0f"), fmt(med(lostpct), "%.2f")
    return [counted, fmt(med(per_dg), "%.3f"), fmt(med(per_ev), "%.1f"), lost,
            fmt(med([col(r, "trace_lost") for r in rs]), "%.0f")]


def perturb_plot(kv, g, ratios, cfgs):
    dat = []
    for i, c in enumerate(cfgs):
        r, lo, hi = ratios[c]
        dat.append("%d %s %.4f %.4f %.4f %.2f" % (
            i, c, r, lo if lo == lo else r, hi if hi == hi else r,
            med([consumer_pct(x) for x in g[(c,)]])))
    png = "bench-perturb-%s.png" % short(kv)
    datf = os.path.join(IMG, png + ".dat")
    with open(datf, "w") as f:
        f.write("\n".join(dat) + "\n")
    if gnuplot("""set terminal pngcairo size 900,420 font ",10"
set output "%s"
set title "Goodput relative to no monitoring (iperf3 UDP flood), %s, TCG VM"
set style fill solid 0.6
set boxwidth 0.6
set yrange [0:*]
set ylabel "goodput / baseline (median, bars: bootstrap 5-95 %%)"
set y2label "consumer CPU %%"
set y2tics
set ytics nomirror
set xtics rotate by -20
plot "%s" using 1:3:xtic(2) with boxes title "goodput ratio", \\
     "" using 1:3:4:5 with yerrorbars lc rgb "black" pt 0 notitle, \\
     "" using 1:6 axes x1y2 with points pt 7 ps 1.2 title "consumer CPU %%"
""" % (os.path.join(IMG, png), kv, datf)):
        return "\n![perturbation %s](img/%s)\n" % (kv, png)
    return ""


def perturb_section(kvers):
    md = []
    for kv in kvers:
        rows = read_csv(kv, "perturb.csv")
        if not rows:
            continue
        g = group(rows, "config")
        ratios = perturb_ratios(kv, g)
        cfgs = [c for c in PERTURB_ORDER if (c,) in g]
        kw_base = med([cpu_pct(r, "kworker_ns") for r in g.get(("none",), [])])
        aa, ok = aa_check(ratios)
        md.append("\n#### %s\n" % kv)
        md.append("**A/A control** (must agree within ±%.0f %%): %s. %s\n" % (
            100 * AA_TOL, aa, "The run agrees with itself." if ok else
            "**This run is not trustworthy: the ratios below are within the noise of the machine.**"))
        md.append("| configuration | n | goodput Mb/s median (min...max) | vs. none | lower bound: bootstrap 5th percentile (...95th) | offered Mb/s | datagrams lost % | receiver socket drops % of sent | backlog drops |")
        md.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for c in cfgs:
            rs = g[(c,)]
            gp = goodputs(rs)
            r, lo, hi = ratios[c]
            drops = [100.0 * col(x, "rcvbuf_drops") / col(x, "sent_packets") if col(x, "sent_packets")
                     else float("nan") for x in rs]
            md.append("| %s | %d | %.1f (%s) | %.2f | %s | %.1f | %.1f | %s | %s |" % (
                PERTURB_DESC.get(c, c), len(rs), med(gp), spread(gp, "%.1f"), r, bound_text(lo, hi),
                med([fnum(x["sent_mbps"]) for x in rs]), med([fnum(x["loss_pct"]) for x in rs]),
                fmt(med(drops), "%.2f"), fmt(med([col(x, "backlog_drops") for x in rs]), "%.0f")))
        md.append("\n| configuration | sender CPU % | receiver CPU % | consumer CPU % (schedstat) | kworkers CPU % above none | consumer + kworkers µs per event | events recorded | events per datagram sent (trace) | bytes per event (trace) | events lost % | lost events in the trace |")
        md.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for c in cfgs:
            rs = g[(c,)]
            md.append("| %s | %.1f | %.1f | %s |" % (
                PERTURB_DESC.get(c, c), med([fnum(x["sender_cpu"]) for x in rs]),
                med([fnum(x["receiver_cpu"]) for x in rs]),
                " | ".join(consumer_cells(c, rs, kw_base) + trace_cells(c, rs))))
        md.extend(peer_table(kv, g))
        md.append(perturb_plot(kv, g, ratios, cfgs))
    return "\n".join(md)


def proc_us_per_dgram(r):
    """CPU time of sender, receiver and consumer per datagram received, in
    µs.  iperf3's percentages are of its test's duration (bytes received
    over goodput), the consumer's of the whole run (seconds)."""
    n, gp = fnum(r["rcv_packets"]), fnum(r["goodput_mbps"])
    if not n or not gp or n != n or gp != gp:
        return float("nan")
    dur = n * 1400 * 8 / (gp * 1e6)
    cpu = (fnum(r["sender_cpu"]) + fnum(r["receiver_cpu"])) / 100 * dur + \
        fnum(r["consumer_cpu"]) / 100 * fnum(r["seconds"])
    return 1e6 * cpu / n


HOOK_ORDER = ["sock_send", "udp_send", "ip_send", "dev_send",
              "dev_recv", "ip_recv", "udp_recv", "sock_recv"]


def hooks_section(kvers):
    """Per network event: its hook on each kernel and what it costs per
    event, from hooks.csv: CPU µs per datagram (sender, receiver and
    ksoftirqd threads) above "loaded" (the same repetition's), divided by
    the events recorded per datagram sent."""
    md = []
    for kv in kvers:
        rows = read_csv(kv, "hooks.csv")
        if not rows:
            continue
        hooks = {r["event"]: r["hook"] for r in read_csv(kv, "hookinfo.csv")}
        g = group(rows, "config")
        def us(r):
            n = fnum(r["sent"])
            return (fnum(r["sender_ns"]) + fnum(r["receiver_ns"]) +
                    fnum(r["ksoftirqd_ns"])) / 1000 / n if n else float("nan")
        base = {r["rep"]: us(r) for r in g.get(("loaded",), [])}
        if not base:
            continue
        md.append("\n#### %s\n" % kv)
        lo = [v for v in base.values() if v == v]
        md.append("Baseline (`loaded`): %.1f µs of CPU per datagram (%s).\n" % (med(lo), spread(lo, "%.1f")))
        md.append("| event | hook | n | events per datagram | CPU µs per datagram above loaded, median (min...max) | µs per event |")
        md.append("| --- | --- | --- | --- | --- | --- |")
        for e in HOOK_ORDER:
            rs = g.get(("h_" + e,), [])
            if not rs:
                continue
            d = [us(r) - base[r["rep"]] for r in rs if r["rep"] in base]
            epd = [fnum(r["events"]) / fnum(r["sent"]) for r in rs if fnum(r["sent"]) > 0]
            per = med(d) / med(epd) if med(epd) else float("nan")
            md.append("| `%s` | `%s` | %d | %.2f | %.2f (%s) | %.2f |" % (
                e, hooks.get(e, "?"), len(rs), med(epd), med(d), spread(d, "%.2f"), per))
    return "\n".join(md)


def fixedrate_section(kvers):
    md = []
    for kv in kvers:
        rows = read_csv(kv, "fixedrate.csv")
        if not rows:
            continue
        g = group(rows, "config")

        us_per_dgram = proc_us_per_dgram

        base = med([us_per_dgram(r) for r in g.get(("none",), [])])
        md.append("\n#### %s\n" % kv)
        md.append("| configuration | n | goodput Mb/s median (min...max) | datagrams lost % | CPU µs per datagram median (min...max) | vs. none | sender CPU % | receiver CPU % | consumer CPU % | events lost % |")
        md.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        dat = []
        for i, c in enumerate([c for c in PERTURB_ORDER if (c,) in g]):
            rs = g[(c,)]
            gp = [fnum(r["goodput_mbps"]) for r in rs]
            us = [us_per_dgram(r) for r in rs]
            ev = [fnum(r["events"]) for r in rs]
            el = [fnum(r["events_lost"]) for r in rs]
            lostpct = [lost_pct(c, e, l) for e, l in zip(ev, el)]
            ratio = med(us) / base if base and base == base else float("nan")
            md.append("| %s | %d | %.1f (%s) | %.2f | %.1f (%s) | %.2f | %.1f | %.1f | %s | %s |" % (
                PERTURB_DESC.get(c, c), len(rs), med(gp), spread(gp, "%.1f"),
                med([fnum(r["loss_pct"]) for r in rs]), med(us), spread(us, "%.1f"), ratio,
                med([fnum(r["sender_cpu"]) for r in rs]), med([fnum(r["receiver_cpu"]) for r in rs]),
                "-" if c in ("none", "loaded") else "%.1f" % med([fnum(r["consumer_cpu"]) for r in rs]),
                "-" if c in ("none", "loaded") else
                ("%.0f discarded" % med(el) if c == "lttng" else "%.2f" % med(lostpct))))
            xs = [x for x in us if x == x]
            dat.append("%d %s %.3f %.3f %.3f" % (i, c, med(us), min(xs) if xs else 0, max(xs) if xs else 0))
        png = "bench-fixedrate-%s.png" % short(kv)
        datf = os.path.join(IMG, png + ".dat")
        with open(datf, "w") as f:
            f.write("\n".join(dat) + "\n")
        if gnuplot("""set terminal pngcairo size 900,420 font ",10"
set output "%s"
set title "CPU time per datagram at a fixed offered rate (iperf3 UDP), %s, TCG VM"
set style fill solid 0.6
set boxwidth 0.6
set yrange [0:*]
set ylabel "CPU us per datagram: sender + receiver + consumer (median, min..max)"
set xtics rotate by -20
plot "%s" using 1:3:xtic(2) with boxes title "CPU per datagram", \\
     "" using 1:3:4:5 with yerrorbars lc rgb "black" pt 0 notitle
""" % (os.path.join(IMG, png), kv, datf)):
            md.append("\n![fixed rate %s](img/%s)\n" % (kv, png))
    return "\n".join(md)


def micro_section(kvers):
    md = []
    plots = []
    for kv in kvers:
        rows = read_csv(kv, "micro.csv")
        if not rows:
            continue
        g = group(rows, "mode", "len")
        md.append("\n#### %s\n" % kv)
        md.append("| what | payload B | n | ns/call median (min...max over runs) | TSC cycles/call | vs. ftrace ring buffer, same payload |")
        md.append("| --- | --- | --- | --- | --- | --- |")
        order = [("empty", "0"), ("off", "0"), ("clock-tsc", "0"),
                 ("clock-local", "0"), ("clock-mono", "0")]
        for ln in ["0", "16", "64", "256", "1024"]:
            order += [("magnet", ln), ("magnet_local", ln), ("ftrace", ln)]
        order.append(("magnet_full", "64"))
        names = {"empty": "timing loop alone", "off": "magnet_add(), point disabled",
                 "clock-tsc": "clock read: the TSC (rdtsc_ordered(), what a monotonic ring extrapolates from)",
                 "clock-local": "clock read: local_clock()",
                 "clock-mono": "clock read: ktime_get_mono_fast_ns()",
                 "magnet": "magnet_add(), enabled (monotonic clock: from the TSC where trusted)",
                 "magnet_local": "magnet_add(), enabled, local clock",
                 "ftrace": "ftrace ring buffer reserve+commit (local clock)",
                 "magnet_full": "magnet_add(), ring full (drop + count)"}
        dat = {"magnet": [], "magnet_local": [], "ftrace": []}
        for k in order:
            if k not in g:
                continue
            rs = g[k]
            ns = [fnum(r["ns_med"]) for r in rs]
            ratio = ""
            if k[0] in ("magnet", "magnet_local") and ("ftrace", k[1]) in g:
                ratio = "%.2f" % (med(ns) / med([fnum(r["ns_med"]) for r in g[("ftrace", k[1])]]))
            md.append("| %s | %s | %d | %.1f (%s) | %.0f | %s |" % (
                names[k[0]], k[1], len(rs), med(ns), spread(ns, "%.1f"),
                med([fnum(r["cyc_med"]) for r in rs]), ratio))
            if k[0] in dat:
                dat[k[0]].append("%s %.2f %.2f %.2f" % (k[1], med(ns), min(ns), max(ns)))
        for m in dat:
            f = os.path.join(IMG, "bench-micro-%s-%s.dat" % (m, short(kv)))
            with open(f, "w") as fh:
                fh.write("\n".join(dat[m]) + "\n")
            plots.append('"%s" using ($1+1):2:3:4 with yerrorlines title "%s %s"' % (f, m, short(kv)))
    if plots and gnuplot("""set terminal pngcairo size 800,420 font ",10"
set output "%s"
set title "Cost per event in the VM (median of per-run medians; bars min..max)"
set logscale x 2
set xlabel "payload bytes + 1"
set ylabel "ns per call"
set yrange [0:*]
set key top left
plot %s
""" % (os.path.join(IMG, "bench-micro.png"), ", ".join(plots))):
        md.append("\n![cost per event](img/bench-micro.png)\n")
    return "\n".join(md)


def inflow_ns(r, col):
    """CPU ns per event of inflow.csv's sample column @col."""
    ev, hz = fnum(r["events"]), fnum(r["hz"])
    return fnum(r[col]) / hz * 1e9 / ev if ev > 0 and hz > 0 else float("nan")


def inflow_med(rs, col):
    """The median over inflow.csv rows @rs of inflow_ns(row, @col)."""
    return med([inflow_ns(r, col) for r in rs])


def inflow_section(kvers):
    """From inflow.csv: the CPU time per event in MAGNET's write path and
    in the hook handlers during part 1's flood (perf samples), against
    the tight loop's magnet_add() of micro.csv (16-byte payload, the
    network events' size)."""
    md = []
    names = {"m1": "1 event/datagram (`sock_send`)",
             "m4": "4 events/datagram (+ `udp_send`, `ip_send`, `dev_send`)",
             "m4local": "the same 4, stream on the local clock"}
    for kv in kvers:
        rows = read_csv(kv, "inflow.csv")
        if not rows:
            continue
        g = group(rows, "config")
        mi = group(read_csv(kv, "micro.csv"), "mode", "len")
        loop = med([fnum(r["ns_med"]) for r in mi.get(("magnet", "16"), [])]) \
            if ("magnet", "16") in mi else float("nan")
        md.append("\n#### %s\n" % kv)
        md.append("| configuration | n | events per run | lost | write path ns/event, median (min...max) | vs. the tight loop%s | hook handlers ns/event | share of all CPU samples in the write path |" % (
            " (section 2, 16 B: %.0f ns)" % loop if loop == loop else ""))
        md.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for c in ["m1", "m4", "m4local"]:
            rs = g.get((c,), [])
            if not rs:
                continue
            wp = [inflow_ns(r, "write_path_samples") for r in rs]
            hk = [inflow_ns(r, "hook_samples") for r in rs]
            share = [100.0 * fnum(r["write_path_samples"]) / fnum(r["samples"])
                     for r in rs if fnum(r["samples"]) > 0]
            md.append("| %s | %d | %.0f | %.0f | %.0f (%s) | %s | %.0f (%s) | %.1f %% |" % (
                names[c], len(rs), med([fnum(r["events"]) for r in rs]),
                sum(fnum(r["lost"]) for r in rs), med(wp), spread(wp, "%.0f"),
                "%.1f x" % (med(wp) / loop) if loop == loop else "-",
                med(hk), spread(hk, "%.0f"), med(share)))
    return "\n".join(md)


DRAIN_METHODS = ["record", "read", "aio", "uring"]
DRAIN_DESC = {
    "record": "magnetctl record (to a file)",
    "read": "read(2) into memory",
    "aio": "libaio, 4 reads in flight",
    "uring": "io_uring, 4 reads in flight",
}


def drain_rows(kv):
    rows = read_csv(kv, "drain.csv")
    for r in rows:
        r.setdefault("method", "record")    # results from before the method column
        if r["method"] is None:
            r["method"] = "record"
    return rows


def drain_section(kvers):
    md = []
    plots = []
    for kv in kvers:
        rows = drain_rows(kv)
        if not rows:
            continue
        g = group(rows, "method", "len")
        md.append("\n#### %s\n" % kv)
        mc = [fnum(r["MBps"]) for r in read_csv(kv, "memcpy.csv")]
        fw = [fnum(r["MBps"]) for r in read_csv(kv, "filewrite.csv")]
        # magnetctl record at its best payload size: the highest median
        rec = [med([fnum(r["MBps"]) for r in rs]) for k, rs in g.items() if k[0] == "record"]
        best = max(rec) if rec else float("nan")
        if mc:
            md.append("The VM's memcpy() bandwidth in the same run: %.0f MB/s (%s, n=%d); "
                      "`magnetctl record` at its best payload size (median): %.0f MB/s, %.1f %% of it.\n" % (
                          med(mc), spread(mc, "%.0f"), len(mc), best, 100 * best / med(mc)))
        if fw:
            md.append("Writing a file in the same `/tmp` (`dd` from `/dev/zero`, 256 KiB `write(2)`s, "
                      "CPU 1): %.0f MB/s (%s, n=%d); `magnetctl record` reaches %.0f %% of it.\n" % (
                          med(fw), spread(fw, "%.0f"), len(fw), 100 * best / med(fw)))
        md.append("| reader | payload B | record B | n | delivered MB/s median (min...max) | delivered events/s | produced events/s | lost % | reader CPU % |")
        md.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        methods = [m for m in DRAIN_METHODS if any(k[0] == m for k in g)]
        for m in methods:
            dat = []
            for key in sorted((k for k in g if k[0] == m), key=lambda k: int(k[1])):
                rs = g[key]
                mb = [fnum(r["MBps"]) for r in rs]
                prod = [fnum(r["produced"]) / fnum(r["seconds"]) for r in rs]
                rec = record_bytes(key[1])
                md.append("| %s | %s | %d | %d | %.1f (%s) | %.0f | %.0f | %.1f | %.1f |" % (
                    DRAIN_DESC.get(m, m), key[1], rec, len(rs), med(mb), spread(mb, "%.1f"),
                    med([fnum(r["events_per_s"]) for r in rs]), med(prod),
                    med([fnum(r["loss_pct"]) for r in rs]),
                    med([fnum(r["reader_cpu"]) for r in rs])))
                dat.append("%d %.2f %.2f %.2f %.1f" % (rec, med(mb), min(mb), max(mb),
                                                     med([fnum(r["reader_cpu"]) for r in rs])))
            f = os.path.join(IMG, "bench-drain-%s-%s.dat" % (m, short(kv)))
            with open(f, "w") as fh:
                fh.write("\n".join(dat) + "\n")
            plots.append('"%s" using 1:2:3:4 with yerrorlines title "%s %s"' % (f, m, short(kv)))
    if plots and gnuplot("""set terminal pngcairo size 800,460 font ",10"
set output "%s"
set title "Drain throughput by read path (producer saturating one CPU, 256 KiB watermark)"
set logscale x 2
set xlabel "record size, bytes"
set ylabel "MB/s delivered to the reader"
set yrange [0:*]
set key below
plot %s
""" % (os.path.join(IMG, "bench-drain.png"), ", ".join(plots))):
        md.append("\n![drain throughput](img/bench-drain.png)\n")
    return "\n".join(md)


def lossless_section(kvers):
    md = []
    plots = []
    for kv in kvers:
        rows = read_csv(kv, "lossless.csv")
        if not rows:
            continue
        g = group(rows, "method", "len")
        md.append("\n#### %s\n" % kv)
        md.append("| reader | payload B | record B | reps with a lossless rate | lossless MB/s median (min...max) | lossless events/s | reader CPU % there | saturated: delivered MB/s, lost % | runs |")
        md.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        methods = [m for m in DRAIN_METHODS if any(k[0] == m for k in g)]
        for m in methods:
            dat = []
            for key in sorted((k for k in g if k[0] == m), key=lambda k: int(k[1])):
                rs = g[key]
                best, sat = [], []
                for rp, rr in group(rs, "rep").items():
                    ok = [r for r in rr if fnum(r["lost"]) == 0]
                    if ok:
                        best.append(max(ok, key=lambda r: fnum(r["events_per_s"])))
                    sat += [r for r in rr if r["trial"] == "0"]
                rec = record_bytes(key[1])
                mb = [fnum(r["MBps"]) for r in best]
                md.append("| %s | %s | %d | %d of %d | %s | %s | %s | %.1f, %.1f | %d |" % (
                    DRAIN_DESC.get(m, m), key[1], rec, len(best), len(group(rs, "rep")),
                    "%.1f (%s)" % (med(mb), spread(mb, "%.1f")) if best else "none found",
                    "%.0f" % med([fnum(r["events_per_s"]) for r in best]) if best else "-",
                    "%.1f" % med([fnum(r["reader_cpu"]) for r in best]) if best else "-",
                    med([fnum(r["MBps"]) for r in sat]), med([fnum(r["loss_pct"]) for r in sat]),
                    len(rs)))
                if best:
                    dat.append("%d %.2f %.2f %.2f" % (rec, med(mb), min(mb), max(mb)))
            f = os.path.join(IMG, "bench-lossless-%s-%s.dat" % (m, short(kv)))
            with open(f, "w") as fh:
                fh.write("\n".join(dat) + "\n")
            if dat:
                plots.append('"%s" using 1:2:3:4 with yerrorlines title "%s %s"' % (f, m, short(kv)))
    if plots and gnuplot("""set terminal pngcairo size 800,460 font ",10"
set output "%s"
set title "Drain throughput with no event lost (producer paced, 256 KiB watermark)"
set logscale x 2
set xlabel "record size, bytes"
set ylabel "MB/s delivered, nothing lost"
set yrange [0:*]
set key below
plot %s
""" % (os.path.join(IMG, "bench-lossless.png"), ", ".join(plots))):
        md.append("\n![lossless drain throughput](img/bench-lossless.png)\n")
    return "\n".join(md)


def lossrule_section(kvers):
    md = []
    for kv in kvers:
        rows = read_csv(kv, "lossrule.csv")
        if not rows:
            continue
        g = group(rows, "rule", "args")
        md.append("\n#### %s\n" % kv)
        md.append("| `magnetctl record` options | n | events produced | lost % median (min...max) | goodput Mb/s |")
        md.append("| --- | --- | --- | --- | --- |")
        for key in g:
            rs = g[key]
            lp = [fnum(r["loss_pct"]) for r in rs]
            md.append("| %s | %d | %.0f | %.3f (%s) | %.1f |" % (
                key[1].replace("_", " ") or "(none: record's default, a quarter of a CPU's ring or 200 ms)", len(rs),
                med([fnum(r["produced"]) for r in rs]), med(lp), spread(lp, "%.3f"),
                med([fnum(r["goodput_mbps"]) for r in rs])))
    return "\n".join(md)


def sampling_section(kvers):
    md = []
    plots = []
    for kv in kvers:
        rows = read_csv(kv, "sampling.csv")
        if not rows:
            continue
        g = group(rows, "every")
        base = med([fnum(r["goodput_mbps"]) for r in g.get(("off",), [])])
        md.append("\n#### %s\n" % kv)
        md.append("| sampling | n | goodput Mb/s median (min...max) | vs. probes off | bootstrap 5th percentile (...95th) | sender CPU % | consumer CPU % | events offered | events recorded | events lost |")
        md.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        dat = []
        for key in sorted(g, key=lambda k: -1 if k[0] == "off" else int(k[0])):
            rs = g[key]
            gp = [fnum(r["goodput_mbps"]) for r in rs]
            ratio = med(gp) / base if base and base == base else float("nan")
            name = "MAGNET loaded, probes off" if key[0] == "off" else \
                ("m4, every event" if key[0] == "1" else "m4, 1 in %s" % key[0])
            off = key[0] == "off"
            md.append("| %s | %d | %.1f (%s) | %.2f | %s | %.1f | %s | %s | %s | %s |" % (
                name, len(rs), med(gp), spread(gp, "%.1f"), ratio,
                bound_text(*bootstrap(gp, goodputs(g.get(("off",), [])), "%s/sampling/%s" % (kv, key[0]))),
                med([fnum(r["sender_cpu"]) for r in rs]),
                "-" if off else "%.1f" % med([fnum(r["consumer_cpu"]) for r in rs]),
                "-" if off else "%.0f" % med([fnum(r["matched"]) if key[0] != "1" else fnum(r["produced"]) for r in rs]),
                "-" if off else "%.0f" % med([fnum(r["written"]) for r in rs]),
                "-" if off else "%.0f" % med([fnum(r["lost"]) for r in rs])))
            if not off:
                dat.append("%s %.4f %.4f %.4f %.2f" % (key[0], ratio, min(gp) / base if base else 0,
                                                     max(gp) / base if base else 0,
                                                     med([fnum(r["consumer_cpu"]) for r in rs])))
        f = os.path.join(IMG, "bench-sampling-%s.dat" % short(kv))
        with open(f, "w") as fh:
            fh.write("\n".join(dat) + "\n")
        plots.append('"%s" using 1:2:3:4 with yerrorlines title "goodput %s", "" using 1:5 axes x1y2 with linespoints dt 2 title "consumer CPU %%%% %s"' % (f, short(kv), short(kv)))
    if plots and gnuplot("""set terminal pngcairo size 800,420 font ",10"
set output "%s"
set title "UDP flood with 4 events per datagram, sampled 1 in N in the kernel"
set logscale x 2
set xlabel "sampling ratio N (1 in N events kept)"
set ylabel "goodput / probes off"
set y2label "consumer CPU %%"
set y2tics
set ytics nomirror
set yrange [0:*]
set y2range [0:*]
set key below
plot %s
""" % (os.path.join(IMG, "bench-sampling.png"), ", ".join(plots))):
        md.append("\n![sampling](img/bench-sampling.png)\n")
    return "\n".join(md)


FILT_ORDER = ["none", "magnet-all", "magnet-filter", "tcpdump-filter"]
FILT_DESC = {
    "none": "no monitoring",
    "magnet-all": "MAGNET m4, both flows recorded",
    "magnet-filter": "MAGNET m4, in-kernel filter: flow 1 only",
    "tcpdump-filter": "tcpdump, BPF filter: flow 1 only",
}


def filtering_section(kvers):
    md = []
    for kv in kvers:
        rows = read_csv(kv, "filtering.csv")
        if not rows:
            continue
        g = group(rows, "config")
        tot = lambda r: fnum(r["flow1_mbps"]) + fnum(r["flow2_mbps"])
        base = med([tot(r) for r in g.get(("none",), [])])
        md.append("\n#### %s\n" % kv)
        md.append("| configuration | n | flow 1 Mb/s | flow 2 Mb/s | total Mb/s (min...max) | total vs. none | bootstrap 5th percentile (...95th) | consumer CPU % | events or packets seen | recorded | lost |")
        md.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for c in [c for c in FILT_ORDER if (c,) in g]:
            rs = g[(c,)]
            t = [tot(r) for r in rs]
            none = c == "none"
            md.append("| %s | %d | %.1f | %.1f | %.1f (%s) | %.2f | %s | %s | %s | %s | %s |" % (
                FILT_DESC.get(c, c), len(rs), med([fnum(r["flow1_mbps"]) for r in rs]),
                med([fnum(r["flow2_mbps"]) for r in rs]), med(t), spread(t, "%.1f"),
                med(t) / base if base and base == base else float("nan"),
                bound_text(*bootstrap(t, [tot(r) for r in g.get(("none",), [])],
                                      "%s/filtering/%s" % (kv, c))),
                "-" if none else "%.1f" % med([fnum(r["consumer_cpu"]) for r in rs]),
                "-" if none else "%.0f" % med([fnum(r["produced"]) for r in rs]),
                "-" if none else "%.0f" % med([fnum(r["written"]) for r in rs]),
                "-" if none else "%.0f" % med([fnum(r["lost"]) for r in rs])))
    return "\n".join(md)


def loss_section(kvers):
    md = []
    plots = []
    for kv in kvers:
        rows = read_csv(kv, "loss.csv")
        if not rows:
            continue
        g = group(rows, "total_kb_per_cpu")
        md.append("\n#### %s\n" % kv)
        md.append("| ring per CPU (2 sub-buffers) | n | events produced | loss % median (min...max) | goodput Mb/s |")
        md.append("| --- | --- | --- | --- | --- |")
        dat = []
        for kb in sorted(g, key=lambda k: int(k[0])):
            rs = g[kb]
            lp = [fnum(r["loss_pct"]) for r in rs]
            md.append("| %s KiB | %d | %.0f | %.3f (%s) | %.1f |" % (
                kb[0], len(rs), med([fnum(r["produced"]) for r in rs]), med(lp),
                spread(lp, "%.3f"), med([fnum(r["goodput_mbps"]) for r in rs])))
            dat.append("%s %.4f %.4f %.4f" % (kb[0], med(lp), min(lp), max(lp)))
        f = os.path.join(IMG, "bench-loss-%s.dat" % short(kv))
        with open(f, "w") as fh:
            fh.write("\n".join(dat) + "\n")
        plots.append('"%s" using 1:2:3:4 with yerrorlines title "%s"' % (f, short(kv)))
    if plots and gnuplot("""set terminal pngcairo size 800,420 font ",10"
set output "%s"
set title "Event loss vs ring size (iperf3 UDP flood, 4 events/packet, magnetctl record)"
set logscale x 2
set xlabel "ring size per CPU, KiB"
set ylabel "events lost, %%"
set yrange [0:*]
plot %s
""" % (os.path.join(IMG, "bench-loss.png"), ", ".join(plots))):
        md.append("\n![loss vs buffer size](img/bench-loss.png)\n")
    return "\n".join(md)


def env_section(kvers):
    md = ["| kernel | mode | vCPUs | guest memory | CPU model (as the guest sees it) | clocksource | trace files on | run at |",
          "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for kv in kvers:
        e = env(kv)
        md.append("| %s | %s | %s | %s MiB | %s | %s | %s | %s |" % (
            kv, e.get("mode", "?"), e.get("cpus", "?"),
            int(e.get("mem_kb", "0") or 0) // 1024, e.get("cpu_model", "?"),
            e.get("clocksource", "?"), e.get("tmp_fs", "?"), e.get("date", "?")))
    tools = env(kvers[0]) if kvers else {}
    md.append("\nTools: %s; %s; %s." % (tools.get("iperf3", "?"), tools.get("tcpdump", "?"),
                                       tools.get("bpftrace", "?")))
    return "\n".join(md)


def perturb_findings(kv, pr):
    """The summary's lines on the perturbation part."""
    lines = []
    base = med(goodputs(pr[("none",)]))
    ratios = perturb_ratios(kv, pr)
    aa, ok = aa_check(ratios)
    lines.append("A/A control: %s: %s" % (aa, "within ±%.0f %%" % (100 * AA_TOL) if ok else
                                          "**not trustworthy**"))
    parts = []
    for c in ["loaded", "m1", "m4", "m4drop", "m4fr", "m4local", "m4eager", "ftrace", "ftraceoff", "tcpdump",
              "bpftrace", "lttng", "lttngctx"]:
        if c in ratios:
            r, lo, _ = ratios[c]
            parts.append("%s %.2f%s" % (c, r, "" if lo != lo else " (≥ %.2f)" % lo))
    lines.append("goodput relative to no monitoring (baseline %.0f Mb/s; in parentheses the bootstrap 5th percentile): %s" % (
        base, ", ".join(parts)))
    parts = ["%s/%s %.2f%s" % (num, den, r, "" if lo != lo else " (≥ %.2f)" % lo)
             for num, den, _, r, lo, _, _ in peer_ratios(kv, pr)]
    if parts:
        lines.append("against the other recording tracers and the kernel's tracer on the same hooks, paired by repetition: " + ", ".join(parts))
    kw_base = med([cpu_pct(r, "kworker_ns") for r in pr[("none",)]])
    parts = []
    for c in ["m4", "m4eager", "tcpdump", "bpftrace", "lttng", "lttngctx"]:
        if (c,) in pr:
            cons, kw, per_ev = consumer_cells(c, pr[(c,)], kw_base)
            cons = cons.replace(" (ticks)", " % (ticks)") if "ticks" in cons else cons + " %"
            parts.append("%s %s%s" % (c, cons, "" if per_ev == "n/a" else
                                         " + kworkers %s %%, %s µs per event" % (kw, per_ev)))
    if parts:
        lines.append("CPU of the consumer process (magnetctl record / tcpdump / bpftrace / lttng-consumerd): " + ", ".join(parts))
    return lines


def findings(kvers):
    md = []
    for kv in kvers:
        lines = []
        pr = group(read_csv(kv, "perturb.csv"), "config")
        if ("none",) in pr:
            lines += perturb_findings(kv, pr)
        fr = group(read_csv(kv, "fixedrate.csv"), "config")
        if ("none",) in fr:
            def cpu_us(rs):
                return med([proc_us_per_dgram(r) for r in rs])
            base = cpu_us(fr[("none",)])
            parts = ["%s %.2f" % (c, cpu_us(fr[(c,)]) / base)
                     for c in ["loaded", "m1", "m4", "m4eager", "tcpdump", "bpftrace", "lttng"] if (c,) in fr]
            lines.append("at a fixed 40 Mb/s, CPU time (sender, receiver, consumer) per datagram relative to no monitoring (baseline %.0f µs): %s" % (
                base, ", ".join(parts)))
        mi = group(read_csv(kv, "micro.csv"), "mode", "len")
        if ("magnet", "64") in mi and ("ftrace", "64") in mi:
            m = med([fnum(r["ns_med"]) for r in mi[("magnet", "64")]])
            f = med([fnum(r["ns_med"]) for r in mi[("ftrace", "64")]])
            c = med([fnum(r["cyc_med"]) for r in mi[("magnet", "64")]])
            off = med([fnum(r["ns_med"]) for r in mi.get(("off", "0"), [])])
            lines.append("magnet_add() with a 64-byte payload: %.0f ns (%.0f TSC cycles) per call, %.2f x the ftrace ring buffer's %.0f ns; a disabled point: %.1f ns" % (m, c, m / f, f, off))
            if ("magnet_local", "64") in mi:
                ml = med([fnum(r["ns_med"]) for r in mi[("magnet_local", "64")]])
                lines.append("magnet_add() on a local-clock stream, 64-byte payload: %.0f ns, %.2f x the ftrace ring buffer" % (ml, ml / f))
        inf = group(read_csv(kv, "inflow.csv"), "config")
        if ("m4",) in inf:
            wp = inflow_med(inf[("m4",)], "write_path_samples")
            hk = inflow_med(inf[("m4",)], "hook_samples")
            loc = ""
            if ("m4local",) in inf:
                loc = " (%.0f ns on a local-clock stream)" % inflow_med(inf[("m4local",)], "write_path_samples")
            lines.append("in the flood with four events per datagram (perf samples): %.0f ns of CPU per event in MAGNET's write path%s, %.0f ns in the hook handlers" % (wp, loc, hk))
        dr = group(drain_rows(kv), "method", "len")
        if dr:
            best = max(dr, key=lambda k: med([fnum(r["MBps"]) for r in dr[k]]))
            rs = dr[best]
            lines.append("drain: up to %.0f MB/s (%s, %s-byte payloads, %.0f events/s, reader CPU %.0f %%, %.1f %% of the produced events lost because the producer outruns the reader)" % (
                med([fnum(r["MBps"]) for r in rs]), DRAIN_DESC.get(best[0], best[0]), best[1], med([fnum(r["events_per_s"]) for r in rs]),
                med([fnum(r["reader_cpu"]) for r in rs]), med([fnum(r["loss_pct"]) for r in rs])))
        ll = [r for r in read_csv(kv, "lossless.csv") if fnum(r["lost"]) == 0]
        if ll:
            top = max(ll, key=lambda r: fnum(r["MBps"]))
            lines.append("drain with no event lost: up to %.0f MB/s (%s, %s-byte payloads, %.0f events/s, reader CPU %.0f %%)" % (
                fnum(top["MBps"]), DRAIN_DESC.get(top["method"], top["method"]), top["len"],
                fnum(top["events_per_s"]), fnum(top["reader_cpu"])))
        lo = group(read_csv(kv, "loss.csv"), "total_kb_per_cpu")
        if lo:
            ks = sorted(lo, key=lambda k: int(k[0]))
            lines.append("event loss at the smallest ring (%s KiB per CPU): %.3f %%; at the largest (%s KiB): %.3f %%" % (
                ks[0][0], med([fnum(r["loss_pct"]) for r in lo[ks[0]]]),
                ks[-1][0], med([fnum(r["loss_pct"]) for r in lo[ks[-1]]])))
        if lines:
            md.append("**%s** (%s mode)\n" % (kv, env(kv).get("mode", "?")))
            md.extend("- " + l for l in lines)
            md.append("")
    return "\n".join(md)


def main():
    global RES, IMG, DOC
    ap = argparse.ArgumentParser(description="bench/results/*/ -> docs/benchmarks.md")
    ap.add_argument("--results", default=RES, help="results directory, one folder per kernel")
    ap.add_argument("--doc", default=DOC, help="the document to write; plots into img/ beside it")
    a = ap.parse_args()
    RES, DOC = a.results, a.doc
    IMG = os.path.join(os.path.dirname(os.path.abspath(DOC)), "img")
    os.makedirs(IMG, exist_ok=True)
    kvers = sorted(d for d in os.listdir(RES) if os.path.isdir(os.path.join(RES, d))) \
        if os.path.isdir(RES) else []
    with open(TEMPLATE) as f:
        doc = f.read()
    for key, fn in (("ENV", env_section), ("FINDINGS", findings), ("PERTURB", perturb_section),
                    ("FIXEDRATE", fixedrate_section), ("HOOKS", hooks_section),
                    ("MICRO", micro_section), ("INFLOW", inflow_section),
                    ("DRAIN", drain_section),
                    ("LOSSLESS", lossless_section),
                    ("LOSS", loss_section), ("LOSSRULE", lossrule_section),
                    ("SAMPLING", sampling_section),
                    ("FILTERING", filtering_section)):
        doc = doc.replace("@%s@" % key, fn(kvers) or "(not measured)")
    with open(DOC, "w") as f:
        f.write(doc)
    # the .dat files are intermediate
    for n in os.listdir(IMG):
        if n.startswith("bench-") and n.endswith(".dat"):
            os.unlink(os.path.join(IMG, n))


if __name__ == "__main__":
    main()
