#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's own YNL CLI (tools/net/ynl/cli.py, from linux-source-6.12 by
# scripts/ynl-tools.sh) drives MAGNET's generic netlink family from
# docs/magnet.yaml alone, and agrees with magnetctl:
#  - status-get: version, ABI, counts as magnetctl -j status;
#  - probe-get dump: the probes magnetctl lists, with their layers;
#  - stream-new with sizes, then stream-get: what magnetctl shows;
#    stream-new of a taken name: the kernel's extack message reaches ynl;
#  - stream-get dump, as JSON: every stream, with the sizes and clock
#    magnetctl -j stream list shows (ynl0 and one magnetctl made);
#  - probe-enable / probe-disable into that stream; stream-del;
#  - every other operation, through the library cli.py fronts
#    (tools/net/ynl/lib) in one process: stream-flush, stream-snapshot
#    (freeze, resume, stream-get shows it); a filter, a synthesizer and a
#    correlator on one UDP socket's 9 datagrams of 100 bytes (filter-get: 9
#    matched, 3 delivered with every 3; synth-get values: 9 x 100 bytes;
#    corr-get: 9 chains udp_send -> ip_send), their dumps, deletion;
#    kprobe-new / kprobe-del with probe-new-ntf / probe-del-ntf on the
#    probes group; errors with their errno and extack message;
#  - the operations exercised are exactly those of docs/magnet.yaml, so an
#    operation added to the spec without a test here fails it.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
need_magnet
need_cmd python3
CLI=${MAGNET_YNL_CLI:-$MAGNET_BUILD/ynl/tools/net/ynl/cli.py}
[ -e "$CLI" ] || bail_out "no ynl CLI at $CLI (scripts/ynl-tools.sh)"
dmesg_mark
magnet_load || bail_out "cannot load the modules"
R=$MAGNET_RESULTS
: >"$R/ops.log"

# ynl ARGS...: the CLI on docs/magnet.yaml; the operation of a --do or
# --dump that succeeds goes into $R/ops.log (the coverage check at the end)
ynl() {
	local a op="" rc
	for a in "$@"; do
		[ "$op" = next ] && op=$a
		case $a in --do|--dump) op=next ;; esac
	done
	python3 "$CLI" --spec "$MAGNET_REPO/docs/magnet.yaml" \
		--schema "$MAGNET_REPO/tests/netlink/genetlink-c.yaml" --output-json "$@"
	rc=$?
	[ "$rc" -eq 0 ] && [ -n "$op" ] && echo "$op" >>"$R/ops.log"
	return "$rc"
}
# ynl_to FILE ARGS...: ynl's output into FILE
ynl_to() { local f=$1; shift; ynl "$@" >"$f"; }

check "ynl status-get" ynl_to "$R/status.ynl" --do status-get
magnetctl -j status >"$R/status.mc"
check "ynl probe-get (dump)" ynl_to "$R/probes.ynl" --dump probe-get
magnetctl -j probe list >"$R/probes.mc"
check "ynl stream-new ynl0 (64 KiB x 4)" ynl_to "$R/new.ynl" --do stream-new \
	--json '{"stream-name": "ynl0", "stream-subbuf-size": 65536, "stream-subbuf-count": 4}'
ynl --do stream-new --json '{"stream-name": "ynl0"}' >"$R/dup.ynl" 2>&1
check_eq "ynl stream-new of a taken name fails" 1 $(($? != 0))
check "  ... with the kernel's message" grep -q "stream 'ynl0' already exists" "$R/dup.ynl"
check "ynl stream-get ynl0" ynl_to "$R/stream.ynl" --do stream-get --json '{"stream-name": "ynl0"}'
magnetctl -j stream show ynl0 >"$R/stream.mc"
check "magnetctl stream create ynl1 (16 KiB x 8, local clock)" \
	magnetctl stream create ynl1 subbuf-size 16K subbuf-count 8 clock local
check "ynl stream-get (dump)" ynl_to "$R/streams.ynl" --dump stream-get
magnetctl -j stream list >"$R/streams.mc"
check "magnetctl stream delete ynl1" magnetctl stream delete ynl1
check "ynl probe-enable udp_send into ynl0" ynl_to /dev/null --do probe-enable \
	--json '{"probe-name": "udp_send", "stream-name": "ynl0"}'
