#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check synthesizer output against a full trace of the same run.

Written from include/uapi/magnet.h and docs/FORMAT.md / docs/SYNTH.md
only (no code shared with libmagnet or the kernel).

  synth_check.py --spec SYNTHS.json --full FULL.trace [--full ...]
                 --synth SYN.trace [--synth ...] [--dump SYN.jsonl ...]
                 [--name NAME ...]

SYNTHS.json is `magnetctl -j synth list` taken while the synthesizers
existed (their definition and start_ns).  For every synthesizer (or the
ones named), the probe's events of the full trace with a timestamp in
[start, end) -- end the latest period_end of its SYNTH records -- that
match its keys are grouped by its group keys and by period
(period p = [start + p P, start + (p + 1) P)) and their quantity (record
size, payload field, interval to the key's previous event) summed up in
Python integers.  Asserted, as TAP: every SYNTH record's count, sum, sum
of squares, min and max equal the reference of its key and period(s);
mean and variance are the exact floors; every (key, period) with events
is covered by exactly one record; per-key totals equal; with --dump
(magnetctl -j dump of the SYNTH traces), libmagnet's double mean and
variance are within 1e-9 (relative) of the exact values.
Exit 0 all passed, 1 some failed, 2 usage.
"""

import argparse
import collections
import json
import struct
import sys
from fractions import Fraction

HDR = struct.Struct("<HHIQQII")
EV_LOST, EV_EVENTDEF, EV_SYNTH = 1, 2, 3
FIRST_PROBE = 16
# struct magnet_synth_payload: 168 bytes
SYNTH = struct.Struct("<32s13Q8I")
assert SYNTH.size == 168
SYNTH_FIELDS = ("name period_start period_end count min max sum_lo sum_hi "
                "sumsq_lo sumsq_hi mean variance cgroup abstract_id event "
                "cpu pid tgid group flags quantity reserved").split()
F_PARTIAL, F_MERGED, F_OVERFLOW, F_VAR_SAT = 1, 2, 4, 8
K_EVENT, K_CPU, K_AID, K_PID, K_TGID, K_CGROUP = 1, 2, 4, 8, 16, 32
Q_SIZE, Q_FIELD, Q_INTERVAL = 0, 1, 2
GROUP_NAMES = {"event": K_EVENT, "cpu": K_CPU, "id": K_AID, "pid": K_PID,
               "tgid": K_TGID, "cgroup": K_CGROUP}
U64_MAX = (1 << 64) - 1

npass = nfail = 0


def ok(desc):
    global npass
    npass += 1
    print("ok - %s" % desc)


def nok(desc, why=""):
    global nfail
    nfail += 1
    print("not ok - %s # %s" % (desc, str(why)[:400]))


def diag(text):
    for line in str(text).splitlines():
        print("# " + line)


def check(cond, desc, why=""):
    (ok if cond else lambda d: nok(d, why))(desc)
    return cond


def records(path):
    """(hdr tuple, payload bytes, names dict) for every record."""
    data = open(path, "rb").read()
    off, names = 0, {}
    while off + 32 <= len(data):
        size, ev, cpu, aid, ts, pid, tgid = HDR.unpack_from(data, off)
        if size < 32 or size % 8 or off + size > len(data):
            raise SystemExit("%s: bad record at offset %d" % (path, off))
        payload = data[off + 32:off + size]
        if ev == EV_EVENTDEF:
            eid = struct.unpack_from("<H", payload)[0]
            names[eid] = payload[8:40].split(b"\0")[0].decode()
        yield (size, ev, cpu, aid, ts, pid, tgid), payload, names
        off += size
    if off != len(data):
        raise SystemExit("%s: %d trailing bytes" % (path, len(data) - off))


Ev = collections.namedtuple("Ev", "size cpu aid ts pid tgid payload order")


def load_full(paths):
    """Probe events by name; LOST total."""
    ev, lost, order = collections.defaultdict(list), 0, 0
    for p in paths:
        for (size, e, cpu, aid, ts, pid, tgid), payload, names in records(p):
            if e == EV_LOST:
                lost += struct.unpack_from("<Q", payload)[0]
            elif e >= FIRST_PROBE:
                ev[names.get(e, "event%d" % e)].append(
                    Ev(size, cpu, aid, ts, pid, tgid, payload, order))
                order += 1
    return ev, lost


def load_synth(paths):
    out, bad = [], []
    for p in paths:
        for (size, e, cpu, aid, ts, pid, tgid), payload, _ in records(p):
            if e != EV_SYNTH:
                continue
            if size != 32 + SYNTH.size:
                bad.append("size %d" % size)
                continue
            r = dict(zip(SYNTH_FIELDS, SYNTH.unpack(payload)))
            r["name"] = r["name"].split(b"\0")[0].decode()
            r["hdr_aid"] = aid
            r["hdr_ts"] = ts
            out.append(r)
    return out, bad


def key_of(group, event, cpu, aid, pid, tgid, cgroup):
    return (event if group & K_EVENT else 0, cpu if group & K_CPU else 0,
            aid if group & K_AID else 0, pid if group & K_PID else 0,
            tgid if group & K_TGID else 0,
            cgroup if group & K_CGROUP else 0)


class Mom:
    __slots__ = ("n", "s1", "s2", "lo", "hi")

    def __init__(self):
        self.n = self.s1 = self.s2 = 0
        self.lo, self.hi = None, None

    def add(self, x):
        self.n += 1
        self.s1 += x
        self.s2 += x * x
        self.lo = x if self.lo is None else min(self.lo, x)
        self.hi = x if self.hi is None else max(self.hi, x)

    def merge(self, o):
        if not o.n:
            return
        self.n += o.n
        self.s1 += o.s1
        self.s2 += o.s2
        self.lo = o.lo if self.lo is None else min(self.lo, o.lo)
        self.hi = o.hi if self.hi is None else max(self.hi, o.hi)


def exact_var(m):
    """Population variance as a Fraction."""
    return Fraction(m.n * m.s2 - m.s1 * m.s1, m.n * m.n)


def group_of(spec):
    by = spec.get("by", "-")
    g = 0
    if by and by != "-":
        for k in by.split(","):
            g |= GROUP_NAMES[k]
    return g


def reference(spec, events, start, end):
    """{key: {period: Mom}} and the number of events used."""
    group = group_of(spec)
    period = spec["period_ns"]
    q = {"size": Q_SIZE, "interval": Q_INTERVAL}.get(spec["value"].split()[0],
                                                       Q_FIELD)
    off, width = spec.get("field_offset", 0), spec.get("field_width", 0)
    ref = collections.defaultdict(lambda: collections.defaultdict(Mom))
    last = {}
    used = 0
    evid = spec["probe_id"]
    for e in sorted(events, key=lambda e: (e.ts, e.order)):
        if not (start <= e.ts < end):
            continue
        if "cpu" in spec and e.cpu != spec["cpu"]:
            continue
        if "id" in spec and e.aid != spec["id"]:
            continue
        if "pid" in spec and e.pid != spec["pid"]:
            continue
        if "tgid" in spec and e.tgid != spec["tgid"]:
            continue
        used += 1
        k = key_of(group, evid, e.cpu, e.aid, e.pid, e.tgid, 0)
        if q == Q_SIZE:
            x = e.size
        elif q == Q_FIELD:
            x = int.from_bytes(e.payload[off:off + width], "little")
        else:
            if k not in last:
                last[k] = e.ts
                continue
            x = e.ts - last[k]
            last[k] = e.ts
        ref[k][(e.ts - start) // period].add(x)
    return ref, used


def check_synth(spec, events, recs, dumps):
    name = spec["name"]
    start, period = spec["start_ns"], spec["period_ns"]
    group = group_of(spec)
    mine = [r for r in recs if r["name"] == name]
    if not mine:
        nok("%s: SYNTH records found" % name, "none")
        return
    end = max(r["period_end"] for r in mine)
    ref, used = reference(spec, events.get(spec["probe"], []), start, end)
    covered = collections.Counter()
    in_merged = set()
    bad = []
    nrec = merged = partial = 0
    for r in mine:
        k = key_of(group, r["event"], r["cpu"], r["abstract_id"], r["pid"],
                   r["tgid"], r["cgroup"])
        raw = (r["event"], r["cpu"], r["abstract_id"], r["pid"], r["tgid"],
               r["cgroup"])
        if raw != k:
            bad.append("key fields outside the group set: %s" % (raw,))
        if r["group"] != group or r["reserved"] or r["hdr_aid"] != r["abstract_id"]:
            bad.append("group/reserved/header id: %s" % r)
        first = (r["period_start"] - start) // period
        if r["period_start"] != start + first * period:
            bad.append("period_start %d not on a boundary" % r["period_start"])
        if r["flags"] & F_PARTIAL:
            last = first
            partial += 1
            if not (r["period_start"] < r["period_end"] <= start + (first + 1) * period):
                bad.append("partial period end %s" % r)
        else:
            last = (r["period_end"] - start) // period - 1
            if r["period_end"] != start + (last + 1) * period:
                bad.append("period_end %d not on a boundary" % r["period_end"])
        if last > first:
            merged += 1
            if not r["flags"] & F_MERGED:
                bad.append("multi-period record without MERGED: %s" % r)
        exp = Mom()
        for p in range(first, last + 1):
            covered[(k, p)] += 1
            if last > first:
                in_merged.add((k, p))
            exp.merge(ref.get(k, {}).get(p, Mom()))
        s1 = r["sum_lo"] | r["sum_hi"] << 64
        s2 = r["sumsq_lo"] | r["sumsq_hi"] << 64
        got = (r["count"], s1, s2, r["min"], r["max"])
        want = (exp.n, exp.s1, exp.s2, exp.lo, exp.hi)
        nrec += 1
        if got != want:
            bad.append("key %s periods %d..%d: record %s, trace %s" %
                       (k, first, last, got, want))
            continue
        mean = exp.s1 // exp.n
        var = exact_var(exp)
        fvar = var.numerator // var.denominator
        wflags = F_VAR_SAT if fvar > U64_MAX else 0
        if (r["mean"], r["variance"], r["flags"] & (F_VAR_SAT | F_OVERFLOW)) != \
           (mean, min(fvar, U64_MAX), wflags):
            bad.append("key %s: mean/variance %d/%d, exact floors %d/%d" %
                       (k, r["mean"], r["variance"], mean, fvar))
        d = dumps.get((name, raw, r["period_start"], r["count"]))
        if d is not None:
            for what, exact in (("mean_d", Fraction(exp.s1, exp.n)),
                                ("variance_d", var)):
                v = Fraction(d[what])
                tol = Fraction(1, 10 ** 9) * max(abs(exact), 1)
                if abs(v - exact) > tol:
                    bad.append("key %s: %s %r, exact %s" %
                               (k, what, d[what], float(exact)))
            dumps["_checked"] += 1
    want_cov = {(k, p) for k, per in ref.items() for p, m in per.items() if m.n}
    twice = [kp for kp, n in covered.items() if n > 1]
    missing = want_cov - set(covered)
    # a MERGED record spans every period between its first and last
    extra = {kp for kp in covered if kp not in want_cov and kp not in in_merged}
    nkeys = len(ref)
    samples = sum(m.n for per in ref.values() for m in per.values())
    diag("%s: %d events in [%d, %d), %d keys, %d samples, %d (key, period) "
         "cells; %d records (%d partial, %d merged)" %
         (name, used, start, end, nkeys, samples, len(want_cov), nrec,
          partial, merged))
    check(not bad, "%s: %d SYNTH records equal the full trace's count, sum, "
          "sum of squares, min, max; mean and variance exact floors" %
          (name, nrec), "; ".join(bad[:3]))
    check(not missing and not twice and not extra,
          "%s: each of the %d (key, period) cells with events in exactly one "
          "record" % (name, len(want_cov)),
          "missing %s twice %s empty %s" % (sorted(missing)[:3], twice[:3],
                                            sorted(extra)[:3]))
    tot_ref = {k: sum(m.s1 for m in per.values()) for k, per in ref.items()}
    tot_rec = collections.Counter()
    cnt_rec = collections.Counter()
    for r in mine:
        k = key_of(group, r["event"], r["cpu"], r["abstract_id"], r["pid"],
                   r["tgid"], r["cgroup"])
        tot_rec[k] += r["sum_lo"] | r["sum_hi"] << 64
        cnt_rec[k] += r["count"]
    cnt_ref = {k: sum(m.n for m in per.values()) for k, per in ref.items()}
    check({k: v for k, v in tot_ref.items() if cnt_ref[k]} == dict(tot_rec) and
          {k: v for k, v in cnt_ref.items() if v} == dict(cnt_rec),
          "%s: per-key run totals (count %d, sum %d) equal the full trace" %
          (name, sum(cnt_rec.values()), sum(tot_rec.values())))
    return samples


def load_dumps(paths):
    out = {"_checked": 0}
    for p in paths:
        for line in open(p):
            line = line.strip()
            if not line.startswith("{"):
                continue
            d = json.loads(line)
            s = d.get("synth")
            if not s:
                continue
            raw = (s["event"], s["cpu"], s["abstract_id"], s["pid"], s["tgid"],
                   s["cgroup"])
            out[(s["name"], raw, s["period_start"], s["count"])] = s
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", required=True)
    ap.add_argument("--full", action="append", default=[])
    ap.add_argument("--synth", action="append", default=[])
    ap.add_argument("--dump", action="append", default=[])
    ap.add_argument("--name", action="append", default=[])
    a = ap.parse_args(argv)
    specs = json.load(open(a.spec))
    if isinstance(specs, dict):
        specs = specs.get("synths", specs.get("synth", []))
    events, lost = load_full(a.full)
    recs, bad = load_synth(a.synth)
    dumps = load_dumps(a.dump)
    check(lost == 0, "full trace lost nothing", lost)
    check(not bad, "every SYNTH record is %d bytes" % (32 + SYNTH.size), bad[:3])
    diag("full trace: %d events; %d SYNTH records" %
         (sum(len(v) for v in events.values()), len(recs)))
    for spec in specs:
        if a.name and spec["name"] not in a.name:
            continue
        check(spec.get("short", 0) == 0 and spec.get("overflow", 0) == 0 and
              spec.get("nmi", 0) == 0 and spec.get("reordered", 0) == 0 and
              spec.get("late", 0) == 0 and spec.get("records_lost", 0) == 0,
              "%s: no short, overflow, nmi, reordered, late or lost" %
              spec["name"], spec)
        check_synth(spec, events, recs, dumps)
    if a.dump:
        check(dumps["_checked"] > 0,
              "libmagnet's double mean and variance compared for %d records" %
              dumps["_checked"])
    print("%d passed, %d failed" % (npass, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
