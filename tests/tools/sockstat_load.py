#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Watch sockets through the sockstat file with raw ioctls (docs/SOCKSTAT.md).

    sockstat_load.py FILE quota N [hold]  watch N new UDP sockets through
                                          one file, print "watch=R1,R2,..."
                                          (OK or the errno's name); with
                                          hold, print "ready" and keep them
                                          until killed
    sockstat_load.py FILE loop SECONDS    watch and unwatch one new UDP
                                          socket again and again; print
                                          "cycles=N elapsed=S errors=E t0=NS
                                          t1=NS" (CLOCK_MONOTONIC)
    sockstat_load.py FILE userns OWNER NUIDS N
                                          (root) as OWNER, create a user
                                          namespace; root maps its uids
                                          0..NUIDS-1 (0 to OWNER, the others
                                          to 200001..); as each of them in
                                          turn, open FILE and watch N new
                                          UDP sockets, keeping every file
                                          open until all are done; print
                                          "watch_uidI=R1,R2,..." per uid and
                                          "ok=TOTAL"

What a user without CAP_NET_ADMIN may cost: the per-user quota (EDQUOT)
and the pacing of watches (docs/THREATS.md).
"""

import ctypes
import errno
import fcntl
import os
import signal
import socket
import struct
import sys
import time

# _IOW(0xB7, 0x20 / 0x21, __s32)
WATCH = (1 << 30) | (4 << 16) | (0xB7 << 8) | 0x20
UNWATCH = (1 << 30) | (4 << 16) | (0xB7 << 8) | 0x21


def ioc(fd, cmd, sock):
    try:
        fcntl.ioctl(fd, cmd, struct.pack("i", sock.fileno()))
        return "OK"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


CLONE_NEWUSER = 0x10000000


def userns(path, owner, nuids, n):
    """Watches from several uids of one user namespace owned by OWNER."""
    up_r, up_w = os.pipe()      # child: unshared
    go_r, go_w = os.pipe()      # parent: mapped
    pid = os.fork()
    if pid == 0:
        os.close(up_r)
        os.close(go_w)
        os.setgroups([])
        os.setresgid(owner, owner, owner)
        os.setresuid(owner, owner, owner)
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(CLONE_NEWUSER):
            print("unshare: %s" % os.strerror(ctypes.get_errno()), flush=True)
            os._exit(1)
        os.write(up_w, b"u")
        if os.read(go_r, 1) != b"m":
            os._exit(1)
        total = 0
        held = []
        for uid in range(nuids):
            res_r, res_w = os.pipe()
            hold_r, hold_w = os.pipe()
            p = os.fork()
            if p == 0:
                os.close(res_r)
                os.close(hold_w)
                for _, w in held:      # the earlier ones' ends: not ours
                    os.close(w)
                os.setresuid(uid, uid, uid)
                fd = os.open(path, os.O_RDONLY)
                socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                         for _ in range(n)]
                res = ",".join(ioc(fd, WATCH, s) for s in socks)
                os.write(res_w, res.encode())
                os.close(res_w)
                os.read(hold_r, 1)      # keep the watches until told
                os._exit(0)
            os.close(res_w)
            os.close(hold_r)
            res = b""
            while True:
                b = os.read(res_r, 4096)
                if not b:
                    break
                res += b
            os.close(res_r)
            res = res.decode()
            total += res.split(",").count("OK")
            print("watch_uid%d=%s" % (uid, res), flush=True)
            held.append((p, hold_w))
        print("ok=%d" % total, flush=True)
        for p, w in held:
            os.close(w)
            os.waitpid(p, 0)
        os._exit(0)
    os.close(up_w)
    os.close(go_r)
    if os.read(up_r, 1) != b"u":
        os.waitpid(pid, 0)
        return 1
    maps = "0 %d 1\n" % owner
    if nuids > 1:
        maps += "1 200001 %d\n" % (nuids - 1)
    with open("/proc/%d/uid_map" % pid, "w") as f:
        f.write(maps)
    with open("/proc/%d/gid_map" % pid, "w") as f:
        f.write("0 %d 1\n" % owner)
    os.write(go_w, b"m")
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def main(argv):
    fd = os.open(argv[1], os.O_RDONLY)
    if argv[2] == "quota":
        socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                 for _ in range(int(argv[3]))]
        print("watch=" + ",".join(ioc(fd, WATCH, s) for s in socks), flush=True)
        if argv[4:] == ["hold"]:
            print("ready", flush=True)
            while True:
                signal.pause()
        return 0
    if argv[2] == "userns":
        os.close(fd)
        return userns(argv[1], int(argv[3]), int(argv[4]), int(argv[5]))
    if argv[2] == "loop":
        t0 = time.monotonic()
        end = t0 + float(argv[3])
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        cycles = errors = 0
        while time.monotonic() < end:
            r1 = ioc(fd, WATCH, s)
            r2 = ioc(fd, UNWATCH, s)
            cycles += 1
            if r1 != "OK" or r2 != "OK":
                errors += 1
                if errors == 1:
                    print("first_error=%s,%s" % (r1, r2), flush=True)
        t1 = time.monotonic()
        print("cycles=%d elapsed=%.2f errors=%d t0=%d t1=%d"
              % (cycles, t1 - t0, errors, int(t0 * 1e9), int(t1 * 1e9)),
              flush=True)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
