#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Independent checker for MAGNET trace files.

Written from include/uapi/magnet.h and docs/FORMAT.md only (it shares no
code with libmagnet),
so that a bug in the writer and the same bug in the reader cannot cancel
out.  A trace file is the raw bytes read from a MAGNET stream:

    SYSINFO, EVENTDEF..., events...  [SYSINFO, EVENTDEF..., events...]...

Every record: a 32-byte header {u16 size, u16 event, u32 cpu,
u64 abstract_id, u64 timestamp, u32 pid, u32 tgid} and a payload, 8-byte
aligned, in the byte order of the traced machine (SYSINFO.endian tells).

Modes:
  check_trace.py TRACE [assertion options]   TAP, one line per assertion,
                                              then "N passed, M failed";
                                              exit 0 all passed, 1 else
  check_trace.py TRACE --summary             per-layer/per-event table
  check_trace.py TRACE --dump                one line per record

Always asserted: the first record is a sane SYSINFO; no record is
malformed; every probe event's ID is named by an EVENTDEF; per-CPU
timestamps of probe events and LOST records never go backwards within one
SYSINFO group (across all CPUs when SYSINFO flags say global ring); no field looks like a kernel address; strings, reserved
fields and padding carry no stale bytes.  Exit 2: usage error or unreadable file.
"""

import argparse
import collections
from collections import namedtuple
import re
import struct
import sys

# ---- include/uapi/magnet.h ------------------------------------------------
HDR_SIZE = 32
STREAM_F_GLOBAL = 0x1
STREAM_F_OVERWRITE = 0x2
STREAM_F_ALL = STREAM_F_GLOBAL | STREAM_F_OVERWRITE
REC_ALIGN = 8
REC_MAX = 4096
EVENT_MAX = (1 << 10) - 1

EV_SYSINFO = 0
EV_LOST = 1
EV_EVENTDEF = 2
EV_SYNTH = 3
EV_CORR = 4                         # correlator records (docs/CORRELATE.md)
EV_APP = 5          # application events (write(2) into a stream)
FIRST_PROBE = 16

ENDIAN_MAGIC = 0x01234567
FORMAT_MAJOR = 1
ABI_VERSION = 1
CLOCK_MONOTONIC = 1
CLOCK_LOCAL = 2

LAYER_SOCKET = 1
LAYER_TRANSPORT = 2
LAYERS = ["other", "socket", "transport", "network", "device", "sched",
          "memory", "core"]
PAYLOAD_NONE, PAYLOAD_NET, PAYLOAD_RAW = 0, 1, 2
# payload types 3-11 (the probe library's, docs/PROBES.md): named, their
# bodies not checked here
PAYLOAD_NAMES = ["none", "net", "raw", "sched_switch", "sched_proc", "sched_exec",
                 "fault", "page", "tcp", "ip", "kprobe", "sched_switch_end"]
NAME_MAX = 32

NET_F_TX = 0x01
NET_F_RX = 0x02
NET_F_ERROR = 0x04                  # a failed call: len 0, gso_size is err (s16)

SUBBUF_SIZE_MIN = 4096
SUBBUF_SIZE_MAX = 16 << 20
SUBBUF_COUNT_MIN = 2
SUBBUF_COUNT_MAX = 64

PID_MAX_LIMIT = 4 * 1024 * 1024
KERNEL_ADDR_MIN = 0xffff800000000000   # x86-64 kernel half (and arm64's)

# struct layouts (without byte order prefix)
HDR_FMT = "HHIQQII"                 # 32 bytes
SYSINFO_FMT = "IHHIIQQIIIIII32s64s"  # 152 bytes
LOST_FMT = "Q"
EVENTDEF_FMT = "HHHH32s"            # 40 bytes
NET_FMT = "IIHHHH"                  # 16 bytes
# struct magnet_synth_payload (docs/FORMAT.md): name, 13 u64, 8 u32
SYNTH_FMT = "32s13Q8I"              # 168 bytes
SYNTH_FIELDS = ("name period_start period_end count min max sum_lo sum_hi "
                "sumsq_lo sumsq_hi mean variance cgroup abstract_id event "
                "cpu pid tgid group flags quantity reserved").split()
CORR_FMT = "IHHIIQ"                 # 24 bytes, then nsteps x CORR_STEP_FMT
CORR_STEP_FMT = "QIIHHHH"           # 24 bytes
CORR_FLAGS = 0x1 | 0x2 | 0x4 | 0x8
assert struct.calcsize("<" + HDR_FMT) == HDR_SIZE
assert struct.calcsize("<" + SYSINFO_FMT) == 152
assert struct.calcsize("<" + EVENTDEF_FMT) == 40
assert struct.calcsize("<" + NET_FMT) == 16
assert struct.calcsize("<" + SYNTH_FMT) == 168
# struct magnet_app_payload: entry_ns exit_ns ret req fd call flags
# msg_flags reserved
APP_FMT = "QQqQiHHII"               # 48 bytes
assert struct.calcsize("<" + APP_FMT) == 48
App = namedtuple("App", "entry_ns exit_ns ret req fd call flags msg_flags reserved")
APP_CALLS = ["send", "sendto", "sendmsg", "write", "writev", "recv",
             "recvfrom", "recvmsg", "read", "readv"]
APP_F_TX, APP_F_RX = 0x1, 0x2

# Events the assertions know by name.
SEND_EVENTS = ("sock_send", "tcp_send", "udp_send")
MTU_EVENTS = ("ip_send", "ip_recv", "dev_send", "dev_recv")
ETH_HLEN = 14

NAME_RE = re.compile(r"^[a-z0-9_]+$")

# struct magnet_net_payload
Net = namedtuple("Net", "len ifindex proto flags gso_size gso_segs")

# Smallest/largest IPv4 + transport header of one GSO segment (IPv4+UDP,
# IPv4+TCP with a full 40 bytes of options and 60 of IP options).
GSO_HDR_MIN = 28
GSO_HDR_MAX = 120


def failed(r):
    """A socket call that failed (its record says so, len 0)."""
    return bool(r.net and r.net.flags & NET_F_ERROR)


def wire_segments(net):
    """Packets this skb becomes on the wire."""
    return net.gso_segs if net.gso_segs else 1


class Record:
    __slots__ = ("index", "offset", "size", "event", "cpu", "abstract_id",
                 "timestamp", "pid", "tgid", "payload", "group", "name",
                 "layer", "ptype", "net", "app")

    def __init__(self, index, offset, hdr, payload, group):
        (self.size, self.event, self.cpu, self.abstract_id, self.timestamp,
         self.pid, self.tgid) = hdr
        self.index = index
        self.offset = offset
        self.payload = payload
        self.group = group
        self.name = None
        self.layer = None
        self.ptype = None
        self.net = None   # Net, for payload type "net"
        self.app = None   # App, for EV_APP records

    def where(self):
        return "record #%d at offset %d (event %d%s, cpu %d)" % (
            self.index, self.offset, self.event,
            " " + self.name if self.name else "", self.cpu)


def cstring(raw):
    """(text, clean): the NUL-terminated string and whether it is
    terminated with nothing but zero bytes after the terminator."""
    nul = raw.find(b"\0")
    if nul < 0:
        return raw.decode("latin-1"), False
    return raw[:nul].decode("latin-1"), not any(raw[nul:])


class Trace:
    """Parses a trace file; collects format problems in self.errors."""

    def __init__(self, data):
        self.data = data
        self.bo = "<"
        self.records = []
        self.sysinfos = []      # (record, dict)
        self.errors = []        # (kind, message)
        self.defs_at = {}       # EVENTDEF index -> (id, name, layer, ptype)
        self.parse()

    def error(self, kind, msg):
        self.errors.append((kind, msg))

    def parse(self):
        data = self.data
        if len(data) < HDR_SIZE + 4:
            self.error("malformed", "file too short (%d bytes)" % len(data))
            return
        magic_le = struct.unpack_from("<I", data, HDR_SIZE)[0]
        magic_be = struct.unpack_from(">I", data, HDR_SIZE)[0]
        if magic_be == ENDIAN_MAGIC and magic_le != ENDIAN_MAGIC:
            self.bo = ">"
        hdr_fmt = self.bo + HDR_FMT
        off = 0
        group = -1
        while off < len(data):
            if len(data) - off < HDR_SIZE:
                self.error("malformed", "%d trailing bytes at offset %d, less "
                           "than a record header" % (len(data) - off, off))
                break
            hdr = struct.unpack_from(hdr_fmt, data, off)
            size, event = hdr[0], hdr[1]
            if size < HDR_SIZE or size % REC_ALIGN or size > REC_MAX:
                self.error("malformed", "record #%d at offset %d: bad size %d "
                           "(event %d); cannot continue" %
                           (len(self.records), off, size, event))
                break
            if off + size > len(data):
                self.error("malformed", "record #%d at offset %d: size %d runs "
                           "past the end of the file (%d bytes)" %
                           (len(self.records), off, size, len(data)))
                break
            if event == EV_SYSINFO:
                group += 1
            rec = Record(len(self.records), off, hdr,
                         data[off + HDR_SIZE:off + size], max(group, 0))
            self.records.append(rec)
            off += size
        for rec in self.records:
            self.check_record(rec)
        self.resolve_names()

    # -- per-record format checks ---------------------------------------
    def check_record(self, rec):
        if rec.event > EVENT_MAX:
            self.error("malformed", "%s: event ID above %d" % (rec.where(), EVENT_MAX))
        if rec.index == 0 and rec.event != EV_SYSINFO:
            self.error("sysinfo", "first record is event %d, not SYSINFO" % rec.event)
        if rec.event == EV_SYSINFO:
            self.check_sysinfo(rec)
        elif rec.event == EV_LOST:
            if len(rec.payload) < 8:
                self.error("malformed", "%s: LOST payload %d bytes < 8" %
                           (rec.where(), len(rec.payload)))
            elif struct.unpack_from(self.bo + LOST_FMT, rec.payload)[0] == 0:
                self.error("malformed", "%s: LOST with count 0" % rec.where())
        elif rec.event == EV_EVENTDEF:
            self.check_eventdef(rec)
        elif rec.event == EV_SYNTH:
            self.check_synth(rec)
        elif rec.event == EV_CORR:
            self.check_corr(rec)
        elif rec.event == EV_APP:
            self.check_app(rec)
        elif rec.event < FIRST_PROBE:
            self.error("malformed", "%s: reserved core event ID" % rec.where())
        if self.sysinfos:
            nr_cpus = self.sysinfos[-1][1]["nr_cpus"]
            if rec.cpu >= nr_cpus and rec.event != EV_SYSINFO:
                self.error("malformed", "%s: cpu %d >= nr_cpus %d" %
                           (rec.where(), rec.cpu, nr_cpus))

    def synth(self, rec):
        """The SYNTH payload as a dict (None if too short)."""
        if len(rec.payload) < 168:
            return None
        d = dict(zip(SYNTH_FIELDS,
                     struct.unpack_from(self.bo + SYNTH_FMT, rec.payload)))
        d["name"], d["name_clean"] = cstring(d["name"])
        return d

    def check_synth(self, rec):
        d = self.synth(rec)
        if d is None or len(rec.payload) != 168:
            self.error("malformed", "%s: SYNTH payload %d bytes, not 168" %
                       (rec.where(), len(rec.payload)))
            return
        s1 = d["sum_lo"] | d["sum_hi"] << 64
        s2 = d["sumsq_lo"] | d["sumsq_hi"] << 64
        n = d["count"]
        bad = []
        if not d["name"] or not d["name_clean"]:
            bad.append("name not a clean NUL-terminated string")
        if d["reserved"] or d["group"] & ~0x3f or d["quantity"] > 2 or \
           d["flags"] & ~0xf:
            bad.append("reserved bits set")
        if rec.abstract_id != d["abstract_id"]:
            bad.append("header abstract_id %d != key %d" %
                       (rec.abstract_id, d["abstract_id"]))
        if not n or d["min"] > d["max"] or d["period_start"] >= d["period_end"]:
            bad.append("empty or inverted (count %d, min %d, max %d)" %
                       (n, d["min"], d["max"]))
        elif not d["flags"] & 0x4:
            if not n * d["min"] <= s1 <= n * d["max"] or s1 * s1 > n * s2:
                bad.append("moments inconsistent")
            var = (n * s2 - s1 * s1) // (n * n)
            if d["mean"] != s1 // n or d["variance"] != min(var, (1 << 64) - 1):
                bad.append("mean/variance %d/%d are not the floors %d/%d" %
                           (d["mean"], d["variance"], s1 // n, var))
        for b in bad:
            self.error("malformed", "%s: SYNTH %s" % (rec.where(), b))
    def check_corr(self, rec):
        """A correlator's record: struct magnet_corr_rec + nsteps steps."""
        w, pl = rec.where(), rec.payload
        if len(pl) < 24:
            self.error("malformed", "%s: CORR payload %d bytes < 24" % (w, len(pl)))
            return
        cid, nsteps, reached, flags, res, start = struct.unpack_from(self.bo + CORR_FMT, pl)
        problems = []
        if not 2 <= nsteps <= 8:
            problems.append("nsteps %d" % nsteps)
        if reached > nsteps or reached < 1:
            problems.append("reached %d of %d" % (reached, nsteps))
        if flags & ~CORR_FLAGS:
            problems.append("unknown flags 0x%x" % flags)
        if (flags == 0) != (reached == nsteps):
            problems.append("flags 0x%x with %d of %d steps" % (flags, reached, nsteps))
        if res:
            problems.append("reserved %d" % res)
        if not start or start > rec.timestamp:
            problems.append("start %d after the record's time %d" % (start, rec.timestamp))
        if len(pl) < 24 + 24 * nsteps:
            problems.append("%d bytes for %d steps" % (len(pl), nsteps))
        else:
            for i in range(min(nsteps, 8)):
                d, cnt, b, ev, r1, r2, r3 = struct.unpack_from(self.bo + CORR_STEP_FMT,
                                                               pl, 24 + 24 * i)
                if r1 or r2 or r3:
                    problems.append("step %d reserved bytes" % i)
                if i < reached and (cnt < 1 or ev < FIRST_PROBE or (i == 0 and d)):
                    problems.append("step %d: delta %d count %d event %d" % (i, d, cnt, ev))
                if i >= reached and (d or cnt or b or ev):
                    problems.append("step %d not reached but not zero" % i)
            if any(pl[24 + 24 * nsteps:]):
                problems.append("non-zero padding")
        for p in problems:
            self.error("malformed", "%s: CORR %s" % (w, p))

    def check_sysinfo(self, rec):
        if len(rec.payload) < 152:
            self.error("sysinfo", "%s: SYSINFO payload %d bytes < 152" %
                       (rec.where(), len(rec.payload)))
            return
        v = struct.unpack_from(self.bo + SYSINFO_FMT, rec.payload)
        keys = ("endian", "format_major", "format_minor", "abi_version",
                "clock_id", "clock_hz", "wall_ns_at_zero", "nr_cpus",
                "ptr_size", "page_size", "subbuf_size", "subbuf_count",
                "flags", "stream", "release")
        si = dict(zip(keys, v))
        stream, stream_ok = cstring(si["stream"])
        release, release_ok = cstring(si["release"])
        si["stream"], si["release"] = stream, release
        self.sysinfos.append((rec, si))
        w = rec.where()
        problems = []
        if si["endian"] != ENDIAN_MAGIC:
            problems.append("endian magic 0x%08x" % si["endian"])
        if si["format_major"] != FORMAT_MAJOR:
            problems.append("format_major %d" % si["format_major"])
        if si["abi_version"] != ABI_VERSION:
            problems.append("abi_version %d" % si["abi_version"])
        if si["clock_id"] not in (CLOCK_MONOTONIC, CLOCK_LOCAL):
            problems.append("clock_id %d" % si["clock_id"])
        if si["clock_hz"] != 1000000000:
            problems.append("clock_hz %d" % si["clock_hz"])
        if not 1 <= si["nr_cpus"] <= 8192:
            problems.append("nr_cpus %d" % si["nr_cpus"])
        if si["ptr_size"] not in (4, 8):
            problems.append("ptr_size %d" % si["ptr_size"])
        ps = si["page_size"]
        if ps < 4096 or ps & (ps - 1):
            problems.append("page_size %d" % ps)
        if not SUBBUF_SIZE_MIN <= si["subbuf_size"] <= SUBBUF_SIZE_MAX:
            problems.append("subbuf_size %d" % si["subbuf_size"])
        if not SUBBUF_COUNT_MIN <= si["subbuf_count"] <= SUBBUF_COUNT_MAX:
            problems.append("subbuf_count %d" % si["subbuf_count"])
        if si["flags"] & ~STREAM_F_ALL:
            problems.append("flags 0x%x (unknown bits)" % si["flags"])
        if not stream or not stream.isprintable():
            problems.append("stream name %r" % stream)
        if not stream_ok:
            problems.append("stream name not NUL-terminated/zero-padded")
        if not release or not release.isprintable():
            problems.append("release %r" % release)
        if not release_ok:
            problems.append("release not NUL-terminated/zero-padded")
        if any(rec.payload[152:]):
            problems.append("non-zero padding after the SYSINFO payload")
        for p in problems:
            self.error("sysinfo", "%s: SYSINFO %s" % (w, p))

    def check_app(self, rec):
        w = rec.where()
        if len(rec.payload) != 48:
            self.error("malformed", "%s: APP payload %d bytes != 48" %
                       (w, len(rec.payload)))
            return
        rec.app = a = App(*struct.unpack_from(self.bo + APP_FMT, rec.payload))
        rec.name = "app"
        problems = []
        if a.call >= len(APP_CALLS):
            problems.append("call %d" % a.call)
        elif a.flags != (APP_F_TX if a.call <= 4 else APP_F_RX):
            problems.append("flags 0x%x for %s" % (a.flags, APP_CALLS[a.call]))
        if a.reserved:
            problems.append("reserved %d" % a.reserved)
        if a.entry_ns > a.exit_ns:
            problems.append("entry %d after exit %d" % (a.entry_ns, a.exit_ns))
        # the kernel stamps the header when the batch reaches the ring
        if a.exit_ns > rec.timestamp + 10000000:
            problems.append("exit %d after the write (%d)" % (a.exit_ns, rec.timestamp))
        if a.ret > 0 and a.ret > a.req:
            problems.append("ret %d > req %d" % (a.ret, a.req))
        if not rec.pid or not rec.tgid:
            problems.append("pid %d tgid %d (a task wrote it)" % (rec.pid, rec.tgid))
        for p in problems:
            self.error("malformed", "%s: APP %s" % (w, p))

    def check_eventdef(self, rec):
        w = rec.where()
        if len(rec.payload) < 40:
            self.error("malformed", "%s: EVENTDEF payload %d bytes < 40" %
                       (w, len(rec.payload)))
            return
        eid, layer, ptype, reserved, raw = struct.unpack_from(
            self.bo + EVENTDEF_FMT, rec.payload)
        name, clean = cstring(raw)
        if eid < FIRST_PROBE or eid > EVENT_MAX:
            self.error("malformed", "%s: EVENTDEF names ID %d" % (w, eid))
        if rec.abstract_id != eid:
            self.error("malformed", "%s: EVENTDEF abstract_id %d != id %d" %
                       (w, rec.abstract_id, eid))
        if layer >= len(LAYERS):
            self.error("malformed", "%s: EVENTDEF layer %d" % (w, layer))
        if ptype >= len(PAYLOAD_NAMES):
            self.error("malformed", "%s: EVENTDEF payload type %d" % (w, ptype))
        if reserved:
            self.error("malformed", "%s: EVENTDEF reserved = %d" % (w, reserved))
        if not NAME_RE.match(name) or not clean:
            self.error("malformed", "%s: EVENTDEF name %r (must be [a-z0-9_], "
                       "NUL-terminated, zero-padded)" % (w, raw))
        if any(rec.payload[40:]):
            self.error("malformed", "%s: non-zero padding after EVENTDEF" % w)
        self.defs_at[rec.index] = (eid, name, layer, ptype)

    def resolve_names(self):
        """Name every probe event.  The latest EVENTDEF for its ID so far in
        its SYSINFO group wins (an ID may be freed and reused); failing
        that, the group's first one (an EVENTDEF may sit in another CPU's
        ring, so it need not precede the event in the file)."""
        first = {}
        by_id = {}
        for rec in self.records:
            if rec.event == EV_EVENTDEF and rec.index in self.defs_at:
                d = self.defs_at[rec.index]
                first.setdefault((rec.group, d[0]), d[1:])
                by_id.setdefault(d[0], d[1:])
        current = {}
        for rec in self.records:
            if rec.event == EV_EVENTDEF and rec.index in self.defs_at:
                d = self.defs_at[rec.index]
                current[(rec.group, d[0])] = d[1:]
            if rec.event < FIRST_PROBE:
                if rec.event != EV_APP:
                    rec.name = ("sysinfo", "lost", "eventdef", "synth", "corr")[rec.event] \
                        if rec.event <= EV_CORR else None
                continue
            key = (rec.group, rec.event)
            d = current.get(key) or first.get(key)
            if d is None:
                d = by_id.get(rec.event)
                if d is None:
                    self.error("undefined", "%s: no EVENTDEF names ID %d" %
                               (rec.where(), rec.event))
                    continue
                self.error("undefined", "%s: ID %d named only in another "
                           "SYSINFO group" % (rec.where(), rec.event))
            rec.name, rec.layer, rec.ptype = d
            if rec.ptype == PAYLOAD_NET:
                if len(rec.payload) < 16:
                    self.error("malformed", "%s: net payload %d bytes < 16" %
                               (rec.where(), len(rec.payload)))
                    continue
                rec.net = net = Net(*struct.unpack_from(self.bo + NET_FMT, rec.payload))
                if net.flags & ~(NET_F_TX | NET_F_RX | NET_F_ERROR):
                    self.error("malformed", "%s: unknown net flags 0x%x" %
                               (rec.where(), net.flags))
                if net.flags & NET_F_ERROR:
                    err = net.gso_size - 65536 if net.gso_size >= 32768 else net.gso_size
                    if net.len or net.gso_segs or not -4095 <= err <= -1 \
                            or rec.layer not in (LAYER_SOCKET, LAYER_TRANSPORT):
                        self.error("malformed", "%s: failed call with len %d, err %d, "
                                   "gso_segs %d at layer %s" % (rec.where(), net.len, err,
                                                                net.gso_segs, rec.layer))
                elif net.gso_segs and not net.gso_size:
                    self.error("malformed", "%s: gso_segs %d with gso_size 0" %
                               (rec.where(), net.gso_segs))
                if any(rec.payload[16:]):
                    self.error("malformed", "%s: non-zero padding after the net "
                               "payload" % rec.where())
            elif rec.ptype == PAYLOAD_NONE and any(rec.payload):
                self.error("malformed", "%s: payload type none but %d non-zero "
                           "payload bytes" % (rec.where(), len(rec.payload)))

    # -- helpers ----------------------------------------------------------
    def probe_events(self):
        return [r for r in self.records if r.event >= FIRST_PROBE]

    def lost_total(self):
        return sum(struct.unpack_from(self.bo + LOST_FMT, r.payload)[0]
                   for r in self.records
                   if r.event == EV_LOST and len(r.payload) >= 8)


