#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A bounded fuzzer of MAGNET's control and stream-file interfaces.

Driven by docs/magnet.yaml (the generic netlink spec: attribute sets,
operations, checks) and include/uapi/magnet.h (numbers, ioctls): random
and mutated requests for every command and attribute (wrong types and
lengths, bad nesting, out-of-range values, missing, extra, repeated and
unknown attributes, bad headers), sequences of create/delete/enable/
disable/snapshot over a small pool of streams, filters, synthesizers,
correlators and run-time kprobes, random ioctls (every number of the
header with garbage arguments, wrong sizes, unknown numbers), reads,
writes, polls and mmaps on the stream files of magnetfs and debugfs,
and the sockstat file, while background threads keep readers open.

    fuzz_magnet.py [--seed N] [--count N] [--duration S] [--timeout S]
                   [--start I] [--unpriv-uid UID] [-v]
    fuzz_magnet.py --replay-hex HEX      # send one netlink message again
    fuzz_magnet.py --generate-only --seeds N [--count N]
                                         # the generator alone, no kernel

Operation I of a run depends only on (seed, I), so "--seed S --start I
--count 1" replays it (the kernel state it met may differ).  Prints the
seed, counts per operation and errno, and on a failure the seed, the
operation's index and its bytes.  Exit 0: no failure; 1: failures (a
hang, an answer that makes no sense); 2: broken setup.

