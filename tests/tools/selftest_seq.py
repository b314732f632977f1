#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check a trace of magnet_selftest.ko's events against the producers.

    selftest_seq.py TRACE PRODUCED [--lossless]
    selftest_seq.py --self-test

TRACE is what `magnetctl record` wrote; PRODUCED a copy of
/sys/module/magnet_selftest/parameters/produced taken once the producers
finished (a line "CPU TASK IRQ" per CPU: the events each context handed
to magnet_add()).  Each selftest payload carries the sequence number of
its CPU and context (task or hardirq), so the producers, not the kernel's
counters, say what the trace must hold:

- per CPU and context, sequence numbers only grow (a failure prints both
  records and what lies between them);
- hardirq events carry no pid, task events one;
- per CPU, the producer's TASK + IRQ = events read + the LOST records'
  counts on that CPU: every event not in the trace is reported lost, on
  the CPU that lost it, and none is there twice;
- at least one selftest event is there (else nothing was checked);
- with --lossless, no LOST record, and each context's numbers are exactly
  0 .. N-1: every event, once, in order.

Prints a summary line; exit 0 when all hold, 1 with the first violation.
The trace is decoded by check_trace.py's Trace, whose format problems
fail it too.  --self-test builds traces byte by byte (trace_writer.py)
and checks that each kind of defect is caught.
"""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # keep the source tree clean
from check_trace import EV_LOST, LOST_FMT, Trace  # noqa: E402
from trace_writer import TraceWriter  # noqa: E402

SELFTEST_FMT = "QII"    # struct magnet_selftest_payload: seq, cpu, irq


def read_produced(text):
    prod = {}
    for line in text.splitlines():
        if line.strip():
            cpu, task, irq = (int(x) for x in line.split())
            prod[cpu] = (task, irq)
    return prod


def check(data, prod, lossless=False):
    """Returns a summary string; raises AssertionError on a violation."""
    trace = Trace(data)
    if trace.errors:
        kind, msg = trace.errors[0]
        raise AssertionError("not a well-formed trace (%s, %d problems): %s"
                             % (kind, len(trace.errors), msg))
    last = {}       # (cpu, irq) -> (seq, record) of the last selftest event
    n = {}          # (cpu, irq) -> events read
    lost = {}       # cpu -> LOST counts
    for rec in trace.records:
        if rec.event == EV_LOST:
            lost[rec.cpu] = lost.get(rec.cpu, 0) + \
                struct.unpack_from(trace.bo + LOST_FMT, rec.payload)[0]
            continue
        if rec.name != "selftest":
            continue
        seq, pcpu, irq = struct.unpack_from(trace.bo + SELFTEST_FMT, rec.payload)
        if pcpu != rec.cpu:
            raise AssertionError("%s: payload CPU %d in CPU %d's ring"
                                 % (rec.where(), pcpu, rec.cpu))
        key = (rec.cpu, irq)
        pseq, prev = last.get(key, (-1, None))
        if prev and seq <= pseq:
            kinds = {}
            for r in trace.records[prev.index + 1:rec.index]:
                kinds[r.event] = kinds.get(r.event, 0) + 1
            raise AssertionError(
                "sequence went back: key %s: seq %d, %s, ts %d, after seq %d, %s, ts %d; "
                "records between, by event ID: %s; file %d bytes"
                % (key, seq, rec.where(), rec.timestamp, pseq, prev.where(),
                   prev.timestamp, kinds, len(data)))
        if lossless and seq != pseq + 1:
            raise AssertionError("key %s: seq %d, %s, follows %d: events missing"
                                 % (key, seq, rec.where(), pseq))
        if irq and (rec.pid or rec.tgid):
            raise AssertionError("hardirq event with pid %d: %s" % (rec.pid, rec.where()))
        if not irq and not rec.pid:
            raise AssertionError("task event without a pid: %s" % rec.where())
        last[key] = (seq, rec)
        n[key] = n.get(key, 0) + 1
    if not n:
        raise AssertionError("no selftest event in the trace: nothing to check")
    for cpu in sorted(set(prod) | {c for c, _ in n} | set(lost)):
        task, irq = prod.get(cpu, (0, 0))
        got_t, got_i = n.get((cpu, 0), 0), n.get((cpu, 1), 0)
        if task + irq != got_t + got_i + lost.get(cpu, 0):
            raise AssertionError(
                "CPU %d: the producers made %d + %d events, the trace holds %d + %d and LOST "
                "records count %d (%+d)" % (cpu, task, irq, got_t, got_i, lost.get(cpu, 0),
                                            got_t + got_i + lost.get(cpu, 0) - task - irq))
        if lossless and (lost.get(cpu, 0) or got_t != task or got_i != irq):
            raise AssertionError("CPU %d: %d lost of %d + %d where nothing may be"
                                 % (cpu, lost.get(cpu, 0), task, irq))
    tot = lambda i: sum(v for (_c, x), v in n.items() if x == i)  # noqa: E731
    return ("task events %d, hardirq events %d, lost %d, on %d CPUs"
            % (tot(0), tot(1), sum(lost.values()), len(prod)))


# --- self-test --------------------------------------------------------------
# Records as bytes, built by a TraceWriter; _trace() puts a SYSINFO and
# the selftest EVENTDEF before them.

EV_SELFTEST = 16


def _ev(cpu, seq, irq, pid=None, pcpu=None):
    pid = (0 if irq else 100) if pid is None else pid
    payload = struct.pack("<" + SELFTEST_FMT, seq, cpu if pcpu is None else pcpu, irq)
    return bytes(TraceWriter().rec(EV_SELFTEST, cpu, cpu, 1000 + seq, pid, pid, payload).out)


def _lost(cpu, count):
    return bytes(TraceWriter().lost(cpu, 1000, count).out)


def _trace(recs):
    head = TraceWriter().sysinfo().eventdef(EV_SELFTEST, "selftest", 0, 2)
    return bytes(head.out) + b"".join(recs)


def self_test():
    good = [_ev(0, 0, 0), _ev(0, 0, 1), _ev(0, 1, 0), _ev(1, 0, 0),
            _lost(0, 3), _ev(0, 5, 0), _ev(0, 1, 1), _ev(1, 1, 0)]
    prod = {0: (6, 2), 1: (2, 0)}
    cases = [
        ("a valid trace with losses", good, prod, False, None),
        ("a valid trace, lossless", [_ev(0, 0, 0), _ev(0, 0, 1), _ev(0, 1, 0)],
         {0: (2, 1)}, True, None),
        ("two records swapped", good[:2] + [good[5], good[3], good[4], good[2]] + good[6:],
         prod, False, "sequence went back"),
        ("a record twice", good + [good[7]], prod, False, "sequence went back"),
        ("an event missing without a LOST record", good[:2] + good[3:], prod, False,
         "(-1)"),
        ("a LOST record on the wrong CPU", good[:4] + [_lost(1, 3)] + good[5:], prod, False,
         "CPU 0"),
        ("a loss where nothing may be lost", good, prod, True, "events missing"),
        ("a hardirq event with a pid", good[:1] + [_ev(0, 0, 1, pid=5)] + good[2:],
         prod, False, "hardirq event with pid"),
        ("no selftest event at all, everything lost", [_lost(0, 8), _lost(1, 2)],
         prod, False, "no selftest event"),
        ("a payload from another CPU", good[:3] + [_ev(1, 0, 0, pcpu=0)] + good[4:],
         prod, False, "payload CPU"),
        ("a record cut short (a malformed trace)", good[:-1] + [good[-1][:-8]], prod, False,
         "malformed"),
    ]
    failed = 0
    print("1..%d" % len(cases))
    for i, (name, recs, p, lossless, want) in enumerate(cases, 1):
        try:
            check(_trace(recs), p, lossless)
            err = None
        except AssertionError as e:
            err = str(e)
        ok = (err is None) if want is None else (err is not None and want in err)
        failed += not ok
        print("%s %d - %s%s" % ("ok" if ok else "not ok", i, name,
                                "" if ok else ": got %r" % err))
    print("%d passed, %d failed" % (len(cases) - failed, failed))
    return 1 if failed else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) not in (3, 4) or (len(argv) == 4 and argv[3] != "--lossless"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    data = open(argv[1], "rb").read()
    with open(argv[2]) as f:
        prod = read_produced(f.read())
    if not prod:
        print("selftest_seq: %s: no producer counts" % argv[2], file=sys.stderr)
        return 1
    try:
        print(check(data, prod, len(argv) == 4))
    except AssertionError as e:
        print("selftest_seq: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