# ---- assertions -------------------------------------------------------------

class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def result(self, good, desc, details=()):
        self.n += 1
        if not good:
            self.failed += 1
        print("%s %d - %s" % ("ok" if good else "not ok", self.n, desc))
        details = [] if good else list(details)
        for d in details[:10]:
            print("#   " + d)
        if len(details) > 10:
            print("#   ... and %d more" % (len(details) - 10))

    def finish(self):
        print("1..%d" % self.n)
        print("%d passed, %d failed" % (self.n - self.failed, self.failed))
        return 1 if self.failed else 0


def errors_of(trace, *kinds):
    return [m for k, m in trace.errors if k in kinds]


def check_timestamps(trace):
    """Per CPU and SYSINFO group, probe events and LOST records (what the
    rings hold) must not go back in time; in a global-ring stream (SYSINFO
    flags) not even across CPUs."""
    last = {}
    bad = []
    for r in trace.records:
        if r.event not in (EV_LOST, EV_APP) and r.event < FIRST_PROBE:
            continue
        glob = (r.group < len(trace.sysinfos) and
                trace.sysinfos[r.group][1]["flags"] & STREAM_F_GLOBAL)
        key = (r.group, -1 if glob else r.cpu)
        prev = last.get(key)
        if prev is not None and r.timestamp < prev.timestamp:
            bad.append("%s: timestamp %d < %d of record #%d" %
                       (r.where(), r.timestamp, prev.timestamp, prev.index))
        last[key] = r
    return bad


