#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Pair a full trace in user space and compare with a correlator's records.

    corr_pair.py FULL.trace CORR.trace --chain udp_send|tcp_send,ip_send,dev_send,sock_send
                 --window NS [--key INO]... [--expect-min N] [--json OUT]

FULL.trace holds every event of the chain's points (magnetctl record of a
user stream they are enabled into); CORR.trace holds the correlator's
MAGNET_EVENT_CORR records (its destination stream).  Both are decoded here
with struct, independently of libmagnet.  The full trace is paired with
the rules of docs/CORRELATE.md (the same as kmod/corr_core.h, written
again from the document): events merged by (timestamp, cpu, order in the
CPU's ring), per abstract ID a chain opens at a first-step event, later
steps in order, extra events of a reached step counted, skipped steps and
restarts close a chain early, the window expires it.

Every chain that starts and is closed in FULL must appear in CORR with the
same key, start, flags, steps reached, per-step deltas (exact, ns), counts
and bytes; and every CORR record of a chain that started in FULL (and is
not still open at its end, where the trace cannot decide) must be such a
chain.  Prints TAP lines and a summary (medians per step, per protocol).
Exit 0 when everything agrees.
"""
import argparse
import json
import statistics
import struct
import sys

HDR = struct.Struct("<HHIQQII")
EV_SYSINFO, EV_LOST, EV_EVENTDEF, EV_CORR = 0, 1, 2, 4
F_EXPIRED, F_RESTART, F_SKIP, F_FLUSH = 1, 2, 4, 8


def records(path):
    data = open(path, "rb").read()
    off = 0
    while off + HDR.size <= len(data):
        size, ev, cpu, aid, ts, pid, tgid = HDR.unpack_from(data, off)
        if size < HDR.size or off + size > len(data):
            raise SystemExit("%s: bad record at %d" % (path, off))
        yield ev, cpu, aid, ts, pid, tgid, data[off + HDR.size:off + size]
        off += size


def load_full(path):
    names, evs, lost = {}, [], 0
    for i, (ev, cpu, aid, ts, pid, tgid, pl) in enumerate(records(path)):
        if ev == EV_EVENTDEF:
            eid = struct.unpack_from("<H", pl)[0]
            names[pl[8:40].split(b"\0")[0].decode()] = eid
        elif ev == EV_LOST:
            lost += struct.unpack_from("<Q", pl)[0]
        elif ev >= 16:
            ln = struct.unpack_from("<I", pl)[0] if len(pl) >= 4 else 0
            evs.append((ts, cpu, i, ev, aid, pid, tgid, ln))
    evs.sort()
    return names, evs, lost


def pair(evs, steps, window, net_ids):
    """The rules of docs/CORRELATE.md.  Returns closed chains and counters."""
    step_of = {}
    for j, alts in enumerate(steps):
        for e in alts:
            step_of[e] = j
    n = len(steps)
    open_ = {}          # key -> chain dict, insertion order = start order
    out = []
    st = dict(events=0, completed=0, expired=0, partial=0, stray=0)

    def close(key, flags):
        c = open_.pop(key)
        if flags == 0:
            st["completed"] += 1
        elif flags & F_EXPIRED:
            st["expired"] += 1
        else:
            st["partial"] += 1
        c["flags"] = flags
        out.append(c)

    def expire(now):
        for key in list(open_):
            c = open_[key]
            if now > c["ts"][0] and now - c["ts"][0] > window:
                close(key, F_EXPIRED)
            else:
                break

    for ts, cpu, _, ev, key, pid, tgid, ln in evs:
        if ev not in step_of:
            continue            # not a point of the chain: not in its stream
        st["events"] += 1
        expire(ts)
        j = step_of[ev]
        b = ln if ev in net_ids else 0
        c = open_.get(key)
        if j == 0:
            if c is not None:
                close(key, F_RESTART)
            open_[key] = dict(key=key, pid=pid, tgid=tgid, cur=0,
                              ts=[ts] + [0] * (n - 1), count=[1] + [0] * (n - 1),
                              bytes=[b] + [0] * (n - 1), event=[ev] + [0] * (n - 1))
            continue
        if c is None:
            st["stray"] += 1
            continue
        if j <= c["cur"]:
            c["count"][j] += 1
            c["bytes"][j] = min(c["bytes"][j] + b, 0xffffffff)
            continue
        if j > c["cur"] + 1:
            close(key, F_SKIP)
            st["stray"] += 1
            continue
        c["ts"][j], c["count"][j], c["bytes"][j], c["event"][j] = ts, 1, b, ev
        c["cur"] = j
        if j == n - 1:
            close(key, 0)
    return out, open_, st


def chain_rec(c, n):
    reached = c["cur"] + 1
    steps = []
    for i in range(n):
        if i < reached:
            steps.append((c["ts"][i] - c["ts"][i - 1] if i else 0,
                          c["count"][i], c["bytes"][i], c["event"][i]))
        else:
            steps.append((0, 0, 0, 0))
    return (c["key"], c["ts"][0], reached, c["flags"], tuple(steps))


def load_corr(path):
    recs = []
    for ev, cpu, aid, ts, pid, tgid, pl in records(path):
        if ev != EV_CORR:
            continue
        cid, nsteps, reached, flags, res, start = struct.unpack_from("<IHHIIQ", pl)
        steps = []
        for i in range(nsteps):
            d, cnt, b, e = struct.unpack_from("<QIIH", pl, 24 + 24 * i)
            steps.append((d, cnt, b, e))
        recs.append(dict(id=cid, key=aid, start=start, reached=reached, flags=flags,
                         steps=tuple(steps), pid=pid, res=res,
                         t=(aid, start, reached, flags, tuple(steps))))
    return recs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("full")
    ap.add_argument("corr")
    ap.add_argument("--chain", required=True)
    ap.add_argument("--window", type=int, required=True)
    ap.add_argument("--key", type=int, action="append", default=[],
                    help="socket inode of interest (summary and --expect-min)")
    ap.add_argument("--expect-min", type=int, default=0,
                    help="at least this many complete chains of the --key sockets")
    ap.add_argument("--json")
    a = ap.parse_args()

    names, evs, lost = load_full(a.full)
    steps = []
    for s in a.chain.split(","):
        steps.append([names[p] if not p.isdigit() else int(p) for p in s.split("|")])
    net_ids = set(e for alts in steps for e in alts)  # the net probes: NET payloads
    closed, still_open, st = pair(evs, steps, a.window, net_ids)
    n = len(steps)
    t_first = evs[0][0] if evs else 0
    t_last = evs[-1][0] if evs else 0
    undecided = set((c["key"], c["ts"][0]) for c in still_open.values())

    mine = {}
    for c in closed:
        r = chain_rec(c, n)
        mine[(r[0], r[1])] = r
    kern = {}
    bad = []
    for r in load_corr(a.corr):
        if r["res"] != 0:
            bad.append("reserved %d" % r["res"])
        k = (r["key"], r["start"])
        if t_first <= r["start"] <= t_last and k not in undecided and \
                not (r["flags"] & F_FLUSH):
            kern[k] = r["t"]
    fails = 0

    def tap(ok, desc, why=""):
        nonlocal fails
        if ok:
            print("ok - " + desc)
        else:
            fails += 1
            print("not ok - %s # %s" % (desc, why))

    tap(lost == 0, "full trace has no losses", "lost=%d" % lost)
    tap(not bad, "CORR records have zero reserved fields", "; ".join(bad[:5]))
    missing = [k for k in mine if k not in kern]
    extra = [k for k in kern if k not in mine]
    differ = [k for k in mine if k in kern and mine[k] != kern[k]]
    tap(not missing, "every chain paired in user space has a kernel record (%d)" % len(mine),
        "missing %d, e.g. %s" % (len(missing), [mine[k] for k in missing[:3]]))
    tap(not extra, "every kernel record is a chain paired in user space (%d)" % len(kern),
        "extra %d, e.g. %s" % (len(extra), [kern[k] for k in extra[:3]]))
    tap(not differ, "same steps, timestamps, counts and bytes, exactly",
        "%d differ, e.g. %s" % (len(differ), [(mine[k], kern[k]) for k in differ[:2]]))

    keys = set(a.key)
    done = [r for r in mine.values() if r[3] == 0 and (not keys or r[0] in keys)]
    tap(len(done) >= a.expect_min, "at least %d complete chains of the sockets" % a.expect_min,
        "%d" % len(done))
    summary = {"paired": len(mine), "kernel": len(kern), "complete": len(done),
               "flags": {}, "steps": {}, "counters": st}
    for r in mine.values():
        summary["flags"][r[3]] = summary["flags"].get(r[3], 0) + 1
    by_first = {}
    for r in done:
        by_first.setdefault(r[4][0][3], []).append(r)
    inv = {v: k for k, v in names.items()}
    for first, rs in sorted(by_first.items()):
        med = [statistics.median(r[4][i][0] for r in rs) for i in range(1, n)]
        cnt = [statistics.median(r[4][i][1] for r in rs) for i in range(n)]
        tot = statistics.median(sum(r[4][i][0] for i in range(1, n)) for r in rs)
        summary["steps"][inv.get(first, str(first))] = dict(
            chains=len(rs), median_delta_ns=med, median_count=cnt, median_total_ns=tot)
        print("# %s: %d complete chains, median ns per step %s (total %d), median events per step %s" %
              (inv.get(first, first), len(rs), [int(x) for x in med], tot, cnt))
    print("# paired %d chains (flags %s), %d open at the end, counters %s" %
          (len(mine), summary["flags"], len(undecided), st))
    if a.json:
        json.dump(summary, open(a.json, "w"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
