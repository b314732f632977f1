#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Summarize a MAGNET trace for tests/vm/t_filter.sh, as JSON (or import
it and call summarize(path)).

filter_trace.py TRACE
  records: probe records; lost: sum of LOST counts; by_event: count per
  event name; selftest: per "cpu/irq" the count, min and max sequence
  number and whether the sequence numbers are exactly min..max; ts: the
  selftest timestamps per cpu (for time sampling); tgid: per event name,
  per tgid, the count of task-context records; irq: per event name, per
  abstract ID, the count of interrupt-context records (tgid 0).
"""
import json
import struct
import sys


def summarize(path):
    data = open(path, "rb").read()
    off, names = 0, {}
    out = {"records": 0, "lost": 0, "by_event": {}, "selftest": {},
           "ts": {}, "tgid": {}, "irq": {}}
    seqs = {}
    while off + 32 <= len(data):
        size, ev, cpu, aid, ts, pid, tgid = struct.unpack_from("<HHIQQII", data, off)
        if size < 32 or off + size > len(data):
            raise SystemExit("bad record at %d" % off)
        if ev == 1:
            out["lost"] += struct.unpack_from("<Q", data, off + 32)[0]
        elif ev == 2:
            eid = struct.unpack_from("<H", data, off + 32)[0]
            names[eid] = data[off + 40:off + 72].split(b"\0")[0].decode()
        elif ev >= 16:
            name = names.get(ev, str(ev))
            out["records"] += 1
            out["by_event"][name] = out["by_event"].get(name, 0) + 1
            if tgid:
                t = out["tgid"].setdefault(name, {})
                t[str(tgid)] = t.get(str(tgid), 0) + 1
            else:
                t = out["irq"].setdefault(name, {})
                t[str(aid)] = t.get(str(aid), 0) + 1
            if name == "selftest":
                seq, pcpu, irq = struct.unpack_from("<QII", data, off + 32)
                assert pcpu == cpu == aid, (off, pcpu, cpu, aid)
                assert (pid == 0) == (irq == 1), (off, pid, irq)
                seqs.setdefault("%d/%d" % (cpu, irq), []).append(seq)
                out["ts"].setdefault(str(cpu), []).append(ts)
        off += size
    for k, v in seqs.items():
        s = set(v)
        out["selftest"][k] = {"n": len(v), "min": min(v), "max": max(v),
                              "contig": len(s) == len(v) == max(v) - min(v) + 1}
    return out


if __name__ == "__main__":
    json.dump(summarize(sys.argv[1]), sys.stdout)
