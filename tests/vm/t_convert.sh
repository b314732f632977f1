#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Traces in other tools' formats (issue 17), on a trace of known traffic:
# a TCP sender in one namespace writes 20 x 10 KB to a sink in another
# while magnet_tcpip.ko (hdr_bytes=40) and magnet_sched.ko record.
#  - magnetctl dump: the header line, --format csv (one row per record,
#    as many as -j prints; the sender's packets named after its thread,
#    tcp_sender, from the sched records), --time wall (the wall clock of
#    the recording, as -j's wall_ns), rel and delta (their sums agree);
#  - magnetctl convert --to pcapng, read back by tshark: one packet per
#    ip_hdr record, per event as many as the dump, on one interface per
#    (device, event), at the records' wall-clock times, with the
#    connection's addresses and ports, the data bytes sent, and the event,
#    CPU, pid and socket in each packet's comment;
#  - babeltrace2 with MAGNET's plugin (source.magnet.trace, found by its
#    support-info query): an event per record, in the same order, at the
#    same times, with the same CPU, pid and socket as -j; LOST records as
#    discarded events; magnetctl convert --to ctf (the plugin found beside
#    the build's magnetctl, no $MAGNET_BT2_PLUGIN_DIR), read back by
#    babeltrace2's own source.ctf.fs: the same events again, each CPU's
#    in order (ties across CPUs at one nanosecond have no order);
#  - magnetctl convert --to perfetto, decoded with perfetto's own protos
#    (the perfetto Python package): every record on its CPU's track, the
#    sender's on its socket's track, its snd_cwnd as a counter, thread
#    names from the sched records;
#  - magnetctl plot layers / tcp / rate: images, and data that hold the
#    sender's socket's records (lengths, congestion window) and a series
#    per CPU that recorded; the tcp figure's legend names its fields as
#    they are written (snd_cwnd, no subscript).
MAGNET_MODULES="magnet magnet_sched"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
need_magnet
need_tools tcp_sender tcp_sink
need_cmd tshark python3 babeltrace2
BT2=$MAGNET_BUILD/babeltrace2/plugins
[ -e "$BT2/babeltrace-plugin-magnet.so" ] || bail_out "no babeltrace2 plugin in $BT2"
dmesg_mark
netns_setup || bail_out "network namespaces"
magnet_load || bail_out "cannot load the modules"
R=$MAGNET_RESULTS
EVENTS="ip_hdr_send ip_hdr_recv tcp_state_tx sched_switch sched_exec"
N=20

check "insmod magnet_tcpip hdr_bytes=40" insmod "$MAGNET_MODDIR/magnet_tcpip.ko" hdr_bytes=40
on_exit "rmmod magnet_tcpip 2>/dev/null"
check "stream create conv (1 MiB x 4)" magnetctl stream create conv subbuf-size 1M subbuf-count 4
wall0=$(date +%s%N)
# shellcheck disable=SC2086
check "enable the probes" magnetctl probe enable $EVENTS stream conv
bg rec "$MAGNETCTL" record conv -o "$R/conv.trace"
record_started rec || bail_out "record did not start"
tcp_sink_start sink 5001 || bail_out "tcp_sink did not start"
check "TCP sender: $N writes of 10240 bytes" tcp_send tcp "$N"
bg_wait sink 10
sleep 0.3
# shellcheck disable=SC2086
check "disable the probes" magnetctl probe disable $EVENTS
kill -INT "${BG_PID[rec]}"
bg_wait rec 20
check_eq "record stops cleanly" 0 $?
wall1=$(date +%s%N)

check "dump -j" sh -c "'$MAGNETCTL' -j dump '$R/conv.trace' >'$R/conv.jsonl'"
check "dump (text)" sh -c "'$MAGNETCTL' dump '$R/conv.trace' >'$R/conv.txt'"
check "dump --format csv --time wall" \
	sh -c "'$MAGNETCTL' dump --format csv --time wall '$R/conv.trace' >'$R/conv.csv'"