Checks on every answer: within --timeout seconds (else "hang", exit at
once); EINVAL/ERANGE carry an extended-ack message, whose offset (if
any) points into the request; a request valid by the spec is not
refused with EINVAL/ERANGE; errnos are ones a caller can act on (no
kernel-internal ENOTSUPP/ERESTARTSYS...); replies are well-formed
attribute streams; admin commands are refused (EPERM) to an
unprivileged user, which may still read (GET).
"""

import argparse
import ctypes
import errno
import fcntl
import os
import random
import re
import select
import signal
import socket
import struct
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import genl_req  # noqa: E402  (family resolution, attr helpers)
from genl_req import attr, attrs_of, enum_values, magnet_family  # noqa: E402

REPO = os.path.join(HERE, "..", "..")
SPEC = os.path.join(REPO, "docs", "magnet.yaml")
UAPI = genl_req.UAPI

NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 1, 4, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
NLA_F_NESTED = genl_req.NLA_F_NESTED
NLMSGERR_ATTR_MSG, NLMSGERR_ATTR_OFFS = 1, 2

# ---------------------------------------------------------------------------
# A YAML subset parser: enough for docs/magnet.yaml (block mappings and
# sequences, flow mappings and lists, plain and quoted scalars).
# ---------------------------------------------------------------------------


def _scalar(s):
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'":
        return s[1:-1]
    if re.fullmatch(r"-?\d+", s):
        return int(s)
    if s in ("true", "false"):
        return s == "true"
    return s


def _flow(s, i=0):
    """Parse a flow value at s[i]; return (value, next index)."""
    while s[i] == " ":
        i += 1
    if s[i] in "{[":
        close = "}" if s[i] == "{" else "]"
        out = {} if close == "}" else []
        i += 1
        while True:
            while s[i] in " ,":
                i += 1
            if s[i] == close:
                return out, i + 1
            if close == "}":
                j = s.index(":", i)
                key = s[i:j].strip()
                val, i = _flow(s, j + 1)
                out[key] = val
            else:
                val, i = _flow(s, i)
                out.append(val)
    if s[i] in "\"'":
        j = s.index(s[i], i + 1)
        return s[i + 1:j], j + 1
    j = i
    while j < len(s) and s[j] not in ",}]":
        j += 1
    return _scalar(s[i:j]), j


def _value(text):
    text = text.strip()
    if text[:1] in "{[":
        return _flow(text)[0]
    return _scalar(text)


def yaml_load(text):
    lines = []
    for raw in text.splitlines():
        # a comment: '#' at the start or after a blank, outside quotes
        q = None
        for j, ch in enumerate(raw):
            if q:
                q = None if ch == q else q
            elif ch in "\"'":
                q = ch
            elif ch == "#" and (j == 0 or raw[j - 1] in " \t"):
                raw = raw[:j].rstrip()
                break
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        lines.append((len(raw) - len(raw.lstrip(" ")), raw.strip()))

    def block(i, ind):
        if lines[i][1].startswith("-"):
            out = []
            while i < len(lines) and lines[i][0] == ind and lines[i][1].startswith("-"):
                rest = lines[i][1][1:].strip()
                if not rest:
                    val, i = block(i + 1, lines[i + 1][0])
                elif re.match(r"^[\w-]+:( |$)", rest):
                    # "- key: value": a mapping whose first line is this one
                    sub = ind + 1 + (len(lines[i][1]) - len(lines[i][1][1:].lstrip()))
                    lines[i] = (sub, rest)
                    val, i = block(i, sub)
                else:
                    val, i = _value(rest), i + 1
                out.append(val)
            return out, i
        out = {}
        while i < len(lines) and lines[i][0] == ind:
            key, _, rest = lines[i][1].partition(":")
            if rest.strip():
                out[key.strip()] = _value(rest)
                i += 1
            elif i + 1 < len(lines) and lines[i + 1][0] > ind:
                out[key.strip()], i = block(i + 1, lines[i + 1][0])
            else:
                out[key.strip()] = None
                i += 1
        return out, i

    return block(0, lines[0][0])[0]


# ---------------------------------------------------------------------------
# The spec: attribute sets and operations, numbered as the YAML says and
# cross-checked against the header.
# ---------------------------------------------------------------------------

C_NAME = {"magnet": "magnet_attr", "filter": "magnet_filter_attr",
          "synth": "magnet_synth_attr", "corr": "magnet_corr_attr",
          "corr-step": "magnet_corr_step_attr", "kprobe": "magnet_kprobe_attr"}
C_PREFIX = {"magnet": "MAGNET_A_", "filter": "MAGNET_FILTER_A_",
            "synth": "MAGNET_SYNTH_A_", "corr": "MAGNET_CORR_A_",
            "corr-step": "MAGNET_CORR_STEP_A_", "kprobe": "MAGNET_KPROBE_A_"}


class Spec:
    def __init__(self, spec_path, uapi_path):
        y = yaml_load(open(spec_path).read())
        text = genl_req.uapi_text(uapi_path)
        self.text = text
        self.problems = []
        consts = {d["name"]: d["value"] for d in y.get("definitions", [])
                  if d.get("type") == "const"}
        self.sets = {}
        for s in y["attribute-sets"]:
            attrs, n = {}, 1
            cvals = enum_values(text, C_NAME[s["name"]])
            for a in s["attributes"]:
                if "value" in a:
                    n = a["value"]
                a = dict(a)
                a["num"] = n
                chk = dict(a.get("checks") or {})
                for k, v in chk.items():
                    chk[k] = consts.get(v, v)
                a["checks"] = chk
                cname = C_PREFIX[s["name"]] + a["name"].upper().replace("-", "_")
                if cvals.get(cname) != n:
                    self.problems.append("spec %s.%s is %d, header %s is %s" %
                                         (s["name"], a["name"], n, cname,
                                          cvals.get(cname)))
                attrs[a["name"]] = a
                n += 1
            self.sets[s["name"]] = attrs
        cmds = enum_values(text, "magnet_cmd")
        self.cmd_max = max(cmds.values()) - 1   # __MAGNET_CMD_MAX - 1
        self.ops = []
        n = 1
        for op in y["operations"]["list"]:
            if "value" in op:
                n = op["value"]
            cname = "MAGNET_CMD_" + op["name"].upper().replace("-", "_")
            if cmds.get(cname) != n:
                self.problems.append("spec op %s is %d, header %s is %s" %
                                     (op["name"], n, cname, cmds.get(cname)))
            op = dict(op)
            op["num"] = n
            n += 1
            if "notify" in op:
                continue
            op["admin"] = "admin-perm" in (op.get("flags") or [])
            op["req"] = (((op.get("do") or {}).get("request") or {})
                         .get("attributes") or [])
            op["has_do"] = "do" in op
            op["has_dump"] = "dump" in op
            self.ops.append(op)


# ---------------------------------------------------------------------------
# Netlink transport with a deadline
# ---------------------------------------------------------------------------


class Hang(Exception):
    pass


class Genl:
    def __init__(self, timeout):
        self.sk, (err, msg, rep) = magnet_family()
        if err or not rep:
            raise SystemExit("family magnet not found: errno %d %s" % (err, msg))
        a = attrs_of(rep[0][4:])
        self.fam = struct.unpack_from("=H", a[genl_req.CTRL_ATTR_FAMILY_ID])[0]
        # CTRL_ATTR_MAXATTR: a spec newer than the loaded module has
        # attributes the module does not know (they are not "valid" there)
        self.maxattr = struct.unpack_from("=I", a[5])[0] if 5 in a else 1 << 16
        self.sk.settimeout(timeout)
        self.seq = 100

    def message(self, cmd, payload, flags=NLM_F_REQUEST | NLM_F_ACK, version=1):
        self.seq += 1
        body = struct.pack("=BBH", cmd, version, 0) + payload
        return struct.pack("=IHHII", 16 + len(body), self.fam, flags,
                           self.seq, 0) + body

    def send(self, raw):
        """Send one message; (errno, extack msg, extack offset, replies).
        Raises Hang when the kernel does not finish within the timeout."""
        seq = struct.unpack_from("=I", raw, 8)[0]
        self.sk.send(raw)
        replies = []
        while True:
            try:
                data = self.sk.recv(1 << 20)
            except socket.timeout:
                raise Hang()
            off = 0
            while off + 16 <= len(data):
                ln, t, fl, s, _ = struct.unpack_from("=IHHII", data, off)
                if ln < 16:
                    raise ValueError("netlink message of length %d" % ln)
                body = data[off + 16:off + ln]
                off += (ln + 3) & ~3
                if s != seq:
                    continue
                if t in (NLMSG_ERROR, NLMSG_DONE):
                    err = -struct.unpack_from("=i", body)[0] if len(body) >= 4 else 0
                    tlv = {}
                    if t == NLMSG_ERROR:
                        # capped ack: the request's header, then TLVs (if
                        # NLM_F_ACK_TLVS, 0x200, is set)
                        if fl & 0x200:
                            tlv = attrs_of(body[4 + 16:])
                    elif fl & 0x200:
                        tlv = attrs_of(body[4:])
                    msg = tlv.get(NLMSGERR_ATTR_MSG, b"").split(b"\0")[0]
                    offs = tlv.get(NLMSGERR_ATTR_OFFS)
                    offs = struct.unpack("=I", offs)[0] if offs and len(offs) == 4 else None
                    return err, msg.decode(errors="replace"), offs, replies
                replies.append(body)


def tlv_ok(buf):
    """A well-formed attribute stream (lengths consistent), nests too."""
    off = 0
    while off < len(buf):
        if off + 4 > len(buf):
            return False
        ln, t = struct.unpack_from("=HH", buf, off)
        if ln < 4 or off + ln > len(buf):
            return False
        if t & NLA_F_NESTED and not tlv_ok(buf[off + 4:off + ln]):
            return False
        off += (ln + 3) & ~3
    return True


# ---------------------------------------------------------------------------
# Generators
# ---------------------------------------------------------------------------

STREAMS = ["fz0", "fz1", "fz2", "fzow", "fzlive"]
# The one stream of the pool made with the local clock (MAGNET_CLOCK_LOCAL),
# always, and without application events (they carry CLOCK_MONOTONIC).
LOCAL_STREAM = "fz2"
# Refusals that depend on how a pool object was last made: no synthesizer
# or correlator writes into a local-clock stream (fz2, or another that a
# mutated stream-new gave the local clock), only a flight recorder takes
# snapshots (a mutated stream-new may have made fzow without the mode).
# Operation I must not depend on the operations before it, so these are
# not failures of a request that is valid by itself.
STATE_RULES = ("is not in overwrite mode", "uses the local clock",
               "application events carry CLOCK_MONOTONIC")
FILTERS = ["fzf0", "fzf1", "fzf2"]
SYNTHS = ["fzs0", "fzs1"]
CORRS = ["fzc0", "fzc1"]
KPROBES = ["fzk0", "fzk1"]
SYMBOLS = ["__x64_sys_getppid", "__x64_sys_getpid", "do_sys_openat2",
           "udp_sendmsg", "vfs_statx", "no_such_symbol_fz", "magnet_add"]
INT_FMT = {"u8": "B", "u16": "H", "u32": "I", "u64": "Q", "s32": "i",
           "s64": "q", "s8": "b", "s16": "h"}
BOUNDARY = [0, 1, 2, 63, 64, 255, 256, 1023, 1024, 4095, 4096, 65535,
            65536, 0x7fffffff, 0x80000000, 0xffffffff, 1 << 32,
            (1 << 63) - 1, 1 << 63, (1 << 64) - 1]


def pack_int(t, v):
    f = INT_FMT[t]
    bits = struct.calcsize(f) * 8
    if f.islower():
        v &= (1 << bits) - 1
        if v >= 1 << (bits - 1):
            v -= 1 << bits
    else:
        v &= (1 << bits) - 1
    return struct.pack("=" + f, v)


class Gen:
    """Builds one request from a per-operation RNG."""

    def __init__(self, spec, probes, nr_cpus, maxattr=1 << 16):
        self.maxattr = maxattr
        self.op = None
        self.spec = spec
        self.probes = probes            # [(id, name)]
        self.nr_cpus = nr_cpus

    # --- valid values ------------------------------------------------------
    def probe(self, r):
        return r.choice(self.probes) if self.probes else (1, "udp_send")

    def valid_value(self, r, set_name, a):
        n, t = a["name"], a["type"]
        p = self.probe(r)
        if t == "string":
            if n == "stream-name" and self.op == "stream-snapshot":
                return "fzow"
            if n in ("stream-name", "stream"):
                return r.choice(STREAMS)
            if n in ("probe-name",):
                return p[1]
            if n == "name":
                return r.choice({"filter": FILTERS, "synth": SYNTHS,
                                 "corr": CORRS, "kprobe": KPROBES}.get(set_name, STREAMS))
            if n == "symbol":
                return r.choice(SYMBOLS)
            return "x"
        if t == "flag":
            return True
        if t == "nest":
            return None
        special = {
            "stream-subbuf-size": lambda: 4096 * r.choice([1, 1, 2, 4, 16]),
            "stream-subbuf-count": lambda: r.choice([2, 2, 3, 4, 8]),
            "stream-mode": lambda: r.choice([0, 1, 2, 3]),
            "stream-snapshot": lambda: r.choice([1, 2]),
            "stream-app-write": lambda: r.choice([0, 1]),
            "probe-id": lambda: p[0],
            "event": lambda: self.probe(r)[0],
            "cpu": lambda: r.randrange(self.nr_cpus),
            "action": lambda: r.choice([0, 1]),
            "sample-every": lambda: r.choice([1, 2, 10]),
            "sample-period": lambda: r.choice([0, 1000, 10 ** 6]),
            "priority": lambda: r.randint(-5, 5),
            "group": lambda: r.randrange(64),
            "quantity": lambda: r.randrange(3),
            # within the 16 bytes of struct magnet_net_payload, the
            # payload of every point the initial probe dump finds
            "field-offset": lambda: r.choice([0, 4, 8]),
            "field-width": lambda: r.choice([1, 2, 4, 8]),
            "period": lambda: r.choice([10 ** 7, 10 ** 8, 10 ** 9]),
            "max-keys": lambda: r.choice([1, 16, 1024]),
            "window": lambda: r.choice([1000, 10 ** 6, 10 ** 9]),
            "offset": lambda: 0,
            "args": lambda: r.randrange(64),
            "pid": lambda: r.choice([0, 1, os.getpid()]),
            "tgid": lambda: r.choice([1, os.getpid()]),
        }
        if n in special:
            return special[n]()
        chk = a.get("checks") or {}
        if "min" in chk or "max" in chk:
            return r.randint(chk.get("min", 0), min(chk.get("max", 1 << 16), 1 << 16))
        return r.choice([0, 1, 7])

    def encode_attr(self, set_name, a, val):
        t = a["type"]
        if t == "string":
            return attr(a["num"], val.encode() + b"\0")
        if t == "flag":
            return attr(a["num"], b"")
        if t in INT_FMT:
            return attr(a["num"], pack_int(t, val))
        if t == "pad":
            return attr(a["num"], b"")
        raise ValueError(t)

    def nest(self, r, set_name, valid=True):
        """A valid-looking body of a nest of @set_name."""
        s = self.spec.sets[set_name]
        out = b""
        if set_name == "corr":
            names = ["name", "window", "stream"]
            out += self.encode_attr("corr", s["name"], r.choice(CORRS))
            out += self.encode_attr("corr", s["window"], self.valid_value(r, "corr", s["window"]))
            out += self.encode_attr("corr", s["stream"], r.choice(STREAMS))
            # a point appears at most once in a chain
            ids = [p[0] for p in self.probes] or [1, 2, 3, 4]
            pool = r.sample(ids, min(len(ids), 6))
            for _ in range(r.choice([2, 2, 3])):
                take = [pool.pop() for _ in range(r.choice([1, 1, 2])) if pool]
                if not take:
                    break
                step = b"".join(self.encode_attr("corr-step",
                                                 self.spec.sets["corr-step"]["event"], e)
                                for e in take)
                out += attr(s["step"]["num"] | NLA_F_NESTED, step)
            return out
        if set_name == "kprobe":
            names = ["name", "symbol"] + r.sample(["offset", "retprobe", "args"], r.randrange(3))
        elif set_name == "filter":
            names = ["name"] + r.sample(["event", "cpu", "pid", "tgid", "priority",
                                         "action", "stream", "sample-every",
                                         "sample-period", "abstract-id", "cgroup"],
                                        r.randrange(5))
        elif set_name == "synth":
            # docs/SYNTH.md: a quantity; a field has an offset and a width
            names = ["name", r.choice(["probe-name", "probe-id"]), "stream",
                     "period", "quantity"] + r.sample(["group", "max-keys", "cpu",
                                                       "pid"], r.randrange(3))
            q = r.randrange(3)
            out += self.encode_attr(set_name, s["quantity"], q)
            names.remove("quantity")
            if q == 1:
                names += ["field-offset", "field-width"]
        else:
            names = [r.choice(list(s))]
        if set_name == "filter":
            # docs/FILTERS.md: a drop filter does not sample; one way of
            # sampling at a time, a period above 0
            if "action" in names and "sample-period" in names and "sample-every" in names:
                names.remove("sample-period")
            if "action" in names:
                names = [n for n in names if not n.startswith("sample")]
        for n in names:
            a = s[n]
            if a["type"] == "nest":
                continue
            v = self.valid_value(r, set_name, a)
            if set_name == "filter" and n == "sample-period":
                v = max(v, 1000)
            if set_name == "filter" and n == "sample-every" and "sample-period" in names:
                continue
            if set_name == "filter" and n == "action" and v == 1:
                # a drop filter neither samples nor delivers to a stream
                v = 0 if any(x.startswith("sample") or x == "stream"
                             for x in names) else 1
            out += self.encode_attr(set_name, a, v)
        return out

    def valid_payload(self, r, op):
        s = self.spec.sets["magnet"]
        out = b""
        req = list(op["req"])
        name = op["name"]
        self.op = name
        if name == "stream-new":
            # fzow is the flight recorder (snapshots), the others are not
            sname = r.choice(STREAMS)
            out = self.encode_attr("magnet", s["stream-name"], sname)
            for n in req[1:]:
                if r.random() < 0.5 or s[n]["num"] > self.maxattr:
                    continue
                if n == "stream-clock" or (n == "stream-app-write" and
                                           sname == LOCAL_STREAM):
                    continue        # below
                v = self.valid_value(r, "magnet", s[n])
                if n == "stream-mode":
                    v = (v | 2) if sname == "fzow" else (v & 1)
                out += self.encode_attr("magnet", s[n], v)
            if sname == "fzow" and b"\x08\x00\x21\x00" not in out:
                out += self.encode_attr("magnet", s["stream-mode"], 2)
            if "stream-clock" in req and s["stream-clock"]["num"] <= self.maxattr:
                if sname == LOCAL_STREAM:
                    out += self.encode_attr("magnet", s["stream-clock"], 2)
                elif r.random() < 0.5:
                    out += self.encode_attr("magnet", s["stream-clock"], 1)
            return out
        if name in ("probe-get", "probe-enable", "probe-disable"):
            # one of name / id (both: must agree)
            pid, pname = self.probe(r)
            pick = r.choice(["name", "id", "both"])
            if pick in ("name", "both"):
                out += self.encode_attr("magnet", s["probe-name"], pname)
            if pick in ("id", "both"):
                out += self.encode_attr("magnet", s["probe-id"], pid)
            if name == "probe-enable":
                out += self.encode_attr("magnet", s["stream-name"], r.choice(STREAMS))
            return out
        for n in req:
            a = s[n]
            if a["num"] > self.maxattr:
                continue
            if n in ("stream-subbuf-size", "stream-subbuf-count", "stream-mode",
                     "stream-app-write") and r.random() < 0.5:
                continue            # optional
            if a["type"] == "nest":
                body = self.nest(r, a["nested-attributes"])
                if name.endswith("-del") or name.endswith("-get"):
                    # the name is enough (and a GET with keys is legal too)
                    inner = self.spec.sets[a["nested-attributes"]]
                    pool = {"filter": FILTERS, "synth": SYNTHS, "corr": CORRS,
                            "kprobe": KPROBES}[a["nested-attributes"]]
                    body = self.encode_attr(a["nested-attributes"], inner["name"],
                                            r.choice(pool))
                out += attr(a["num"] | NLA_F_NESTED, body)
            else:
                out += self.encode_attr("magnet", a, self.valid_value(r, "magnet", a))
        return out

    # --- mutations -----------------------------------------------------------
    def bad_value(self, r, a):
        """Bytes for attribute @a that break its type, length or checks."""
        t = a["type"]
        chk = a.get("checks") or {}
        k = r.randrange(8)
        if t in INT_FMT and k < 3 and ("max" in chk or "min" in chk):
            if "max" in chk and (k < 2 or "min" not in chk):
                v = chk["max"] + r.choice([1, 2, 1000, 1 << 31])
            else:
                v = chk["min"] - 1
            return pack_int(t, v)
        if t == "string" and k < 3:
            ml = chk.get("max-len", 200)
            return r.choice([b"x" * (ml + 1) + b"\0", b"x" * r.randint(1, 300),
                             b"", b"\0", b"a\0b\0", b"../x\0", b"-x\0", b".x\0",
                             b"status\0", bytes([0xff, 0xfe, 0]), b"a b\0",
                             b"x" * (ml) + b"\0"])
        if k == 3:
            return r.randbytes(r.choice([0, 1, 2, 3, 5, 7, 9, 16]))
        if k == 4 and t in INT_FMT:
            return pack_int(t, r.choice(BOUNDARY))
        if k == 5:
            other = r.choice([x for x in INT_FMT])
            return pack_int(other, r.choice(BOUNDARY))
        if k == 6 and t == "nest":
            return r.choice([b"", r.randbytes(r.randrange(1, 40)),
                             attr(0, b""), attr(0x3fff, b"abcd"),
                             attr(2, attr(2, attr(2, b"deep\0")))])
        return bytes(r.randrange(256) for _ in range(r.randrange(0, 24)))

    def mutate_tlvs(self, r, payload, set_name):
        """Apply 1-3 mutations to the attributes of @payload."""
        items = []
        off = 0
        while off + 4 <= len(payload):
            ln, t = struct.unpack_from("=HH", payload, off)
            if ln < 4 or off + ln > len(payload):
                break           # not attributes (an earlier mutation's bytes)
            items.append([t, payload[off + 4:off + ln]])
            off += (ln + 3) & ~3
        tail = payload[off:]    # kept as they are, after the attributes
        s = self.spec.sets[set_name]
        by_num = {a["num"]: a for a in s.values()}
        for _ in range(r.randint(1, 3)):
            k = r.randrange(10)
            if k == 0 and items:                       # drop one
                items.pop(r.randrange(len(items)))
            elif k == 1:                               # extra (any) attribute
                a = r.choice(list(s.values()))
                items.insert(r.randrange(len(items) + 1),
                             [a["num"], self.bad_value(r, a) if r.random() < .5 else
                              (pack_int(a["type"], r.choice(BOUNDARY)) if a["type"] in INT_FMT
                               else b"x\0")])
            elif k == 2:                               # unknown number
                items.append([r.choice([max(by_num) + 1, max(by_num) + 7, 0x3fff, 0]),
                              r.randbytes(r.randrange(12))])
            elif k == 3 and items:                     # repeat one
                items.append(list(r.choice(items)))
            elif k == 4 and items:                     # toggle the nested flag
                it = r.choice(items)
                it[0] ^= NLA_F_NESTED
            elif k == 5 and items:                     # byte-order flag / junk flags
                it = r.choice(items)
                it[0] |= r.choice([0x4000, 0xc000])
            elif k == 6 and items:                     # shuffle
                r.shuffle(items)
            elif k == 7 and items:                     # recurse into a nest
                it = r.choice(items)
                a = by_num.get(it[0] & 0x3fff)
                if a and a["type"] == "nest":
                    it[1] = self.mutate_tlvs(r, it[1], a["nested-attributes"])
                else:
                    it[1] = self.bad_value(r, a) if a else r.randbytes(4)
            elif items:                                # break a value
                it = r.choice(items)
                a = by_num.get(it[0] & 0x3fff)
                it[1] = self.bad_value(r, a) if a else r.randbytes(r.randrange(9))
        out = b""
        for t, v in items:
            out += attr(t, v)
        return out + tail

    def netlink(self, r, genl):
        """(description, raw message, valid?)"""
        op = r.choice(self.spec.ops)
        k = r.random()
        if op["has_dump"] and (not op["has_do"] or r.random() < 0.25):
            payload = b""
            if op["name"] == "synth-get" and r.random() < 0.5:
                payload = self.valid_payload(r, op)
            if k < 0.3:
                payload = self.mutate_tlvs(r, payload, "magnet")
            return ("%s dump" % op["name"], genl.message(op["num"], payload,
                                                        NLM_F_REQUEST | NLM_F_DUMP), k >= 0.3 and not payload)
        payload = self.valid_payload(r, op)
        if k < 0.45:
            # resuming depends on the stream's state: not checked
            state = op["name"] == "stream-snapshot" and payload.endswith(
                struct.pack("=HHI", 8, self.spec.sets["magnet"]["stream-snapshot"]["num"], 2))
            return (op["name"], genl.message(op["num"], payload), None if state else True)
        if k < 0.92:
            return ("%s mutated" % op["name"],
                    genl.message(op["num"], self.mutate_tlvs(r, payload, "magnet")), False)
        # header-level garbage
        h = r.randrange(6)
        if h == 0:
            return ("bad cmd", genl.message(r.choice([0, self.spec.cmd_max + 1,
                                                      self.spec.cmd_max + 5, 255,
                                                      9, 10]), payload), False)
        if h == 1:
            return ("%s version %d" % (op["name"], 7), genl.message(op["num"], payload, version=r.choice([0, 2, 255])), None)
        if h == 2:
            raw = genl.message(op["num"], payload)
            cut = r.randrange(16, len(raw) + 1)
            raw = struct.pack("=I", cut) + raw[4:cut]
            return ("%s truncated to %d" % (op["name"], cut), raw, False)
        if h == 3:
            raw = genl.message(op["num"], payload + r.randbytes(r.randrange(1, 4)))
            return ("%s trailing junk" % op["name"], raw, False)
        if h == 4:
            return ("%s flags" % op["name"],
                    genl.message(op["num"], payload,
                                 NLM_F_REQUEST | NLM_F_ACK | r.choice([0x8, 0x10, 0x20, 0x100])), None)
        return ("%s random body" % op["name"],
                genl.message(op["num"], r.randbytes(r.randrange(0, 64))), False)


# ---------------------------------------------------------------------------
# ioctls and file operations
# ---------------------------------------------------------------------------

IOC_NRBITS, IOC_TYPEBITS, IOC_SIZEBITS = 8, 8, 14
IOC_NONE, IOC_WRITE, IOC_READ = 0, 1, 2


def IOC(d, t, nr, size):
    return (d << 30) | (size << 16) | (t << 8) | nr


def struct_size(text, name):
    m = re.search(r"struct %s \{(.*?)\};" % name, text, re.S)
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    size = align = 0
    for line in body.split(";"):
        f = re.match(r"\s*__([us])(8|16|32|64)\s+\w+\s*(?:\[(\w+)\])?", line)
        if not f:
            continue
        w = int(f.group(2)) // 8
        n = 1
        if f.group(3):
            n = int(f.group(3)) if f.group(3).isdigit() else \
                int(re.search(r"#define %s\s+(\d+)" % f.group(3), text).group(1))
        size = (size + w - 1) // w * w + w * n
        align = max(align, w)
    return (size + align - 1) // align * align


def ioctls(text):
    """{name: number} of the MAGNET_IOC_* definitions."""
    magic = int(re.search(r"#define MAGNET_IOC_MAGIC\s+(\w+)", text).group(1), 0)
    out = {}
    for m in re.finditer(r"#define (MAGNET_IOC_\w+)\s+_IO(R|W|WR)?\(MAGNET_IOC_MAGIC,\s*(\w+)(?:,\s*([^)]+))?\)", text):
        name, d, nr, typ = m.groups()
        nr = int(nr, 0)
        size = 0
        if typ:
            typ = typ.strip()
            size = struct_size(text, typ.split()[1]) if typ.startswith("struct") else \
                {"__u64": 8, "__s64": 8, "__u32": 4, "__s32": 4}[typ]
        dirn = {None: IOC_NONE, "R": IOC_READ, "W": IOC_WRITE,
                "WR": IOC_READ | IOC_WRITE}[d]
        out[name] = IOC(dirn, magic, nr, size)
    v1 = re.search(r"#define MAGNET_STREAM_STATS_SIZE_V1\s+(\d+)", text)
    out["MAGNET_IOC_GET_STATS_V1"] = IOC(IOC_READ, magic, 1, int(v1.group(1)))
    return magic, out


BAD_PTRS = [0, 8, 4095, 0xffff888000000000, 0xffffffff81000000,
            0x8000000000000000, 0x00007ffffffff000]
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong]


class Files:
    """Stream files (magnetfs, debugfs), the sockstat file, and the
    operations on them."""

    def __init__(self, magic, iocs, dirs):
        self.magic = magic
        self.iocs = iocs
        self.dirs = [d for d in dirs if os.path.isdir(d)]
        self.fds = {}           # path -> fd (a few kept open across ops)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    def paths(self):
        out = []
        for d in self.dirs:
            for n in STREAMS + ["sockstat"]:
                out.append(os.path.join(d, n))
        return out

    def op(self, r):
        """One file operation; returns (description, errno)."""
        path = r.choice(self.paths())
        k = r.randrange(10)
        fd = self.fds.get(path)
        what = "open"
        try:
            if fd is None or k == 0:
                if fd is not None:
                    what = "close"
                    del self.fds[path]
                    os.close(fd)
                    return (what, 0)
                flags = r.choice([os.O_RDONLY, os.O_WRONLY, os.O_RDWR])
                self.fds[path] = os.open(path, flags | os.O_NONBLOCK)
                return (what, 0)
            if k in (1, 2, 3):
                return self.ioctl(r, fd)
            if k == 4:
                what = "read"
                os.read(fd, r.choice([0, 1, 47, 48, 4096, 65536]))
            elif k == 5:
                what = "write"
                n = r.choice([0, 1, 79, 80, 160, 65536 + 80])
                os.write(fd, r.randbytes(n) if r.random() < 0.5 else bytes(n))
            elif k == 6:
                what = "poll"
                p = select.poll()
                p.register(fd, select.POLLIN | select.POLLOUT | select.POLLPRI)
                p.poll(0)
            elif k == 7:
                return self.mmap(r, fd)
            elif k == 8:
                what = "pread"
                os.pread(fd, 64, r.choice([0, 1, 1 << 40]))
            else:
                what = "lseek"
                os.lseek(fd, r.choice([0, 5, -1]), r.choice([0, 1, 2]))
            return (what, 0)
        except OSError as e:
            return (what, e.errno)

    def ioctl(self, r, fd):
        k = r.randrange(6)
        name, num = r.choice(sorted(self.iocs.items()))
        size = (num >> 16) & 0x3fff
        if k == 1:                                   # same nr, other size
            size2 = r.choice([0, 1, 4, 8, 55, 56, 200, 247, 248, 4096, 0x3fff])
            num = (num & ~(0x3fff << 16)) | (size2 << 16)
            size, name = size2, name + "/size%d" % size2
        elif k == 2:                                 # other direction
            num ^= r.choice([1, 2, 3]) << 30
            name += "/dir"
        elif k == 3:                                 # unknown nr / magic
            num = IOC(r.randrange(4), r.choice([self.magic, self.magic ^ 1, 0x54]),
                      r.randrange(256), r.choice([0, 4, 8]))
            size = (num >> 16) & 0x3fff
            name = "ioctl 0x%x" % num
        if k == 4:                                   # garbage pointer
            ret = libc.ioctl(fd, num, r.choice(BAD_PTRS))
            return (name + " badptr", ctypes.get_errno() if ret < 0 else 0)
        if "SOCK_WATCH" in name or "SOCK_UNWATCH" in name:
            arg = struct.pack("=i", r.choice([self.sock.fileno(), fd, -1, 0, 9999]))
        elif "SOCK_SUBSCRIBE" in name:
            arg = struct.pack("=iI", r.choice([self.sock.fileno(), -1]),
                              r.choice([0, 1, 10, 60000, 60001, 0xffffffff]))
        elif "SOCK_STATS" in name:
            arg = struct.pack("=IIi", 0, 0, r.choice([self.sock.fileno(), -1, fd]))
        elif "SET_" in name:
            arg = struct.pack("=Q", r.choice(BOUNDARY))
        elif "GET_SPAN" in name:
            arg = struct.pack("=IIQQQQII", r.choice([0, 1, 0xffffffff]), 0, 0, 0, 0,
                              r.choice([0, 8, 0xffff888000000000]),
                              r.choice([0, 16, 0xffffffff]), r.choice([0, 1]))
        else:
            arg = r.randbytes(min(size, 64)) if r.random() < 0.5 else bytes(min(size, 64))
        buf = bytearray(arg.ljust(size, b"\0"))[:size] if size else 0
        try:
            if size:
                fcntl.ioctl(fd, num, buf, True)
            else:
                fcntl.ioctl(fd, num, r.choice([0, 1]))
        except OSError as e:
            return (name, e.errno)
        except (OverflowError, ValueError):
            return (name + " (not sent)", 0)
        return (name, 0)

    def mmap(self, r, fd):
        ln = r.choice([4096, 8192, 1 << 20])
        off = r.choice([0, 4096, 1 << 20, 1 << 30]) // 4096 * 4096
        prot = r.choice([1, 1, 3])                   # PROT_READ, PROT_READ|WRITE
        flags = r.choice([1, 2])                     # MAP_SHARED, MAP_PRIVATE
        p = libc.mmap(None, ln, prot, flags, fd, off)
        if p in (None, ctypes.c_void_p(-1).value, 2 ** 64 - 1):
            return ("mmap", ctypes.get_errno())
        libc.munmap(p, ln)
        return ("mmap", 0)

    def close_all(self):
        for fd in self.fds.values():
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = {}


def reader_thread(dirs, stop, counts):
    """Keeps a blocking reader on some stream (200 ms read timeout)."""
    r = random.Random(0)
    buf_sizes = [4096, 65536]
    while not stop.is_set():
        paths = [os.path.join(d, n) for d in dirs for n in STREAMS]
        r.shuffle(paths)
        fd = None
        for p in paths:
            try:
                fd = os.open(p, os.O_RDONLY)
                break
            except OSError:
                continue
        if fd is None:
            time.sleep(0.05)
            continue
        try:
            fcntl.ioctl(fd, TIMEOUT_IOC, struct.pack("=q", 200))
        except OSError:
            pass
        try:
            for _ in range(50):
                if stop.is_set():
                    break
                try:
                    d = os.read(fd, r.choice(buf_sizes))
                except OSError as e:
                    if e.errno in (errno.ETIMEDOUT, errno.EAGAIN, errno.EBUSY,
                                   errno.EPERM, errno.EINVAL):
                        time.sleep(0.01)
                        continue
                    break
                counts["bytes"] = counts.get("bytes", 0) + len(d)
                if not d:
                    break
        finally:
            os.close(fd)


TIMEOUT_IOC = 0

# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------

# errnos a caller of this interface can get and act on
KNOWN_ERRNO = {0, errno.EINVAL, errno.ERANGE, errno.ENOENT, errno.EEXIST,
               errno.EBUSY, errno.ENOSPC, errno.E2BIG, errno.EOPNOTSUPP,
               errno.EPERM, errno.ENOMEM, errno.ENODEV, errno.EMSGSIZE,
               errno.EALREADY, errno.ENAMETOOLONG, errno.EACCES,
               errno.ENOTSUP, errno.EAGAIN, errno.EFAULT, errno.ENXIO,
               errno.ESRCH, errno.ENOTTY, errno.EBADF, errno.EDQUOT,
               errno.ETIMEDOUT, errno.ESPIPE, errno.EMFILE, errno.EINTR,
               errno.ENOTCONN, errno.EIO, errno.EXDEV, errno.ELOOP,
               errno.ECANCELED, errno.EOVERFLOW, errno.EISDIR, errno.ENFILE,
               errno.ENOTSOCK, errno.ENODATA, errno.ENOBUFS}


def errname(e):
    return errno.errorcode.get(e, str(e)) if e else "OK"


# GETs refused to a caller without CAP_NET_ADMIN (docs/THREATS.md)
PRIV_GETS = {"filter-get", "synth-get"}


def unpriv_check(spec, timeout, uid):
    """In a child as @uid: every admin command is refused with EPERM, and
    STATUS_GET works.  Returns a list of failures."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        fails = []
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            g = Genl(timeout)
            for op in spec.ops:
                if not op["has_do"]:
                    continue
                err, msg, _, _ = g.send(g.message(op["num"], b""))
                if (op["admin"] or op["name"] in PRIV_GETS) and err != errno.EPERM:
                    fails.append("unprivileged %s: %s, not EPERM" % (op["name"], errname(err)))
                if not op["admin"] and op["name"] not in PRIV_GETS and err == errno.EPERM:
                    fails.append("unprivileged %s: EPERM" % op["name"])
        except Hang:
            fails.append("unprivileged: hang")
        except Exception as e:        # noqa: BLE001
            fails.append("unprivileged: %r" % e)
        os.write(wfd, "\n".join(fails).encode())
        os._exit(0)
    os.close(wfd)
    data = b""
    while True:
        d = os.read(rfd, 65536)
        if not d:
            break
        data += d
    os.waitpid(pid, 0)
    return [x for x in data.decode().split("\n") if x]