magnetctl -j probe list >"$R/probes-en.mc"
check "ynl probe-disable udp_send" ynl_to /dev/null --do probe-disable --json '{"probe-name": "udp_send"}'
magnetctl -j probe list >"$R/probes-dis.mc"
check "ynl stream-del ynl0" ynl_to /dev/null --do stream-del --json '{"stream-name": "ynl0"}'
msg=$("$MAGNETCTL" stream show ynl0 2>&1)
check_eq "magnetctl: stream ynl0 is gone (exit 5: no such stream)" 5 $?
diag "$msg"

python3 - "$R" >"$R/check.tap" <<'PY'
import json, sys
R = sys.argv[1]
out = []
def ok(cond, what, why=""):
    out.append(("ok" if cond else "not ok") + " - " + what + ("" if cond else " # " + str(why)[:300]))
def load(f):
    return json.load(open(R + "/" + f))
def one(d):
    return d[0] if isinstance(d, list) else d.get("stream", d) if isinstance(d, dict) else d
y, m = load("status.ynl"), load("status.mc")
ok(y.get("version") == m.get("version") and y.get("abi-version") == m.get("abi")
   and y.get("nr-probes") == m.get("probes", m.get("nr_probes")) and y.get("nr-cpus") == m.get("cpus", m.get("nr_cpus")),
   "status-get = magnetctl status (version %s, ABI %s)" % (y.get("version"), y.get("abi-version")), (y, m))
yp = load("probes.ynl")
mp = load("probes.mc")
ok(sorted(p["probe-name"] for p in yp) == sorted(p["name"] for p in mp),
   "probe-get dump: the %d probes magnetctl lists" % len(mp), (len(yp), len(mp)))
ys, ms = load("stream.ynl"), one(load("stream.mc"))
ok(ys.get("stream-subbuf-size") == 65536 == ms["subbuf_size"] and ys.get("stream-subbuf-count") == 4 == ms["subbuf_count"],
   "stream-get ynl0: 64 KiB x 4, as magnetctl shows", (ys, ms))
yd = {s["stream-name"]: s for s in load("streams.ynl")}
md = load("streams.mc")
md = {s["name"]: s for s in (md.get("streams", md) if isinstance(md, dict) else md)}
ok(sorted(yd) == sorted(md) == ["ynl0", "ynl1"]
   and all(yd[n].get("stream-subbuf-size") == md[n]["subbuf_size"] and
           yd[n].get("stream-subbuf-count") == md[n]["subbuf_count"] for n in md)
   and (yd["ynl1"].get("stream-subbuf-size"), yd["ynl1"].get("stream-subbuf-count")) == (16384, 8)
   and yd["ynl0"].get("stream-clock") != yd["ynl1"].get("stream-clock"),
   "stream-get dump: ynl0 and ynl1 with magnetctl's sizes (64 KiB x 4, 16 KiB x 8), the clocks apart", (yd, md))
en = {p["name"]: p for p in load("probes-en.mc")}
dis = {p["name"]: p for p in load("probes-dis.mc")}
ok(en["udp_send"]["enabled"] and en["udp_send"].get("stream") == "ynl0", "probe-enable: udp_send records into ynl0", en["udp_send"])
ok(not dis["udp_send"]["enabled"], "probe-disable: udp_send off", dis["udp_send"])
print("\n".join(out))
PY
tap_import "$R/check.tap" $?

# --- every other operation of the spec, each with what the code gives ---
# filters, synthesizers and a correlator on a UDP socket's 9 datagrams of
# 100 bytes to 127.0.0.1, snapshot and flush, run-time kprobes and the
# probes group's notifications, errors with their errno and extack
# message; then the operations exercised (here and above) must be those
# of docs/magnet.yaml
python3 - "$R" "$CLI" "$MAGNET_REPO/docs/magnet.yaml" \
	"$MAGNET_REPO/tests/netlink/genetlink-c.yaml" >"$R/ops.tap" <<'PY'