check "dump --no-header --time rel" \
	sh -c "'$MAGNETCTL' dump --no-header --time rel '$R/conv.trace' >'$R/conv.rel'"
check "dump --no-header --time delta" \
	sh -c "'$MAGNETCTL' dump --no-header --time delta '$R/conv.trace' >'$R/conv.delta'"
check "convert --to pcapng" sh -c "'$MAGNETCTL' convert --to pcapng -o '$R/conv.pcapng' '$R/conv.trace' >'$R/convert.out'"
diag "$(cat "$R/convert.out")"
check "tshark reads the pcapng" sh -c "tshark -r '$R/conv.pcapng' -T fields -E separator=/t \
	-e frame.interface_name -e frame.time_epoch -e ip.src -e ip.dst -e tcp.srcport \
	-e tcp.dstport -e ip.len -e tcp.hdr_len -e frame.comment >'$R/conv.tshark' 2>'$R/tshark.err'"
check "babeltrace2 reads the trace" sh -c "babeltrace2 --plugin-path='$BT2' --clock-cycles \
	--no-delta '$R/conv.trace' >'$R/conv.bt2' 2>'$R/bt2.err'"
# sink.ctf.fs maps its files: not on the 9p results directory (no shared
# writable mappings there), on the guest's tmpfs
CTF=$(mktemp -d /tmp/magnet-ctf.XXXXXX)
on_exit "rm -rf $CTF"
# as README's "Using it" runs it: the build's magnetctl finds the build's plugin
check "convert --to ctf" sh -c "env -u MAGNET_BT2_PLUGIN_DIR '$MAGNETCTL' convert --to ctf \
	-o '$CTF/ctf' '$R/conv.trace' >'$R/ctf.out' 2>&1"
check "babeltrace2 reads the CTF trace" sh -c "babeltrace2 --clock-cycles --no-delta '$CTF/ctf' \
	>'$R/conv.ctf.txt' 2>'$R/ctf.err'"
sino=$(kv "$(out tcp)" ino)
check "plot layers of the sender's socket" "$MAGNETCTL" plot layers --id "$sino" -o "$R/layers.png" "$R/conv.trace"
check "plot tcp of the sender's socket" "$MAGNETCTL" plot tcp --id "$sino" --format svg -o "$R/tcp.svg" "$R/conv.trace"
check "plot rate" "$MAGNETCTL" plot rate -o "$R/rate.png" "$R/conv.trace"
check "convert --to perfetto" sh -c "'$MAGNETCTL' convert --to perfetto -o '$R/conv.pftrace' '$R/conv.trace' >'$R/pf.out'"

python3 - "$R" "$(kv "$(out tcp)" pid)" "$(kv "$(out tcp)" ino)" "$(kv "$(out tcp)" retrans_bytes)" \
	"$wall0" "$wall1" "$N" "$IP_A" "$IP_B" >"$R/check.tap" <<'PY'
import csv, json, sys
from collections import Counter
R, spid, sino, rb, wall0, wall1, n, ipa, ipb = sys.argv[1:]
spid, sino, rb, wall0, wall1, n = int(spid or 0), int(sino or 0), int(rb or 0), int(wall0), int(wall1), int(n)
out = []
def ok(cond, what, why=""):
    out.append(("ok" if cond else "not ok") + " - " + what + ("" if cond else " # " + str(why)[:300]))
recs = [json.loads(l) for l in open(R + "/conv.jsonl")]
txt = open(R + "/conv.txt").read().splitlines()
ok(txt[0] == "# time\tcpu\tpid\tevent\tabstract_id\tsize\tdetails" and len(txt) == len(recs) + 1,
   "text: a header line and a line per record (%d)" % len(recs), txt[:1])
rows = list(csv.DictReader(open(R + "/conv.csv", newline="")))
ok(len(rows) == len(recs), "csv: a row per record (%d)" % len(rows), len(rows))
ok(all(r["event"] == j["name"] and int(r["pid"]) == j["pid"] and int(r["abstract_id"]) == j["abstract_id"]
       for r, j in zip(rows, recs)), "csv rows match -j's records")
