#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Send one raw request to the "magnet" generic netlink family.

For tests of bad input that magnetctl cannot even express (unknown mode
bits, out-of-range operations).  Command and attribute names are those of
include/uapi/magnet.h, without their prefix:

    genl_req.py STREAM_NEW STREAM_NAME=str:x STREAM_MODE=u32:4

A nested attribute takes the attributes of its own set, named without
their MAGNET_<NEST>_A_ prefix, separated by commas:

    genl_req.py SYNTH_NEW SYNTH=nest:NAME=str:x,STREAM=str:s,PERIOD=u64:100000000

Prints "errno=N msg=EXTACK" (errno 0: accepted) and exits 0 when the
kernel accepted the request, 1 when it refused it, 2 on a usage error.
"""

import os
import re
import socket
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
UAPI = os.path.join(HERE, "..", "..", "include", "uapi", "magnet.h")


def uapi_text(path=UAPI):
    """magnet.h (at @path) and the magnet_genl.h next to it, which it
    includes: the netlink family's names, generated from docs/magnet.yaml"""
    genl = os.path.join(os.path.dirname(path), "magnet_genl.h")
    return open(path).read() + "\n" + open(genl).read()

NETLINK_GENERIC = 16
SOL_NETLINK = 270
NETLINK_CAP_ACK = 10
NETLINK_EXT_ACK = 11
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2
GENL_ID_CTRL, CTRL_CMD_GETFAMILY = 0x10, 3
CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 1, 2
NLMSGERR_ATTR_MSG = 1


def enum_values(text, name):
    """Values of the members of C enum @name (implicit numbering only)."""
    m = re.search(r"enum %s \{(.*?)\};" % name, text, re.S)
    vals, n = {}, 0
    for line in m.group(1).splitlines():
        line = re.sub(r"/\*.*?\*/", "", line).strip().rstrip(",")
        if not line:
            continue
        if "=" in line:
            k, v = (x.strip() for x in line.split("="))
            n = int(v, 0)
        else:
            k = line
        vals[k] = n
        n += 1
    return vals


NLA_F_NESTED = 0x8000


def encode(text, names, prefix, spec):
    """One attribute NAME=TYPE:VALUE of the set @names; None if bad."""
    k, _, tv = spec.partition("=")
    t, _, v = tv.partition(":")
    if prefix + k not in names:
        print("unknown attribute %s" % k, file=sys.stderr)
        return None
    n = names[prefix + k]
    if t == "str":
        return attr(n, v.encode() + b"\0")
    if t in ("u8", "u16", "u32", "u64"):
        return attr(n, struct.pack("=" + {"u8": "B", "u16": "H", "u32": "I",
                                          "u64": "Q"}[t], int(v, 0)))
    if t == "flag":
        return attr(n, b"")
    if t == "nest":
        inner = enum_values(text, "magnet_%s_attr" % k.lower())
        data = b""
        for sub in v.split(","):
            a = encode(text, inner, "MAGNET_%s_A_" % k, sub)
            if a is None:
                return None
            data += a
        return attr(n | NLA_F_NESTED, data)
    print("bad type %s (str u8 u16 u32 u64 flag nest)" % t, file=sys.stderr)
    return None


def attr(atype, data):
    hdr = struct.pack("=HH", 4 + len(data), atype)
    return hdr + data + b"\0" * ((4 - len(data) % 4) % 4)


def attrs_of(buf):
    out, off = {}, 0
    while off + 4 <= len(buf):
        ln, t = struct.unpack_from("=HH", buf, off)
        if ln < 4:
            break
        out[t & 0x3fff] = buf[off + 4:off + ln]
        off += (ln + 3) & ~3
    return out


def request(sk, ftype, cmd, payload, seq):
    msg = struct.pack("=BBH", cmd, 1, 0) + payload
    sk.send(struct.pack("=IHHII", 16 + len(msg), ftype,
                        NLM_F_REQUEST | NLM_F_ACK, seq, 0) + msg)
    replies = []
    while True:
        data = sk.recv(65536)
        off = 0
        while off + 16 <= len(data):
            ln, t, fl, s, _ = struct.unpack_from("=IHHII", data, off)
            body = data[off + 16:off + ln]
            off += (ln + 3) & ~3
            if s != seq:
                continue
            if t == NLMSG_ERROR:
                err = struct.unpack_from("=i", body)[0]
                # NETLINK_CAP_ACK: the request's header only, then TLVs
                tlv = attrs_of(body[4 + 16:])
                msg = tlv.get(NLMSGERR_ATTR_MSG, b"").split(b"\0")[0]
                return -err, msg.decode(errors="replace"), replies
            replies.append(body)


def magnet_family():
    """A generic netlink socket (acks capped, extended acks) and the
    controller's reply about the magnet family: (sock, (err, msg, reply))."""
    sk = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
    sk.setsockopt(SOL_NETLINK, NETLINK_CAP_ACK, 1)
    sk.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
    sk.bind((0, 0))
    return sk, request(sk, GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
                       attr(CTRL_ATTR_FAMILY_NAME, b"magnet\0"), 1)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    text = uapi_text()
    cmds = enum_values(text, "magnet_cmd")
    attrs = enum_values(text, "magnet_attr")
    cmd = cmds.get("MAGNET_CMD_" + argv[1])
    if cmd is None:
        print("unknown command %s" % argv[1], file=sys.stderr)
        return 2
    payload = b""
    for a in argv[2:]:
        data = encode(text, attrs, "MAGNET_A_", a)
        if data is None:
            return 2
        payload += data
    sk, (err, msg, rep) = magnet_family()
    if err or not rep:
        print("errno=%d msg=family magnet not found %s" % (err, msg))
        return 1
    fam = struct.unpack_from("=H", attrs_of(rep[0][4:])[CTRL_ATTR_FAMILY_ID])[0]
    err, msg, _ = request(sk, fam, cmd, payload, 2)
    print("errno=%d msg=%s" % (err, msg))
    return 0 if err == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