class OfflineGenl(Genl):
    """Genl's message builder without a socket (--generate-only)."""

    def __init__(self):
        self.fam = 0x10         # GENL_MIN_ID: the first a family gets
        self.maxattr = 1 << 16
        self.seq = 100


def generate_only(a, first):
    """The netlink requests of seeds @first .. @first + --seeds - 1, built
    but not sent: every one must be built (the generator never loops or
    grows without bound) and fit a netlink message."""
    spec = Spec(SPEC, UAPI)
    genl = OfflineGenl()
    gen = Gen(spec, [], 2, genl.maxattr)
    def expired(signum, frame):
        raise TimeoutError()
    signal.signal(signal.SIGALRM, expired)
    n = biggest = 0
    for seed in range(first, first + a.seeds):
        for i in range(a.start, a.start + a.count):
            r = random.Random("%d:%d" % (seed, i))
            if r.random() >= a.netlink_share:
                continue        # a file operation
            signal.alarm(10)
            try:
                desc, raw, _ = gen.netlink(r, genl)
            except TimeoutError:
                print("not ok - seed %d op %d: the generator did not finish within 10 s"
                      % (seed, i))
                return 1
            signal.alarm(0)
            ln = struct.unpack_from("=I", raw)[0]
            if ln != len(raw) or len(raw) > 65535:
                print("not ok - seed %d op %d (%s): %d bytes, header says %d"
                      % (seed, i, desc, len(raw), ln))
                return 1
            n += 1
            biggest = max(biggest, len(raw))
    print("generated=%d seeds=%d..%d largest=%d" % (n, first, first + a.seeds - 1, biggest))
    return 0


