#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Self-test of check_trace.py, no kernel needed.

Builds synthetic MAGNET traces byte by byte (from include/uapi/magnet.h),
one valid and many broken ones, runs check_trace.py on each and asserts
that it accepts the valid ones and rejects each defect with the right
assertion.  Prints TAP and "N passed, M failed"; exit 1 on any failure.
"""

import contextlib
import io
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "check_trace.py")
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # keep the source tree clean
import check_trace  # noqa: E402
from trace_writer import RELEASE, TraceWriter  # noqa: E402

SOCKET, TRANSPORT, NETWORK, DEVICE = 1, 2, 3, 4
P_NONE, P_NET, P_RAW = 0, 1, 2
TX, RX = 1, 2
INO = 4242
PID = 777

# (id, name, layer, payload type)
DEFS = [
    (16, "sock_send", SOCKET, P_NET),
    (17, "tcp_send", TRANSPORT, P_NET),
    (18, "ip_send", NETWORK, P_NET),
    (19, "dev_send", DEVICE, P_NET),
    (20, "dev_recv", DEVICE, P_NET),
    (21, "ip_recv", NETWORK, P_NET),
    (22, "raw_thing", 0, P_RAW),
]


class Writer(TraceWriter):
    """A TraceWriter with check_trace's network events."""

    def defs(self):
        for d in DEFS:
            self.eventdef(*d)
        return self

    def net(self, eid, cpu, ts, length, flags=TX, aid=INO, pid=PID, tgid=PID,
            ifindex=2, proto=6, gso=(0, 0)):
        """A network event; gso = (gso_size, gso_segs)."""
        return self.rec(eid, cpu, aid, ts, pid, tgid,
                        struct.pack(self.bo + "IIHHHH", length, ifindex, proto, flags,
                                    gso[0], gso[1]))

    def flow(self, n=5, t0=10_000, mtu_len=1500, send_len=10240, pid=PID):
        """n FTP-like writes: each one down the stack and up on the peer.
        As on a real kernel, TCP hands IP one GSO packet of 10292 bytes
        (8 segments of 1448) and the device sends 8 wire-sized packets."""
        ts = t0
        for i in range(n):
            cpu = i % 2
            self.net(16, cpu, ts + 1, send_len, pid=pid, tgid=pid)
            self.net(17, cpu, ts + 2, send_len, pid=pid, tgid=pid)
            self.net(18, cpu, ts + 3, send_len + 52, gso=(1448, 8))
            for seg in range(8):
                self.net(19, cpu, ts + 4, mtu_len + 14 if seg < 7 else 104 + 52 + 14)
            self.net(20, cpu, ts + 5, mtu_len, flags=RX, aid=INO + 1, pid=0, tgid=0)
            self.net(21, cpu, ts + 6, mtu_len, flags=RX, aid=INO + 1, pid=0, tgid=0)
            ts += 20_000_000
        return self


def good(bo="<"):
    w = Writer(bo).sysinfo().defs().flow()
    w.lost(1, 500_000_000, 3)
    # A second group (stream re-opened): clock continues, IDs re-announced.
    w.sysinfo().defs().flow(n=2, t0=600_000_000)
    return w


GOOD_ARGS = ["--expect-pid", str(PID), "--ino", str(INO), "--send-count", "7",
             "--mtu", "1500", "--release", RELEASE, "--require", "tcp_send"]


def accounting(w, lost=3):
    return ["--expect-produced", str(w.probe_events + lost), "--expect-lost", str(lost)]


def run_checker(data, args, subprocess_run=False):
    """check_trace on @data: (exit code, output).  In-process by default
    (python starts slowly in an emulated VM), as a real command if asked."""
    with tempfile.NamedTemporaryFile(suffix=".magnet", delete=False) as f:
        f.write(bytes(data))
        path = f.name
    try:
        if subprocess_run:
            p = subprocess.run([sys.executable, CHECKER, path] + args,
                               capture_output=True, text=True, timeout=60)
            return p.returncode, p.stdout + p.stderr
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                rc = check_trace.main([path] + args)
            except SystemExit as e:     # argparse errors
                rc = e.code
        return rc, out.getvalue()
    finally:
        os.unlink(path)