def check_kernel_values(trace):
    bad = []
    for r in trace.records:
        if r.abstract_id >= KERNEL_ADDR_MIN:
            bad.append("%s: abstract_id 0x%016x" % (r.where(), r.abstract_id))
        for field in ("pid", "tgid"):
            v = getattr(r, field)
            if v > PID_MAX_LIMIT:
                bad.append("%s: %s 0x%08x above PID_MAX_LIMIT" % (r.where(), field, v))
        # SYNTH: the low words of 128-bit sums take any value; the key
        # fields (abstract_id, cgroup) are checked like a header's
        offs = (120, 128) if r.event == EV_SYNTH else \
            range(0, len(r.payload) - 7, 8)
        for off in offs:
            if off + 8 > len(r.payload):
                continue
            v = struct.unpack_from(trace.bo + "Q", r.payload, off)[0]
            if v >= KERNEL_ADDR_MIN:
                bad.append("%s: payload u64 at +%d = 0x%016x" %
                           (r.where(), HDR_SIZE + off, v))
    return bad


def check_mtu(events, mtu):
    """Wire-sized packets (offloads off): at ip_recv, dev_recv and dev_send
    every packet fits the MTU (dev_send with its Ethernet header).  At
    ip_send TCP hands down GSO super-packets (docs/FORMAT.md), so there
    each *segment* must fit: gso_size plus the smallest IPv4 + transport
    header <= MTU, and len must agree with gso_segs x gso_size."""
    bad = []
    for r in events:
        if r.name not in MTU_EVENTS:
            continue
        n = r.net
        limit = mtu + (ETH_HLEN if r.name == "dev_send" else 0)
        if n is None:
            bad.append("%s: no net payload" % r.where())
        elif n.len == 0:
            bad.append("%s: len 0" % r.where())
        elif n.gso_segs and r.name != "ip_send":
            bad.append("%s: GSO packet (len %d, %d x %d) where offloads are off" %
                       (r.where(), n.len, n.gso_segs, n.gso_size))
        elif n.gso_segs:
            if n.gso_size + GSO_HDR_MIN > mtu:
                bad.append("%s: gso_size %d: segments exceed MTU %d" %
                           (r.where(), n.gso_size, mtu))
            if not (n.len - GSO_HDR_MAX <= n.gso_segs * n.gso_size and
                    n.len - GSO_HDR_MIN > (n.gso_segs - 1) * n.gso_size):
                bad.append("%s: len %d does not match %d segments of %d" %
                           (r.where(), n.len, n.gso_segs, n.gso_size))
        elif n.len > limit:
            bad.append("%s: len %d > %d" % (r.where(), n.len, limit))
    return bad