import errno, os, socket, sys, time
import yaml
R, CLI, SPEC, SCHEMA = sys.argv[1:5]
# the library cli.py is a front end of (tools/net/ynl/lib), in this one
# process: a cli.py start costs seconds under TCG
sys.path.insert(0, os.path.dirname(CLI))
from lib import YnlFamily, NlError
fam = YnlFamily(SPEC, SCHEMA)
lis = YnlFamily(SPEC, SCHEMA)   # a member of the probes group
lis.ntf_subscribe("probes")
out = []
done = set()          # operations that succeeded here
def ok(cond, what, why=""):
    out.append(("ok" if cond else "not ok") + " - " + what + ("" if cond else " # " + str(why)[:400].replace("\n", " ")))
    return cond
class Failed(Exception):
    pass
def call(op, js=None, dump=False):
    """op's reply (None: an ack; a list: a dump)"""
    try:
        r = fam.dump(op, js or {}) if dump else fam.do(op, js or {})
    except NlError as e:
        raise Failed("%s %s: %s" % (op, js, e))
    done.add(op)
    return r
def ntf():
    """the notifications the probes group got since the last call"""
    lis.check_ntf()
    q = list(lis.async_msg_queue)
    lis.async_msg_queue.clear()
    return q
def fails(op, js, err, msg, what):
    try:
        r = fam.do(op, js)
        ok(False, "%s %s: %s, '%s'" % (op, what, errno.errorcode[err], msg), "succeeded: %s" % r)
    except NlError as e:
        got = e.nl_msg.extack.get("msg") if e.nl_msg.extack else None
        ok((e.error, got) == (err, msg), "%s %s: %s, '%s'" % (op, what, errno.errorcode[err], msg),
           "%s, '%s'" % (errno.errorcode.get(e.error, e.error), got))