def main():
    global TIMEOUT_IOC
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--count", type=int, default=2000, help="operations (default 2000)")
    ap.add_argument("--duration", type=float, default=0, help="stop after S seconds too")
    ap.add_argument("--timeout", type=float, default=30, help="per request (s)")
    ap.add_argument("--start", type=int, default=0, help="first operation index")
    ap.add_argument("--netlink-share", type=float, default=0.7)
    ap.add_argument("--unpriv-uid", type=int, default=65534)
    ap.add_argument("--dirs", default="/sys/kernel/magnet,/sys/kernel/debug/magnet")
    ap.add_argument("--no-readers", action="store_true")
    ap.add_argument("--replay-hex", default=None)
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--generate-only", action="store_true",
                    help="build the netlink requests of --seeds runs without a kernel")
    ap.add_argument("--seeds", type=int, default=1, help="with --generate-only")
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else int(time.strftime("%Y%m%d"))
    if a.generate_only:
        return generate_only(a, seed)
    print("seed=%d count=%d start=%d duration=%g timeout=%g" %
          (seed, a.count, a.start, a.duration, a.timeout), flush=True)

    spec = Spec(SPEC, UAPI)
    genl = Genl(a.timeout)
    if a.replay_hex:
        raw = bytes.fromhex(a.replay_hex)
        raw = raw[:6] + struct.pack("=H", genl.fam) + raw[8:]
        try:
            err, msg, offs, _ = genl.send(raw)
            print("errno=%s msg=%s offset=%s" % (errname(err), msg, offs))
        except Hang:
            print("hang")
            return 1
        return 0
    failures = list(spec.problems)
    for p in spec.problems:
        print("not ok - spec and header agree # %s" % p)

    # probes, for valid names and IDs
    err, _, _, reps = genl.send(genl.message(2, b"", NLM_F_REQUEST | NLM_F_DUMP))
    probes = []
    for b in reps:
        at = attrs_of(b[4:])
        if 7 in at and 8 in at:
            probes.append((struct.unpack("=I", at[7])[0], at[8].split(b"\0")[0].decode()))
    err, _, _, reps = genl.send(genl.message(1, b""))
    nr_cpus = struct.unpack("=I", attrs_of(reps[0][4:])[4])[0] if reps else 1
    print("probes=%d nr_cpus=%d ops=%d" % (len(probes), nr_cpus, len(spec.ops)), flush=True)
    gen = Gen(spec, probes, nr_cpus, genl.maxattr)
    newer = [n for n, x in spec.sets["magnet"].items() if x["num"] > genl.maxattr]
    if newer:
        print("# the loaded module knows attributes up to %d; not sent as valid: %s"
              % (genl.maxattr, " ".join(newer)), flush=True)
    magic, iocs = ioctls(spec.text)
    TIMEOUT_IOC = iocs["MAGNET_IOC_SET_TIMEOUT"]
    dirs = a.dirs.split(",")
    files = Files(magic, iocs, dirs)

    for f in unpriv_check(spec, a.timeout, a.unpriv_uid):
        failures.append(f)
        print("not ok - %s" % f, flush=True)

    stop = threading.Event()
    rcounts = {}
    threads = []
    if not a.no_readers:
        for _ in range(2):
            t = threading.Thread(target=reader_thread, args=(dirs, stop, rcounts), daemon=True)
            t.start()
            threads.append(t)

    # a watchdog for file operations (netlink has its socket timeout)
    cur = {"t": None, "what": None}

    def watchdog():
        while not stop.is_set():
            t0 = cur["t"]
            if t0 is not None and time.monotonic() - t0 > a.timeout:
                print("not ok - hang: %s did not return within %gs (seed=%d)" %
                      (cur["what"], a.timeout, seed), flush=True)
                os._exit(3)
            time.sleep(0.5)
    threading.Thread(target=watchdog, daemon=True).start()

    counts = {}
    t_start = time.monotonic()
    n = 0
    for i in range(a.start, a.start + a.count):
        if a.duration and time.monotonic() - t_start > a.duration:
            break
        r = random.Random("%d:%d" % (seed, i))
        n += 1
        if r.random() >= a.netlink_share and files.dirs:
            cur["what"] = "file op %d" % i
            cur["t"] = time.monotonic()
            what, e = files.op(r)
            cur["t"] = None
            key = "file:" + what.split("/")[0].split(" badptr")[0]
            if key.startswith("file:ioctl 0x"):
                key = "file:ioctl unknown"
            counts.setdefault(key, {})
            counts[key][errname(e)] = counts[key].get(errname(e), 0) + 1
            if a.verbose:
                print("%d %s %s" % (i, what, errname(e)))
            if e not in KNOWN_ERRNO:
                failures.append("op %d %s: errno %d" % (i, what, e))
                print("not ok - op %d (%s): unexpected errno %d (seed=%d, replay: --seed %d --start %d --count 1)"
                      % (i, what, e, seed, seed, i), flush=True)
            continue
        desc, raw, valid = gen.netlink(r, genl)
        try:
            err, msg, offs, reps = genl.send(raw)
        except Hang:
            print("not ok - hang: op %d (%s) not answered within %gs (seed=%d)\n# replay: --seed %d --start %d --count 1\n# bytes: %s"
                  % (i, desc, a.timeout, seed, seed, i, raw.hex()), flush=True)
            stop.set()
            os._exit(3)
        key = desc.split(" ")[0] + (" dump" if " dump" in desc else
                                    " valid" if valid else " bad")
        counts.setdefault(key, {})
        counts[key][errname(err)] = counts[key].get(errname(err), 0) + 1
        if a.verbose:
            print("%d %s %s %s" % (i, desc, errname(err), msg))
        why = None
        if err in (errno.EINVAL, errno.ERANGE) and not msg and len(raw) < 20:
            pass        # no room for a genetlink header: genetlink's own EINVAL
        elif err in (errno.EINVAL, errno.ERANGE) and not msg:
            why = "%s without an extack message" % errname(err)
        elif offs is not None and not (16 <= offs < len(raw)):
            why = "extack offset %d outside the request (%d bytes)" % (offs, len(raw))
        elif valid and err in (errno.EINVAL, errno.ERANGE) and \
                not any(rule in msg for rule in STATE_RULES):
            why = "a valid request refused: %s '%s'" % (errname(err), msg)
        elif err not in KNOWN_ERRNO:
            why = "unexpected errno %d '%s'" % (err, msg)
        else:
            for b in reps:
                if len(b) < 4 or not tlv_ok(b[4:]):
                    why = "malformed reply"
        if why:
            failures.append("op %d %s: %s" % (i, desc, why))
            print("not ok - op %d (%s): %s (seed=%d)\n# replay: --seed %d --start %d --count 1\n# bytes: %s"
                  % (i, desc, why, seed, seed, i, raw.hex()), flush=True)
    stop.set()
    files.close_all()
    for t in threads:
        t.join(a.timeout)
    elapsed = time.monotonic() - t_start
    # the control interface still answers
    try:
        err, _, _, _ = genl.send(genl.message(1, b""))
        if err:
            failures.append("STATUS_GET after the run: %s" % errname(err))
    except Hang:
        print("not ok - hang: STATUS_GET after the run (seed=%d)" % seed)
        return 3
    print("# %-28s %s" % ("operation", "answers"))
    for k in sorted(counts):
        print("# %-28s %s" % (k, " ".join("%s=%d" % kv for kv in sorted(counts[k].items()))))
    print("operations=%d elapsed_s=%.1f rate=%.1f/s reader_bytes=%d failures=%d seed=%d"
          % (n, elapsed, n / max(elapsed, 1e-9), rcounts.get("bytes", 0), len(failures), seed))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
