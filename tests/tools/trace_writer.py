# SPDX-License-Identifier: GPL-2.0
"""Builds MAGNET trace files byte by byte (include/uapi/magnet.h,
docs/FORMAT.md) for the trace checkers' self-tests: records in either
byte order, with a SYSINFO, EVENTDEFs and LOST records as the kernel
writes them.  No kernel needed."""

import struct

RELEASE = "6.12.0-test"


class TraceWriter:
    """Serializes records in one byte order ('<' or '>'); each method
    appends one record and returns the writer."""

    def __init__(self, bo="<"):
        self.bo = bo
        self.out = bytearray()
        self.probe_events = 0

    def rec(self, event, cpu, aid, ts, pid, tgid, payload=b"", size=None):
        body = payload + b"\0" * (-len(payload) % 8)
        if size is None:
            size = 32 + len(body)
        self.out += struct.pack(self.bo + "HHIQQII", size, event, cpu, aid, ts,
                                pid, tgid) + body
        if event >= 16:
            self.probe_events += 1
        return self

    def sysinfo(self, magic=0x01234567, nr_cpus=2, release=RELEASE, flags=0):
        p = struct.pack(self.bo + "IHHIIQQIIIIII32s64s", magic, 1, 0, 1, 1,
                        10 ** 9, 1_700_000_000 * 10 ** 9, nr_cpus, 8, 4096,
                        256 << 10, 2, flags, b"s0", release.encode())
        return self.rec(0, 0, 0, 1000, 0, 0, p)

    def eventdef(self, eid, name, layer, ptype, raw_name=None):
        nm = raw_name if raw_name is not None else name.encode().ljust(32, b"\0")
        return self.rec(2, 0, eid, 1000, 0, 0,
                        struct.pack(self.bo + "HHHH32s", eid, layer, ptype, 0, nm))

    def lost(self, cpu, ts, count):
        return self.rec(1, cpu, 0, ts, 0, 0, struct.pack(self.bo + "Q", count))
