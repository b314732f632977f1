#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A correlator's send chains against each send's own times.

    corr_sends.py CORR.trace --key INO --times FILE [--label NAME] [--json OUT]
    corr_sends.py --self-test

CORR.trace holds the records of a correlator with the send chain
'udp_send|tcp_send,ip_send,dev_send,sock_send' (docs/CORRELATE.md); FILE
is what tcp_sender or udp_flood -T wrote for the socket INO: one line
"BEFORE_NS AFTER_NS RESULT" per send call, CLOCK_MONOTONIC read right
before and right after it, the clock of the records (docs/FORMAT.md).

A send that goes out synchronously has all four events inside its call,
the last one, sock_send, when the call returns.  So every send must give
exactly one complete chain whose first step (transport) and last step
(sock_send) both lie inside that send's own [before, after], the steps in
time order (sock_send after dev_send), and there must be no other record
for the socket.  A sock_send recorded at the call's entry pairs a chain's
first three steps with the *next* send's sock_send (or leaves it
incomplete), which fails here.  Decoded with struct (corr_pair.py's
reader), independently of libmagnet.  Prints TAP lines and the per-step
times in microseconds; exit 0 when everything holds.  --self-test runs
the checks on traces built here (tests/tools/trace_writer.py): chains of
their own pass; the pairing of an entry-time sock_send with the next send,
and an expired chain, fail.
"""
import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corr_pair import load_corr  # noqa: E402


def load_times(path):
    sends = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            p = line.split()
            if len(p) != 3:
                raise SystemExit("%s:%d: expected 'BEFORE AFTER RESULT': %r" % (path, n, line))
            b, a, r = (int(x) for x in p)
            if a < b:
                raise SystemExit("%s:%d: after %d before before %d" % (path, n, a, b))
            sends.append((b, a, r))
    for i in range(1, len(sends)):
        if sends[i][0] < sends[i - 1][1]:
            raise SystemExit("%s:%d: sends overlap" % (path, i + 1))
    return sends


def find(sends, t):
    """Index of the send whose [before, after] holds t, or None."""
    lo, hi = 0, len(sends)
    while lo < hi:
        mid = (lo + hi) // 2
        if sends[mid][1] < t:
            lo = mid + 1
        else:
            hi = mid
    if lo < len(sends) and sends[lo][0] <= t <= sends[lo][1]:
        return lo
    return None


def us(ns):
    return round(ns / 1000.0, 1)


def self_test():
    """Runs this script on built traces; returns the number of wrong verdicts."""
    from trace_writer import TraceWriter
    key, bad = 4242, 0
    # five sends 1 ms apart, each 100 us long
    sends = [(10 ** 9 + i * 10 ** 6, 10 ** 9 + i * 10 ** 6 + 100000, 1000) for i in range(5)]

    def corr(start, deltas, reached=4, flags=0):
        steps = b"".join(struct.pack("<QIIH6x", d, 1, 1000, 16 + j)
                         for j, d in enumerate(deltas))
        return struct.pack("<IHHIIQ", 1, 4, reached, flags, 0, start) + steps

    own = [corr(b + 10000, [0, 20000, 20000, 30000]) for b, _a, _r in sends]
    # sock_send at the call's entry: steps 1..3 of send i, sock_send of send i + 1
    nxt = [corr(sends[i][0] + 10000, [0, 20000, 20000, 10 ** 6 - 50000 + 5000])
           for i in range(4)] + [corr(sends[4][0] + 10000, [0, 20000, 20000, 0], 3, 1)]
    expired = own[:2] + [corr(sends[2][0] + 10000, [0, 20000, 20000, 0], 3, 1)] + own[3:]
    cases = [("chains of their own", own, 0), ("sock_send of the next send", nxt, 1),
             ("an expired chain", expired, 1)]
    with tempfile.TemporaryDirectory() as d:
        tf = os.path.join(d, "times")
        with open(tf, "w") as f:
            f.writelines("%d %d %d\n" % s for s in sends)
        for name, payloads, want in cases:
            w = TraceWriter().sysinfo()
            for i, p in enumerate(payloads):
                w.rec(4, 0, key, 2 * 10 ** 9 + i, 1, 1, p)
            path = os.path.join(d, "corr.trace")
            with open(path, "wb") as f:
                f.write(w.out)
            r = subprocess.run([sys.executable, os.path.abspath(__file__), path,
                                "--key", str(key), "--times", tf],
                               stdout=subprocess.PIPE, universal_newlines=True)
            got = 1 if r.returncode else 0
            ok = got == want and ("not ok" in r.stdout) == bool(want)
            bad += not ok
            print("%s - self-test: %s %s" % ("ok" if ok else "not ok", name,
                                            "fails" if want else "passes"))
            if not ok:
                sys.stdout.write(r.stdout)
    return bad


def main():
    if sys.argv[1:] == ["--self-test"]:
        return 1 if self_test() else 0
    ap = argparse.ArgumentParser()
    ap.add_argument("corr")
    ap.add_argument("--key", type=int, required=True, help="the sending socket's inode")
    ap.add_argument("--times", required=True, help="the sender's -T file")
    ap.add_argument("--label", default="sends")
    ap.add_argument("--json")
    a = ap.parse_args()

    sends = load_times(a.times)
    recs = [r for r in load_corr(a.corr) if r["key"] == a.key]
    fails = 0

    def tap(ok, desc, why=""):
        nonlocal fails
        if ok:
            print("ok - %s: %s" % (a.label, desc))
        else:
            fails += 1
            print("not ok - %s: %s # %s" % (a.label, desc, why))

    failed = [s for s in sends if s[2] <= 0]
    tap(sends and not failed, "%d send calls, each sent its data" % len(sends),
        "%d failed, e.g. %s" % (len(failed), failed[:3]))
    tap(len(recs) == len(sends), "one record per send (%d records)" % len(recs),
        "%d records for %d sends" % (len(recs), len(sends)))
    incomplete = [r for r in recs if r["flags"] != 0 or r["reached"] != len(r["steps"])]
    tap(not incomplete, "every chain complete (%d of %d)" % (len(recs) - len(incomplete), len(recs)),
        "%d not, e.g. %s" % (len(incomplete), [(r["flags"], r["reached"], r["start"])
                                             for r in incomplete[:3]]))
    owner = {}
    outside, order, rows = [], [], []
    for r in recs:
        t, times = r["start"], []
        for d, _cnt, _b, _e in r["steps"][:max(r["reached"], 1)]:
            t += d
            times.append(t)
        first, last = find(sends, times[0]), find(sends, times[-1])
        if first is None or first != last:
            outside.append((times[0], times[-1], first, last))
            continue
        if any(times[i] < times[i - 1] for i in range(1, len(times))):
            order.append(times)
        owner.setdefault(first, []).append(r)
        if r in incomplete:
            continue
        b, e, _ = sends[first]
        rows.append(dict(send=first, before_to_first=times[0] - b,
                         deltas=[times[i] - times[i - 1] for i in range(1, len(times))],
                         last_to_after=e - times[-1]))
    tap(not outside, "each chain's first step and sock_send lie inside the same send's [before, after]",
        "%d do not, e.g. (first, last, send of first, send of last) %s" % (len(outside), outside[:3]))
    tap(not order, "steps in time order (sock_send after dev_send)",
        "%d not, e.g. %s" % (len(order), order[:2]))
    twice = [i for i, rs in owner.items() if len(rs) > 1]
    unseen = [i for i in range(len(sends)) if i not in owner]
    tap(not twice and not unseen, "each send has exactly one chain of its own",
        "%d with none (e.g. %s), %d with several" % (len(unseen), unseen[:5], len(twice)))

    summary = {"sends": len(sends), "records": len(recs),
               "complete": len(recs) - len(incomplete), "own": len(owner)}
    if rows:
        names = ["before->first", "first->ip", "ip->dev", "dev->sock", "sock->after"]
        cols = [[x["before_to_first"] for x in rows]] + \
               [[x["deltas"][i] for x in rows] for i in range(len(rows[0]["deltas"]))] + \
               [[x["last_to_after"] for x in rows]]
        summary["us"] = {}
        for name, c in zip(names, cols):
            summary["us"][name] = dict(median=us(statistics.median(c)), min=us(min(c)), max=us(max(c)))
        print("# %s: %d sends, %d records, %d complete, %d with a chain of their own; us %s" %
              (a.label, len(sends), len(recs), summary["complete"], len(owner),
               " ".join("%s %s (%s..%s)" % (n, v["median"], v["min"], v["max"])
                        for n, v in summary["us"].items())))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(summary, f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