mine = [r for r in rows if r["event"] == "ip_hdr_send" and int(r["pid"] or 0) == spid]
ok(len(mine) >= n and all(r["comm"] == "tcp_sender" for r in mine),
   "the sender's %d ip_hdr_send rows carry its name tcp_sender" % len(mine), Counter(r["comm"] for r in mine))
ok(any("comm=tcp_sender" in l and "\tip_hdr_send\t" in l for l in txt), "text: comm=tcp_sender in the details")
ok(all("ttl=64" in l and "bytes=45" in l for l in txt if "\tip_hdr_send\t" in l or "\tip_hdr_recv\t" in l),
   "text: the ip payload's fields and bytes in the details")
# wall clock: -j's wall_ns as ISO time, within the recording
def iso(ns):
    import time
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ns // 10**9)) + ".%09dZ" % (ns % 10**9)
ev = [(r, j) for r, j in zip(rows, recs) if j["name"] not in ("SYSINFO", "EVENTDEF")]
ok(all(r["time"] == iso(j["wall_ns"]) for r, j in zip(rows, recs)), "csv --time wall is -j's wall_ns")
ok(ev and all(wall0 <= j["wall_ns"] <= wall1 for r, j in ev),
   "every event's wall time lies within the recording", (wall0, ev[0][1]["wall_ns"] if ev else None, wall1))
rel = [float(l.split("\t")[0]) for l in open(R + "/conv.rel")]
dl = [float(l.split("\t")[0]) for l in open(R + "/conv.delta")]
ok(len(rel) == len(dl) == len(recs) and rel[0] == 0 and abs(sum(dl) - rel[-1]) < 1e-6 * len(dl) + 1e-6
   and abs((recs[-1]["time"] - recs[0]["time"]) / 1e9 - rel[-1]) < 1e-6,
   "--time rel starts at 0, the deltas add up to it", (rel[:1], rel[-1:], sum(dl)))
# pcapng read back by tshark
ip = [j for j in recs if j["name"] in ("ip_hdr_send", "ip_hdr_recv") and j["ip"]["hdr_len"] == 40]
pk = [l.split("\t") for l in open(R + "/conv.tshark").read().splitlines()]
ok(len(ip) >= 2 * n and len(pk) == len(ip), "tshark: one packet per ip_hdr record (%d)" % len(pk), (len(pk), len(ip)))
cnt_p = Counter(p[8].split(" ")[0] for p in pk)
cnt_j = Counter(j["name"] for j in ip)
ok(cnt_p == cnt_j, "per event as many packets as records: %s" % dict(cnt_p), (cnt_p, cnt_j))
ifs = set((j["ip"]["ifindex"], j["name"]) for j in ip)
ok(set(p[0] for p in pk) == set("if%d:%s" % i for i in ifs), "one interface per (ifindex, event): %d" % len(ifs),
   set(p[0] for p in pk))
ok(all(p[1].replace(".", "") == str(j["wall_ns"]) for p, j in zip(pk, ip)), "packet times are the records' wall times",
   (pk[0][1], ip[0]["wall_ns"]))
ok(all(p[8] == "%s cpu=%d pid=%d tgid=%d socket=%d ifindex=%d len=%d" % (j["name"], j["cpu"], j["pid"], j["tgid"],
       j["abstract_id"], j["ip"]["ifindex"], j["ip"]["len"]) for p, j in zip(pk, ip)),
   "comments: event, CPU, pid, socket", pk[0][8:])
tcp = [p for p in pk if p[4] and p[5]]
fwd = [p for p in tcp if p[5] == "5001"]
rev = [p for p in tcp if p[4] == "5001"]
ok(len(tcp) == len(pk) and fwd and rev and all(p[2] == ipa and p[3] == ipb for p in fwd)
   and all(p[2] == ipb and p[3] == ipa for p in rev), "TCP between %s and %s:5001 both ways" % (ipa, ipb))
