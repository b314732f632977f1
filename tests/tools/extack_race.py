#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Race the extack messages of concurrent requests to the magnet family.

    extack_race.py SECONDS

The kernel builds a request's ack, with its extack message, after the
handler has returned and genl_mutex is dropped, while other requests run:
each ack must carry its own request's message, never another's (issue 15:
one shared buffer handed an unprivileged PROBE_GET root's KPROBE_NEW
message, and could change under the ack's copy, a WARN in
netlink_ack_tlv_fill).  Runs as root: two workers drop to uid 65534 and
ask PROBE_GET for unknown names of 1 and 31 characters; one stays root and
sends KPROBE_NEW with invalid names that say "rootsecret".  Each worker
checks every message against what its own request must say.  Prints one
line per worker, "WORKER requests=N wrong=M leaked=L [first=MSG]", then
"total requests=N wrong=M leaked=L"; exits 0 only if nothing was wrong
(1: a message was wrong, 2: usage or setup).
"""

import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import genl_req as g  # noqa: E402


def family(sk_rep):
    sk, (err, msg, rep) = sk_rep
    if err or not rep:
        return sk, None
    return sk, struct.unpack_from(
        "=H", g.attrs_of(rep[0][4:])[g.CTRL_ATTR_FAMILY_ID])[0]


def worker(name, uid, seconds, wfd):
    if uid is not None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    text = g.uapi_text()
    cmds = g.enum_values(text, "magnet_cmd")
    attrs = g.enum_values(text, "magnet_attr")
    sk, fam = family(g.magnet_family())
    if fam is None:
        os.write(wfd, b"%s setup-failed\n" % name.encode())
        os._exit(2)
    n = wrong = leaked = seq = 0
    first = ""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        seq += 1
        if name == "root":
            bad = "-rootsecret%d" % (seq % 8)
            cmd = cmds["MAGNET_CMD_KPROBE_NEW"]
            payload = g.encode(text, attrs, "MAGNET_A_",
                               "KPROBE=nest:NAME=str:%s,SYMBOL=str:vfs_read" % bad)
            want = "bad probe name '%s'" % bad
        else:
            probe = ("u" if name == "short" else "v" * 31)
            cmd = cmds["MAGNET_CMD_PROBE_GET"]
            payload = g.encode(text, attrs, "MAGNET_A_", "PROBE_NAME=str:%s" % probe)
            want = "no probe named '%s'" % probe
        err, msg, _ = g.request(sk, fam, cmd, payload, seq + 1)
        n += 1
        if not msg.startswith(want):
            wrong += 1
            first = first or msg
            if name != "root" and "rootsecret" in msg:
                leaked += 1
    line = "%s requests=%d wrong=%d leaked=%d" % (name, n, wrong, leaked)
    if first:
        line += " first=%r" % first
    os.write(wfd, (line + "\n").encode())
    os._exit(0)


def main(argv):
    if len(argv) != 2 or not argv[1].isdigit():
        print(__doc__, file=sys.stderr)
        return 2
    seconds = int(argv[1])
    rfd, wfd = os.pipe()
    pids = []
    for name, uid in (("root", None), ("short", 65534), ("long", 65534)):
        pid = os.fork()
        if pid == 0:
            os.close(rfd)
            worker(name, uid, seconds, wfd)
        pids.append(pid)
    os.close(wfd)
    out = b""
    while True:
        b = os.read(rfd, 4096)
        if not b:
            break
        out += b
    rc = 0
    for pid in pids:
        _, st = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(st) != 0:
            rc = 2
    tot = [0, 0, 0]
    lines = out.decode().splitlines()
    for line in lines:
        print(line)
        f = dict(kv.split("=", 1) for kv in line.split()[1:4] if "=" in kv)
        for i, k in enumerate(("requests", "wrong", "leaked")):
            tot[i] += int(f.get(k, 0))
    if len(lines) != 3:
        rc = 2
    print("total requests=%d wrong=%d leaked=%d" % tuple(tot))
    if rc == 0 and (tot[1] or tot[2]):
        rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
