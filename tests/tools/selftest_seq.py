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
--self-test builds traces byte by byte and checks that each kind of
defect is caught.
"""

import struct
import sys

HDR = struct.Struct("<HHIQQII")   # size, event, cpu, abstract ID, time, pid, tgid
EV_LOST, EV_EVENTDEF = 1, 2


def read_produced(text):
    prod = {}
    for line in text.splitlines():
        if line.strip():
            cpu, task, irq = (int(x) for x in line.split())
            prod[cpu] = (task, irq)
    return prod


def check(data, prod, lossless=False):
    """Returns a summary string; raises AssertionError on a violation."""
    off, names, last = 0, {}, {}
    n = {}          # (cpu, irq) -> events read
    lost = {}       # cpu -> LOST counts
    while off < len(data):
        if off + HDR.size > len(data):
            raise AssertionError("truncated record header at offset %d" % off)
        size, ev, cpu, _aid, ts, pid, tgid = HDR.unpack_from(data, off)
        if size < HDR.size or off + size > len(data):
            raise AssertionError("record at offset %d: size %d" % (off, size))
        if ev == EV_EVENTDEF:
            eid = struct.unpack_from("<H", data, off + 32)[0]
            names[eid] = data[off + 40:off + 72].split(b"\0")[0].decode()
        elif ev == EV_LOST:
            lost[cpu] = lost.get(cpu, 0) + struct.unpack_from("<Q", data, off + 32)[0]
        elif names.get(ev) == "selftest":
            seq, pcpu, irq = struct.unpack_from("<QII", data, off + 32)
            if pcpu != cpu:
                raise AssertionError("record at offset %d: payload CPU %d in CPU %d's ring"
                                     % (off, pcpu, cpu))
            key = (cpu, irq)
            if key in last and seq <= last[key][0]:
                pseq, poff, pts = last[key]
                kinds = {}
                o = poff
                while o < off:
                    s, e = struct.unpack_from("<HH", data, o)
                    kinds[e] = kinds.get(e, 0) + 1
                    o += s
                raise AssertionError(
                    "sequence went back: key %s: seq %d at offset %d ts %d after seq %d at "
                    "offset %d ts %d; records between, by event ID: %s; file %d bytes"
                    % (key, seq, off, ts, pseq, poff, pts, kinds, len(data)))
            if lossless and seq != last.get(key, (-1,))[0] + 1:
                raise AssertionError("key %s: seq %d at offset %d follows %d: events missing"
                                     % (key, seq, off, last.get(key, (-1,))[0]))
            if irq and (pid or tgid):
                raise AssertionError("hardirq event with pid %d at offset %d" % (pid, off))
            if not irq and not pid:
                raise AssertionError("task event without a pid at offset %d" % off)
            last[key] = (seq, off, ts)
            n[key] = n.get(key, 0) + 1
        off += size
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

def _rec(ev, cpu, payload, pid=0, ts=0):
    size = (HDR.size + len(payload) + 7) & ~7
    return HDR.pack(size, ev, cpu, cpu, ts, pid, pid) + payload.ljust(size - HDR.size, b"\0")


def _eventdef():
    return _rec(EV_EVENTDEF, 0, struct.pack("<H6x", 16) + b"selftest".ljust(32, b"\0"))


def _ev(cpu, seq, irq, ts=0):
    return _rec(16, cpu, struct.pack("<QII", seq, cpu, irq), pid=0 if irq else 100, ts=ts)


def _lost(cpu, count):
    return _rec(EV_LOST, cpu, struct.pack("<Q", count))


def self_test():
    good = [_eventdef(), _ev(0, 0, 0), _ev(0, 0, 1), _ev(0, 1, 0), _ev(1, 0, 0),
            _lost(0, 3), _ev(0, 5, 0), _ev(0, 1, 1), _ev(1, 1, 0)]
    prod = {0: (6, 2), 1: (2, 0)}
    cases = [
        ("a valid trace with losses", good, prod, False, None),
        ("a valid trace, lossless", [_eventdef(), _ev(0, 0, 0), _ev(0, 0, 1), _ev(0, 1, 0)],
         {0: (2, 1)}, True, None),
        ("two records swapped", good[:3] + [good[6], good[4], good[5], good[3]] + good[7:],
         prod, False, "sequence went back"),
        ("a record twice", good + [good[8]], prod, False, "sequence went back"),
        ("an event missing without a LOST record", good[:3] + good[4:], prod, False,
         "(-1)"),
        ("a LOST record on the wrong CPU", good[:5] + [_lost(1, 3)] + good[6:], prod, False,
         "CPU 0"),
        ("a loss where nothing may be lost", good, prod, True, "events missing"),
        ("a hardirq event with a pid", good[:2] + [_rec(16, 0, struct.pack("<QII", 0, 0, 1),
                                                        pid=5)] + good[3:],
         prod, False, "hardirq event with pid"),
        ("no selftest event at all, everything lost", [_eventdef(), _lost(0, 8), _lost(1, 2)],
         prod, False, "no selftest event"),
        ("a payload from another CPU", good[:4] + [_rec(16, 1, struct.pack("<QII", 0, 0, 0),
                                                        pid=100)] + good[5:],
         prod, False, "payload CPU"),
    ]
    failed = 0
    print("1..%d" % len(cases))
    for i, (name, recs, p, lossless, want) in enumerate(cases, 1):
        try:
            check(b"".join(recs), p, lossless)
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