sport = set(p[4] for p in fwd)
ok(len(sport) == 1, "one connection (source port %s)" % sport)
data = sum(int(p[6]) - 20 - int(p[7]) for p in fwd if "ip_hdr_send" in p[8])
ok(data == n * 10240 + rb, "data bytes sent in the packets = %d x 10240 + %d retransmitted" % (n, rb), data)
ok(any(int(p[8].split("socket=")[1].split()[0]) == sino for p in fwd), "the sender's socket in comments")
# babeltrace2: the plugin's events, then the CTF trace's
import re
EV = re.compile(r"^\[(\d+)\] (\S+): \{ cpu_id = (\d+) \}, \{ abstract_id = (\d+), pid = (\d+), tgid = (\d+) \}")
def bt_events(path):
    return [l for l in open(path).read().splitlines() if l.startswith("[")]
bt = bt_events(R + "/conv.bt2")
want = [(j["time"], j["name"], j["cpu"], j["abstract_id"], j["pid"], j["tgid"]) for j in recs
        if j["name"] not in ("SYSINFO", "EVENTDEF", "LOST")]
got = []
for l in bt:
    m = EV.match(l)
    got.append((int(m[1]), m[2], int(m[3]), int(m[4]), int(m[5]), int(m[6])) if m else l)
ok(got == want, "babeltrace2: an event per record, in order, same time, CPU, socket, pid (%d)" % len(got),
   [(g, w) for g, w in zip(got, want) if g != w][:2] or (len(got), len(want)))
cnt_b = Counter(g[1] for g in got if isinstance(g, tuple))
ok(cnt_b == Counter(w[1] for w in want), "babeltrace2: per event as many as -j: %s" % dict(cnt_b))
ok(all("hdr_len = 40" in l and "data_len = 40" in l for l in bt if " ip_hdr_send: " in l),
   "babeltrace2: ip_hdr_send with its 40 packet bytes")
ok(any("next_comm = \"tcp_sender\"" in l for l in bt if " sched_switch: " in l),
   "babeltrace2: sched_switch names tcp_sender")
lost = sum(j["lost"]["count"] for j in recs if j["name"] == "LOST")
disc = sum(int(x) for x in re.findall(r"discarded (\d+) events", open(R + "/bt2.err").read()))
ok(disc == lost, "babeltrace2: discarded events = LOST records' count (%d)" % lost, disc)
ctf = bt_events(R + "/conv.ctf.txt")
# Events of different CPUs at the same nanosecond have no order between
# them: babeltrace2's muxer breaks such ties by stream, the plugin by
# record. So: each CPU's events in the same order, and at each time the
# same events.
def by_cpu(lines):
    d = {}
    for l in lines:
        m = EV.match(l)
        d.setdefault(m[3] if m else None, []).append(l)
    return d
def by_time(lines):
    d = {}
    for l in lines:
        d.setdefault(l.split("]")[0], []).append(l)
    return [(t, sorted(v)) for t, v in d.items()]
cb, cc = by_cpu(bt), by_cpu(ctf)
tb, tc = by_time(bt), by_time(ctf)
ok(len(ctf) == len(bt) and cc == cb and tc == tb,
   "CTF read by source.ctf.fs: the same %d events, each CPU's in order" % len(ctf),
   [(a, b) for k in cb for a, b in zip(cc.get(k, []), cb[k]) if a != b][:1]
   or [(a, b) for a, b in zip(tc, tb) if a != b][:1] or (len(ctf), len(bt)))
disc = sum(int(x) for x in re.findall(r"discarded (\d+) events", open(R + "/ctf.err").read()))
ok(disc == lost, "CTF: discarded events = LOST records' count (%d)" % lost, disc)
# plot: the data files hold the trace's values
def blocks(path):
    d, cur = {}, None
    for l in open(path).read().splitlines():
        if l.startswith("# SERIES "):
            cur = d.setdefault(l[9:], [])
        elif l.strip():
            cur.append([float(x) for x in l.split()])
    return d