try:
    pid = {n: call("probe-get", {"probe-name": n})["probe-id"] for n in ("udp_send", "ip_send")}
    call("stream-new", {"stream-name": "ys", "stream-subbuf-size": 65536, "stream-subbuf-count": 4})
    call("stream-new", {"stream-name": "yfr", "stream-subbuf-size": 65536, "stream-subbuf-count": 4, "stream-mode": 2})

    # stream-flush
    ok(call("stream-flush", {"stream-name": "ys"}) is None, "stream-flush ys: an ack")
    fails("stream-flush", {"stream-name": "nosuch"}, errno.ENOENT, "no stream named 'nosuch'", "of an unknown stream")

    # stream-snapshot: freeze, resume; the stream shows it
    ok(call("stream-snapshot", {"stream-name": "yfr", "stream-snapshot": 1}) is None
       and call("stream-get", {"stream-name": "yfr"}).get("stream-frozen") == 1,
       "stream-snapshot yfr freeze: stream-get shows it frozen")
    fails("stream-snapshot", {"stream-name": "yfr", "stream-snapshot": 1}, errno.EBUSY,
          "stream 'yfr' is frozen already (a snapshot is being taken; resume it first)", "freeze of a frozen stream")
    ok(call("stream-snapshot", {"stream-name": "yfr", "stream-snapshot": 2}) is None
       and call("stream-get", {"stream-name": "yfr"}).get("stream-frozen") == 0,
       "stream-snapshot yfr resume: not frozen any more")
    fails("stream-snapshot", {"stream-name": "yfr", "stream-snapshot": 2}, errno.EINVAL,
          "stream 'yfr' is not frozen: nothing to resume", "resume of a running stream")
    fails("stream-snapshot", {"stream-name": "ys", "stream-snapshot": 1}, errno.EINVAL,
          "stream 'ys' is not in overwrite mode: only overwrite streams (flight recorders) take snapshots; read it instead",
          "of a stream without the overwrite mode")
    fails("stream-snapshot", {"stream-name": "yfr", "stream-snapshot": 3}, errno.EINVAL,
          "snapshot operation 3: must be 1 (freeze) or 2 (resume)", "operation 3")

    # a filter, a synthesizer and a correlator on one UDP socket
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    ino = os.fstat(s.fileno()).st_ino
    call("probe-enable", {"probe-name": "udp_send", "stream-name": "ys"})
    call("filter-new", {"filter": {"name": "yf", "event": pid["udp_send"], "abstract-id": ino, "sample-every": 3,
                                   "stream": ["ys"]}})
    fails("filter-new", {"filter": {"name": "yf", "event": pid["udp_send"]}}, errno.EEXIST,
          "filter 'yf' already exists", "of a taken name")
    call("synth-new", {"synth": {"name": "ysb", "probe-name": "udp_send", "abstract-id": ino, "group": 4,
                                 "quantity": 1, "field-offset": 0, "field-width": 4,
                                 "period": 3600 * 10**9, "stream": "ys"}})
    fails("synth-new", {"synth": {"name": "ysb2", "probe-name": "udp_send", "quantity": 0, "period": 10**6,
                                  "stream": "ys"}}, errno.EINVAL,
          "period 1000000 ns: must be between 10000000 ns (10 ms) and 3600000000000 ns (1 h)", "with a 1 ms period")
    call("corr-new", {"corr": {"name": "yc", "step": [{"event": [pid["udp_send"]]}, {"event": [pid["ip_send"]]}],
                               "window": 50 * 10**6, "stream": "ys"}})
    fails("corr-new", {"corr": {"name": "yc2", "step": [{"event": [pid["udp_send"]]}, {"event": [1000]}],
                                "window": 50 * 10**6, "stream": "ys"}}, errno.ENOENT,
          "unknown point: no probe has event ID 1000", "with an event ID no probe has")
    for i in range(9):
        s.sendto(b"m" * 100, ("127.0.0.1", 9))
    s.close()

    f = call("filter-get", {"filter": {"name": "yf"}})["filter"]
    ok((f["name"], f["event"], f["abstract-id"], f["sample-every"], f["stream"]) == ("yf", pid["udp_send"], ino, 3, ["ys"])
       and (f["matched"], f["delivered"], f["dropped"]) == (9, 3, 6),
       "filter-get yf: its keys, every 3 into ys; the socket's 9 udp_send matched, 3 delivered, 6 dropped", f)
    fd = call("filter-get", dump=True)
    ok([x["filter"]["name"] for x in fd] == ["yf"], "filter-get dump: yf", fd)

    y = call("synth-get", {"synth": {"name": "ysb"}})["synth"]
    ok((y["name"], y["probe-name"], y["abstract-id"], y["group"], y["quantity"], y["field-width"], y["period"], y["stream"])
       == ("ysb", "udp_send", ino, 4, 1, 4, 3600 * 10**9, "ys") and y["matched"] == 9 and y["keys"] == 1,
       "synth-get ysb: its definition; 9 events matched, 1 key", y)
    v = call("synth-get", {"synth": {"name": "ysb", "values": True}}, dump=True)
    v = [x["synth"] for x in v]
    ok(len(v) == 1 and v[0]["key-abstract-id"] == ino and v[0]["v-count"] == 9 and v[0]["v-sum-lo"] == 900
       and v[0]["v-min"] == v[0]["v-max"] == 100,
       "synth-get dump of ysb's values: the socket's key, 9 x 100 bytes", v)

    c = None
    for _ in range(100):      # magnetk reads the correlator's stream 10 ms behind
        c = call("corr-get", {"corr": {"name": "yc"}})["corr"]
        if c.get("completed", 0) >= 9:
            break
        time.sleep(0.1)
    ok(c["name"] == "yc" and [st["event"] for st in c["step"]] == [[pid["udp_send"]], [pid["ip_send"]]]
       and c["window"] == 50 * 10**6 and c["stream"] == "ys" and c["completed"] == 9,
       "corr-get yc: steps udp_send, ip_send, window 50 ms; the 9 sends completed", c)
    cd = call("corr-get", dump=True)
    ok([x["corr"]["name"] for x in cd] == ["yc"], "corr-get dump: yc", cd)

    ok(call("filter-del", {"filter": {"name": "yf"}}) is None, "filter-del yf")
    fails("filter-get", {"filter": {"name": "yf"}}, errno.ENOENT, "no filter named 'yf'", "after the deletion")
    fails("filter-del", {"filter": {"name": "yf"}}, errno.ENOENT, "no filter named 'yf'", "again")
    ok(call("filter-get", dump=True) == [], "filter-get dump: none left")
    ok(call("synth-del", {"synth": {"name": "ysb"}}) is None, "synth-del ysb")
    fails("synth-get", {"synth": {"name": "ysb"}}, errno.ENOENT, "no synthesizer named 'ysb'", "after the deletion")
    ok(call("synth-get", dump=True) == [], "synth-get dump: none left")
    ok(call("corr-del", {"corr": {"name": "yc"}}) is None, "corr-del yc")
    fails("corr-get", {"corr": {"name": "yc"}}, errno.ENOENT, "no correlator named 'yc'", "after the deletion")
    ok(call("corr-get", dump=True) == [], "corr-get dump: none left")
    call("probe-disable", {"probe-name": "udp_send"})

    # run-time kprobes, with the probes group listening
    ntf()
    k = call("kprobe-new", {"kprobe": {"name": "ykw", "symbol": "vfs_write", "args": 5}})
    ok(k["probe-name"] == "ykw" and "vfs_write" in k["probe-hook"] and 16 <= k["probe-id"] <= 1023,
       "kprobe-new ykw on vfs_write: its event ID %s and hook" % k.get("probe-id"), k)
    q = ntf()
    if ok([(n["name"], n["msg"].get("probe-name"), n["msg"].get("probe-id")) for n in q] == [("probe-new-ntf", "ykw", k["probe-id"])],
       "probe-new-ntf on the probes group: ykw, its event ID", q):
        done.add("probe-new-ntf")
    g = call("probe-get", {"probe-name": "ykw"})
    ok(g["probe-id"] == k["probe-id"] and g["probe-hook"] == k["probe-hook"], "probe-get ykw: the same point", g)
    fails("kprobe-new", {"kprobe": {"name": "ykw", "symbol": "vfs_read"}}, errno.EEXIST,
          "a probe named 'ykw' already exists", "of a taken name")
    try:
        fam.do("kprobe-new", {"kprobe": {"name": "ykx", "symbol": "magnet_no_such_function"}})
        e = None
    except NlError as x:
        e = x
    ok(e is not None and e.error > 0 and (e.nl_msg.extack or {}).get("msg", "").startswith(
       "cannot attach kprobe:magnet_no_such_function: ") and ntf() == [],
       "kprobe-new of a symbol the kernel lacks: 'cannot attach kprobe:magnet_no_such_function: ...', no point made",
       e)
    d = call("kprobe-del", {"kprobe": {"name": "ykw"}})
    q = ntf()
    if ok(d is None and [(n["name"], n["msg"].get("probe-name"), n["msg"].get("probe-id")) for n in q] == [("probe-del-ntf", "ykw", k["probe-id"])],
       "kprobe-del ykw; probe-del-ntf on the probes group: ykw, its event ID", q):
        done.add("probe-del-ntf")
    fails("probe-get", {"probe-name": "ykw"}, errno.ENOENT, "no probe named 'ykw'", "after kprobe-del")
    fails("kprobe-del", {"kprobe": {"name": "ykw"}}, errno.ENOENT, "no run-time kprobe named 'ykw'", "again")

    ok(call("stream-del", {"stream-name": "ys"}) is None and call("stream-del", {"stream-name": "yfr"}) is None,
       "stream-del ys and yfr")
except Exception as e:       # a failed operation, or a reply without what it should hold
    ok(False, "the operations ran", repr(e))
finally:
    # what a failure above left behind (deleting the streams deletes their synthesizers)
    for op, js in (("filter-del", {"filter": {"name": "yf"}}), ("corr-del", {"corr": {"name": "yc"}}),
                   ("kprobe-del", {"kprobe": {"name": "ykw"}}), ("probe-disable", {"probe-name": "udp_send"}),
                   ("stream-del", {"stream-name": "ys"}), ("stream-del", {"stream-name": "yfr"})):
        try:
            fam.do(op, js)
        except NlError:
            pass

# every operation of the spec, none more
spec = [o["name"] for o in yaml.safe_load(open(SPEC))["operations"]["list"]]
seen = done | {l.strip() for l in open(R + "/ops.log") if l.strip()}
ok(sorted(seen) == sorted(spec),
   "the %d operations exercised are docs/magnet.yaml's %d" % (len(seen), len(spec)),
   "not exercised: %s; not in the spec: %s" % (sorted(set(spec) - seen), sorted(seen - set(spec))))
print("\n".join(out))
PY
tap_import "$R/ops.tap" $?
check "modules unload" magnet_unload
check_dmesg_clean
done_testing
