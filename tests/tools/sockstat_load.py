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

What a user without CAP_NET_ADMIN may cost: the per-user quota (EDQUOT)
and the pacing of watches (docs/THREATS.md).
"""

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