def run_checks(trace, args):
    tap = Tap()
    recs = trace.records
    first = recs[0] if recs else None

    si_errs = errors_of(trace, "sysinfo")
    tap.result(first is not None and first.event == EV_SYSINFO and not si_errs,
               "first record is SYSINFO with endian magic and sane fields "
               "(%d SYSINFO groups, %s-endian)" %
               (len(trace.sysinfos), "little" if trace.bo == "<" else "big"),
               si_errs or ([] if first else ["empty trace"]))
    if args.release is not None:
        rel = [si["release"] for _, si in trace.sysinfos]
        tap.result(bool(rel) and all(x == args.release for x in rel),
                   "SYSINFO release is %s" % args.release, ["found %r" % rel])
    if args.stream is not None:
        names = [si["stream"] for _, si in trace.sysinfos]
        tap.result(bool(names) and all(x == args.stream for x in names),
                   "SYSINFO stream is %s" % args.stream, ["found %r" % names])

    mal = errors_of(trace, "malformed")
    tap.result(not mal, "no malformed record (%d records, %d bytes)" %
               (len(recs), len(trace.data)), mal)
    undef = errors_of(trace, "undefined")
    tap.result(not undef, "every probe event ID is named by an EVENTDEF", undef)

    bad = check_timestamps(trace)
    tap.result(not bad, "per-CPU timestamps never go backwards", bad)
    bad = check_kernel_values(trace)
    tap.result(not bad, "no field looks like a kernel address", bad)

    events = trace.probe_events()
    sends = [r for r in events if r.name in SEND_EVENTS]

    if args.expect_pid is not None:
        pid = args.expect_pid
        if args.ino is not None:
            mine = [r for r in sends if r.abstract_id == args.ino]
            what = "events of ino %d" % args.ino
        else:
            mine = [r for r in sends if r.tgid == pid]
            what = "events with tgid %d" % pid
        wrong = ["%s: pid %d tgid %d" % (r.where(), r.pid, r.tgid)
                 for r in mine if r.pid != pid or r.tgid != pid]
        tap.result(bool(mine) and not wrong,
                   "sender's %s/%s/%s events carry pid=tgid=%d (%d %s)" %
                   (SEND_EVENTS + (pid, len(mine), what)),
                   wrong or ([] if mine else ["no %s at %s" % (what, "/".join(SEND_EVENTS))]))

    if args.ino is not None:
        ino = args.ino
        want_len = args.send_len
        transport = "udp_send" if args.proto == "udp" else "tcp_send"
        for name in ("sock_send", transport):
            mine = [r for r in events if r.name == name and r.abstract_id == ino
                    and not failed(r)]
            details = []
            if not mine:
                details.append("no %s event with abstract_id %d (seen IDs: %s)" % (
                    name, ino, sorted({r.abstract_id for r in events
                                       if r.name == name})[:10]))
            if want_len is not None:
                details += ["%s: len %s != %d" % (r.where(), r.net and r.net.len, want_len)
                            for r in mine if not r.net or r.net.len != want_len]
            if args.send_count is not None and len(mine) != args.send_count:
                details.append("%d %s events, expected %d" %
                               (len(mine), name, args.send_count))
            desc = "%d %s events with abstract_id %d" % (len(mine), name, ino)
            if want_len is not None:
                desc += ", len %d" % want_len
            tap.result(not details, desc, details)

    if args.ino is not None:
        # Every IP-layer packet of the socket leaves as gso_segs (or 1)
        # device packets: the stack's reshaping must add up.
        ip = [r for r in events if r.name == "ip_send" and r.abstract_id == args.ino and r.net]
        dev = [r for r in events if r.name == "dev_send" and r.abstract_id == args.ino]
        if ip or dev:   # one without the other is a layer lost
            segs = sum(wire_segments(r.net) for r in ip)
            tap.result(segs == len(dev),
                       "ip_send of ino %d: %d packets = %d segments, dev_send: %d packets" %
                       (args.ino, len(ip), segs, len(dev)))

    if args.mtu is not None:
        bad = check_mtu(events, args.mtu)
        checked = sum(1 for r in events if r.name in MTU_EVENTS)
        gso = sum(1 for r in events if r.name in MTU_EVENTS and r.net and r.net.gso_segs)
        if not checked:
            bad.append("no %s events in the trace" % "/".join(MTU_EVENTS))
        tap.result(not bad, "%d ip/dev events wire sized for MTU %d (dev_send +%d; "
                   "%d GSO packets at ip_send, by segment)" %
                   (checked, args.mtu, ETH_HLEN, gso), bad)

    if args.expect_produced is not None or args.expect_lost is not None:
        lost = trace.lost_total()
        n = len(events)
        if args.expect_lost is not None:
            tap.result(lost == args.expect_lost,
                       "LOST records add up to %d (found %d in %d records)" %
                       (args.expect_lost, lost,
                        sum(1 for r in recs if r.event == EV_LOST)))
        if args.expect_produced is not None:
            want_lost = args.expect_lost if args.expect_lost is not None else lost
            tap.result(n + want_lost == args.expect_produced,
                       "events read + lost == produced: %d + %d %s %d" %
                       (n, want_lost, "==" if n + want_lost == args.expect_produced
                        else "!=", args.expect_produced))

    if args.app_ino is not None:
        check_app(tap, trace, args)

    if args.min_events is not None:
        tap.result(len(events) >= args.min_events,
                   "at least %d probe events (found %d)" % (args.min_events, len(events)))
    for name in args.require or ():
        cnt = sum(1 for r in events if r.name == name)
        tap.result(cnt > 0, "events named %s present (%d)" % (name, cnt))

    return tap.finish()


