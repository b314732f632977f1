#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check a socket's sockstat figures against a full trace of the same run.

Written from include/uapi/magnet.h and docs/FORMAT.md / docs/SOCKSTAT.md
only (no code shared with libmagnet or the kernel).

  sock_check.py --full FULL.trace --out CLIENT.out [--prefix st_]

CLIENT.out holds the "key=value" lines of tests/tools/sock_client: ino=
and the figures (st_*).  From the full trace (sock_send and dev_send
enabled), the events whose abstract ID is the socket's and whose
timestamp is in [st_start_ns, st_now_ns) are the ones the figures count.
Asserted, as TAP: socket-layer calls and bytes (of the calls that
succeeded), failed calls (MAGNET_NET_F_ERROR), device-layer frames and
bytes, and the intervals between consecutive successful sock_send events
(count, floor of the mean, floor of the population variance, min, max)
are exactly equal; nothing was lost by the trace.
With --rx, the trace also holds dev_recv, ip_recv, udp_recv, tcp_recv and
sock_recv: the receive side's figures (sock_recv calls, bytes and failed
calls, dev_recv frames and bytes) and the receive layer figures, paired
along dev_recv,ip_recv,udp_recv|tcp_recv,sock_recv (window 50 ms; a
chain still open when the figures were read and older than the window
counts as expired, as the kernel's correlator closed it by then).
With --layers, the trace also holds tcp_send and ip_send: it is paired
with tests/tools/corr_pair.py (the rules of docs/CORRELATE.md, chain
tcp_send|udp_send,ip_send,dev_send,sock_send, window 50 ms) and the
socket's chains that started in [st_start_ns, st_now_ns) give the layer
figures: complete chains, chains closed early, the floor of the mean of
each step's delta and the last complete chain's deltas, all exactly.
Exit 0 all passed, 1 some failed, 2 usage.
"""

import argparse
import struct
import sys

HDR = struct.Struct("<HHIQQII")
F_ERROR = 0x04          # MAGNET_NET_F_ERROR, payload flags at offset 10
WINDOW = 50000000
EV_LOST, EV_EVENTDEF = 1, 2
FIRST_PROBE = 16

npass = nfail = 0


def check(cond, desc, why=""):
    global npass, nfail
    if cond:
        npass += 1
        print("ok - %s" % desc)
    else:
        nfail += 1
        print("not ok - %s # %s" % (desc, why))
    return cond


def records(path):
    data = open(path, "rb").read()
    off, names = 0, {}
    while off + 32 <= len(data):
        size, ev, cpu, aid, ts, pid, tgid = HDR.unpack_from(data, off)
        if size < 32 or size % 8 or off + size > len(data):
            raise SystemExit("%s: bad record at offset %d" % (path, off))
        payload = data[off + 32:off + size]
        if ev == EV_EVENTDEF:
            eid = struct.unpack_from("<H", payload)[0]
            names[eid] = payload[8:40].split(b"\0")[0].decode()
        yield ev, aid, ts, payload, names
        off += size


def kv(path):
    d = {}
    for line in open(path):
        if "=" in line:
            k, v = line.strip().split("=", 1)
            d.setdefault(k, v)
    return d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", required=True, action="append")
    ap.add_argument("--out", required=True)
    ap.add_argument("--prefix", default="st_")
    ap.add_argument("--layers", action="store_true")
    ap.add_argument("--rx", action="store_true")
    a = ap.parse_args()
    c = kv(a.out)
    p = a.prefix
    try:
        ino = int(c["ino"] if p == "st_" else c[p + "abstract_id"])
        start, now = int(c[p + "start_ns"]), int(c[p + "now_ns"])
        fig = {k: int(c[p + k]) for k in (
            "sock_calls", "sock_bytes", "dev_frames", "dev_bytes",
            "ival_count", "ival_mean", "ival_var", "ival_min", "ival_max",
            "missed", "abstract_id")}
    except (KeyError, ValueError) as e:
        print("not ok - figures in %s # %s" % (a.out, e))
        return 1
    lost, sock, dev, serr = 0, [], [], 0
    rsock, rdev, rerr = [], [], 0
    for path in a.full:
        for ev, aid, ts, payload, names in records(path):
            if ev == EV_LOST:
                lost += struct.unpack_from("<Q", payload)[0]
            if ev < FIRST_PROBE or aid != ino or not start <= ts < now:
                continue
            name = names.get(ev)
            ln = struct.unpack_from("<I", payload)[0]
            failed = len(payload) >= 12 and struct.unpack_from("<H", payload, 10)[0] & F_ERROR
            if name == "sock_send":
                if failed:
                    serr += 1
                else:
                    sock.append((ts, ln))
            elif name == "dev_send":
                dev.append((ts, ln))
            elif name == "sock_recv":
                if failed:
                    rerr += 1
                else:
                    rsock.append((ts, ln))
            elif name == "dev_recv":
                rdev.append((ts, ln))
    sock.sort()
    check(lost == 0, "the full trace lost nothing", "lost %d" % lost)
    check(fig["abstract_id"] == ino, "the figures are the socket's (ID %d)" % ino,
          fig["abstract_id"])
    check(fig["missed"] == 0, "no event missed by the synthesizers", fig["missed"])
    check(fig["sock_calls"] == len(sock),
          "socket-layer calls: %d = trace" % fig["sock_calls"], len(sock))
    check(fig["sock_bytes"] == sum(x[1] for x in sock),
          "socket-layer bytes: %d = trace" % fig["sock_bytes"],
          sum(x[1] for x in sock))
    check(fig["dev_frames"] == len(dev),
          "device-layer frames: %d = trace" % fig["dev_frames"], len(dev))
    check(fig["dev_bytes"] == sum(x[1] for x in dev),
          "device-layer bytes: %d = trace" % fig["dev_bytes"],
          sum(x[1] for x in dev))
    gaps = [b[0] - a_[0] for a_, b in zip(sock, sock[1:])]
    n = len(gaps)
    if n:
        s1, s2 = sum(gaps), sum(g * g for g in gaps)
        mean = s1 // n
        var = (n * s2 - s1 * s1) // (n * n)
        ref = {"ival_count": n, "ival_mean": mean, "ival_var": var,
               "ival_min": min(gaps), "ival_max": max(gaps)}
    else:
        ref = {"ival_count": 0, "ival_mean": 0, "ival_var": 0,
               "ival_min": 0, "ival_max": 0}
    for k, v in ref.items():
        check(fig[k] == v, "intervals: %s %d = trace" % (k[5:], fig[k]), v)
    print("# %d sock_send, %d dev_send in [%d, %d); interval mean %d ns"
          % (len(sock), len(dev), start, now, ref["ival_mean"]))
    if p + "sock_errors" in c:
        check(int(c[p + "sock_errors"]) == serr,
              "failed socket-layer sends: %s = trace" % c[p + "sock_errors"], serr)
    if a.layers:
        layers(a, c, p, ino, start, now)
    if a.rx:
        receive(a, c, p, ino, start, now, rsock, rdev, rerr)
    return 1 if nfail else 0


def receive(a, c, p, ino, start, now, rsock, rdev, rerr):
    try:
        fig = {k: int(c[p + k]) for k in (
            "version", "flags", "rx_sock_calls", "rx_sock_bytes", "rx_sock_errors",
            "rx_dev_frames", "rx_dev_bytes", "rx_chains", "rx_chains_partial")}
        mean = [int(c["%srx_layer_mean%d" % (p, i)]) for i in range(3)]
        last = [int(c["%srx_layer_last%d" % (p, i)]) for i in range(3)]
    except (KeyError, ValueError) as e:
        check(False, "receive figures present", e)
        return
    check(fig["version"] >= 2, "a version-2 summary (the receive side)", fig["version"])
    check(fig["rx_sock_calls"] == len(rsock),
          "receive: socket-layer calls %d = trace" % fig["rx_sock_calls"], len(rsock))
    check(fig["rx_sock_bytes"] == sum(x[1] for x in rsock),
          "receive: socket-layer bytes %d = trace" % fig["rx_sock_bytes"],
          sum(x[1] for x in rsock))
    check(fig["rx_sock_errors"] == rerr,
          "receive: failed calls %d = trace" % fig["rx_sock_errors"], rerr)
    check(fig["rx_dev_frames"] == len(rdev),
          "receive: device-layer frames %d = trace" % fig["rx_dev_frames"], len(rdev))
    check(fig["rx_dev_bytes"] == sum(x[1] for x in rdev),
          "receive: device-layer bytes %d = trace" % fig["rx_dev_bytes"],
          sum(x[1] for x in rdev))
    print("# receive: %d sock_recv (%d failed), %d dev_recv in [%d, %d)"
          % (len(rsock), rerr, len(rdev), start, now))
    done, part, young = paired(a, [["dev_recv"], ["ip_recv"], ["udp_recv", "tcp_recv"], ["sock_recv"]],
                               ino, start, now, expire_open=True)
    check(fig["flags"] & 16, "the receive layer correlator ran (flag RX_LAYERS)", fig["flags"])
    check(not young, "no receive chain open within the window when read", len(young))
    check(fig["rx_chains"] == len(done),
          "receive: complete chains dev_recv..sock_recv %d = trace" % fig["rx_chains"],
          len(done))
    check(fig["rx_chains_partial"] == len(part),
          "receive: chains closed early (restarted, expired) %d = trace"
          % fig["rx_chains_partial"], len(part))
    steps(done, mean, last, "receive layer step")


def paired(a, chain, ino, start, now, expire_open=False):
    """The socket's chains that started in [start, now), paired in user
    space (tests/tools/corr_pair.py, window 50 ms): complete, closed early,
    and still open within the window when the figures were read.  With
    expire_open, a chain still open at the trace's end and older than the
    window counts as expired: the kernel's correlator closed it by the
    time the figures were read (10 ms behind)."""
    import os
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import corr_pair
    names, evs, _ = corr_pair.load_full(a.full[0])
    ids = [[names[n] for n in alts if n in names] for alts in chain]
    net_ids = set(e for alts in ids for e in alts)
    closed, open_, _ = corr_pair.pair(evs, ids, WINDOW, net_ids)
    young = []
    if expire_open:
        young = [x for x in open_.values()
                 if x["key"] == ino and start <= x["ts"][0] < now
                 and now - x["ts"][0] <= WINDOW + 20000000]
        closed += [dict(x, flags=1) for x in open_.values()
                   if now - x["ts"][0] > WINDOW + 20000000]
    mine = [x for x in closed if x["key"] == ino and start <= x["ts"][0] < now]
    return ([x for x in mine if x["flags"] == 0],
            [x for x in mine if x["flags"] != 0], young)


def steps(done, mean, last, what):
    """Each step's floor of the mean and last delta over the complete chains."""
    if not done:
        return
    for i in range(3):
        d = [x["ts"][i + 1] - x["ts"][i] for x in done]
        check(mean[i] == sum(d) // len(d),
              "%s %d: mean %d ns = trace" % (what, i + 1, mean[i]), sum(d) // len(d))
        check(last[i] == d[-1],
              "%s %d: last %d ns = trace" % (what, i + 1, last[i]), d[-1])


def layers(a, c, p, ino, start, now):
    done, part, _ = paired(a, [["tcp_send", "udp_send"], ["ip_send"], ["dev_send"], ["sock_send"]],
                           ino, start, now)
    try:
        fig = {k: int(c[p + k]) for k in ("flags", "chains", "chains_partial")}
        mean = [int(c["%slayer_mean%d" % (p, i)]) for i in range(3)]
        last = [int(c["%slayer_last%d" % (p, i)]) for i in range(3)]
    except (KeyError, ValueError) as e:
        check(False, "layer figures present", e)
        return
    check(fig["flags"] & 8, "the layer correlator ran (flag LAYERS)", fig["flags"])
    check(fig["chains"] == len(done),
          "complete sends paired through the layers: %d = trace" % fig["chains"],
          len(done))
    check(fig["chains_partial"] == len(part),
          "sends closed early (coalesced, restarted, expired): %d = trace"
          % fig["chains_partial"], len(part))
    steps(done, mean, last, "layer step")

if __name__ == "__main__":
    sys.exit(main())