def main():
    cases = []

    def case(desc, data, args, want_rc, want_fail=None, cli=False):
        cases.append((desc, data, args, want_rc, want_fail, cli))

    w = good()
    case("valid little-endian trace passes every assertion (command line)",
         w.out, GOOD_ARGS + accounting(w), 0, cli=True)
    wb = good(">")
    case("valid big-endian trace passes", wb.out, GOOD_ARGS + accounting(wb), 0)
    case("--summary of a valid trace", w.out, ["--summary"], 0)

    # Each defect below must be caught by the named assertion.
    b = Writer().sysinfo().defs().flow()
    b.net(16, 0, 5, 10240)          # cpu 0 goes back in time
    case("backwards per-CPU timestamp", b.out, [], 1, "timestamps")
    case("backwards per-CPU timestamp (command line)", b.out, [], 1, "timestamps",
         cli=True)

    b = Writer().sysinfo().defs().flow()
    b.net(16, 1, 10 ** 9, 10240, aid=0xffff888012345678)
    case("kernel pointer as abstract_id", b.out, [], 1, "kernel address")

    b = Writer().sysinfo().defs().flow()
    b.rec(22, 0, INO, 10 ** 9, PID, PID, struct.pack("<QQ", 5, 0xffffffffc0a01234))
    case("kernel pointer inside a payload", b.out, [], 1, "kernel address")

    b = Writer().sysinfo().defs().flow()
    b.net(16, 1, 10 ** 9, 10240, pid=0xffff8880)
    case("pid that is a pointer half", b.out, [], 1, "kernel address")

    b = Writer().sysinfo().defs()
    b.rec(16, 0, INO, 10 ** 9, PID, PID, b"\0" * 16, size=44)
    case("record size not a multiple of 8", b.out, [], 1, "malformed")

    b = good()
    case("truncated last record", b.out[:-8], [], 1, "malformed")

    b = Writer().sysinfo(magic=0x11223344).defs().flow()
    case("bad endian magic", b.out, [], 1, "SYSINFO")

    b = Writer().defs().flow()
    case("first record is not SYSINFO", b.out, [], 1, "SYSINFO")

    b = Writer().sysinfo().defs().flow()
    b.net(99, 0, 10 ** 9, 10)
    case("event ID without EVENTDEF", b.out, [], 1, "EVENTDEF")

    b = Writer().sysinfo().defs()
    b.eventdef(23, "x", 0, P_NONE, raw_name=b"leak\0\xde\xad" + b"\0" * 26)
    case("stale bytes after an EVENTDEF name", b.out, [], 1, "malformed")

    b = Writer().sysinfo().defs().flow()
    b.net(19, 1, 10 ** 9, 1515)
    case("dev_send above MTU + 14", b.out, ["--mtu", "1500"], 1, "MTU")

    b = Writer().sysinfo().defs().flow()
    b.net(21, 1, 10 ** 9, 1501, flags=RX)
    case("ip_recv above MTU", b.out, ["--mtu", "1500"], 1, "MTU")

    b = Writer().sysinfo().defs().flow()
    b.net(19, 1, 10 ** 9, 2962, gso=(1448, 2))
    case("GSO packet at dev_send (offloads off)", b.out, ["--mtu", "1500"], 1, "MTU")

    b = Writer().sysinfo().defs().flow()
    b.net(18, 1, 10 ** 9, 3052 + 52, gso=(1526, 2))
    case("GSO segments larger than the MTU", b.out, ["--mtu", "1500"], 1, "MTU")

    b = Writer().sysinfo().defs().flow()
    b.net(18, 1, 10 ** 9, 10292, gso=(1448, 3))
    case("GSO len inconsistent with gso_segs", b.out, ["--mtu", "1500"], 1, "MTU")

    b = Writer().sysinfo().defs().flow()
    b.net(19, 1, 10 ** 9, 1514)     # one device packet too many for the socket
    case("ip_send segments != dev_send packets", b.out, ["--ino", str(INO)], 1,
         "segments")

    b = Writer().sysinfo().defs()
    b.net(16, 0, 10, 10240)
    case("--mtu with no ip/dev events", b.out, ["--mtu", "1500"], 1, "MTU")

    # failed calls (len 0, err in gso_size): socket and transport layers only
    b = Writer().sysinfo().defs().flow()
    b.net(16, 1, 10 ** 9, 0, flags=TX | 4, gso=(65536 - 90, 0))
    b.net(17, 1, 10 ** 9 + 1, 0, flags=TX | 4, gso=(65536 - 32, 0))
    case("failed calls at the socket and transport layers pass", b.out, [], 0)

    b = Writer().sysinfo().defs().flow()
    b.net(18, 1, 10 ** 9, 0, flags=TX | 4, gso=(65536 - 90, 0))
    case("a failed call at the network layer", b.out, [], 1, "malformed")

    b = Writer().sysinfo().defs().flow()
    b.net(17, 1, 10 ** 9, 5, flags=TX | 4, gso=(65536 - 90, 0))
    case("a failed call with a length", b.out, [], 1, "malformed")

    b = Writer().sysinfo().defs().flow()
    b.net(17, 1, 10 ** 9, 10240, pid=PID + 1, tgid=PID + 1)
    case("send event of the socket with a wrong pid", b.out,
         ["--expect-pid", str(PID), "--ino", str(INO)], 1, "pid=tgid")

    b = Writer().sysinfo().defs().flow()
    b.net(17, 1, 10 ** 9, 10239)
    case("tcp_send len != 10240", b.out, ["--ino", str(INO)], 1, "tcp_send")

    b = Writer().sysinfo().defs().flow()
    case("no events for the socket inode", b.out, ["--ino", "1"], 1, "sock_send")

    b = good()
    case("LOST counts do not add up", b.out, ["--expect-lost", "2"], 1, "LOST")
    case("read + lost != produced", b.out,
         ["--expect-produced", str(b.probe_events + 4), "--expect-lost", "3"], 1,
         "produced")

    b = Writer().sysinfo().defs().flow()
    b.net(16, 5, 10 ** 9, 10240)    # SYSINFO says 2 CPUs
    case("cpu beyond nr_cpus", b.out, [], 1, "malformed")

    # buffer modes: a global ring is in time order across CPUs
    def two_cpus(flags):
        b = Writer().sysinfo(flags=flags).defs()
        b.net(19, 0, 5000, 100)
        b.net(19, 1, 4000, 100)     # back in time, on another CPU
        return b
    case("per-CPU rings: CPUs' times interleave", two_cpus(0).out, [], 0)
    case("overwrite flag is known", two_cpus(2).out, [], 0)
    case("global ring: time goes back across CPUs", two_cpus(1).out, [], 1,
         "timestamps")
    case("unknown SYSINFO flag", two_cpus(4).out, [], 1, "SYSINFO")

    print("TAP version 13")
    failed = 0
    for i, (desc, data, args, want_rc, want_fail, cli) in enumerate(cases, 1):
        rc, out = run_checker(data, args, cli)
        problems = []
        if rc != want_rc:
            problems.append("check_trace exit %d, expected %d" % (rc, want_rc))
        if want_fail is not None:
            bad = [l for l in out.splitlines() if l.startswith("not ok")]
            if not any(want_fail in l for l in bad):
                problems.append("no failing assertion mentions %r" % want_fail)
        elif want_rc == 0 and "not ok" in out:
            problems.append("a failing assertion in a valid trace")
        if problems:
            failed += 1
            print("not ok %d - %s" % (i, desc))
            for p in problems:
                print("#   " + p)
            for l in out.splitlines()[:30]:
                print("#   | " + l)
        else:
            print("ok %d - %s" % (i, desc))
    print("1..%d" % len(cases))
    print("%d passed, %d failed" % (len(cases) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