def check_app(tap, trace, args):
    """The application's calls on socket --app-ino against the kernel's
    sock_send/sock_recv events of the same socket."""
    ino = args.app_ino
    apps = sorted((r for r in trace.records if r.app and r.abstract_id == ino),
                  key=lambda r: r.app.entry_ns)
    tx = [r for r in apps if r.app.flags == APP_F_TX]
    rx = [r for r in apps if r.app.flags == APP_F_RX]
    details = []
    if args.app_pid is not None:
        details += ["%s: pid %d tgid %d" % (r.where(), r.pid, r.tgid)
                    for r in apps if r.tgid != args.app_pid]
    tap.result(bool(apps) and not details,
               "%d APP records of socket %d (%d send side, %d receive side)%s" %
               (len(apps), ino, len(tx), len(rx),
                ", written by pid %d" % args.app_pid if args.app_pid else ""),
               details or ([] if apps else ["no APP record with abstract_id %d" % ino]))
    if args.app_sends is not None:
        bad = ["%s: %s req %d ret %d" % (r.where(), APP_CALLS[r.app.call],
                                         r.app.req, r.app.ret)
               for r in tx if args.app_len is not None and
               (r.app.req != args.app_len or r.app.ret != args.app_len)]
        if len(tx) != args.app_sends:
            bad.append("%d send-side APP records, expected %d" % (len(tx), args.app_sends))
        tap.result(not bad, "%d application sends of %s bytes each" %
                   (len(tx), args.app_len), bad)
    lag = sorted(a.timestamp - a.app.exit_ns for a in apps) or [0]
    tap.result(all(x >= -10000000 for x in lag),
               "APP records reached the stream after their calls returned "
               "(median lag %d us)" % (lag[len(lag) // 2] // 1000))
    if not args.app_match:
        return
    # The kernel's sock_send of a call happens inside it: entry <= ts <= exit.
    ks = sorted((r for r in trace.records if r.name == "sock_send" and
                 r.abstract_id == ino and not failed(r)), key=lambda r: r.timestamp)
    ok_tx = [r for r in tx if r.app.ret > 0]
    bad = []
    if len(ks) != len(ok_tx):
        bad.append("%d sock_send events, %d successful application sends" %
                   (len(ks), len(ok_tx)))
    for a, k in zip(ok_tx, ks):
        if not a.app.entry_ns <= k.timestamp <= a.app.exit_ns:
            bad.append("%s: call [%d, %d] does not contain sock_send at %d (%s)" %
                       (a.where(), a.app.entry_ns, a.app.exit_ns, k.timestamp,
                        k.where()))
        elif k.net and k.net.len != a.app.ret:
            bad.append("%s: ret %d, sock_send len %d" % (a.where(), a.app.ret,
                                                        k.net.len))
    durs = sorted(a.app.exit_ns - a.app.entry_ns for a in ok_tx) or [0]
    tap.result(bool(ks) and not bad,
               "each of %d sends contains its kernel sock_send: entry <= sock_send <= exit "
               "(call duration median %d ns)" % (len(ks), durs[len(durs) // 2]), bad[:10])


# ---- summary and dump -------------------------------------------------------

def summary(trace, out=None):
    out = out or sys.stdout
    events = trace.probe_events()
    for _, si in trace.sysinfos[:1]:
        print("trace: stream %s, kernel %s, %d CPUs, subbuf %d x %d, %s-endian" % (
            si["stream"], si["release"], si["nr_cpus"], si["subbuf_size"],
            si["subbuf_count"], "little" if trace.bo == "<" else "big"), file=out)
    lost_recs = sum(1 for r in trace.records if r.event == EV_LOST)
    print("records: %d (%d probe events, %d SYSINFO, %d LOST records, %d lost events)" % (
        len(trace.records), len(events), len(trace.sysinfos), lost_recs,
        trace.lost_total()), file=out)
    if events:
        t0 = min(r.timestamp for r in events)
        t1 = max(r.timestamp for r in events)
        print("time span: %.6f s" % ((t1 - t0) / 1e9), file=out)

    per_layer = collections.OrderedDict()
    per_name = collections.OrderedDict()
    for r in sorted(events, key=lambda r: (r.layer if r.layer is not None else 99,
                                           r.name or "")):
        layer = LAYERS[r.layer] if r.layer is not None and r.layer < len(LAYERS) else "?"
        name = r.name or "id%d" % r.event
        nbytes = r.net.len if r.net else 0
        for table, key in ((per_layer, layer), (per_name, (layer, name))):
            s = table.setdefault(key, {"events": 0, "bytes": 0, "ids": set(),
                                       "cpus": set(), "tx": 0, "rx": 0, "gso": 0,
                                       "wire": 0})
            s["events"] += 1
            s["bytes"] += nbytes
            s["ids"].add(r.abstract_id)
            s["cpus"].add(r.cpu)
            if r.net:
                s["tx"] += bool(r.net.flags & NET_F_TX)
                s["rx"] += bool(r.net.flags & NET_F_RX)
                s["gso"] += bool(r.net.gso_segs)
                s["wire"] += wire_segments(r.net)

    cols = ("events", "bytes", "ids", "cpus", "tx", "rx", "gso", "wire")
    fmt = "%-10s %-12s %8s %12s %6s %5s %8s %8s %6s %8s"

    def row(layer, name, s):
        vals = [s[c] if not isinstance(s[c], set) else len(s[c]) for c in cols]
        print(fmt % tuple([layer, name] + vals), file=out)

    print("", file=out)
    print(fmt % (("layer", "event") + cols), file=out)
    print(fmt % tuple("-" * w for w in (10, 12, 8, 12, 6, 5, 8, 8, 6, 8)), file=out)
    total = {c: (set() if c in ("ids", "cpus") else 0) for c in cols}
    for layer, ls in per_layer.items():
        for (l2, name), s in per_name.items():
            if l2 == layer:
                row(layer, name, s)
        row(layer, "(total)", ls)
        for c in cols:
            if isinstance(total[c], set):
                total[c] |= ls[c]
            else:
                total[c] += ls[c]
    row("all", "(total)", total)
    print("(bytes: sum of len; ids: distinct abstract IDs (sockets); gso: GSO "
          "packets; wire: packets on the wire, GSO ones by segment)", file=out)
    if trace.errors:
        print("\n%d format problems (run without --summary for details)" %
              len(trace.errors), file=out)


def dump(trace, out=None):
    out = out or sys.stdout
    for r in trace.records:
        extra = ""
        if r.event == EV_SYSINFO and trace.sysinfos:
            si = next((s for rr, s in trace.sysinfos if rr is r), None)
            if si:
                extra = "stream=%s release=%s nr_cpus=%d" % (
                    si["stream"], si["release"], si["nr_cpus"])
        elif r.event == EV_LOST and len(r.payload) >= 8:
            extra = "count=%d" % struct.unpack_from(trace.bo + "Q", r.payload)[0]
        elif r.event == EV_EVENTDEF and len(r.payload) >= 40:
            eid, layer, ptype, _, raw = struct.unpack_from(trace.bo + EVENTDEF_FMT, r.payload)
            extra = "id=%d name=%s layer=%s payload=%s" % (
                eid, cstring(raw)[0], LAYERS[layer] if layer < len(LAYERS) else layer,
                PAYLOAD_NAMES[ptype] if ptype < len(PAYLOAD_NAMES) else ptype)
        elif r.event == EV_SYNTH and trace.synth(r):
            d = trace.synth(r)
            extra = ("name=%s period=[%d,%d) count=%d min=%d max=%d sum=%d "
                     "mean=%d variance=%d group=0x%x flags=0x%x" % (
                         d["name"], d["period_start"], d["period_end"],
                         d["count"], d["min"], d["max"],
                         d["sum_lo"] | d["sum_hi"] << 64, d["mean"],
                         d["variance"], d["group"], d["flags"]))
        elif r.app:
            a = r.app
            extra = "call=%s fd=%d req=%d ret=%d entry=%d exit=%d" % (
                APP_CALLS[a.call] if a.call < len(APP_CALLS) else a.call,
                a.fd, a.req, a.ret, a.entry_ns, a.exit_ns)
        elif r.net:
            n = r.net
            extra = "len=%d ifindex=%d proto=0x%x flags=%s" % (
                n.len, n.ifindex, n.proto,
                {1: "tx", 2: "rx", 3: "tx|rx"}.get(n.flags, str(n.flags)))
            if n.gso_segs or n.gso_size:
                extra += " gso=%dx%d" % (n.gso_segs, n.gso_size)
        print("%8d %-12s cpu=%-3d ts=%-16d id=%-10d pid=%-7d tgid=%-7d %s" % (
            r.offset, r.name or "id%d" % r.event, r.cpu, r.timestamp,
            r.abstract_id, r.pid, r.tgid, extra), file=out)


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Check (or summarize) a MAGNET trace file.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("trace", help="trace file (raw bytes read from a stream)")
    ap.add_argument("--summary", action="store_true",
                    help="print a per-layer/per-event table instead of TAP")
    ap.add_argument("--dump", action="store_true", help="print every record")
    ap.add_argument("--expect-pid", type=int, metavar="PID",
                    help="the sender's sock_send/tcp_send/udp_send events carry this pid/tgid")
    ap.add_argument("--ino", type=int, metavar="INO",
                    help="sender socket inode: sock_send and tcp_send/udp_send events "
                         "with this abstract_id exist (len --send-len), and its "
                         "ip_send segments (GSO counted by segment) == its "
                         "dev_send packets")
    ap.add_argument("--proto", choices=("tcp", "udp"), default="tcp",
                    help="transport of the --ino sender (default tcp)")
    ap.add_argument("--send-len", type=int, metavar="BYTES",
                    help="len of every --ino send event (default 10240 for tcp; "
                         "use 0 to not check)")
    ap.add_argument("--send-count", type=int, metavar="N",
                    help="exact number of --ino events at each send layer")
    ap.add_argument("--mtu", type=int, metavar="MTU",
                    help="ip_recv/dev_recv len <= MTU, dev_send <= MTU+14, ip_send "
                         "too or, for a GSO packet, each segment")
    ap.add_argument("--expect-produced", type=int, metavar="N",
                    help="probe events in the trace + lost == N")
    ap.add_argument("--expect-lost", type=int, metavar="L",
                    help="LOST records' counts add up to L")
    ap.add_argument("--app-ino", type=int, metavar="INO",
                    help="check application events (event 5) of socket INO "
                         "against its sock_send events")
    ap.add_argument("--app-pid", type=int, metavar="PID",
                    help="... written by process PID")
    ap.add_argument("--app-sends", type=int, metavar="N",
                    help="... N send-side calls")
    ap.add_argument("--app-match", action="store_true",
                    help="... each successful send contains the kernel's "
                         "sock_send of the same socket (entry <= ts <= exit)")
    ap.add_argument("--app-len", type=int, metavar="BYTES",
                    help="... of BYTES each (asked for and sent)")
    ap.add_argument("--min-events", type=int, metavar="N",
                    help="at least N probe events")
    ap.add_argument("--require", action="append", metavar="NAME",
                    help="at least one event of this name (repeatable)")
    ap.add_argument("--release", metavar="UTS",
                    help="every SYSINFO names this kernel release")
    ap.add_argument("--stream", metavar="NAME",
                    help="every SYSINFO names this stream")
    args = ap.parse_args(argv)
    if args.send_len is None and args.proto == "tcp":
        args.send_len = 10240
    if args.send_len == 0:
        args.send_len = None

    try:
        with open(args.trace, "rb") as f:
            data = f.read()
    except OSError as e:
        print("check_trace: %s" % e, file=sys.stderr)
        return 2
    trace = Trace(data)
    if args.dump:
        dump(trace)
    if args.summary:
        summary(trace)
    if args.dump or args.summary:
        for kind, msg in trace.errors[:20]:
            print("check_trace: %s: %s" % (kind, msg), file=sys.stderr)
        return 1 if errors_of(trace, "malformed", "sysinfo") else 0
    return run_checks(trace, args)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:     # e.g. --dump | head
        sys.stderr.close()
        sys.exit(1)
