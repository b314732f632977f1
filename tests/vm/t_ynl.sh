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
#  - probe-enable / probe-disable into that stream; stream-del.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
need_magnet
need_cmd python3
CLI=${MAGNET_YNL_CLI:-$MAGNET_BUILD/ynl/tools/net/ynl/cli.py}
[ -e "$CLI" ] || bail_out "no ynl CLI at $CLI (scripts/ynl-tools.sh)"
dmesg_mark
magnet_load || bail_out "cannot load the modules"
R=$MAGNET_RESULTS

ynl() {
	python3 "$CLI" --spec "$MAGNET_REPO/docs/magnet.yaml" \
		--schema "$MAGNET_REPO/tests/netlink/genetlink-c.yaml" --output-json "$@"
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
check "modules unload" magnet_unload
check_dmesg_clean
done_testing