import os
ok(all(os.path.getsize(R + f) > 1000 for f in ("/layers.png", "/tcp.svg", "/rate.png")), "plot: three images written")
lay = blocks(R + "/layers.png.dat")
mine = [j for j in recs if j["abstract_id"] == sino and j["name"] == "ip_hdr_send"]
ok(mine and [int(p[1]) for p in lay.get("ip_hdr_send", [])] == [j["ip"]["len"] for j in mine],
   "plot layers: the sender's ip_hdr_send lengths, in order (%d)" % len(mine),
   (len(lay.get("ip_hdr_send", [])), len(mine)))
tcpr = [j for j in recs if j["abstract_id"] == sino and j.get("tcp")]
tp = blocks(R + "/tcp.svg.dat").get("tcp", [])
ok(tcpr and [int(p[1]) for p in tp] == [j["tcp"]["snd_cwnd"] for j in tcpr],
   "plot tcp: the sender's snd_cwnd at each tcp_state record (%d)" % len(tcpr), (len(tp), len(tcpr)))
svg = open(R + "/tcp.svg").read()
ok(all("<text>%s</text>" % t in svg for t in ("snd_cwnd", "snd_ssthresh")),
   "plot tcp: the legend names snd_cwnd and snd_ssthresh as they are (no subscript)",
   [l for l in svg.splitlines() if "snd" in l][:4])
rt = blocks(R + "/rate.png.dat")
cpus = set("cpu%d" % j["cpu"] for j in recs if j["name"] not in ("SYSINFO", "EVENTDEF", "LOST"))
ok(set(rt) == cpus and all(len(v) == 200 for v in rt.values()), "plot rate: 200 bins for each CPU that recorded: %s" % sorted(rt),
   (sorted(rt), sorted(cpus)))
# perfetto: decoded with perfetto's own protos
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pp
pt = pp.Trace()
pt.ParseFromString(open(R + "/conv.pftrace", "rb").read())
tds = [k.track_descriptor for k in pt.packet if k.HasField("track_descriptor")]
tn = {d.uuid: d.name for d in tds}
tev = [k for k in pt.packet if k.HasField("track_event")]
inst = Counter(tn.get(k.track_event.track_uuid) for k in tev if k.track_event.type == pp.TrackEvent.TYPE_INSTANT)
wcpu = Counter("cpu %d" % j["cpu"] for j in recs if j["name"] not in ("SYSINFO", "EVENTDEF"))
ok(all(inst[k] == v for k, v in wcpu.items()), "perfetto: each CPU's track holds its records as instants: %s" % dict(wcpu),
   [(k, inst[k], v) for k, v in wcpu.items() if inst[k] != v][:3])
sock = "socket %d" % sino
ws = sum(1 for j in recs if j["abstract_id"] == sino and any(x in j for x in ("net", "app", "tcp", "ip")))
ok(ws and inst[sock] == ws, "perfetto: the sender's socket track holds its %d records" % ws, (inst[sock], ws))
cw = [k.track_event.double_counter_value for k in tev if tn.get(k.track_event.track_uuid) == sock + " snd_cwnd"]
ok(cw == [j["tcp"]["snd_cwnd"] for j in tcpr], "perfetto: the snd_cwnd counter follows the tcp_state records (%d)" % len(cw),
   (len(cw), len(tcpr)))
pn = set(d.process.process_name for d in tds if d.HasField("process")) | set(d.thread.thread_name for d in tds if d.HasField("thread"))
ok("tcp_sender" in pn, "perfetto: a process or thread named tcp_sender (from sched records)", sorted(pn)[:10])
print("# records %d, ip_hdr %d, packets %d, interfaces %d" % (len(recs), len(ip), len(pk), len(ifs)))
print("\n".join(out))
PY
tap_import "$R/check.tap" $?

check "stream delete conv" magnetctl stream delete conv
check "rmmod magnet_tcpip" rmmod magnet_tcpip
check "modules unload" magnet_unload
check_dmesg_clean
done_testing
