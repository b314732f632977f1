#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Synthesizers in a real kernel (docs/SYNTH.md).
#  1. Bad requests are refused with messages naming the problem.
#  2. TCP and UDP traffic between namespaces with a full trace of
#     sock_send and dev_send: synthesizers for bytes per socket per
#     period (payload len field), the interval between a socket's sends,
#     dev_send bytes per CPU and pid, record sizes per process; every
#     SYNTH record equals the statistics tests/tools/synth_check.py
#     recomputes from the full trace (integer moments exact, mean and
#     variance exact floors, libmagnet's doubles within 1e-9).  The open
#     period's values of one key (netlink query) equal the traffic sent.
#  3. A synthesizer on a point no stream has enabled: the hook attaches
#     for it, no stream sees an event, the values equal the traffic.
#  4. Deleting a synthesizer, and the stream another writes into, while
#     events flow: no crash, their records still equal the full trace.
#  5. rmmod with synthesizers present.
# Python starts once (it is slow in an emulated guest).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
need_magnet
need_tools
dmesg_mark
netns_setup || bail_out "network namespaces"
magnet_load || bail_out "cannot load the modules"
R=$MAGNET_RESULTS

record_start() { local s; for s; do bg "rec_$s" "$MAGNETCTL" record "$s" -o "$R/$s.trace"; done; sleep 0.5; }
record_stop() {
	local s
	for s; do kill -INT "${BG_PID[rec_$s]}" 2>/dev/null; done
	for s; do bg_wait "rec_$s" 30 || diag "recorder of $s: exit $?"; done
}
# refuse DESC EXIT REGEX magnetctl-ARGS...: the command fails with EXIT
# and its message matches REGEX.
refuse() {
	local desc=$1 want=$2 re=$3 msg rc
	shift 3
	msg=$("$MAGNETCTL" "$@" 2>&1)
	rc=$?
	if [ "$rc" = "$want" ] && grep -Eq -- "$re" <<<"$msg"; then
		ok "$desc"
		diag "  $msg"
	else
		not_ok "$desc" "exit $rc (want $want): $msg"
	fi
}
# jget JSON-FILE PYEXPR: evaluate PYEXPR with d = the parsed file
jget() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

for s in full syn syn2; do
	check "stream create $s" magnetctl stream create $s subbuf-size 1M subbuf-count 8
done

# ---- 1. bad input -------------------------------------------------------
refuse "unknown probe refused (exit 5: no such object)" 5 "no probe named 'nosuch'" \
	synth add x probe nosuch value size period 100ms stream syn
refuse "unknown stream refused" 5 "no stream named 'nosuch'" \
	synth add x probe sock_send value size period 100ms stream nosuch
refuse "field beyond the payload refused" 2 "field 14:4 lies beyond the 16-byte payload of probe 'sock_send'" \
	synth add x probe sock_send value field 14:4 period 100ms stream syn
refuse "field width 3 refused" 2 "field width 3: must be 1, 2, 4 or 8" \
	synth add x probe sock_send value field 0:3 period 100ms stream syn
refuse "period below 10 ms refused" 2 "period 1000000 ns: must be between" \
	synth add x probe sock_send value size period 1ms stream syn
refuse "too many keys refused" 2 "too many keys: 100000, at most 65536" \
	synth add x probe sock_send value size period 100ms stream syn keys 100000
refuse "bad name refused" 2 "bad synthesizer name '.x'" \
	synth add .x probe sock_send value size period 100ms stream syn
refuse "missing value: usage error" 1 "missing 'value" \
	synth add x probe sock_send period 100ms stream syn
refuse "bad group key: usage error" 1 "bad group key 'socket'" \
	synth add x probe sock_send by socket value size period 100ms stream syn
refuse "delete of an unknown synthesizer refused" 5 "no synthesizer named 'nosuch'" \
	synth del nosuch
check "synth add dup (valid)" magnetctl synth add dup probe sock_send by id value size period 100ms stream syn
refuse "duplicate name refused" 2 "synthesizer 'dup' already exists" \
	synth add dup probe sock_send value size period 100ms stream syn
refuse "query of a key that is not a group key refused" 2 "key 'cpu' is not a group key of synthesizer 'dup'" \
	synth show dup values cpu 0
refuse "query of a key never seen: ENOENT with a message" 5 "has seen no event of that key" \
	synth show dup values id 12345
refuse "values of an unknown synthesizer: the dump's error, not an empty list" 5 \
	"synth show nosuch: no synthesizer of that name" synth show nosuch values
# what magnetctl cannot send: a definition without its point, or with a
# name and an ID that disagree
GENL=(python3 "$MAGNET_REPO/tests/tools/genl_req.py")
out=$("${GENL[@]}" SYNTH_NEW SYNTH=nest:NAME=str:np,STREAM=str:syn,PERIOD=u64:100000000 2>&1)
check_eq "SYNTH_NEW without a point: EINVAL with a message" \
	"errno=22 msg=a probe name or ID is required" "$out"
out=$("${GENL[@]}" SYNTH_NEW SYNTH=nest:NAME=str:np,PROBE_NAME=str:sock_send,PROBE_ID=u32:1000,STREAM=str:syn,PERIOD=u64:100000000 2>&1)
if grep -qE "^errno=22 msg=probe 'sock_send' has ID [0-9]+, not 1000$" <<<"$out"; then
	ok "SYNTH_NEW whose name and ID disagree: EINVAL"
else
	not_ok "SYNTH_NEW whose name and ID disagree: EINVAL" "$out"
fi
check "synth del dup" magnetctl synth del dup
check_eq "no synthesizer left" "[]" "$(magnetctl -j synth list | tr -d ' \n')"
diag "phase 1 done at ${SECONDS}s"

# ---- 2. exactness against a full trace -------------------------------------
check "enable sock_send dev_send into full" magnetctl probe enable sock_send dev_send stream full
record_start full syn
check "synth bytes: sock_send by id, len field, 200 ms" \
	magnetctl synth add bytes probe sock_send by id value field 0:4 period 200ms stream syn
check "synth gaps: sock_send by id, interval, 200 ms" \
	magnetctl synth add gaps probe sock_send by id value interval period 200ms stream syn
check "synth devlen: dev_send by cpu,pid, len field, 100 ms" \
	magnetctl synth add devlen probe dev_send by cpu,pid value field 0:4 period 100ms stream syn
check "synth recsz: sock_send by tgid, record size, 300 ms" \
	magnetctl synth add recsz probe sock_send by tgid value size period 300ms stream syn
check "synth total: sock_send by id, len field, 1 h (the query)" \
	magnetctl synth add total probe sock_send by id value field 0:4 period 3600s stream syn keys 256
tcp_sink_start sink 5001 || bail_out "tcp_sink"
udp_sink_start usink 5002 || bail_out "udp_sink"
bg tcp in_a "$MAGNET_TOOLS/tcp_sender" -s 1000 -i 4 "$IP_B" 5001 150
bg udp in_a "$MAGNET_TOOLS/udp_flood" -t 60 -i 2000 "$IP_B" 5002 400 200
bg_wait tcp 60 || diag "tcp_sender: exit $?"
bg_wait udp 60 || diag "udp_flood: exit $?"
UINO=$(kv "$(out udp)" ino)
magnetctl -j synth list >"$R/spec_a.json"
magnetctl synth list | sed 's/^/# /'
magnetctl -j synth show total values >"$R/total_values.json"
magnetctl -j synth show total values id "$UINO" >"$R/total_one.json"
check_eq "query one key: the UDP socket's open-period count, sum, min, max, variance" \
	"400 80000 200 200 0 400" \
	"$(jget "$R/total_one.json" '" ".join(str(d[k]) for k in ("count", "sum_lo", "min", "max", "variance", "total_count"))')"
check_eq "the key dump holds the UDP socket's key with the same values" "400 80000" \
	"$(jget "$R/total_values.json" '" ".join(str(v["count"]) + " " + str(v["sum_lo"]) for v in d if v["id"] == '"$UINO"')')"
for s in bytes gaps devlen recsz total; do magnetctl synth del $s || not_ok "synth del $s"; done
check "disable sock_send dev_send" magnetctl probe disable sock_send dev_send
kill "${BG_PID[sink]}" "${BG_PID[usink]}" 2>/dev/null
record_stop full syn
diag "phase 2 done at ${SECONDS}s"

# ---- 3. a point no stream has enabled ------------------------------------
hits0=$(probe_hits udp_send)
prod0=$(magnetctl -j stream list | python3 -c 'import json,sys; print(sum(s["produced"] for s in json.load(sys.stdin)))')
record_start syn2
check "synth uonly: udp_send (enabled nowhere) by tgid, len field, 1 h" \
	magnetctl synth add uonly probe udp_send by tgid value field 0:4 period 3600s stream syn2
udp_sink_start usink2 5002 || bail_out "udp_sink"
check "UDP flood: 300 datagrams of 300 bytes" udp_send udp2 300 300
UPID=$(kv "$(out udp2)" pid)
kill "${BG_PID[usink2]}" 2>/dev/null
magnetctl -j synth show uonly values tgid "$UPID" >"$R/uonly.json"
check_eq "synthesizer-only point: the sender's 300 sends of 300 bytes counted" "300 90000 300 300" \
	"$(jget "$R/uonly.json" '" ".join(str(d[k]) for k in ("count", "sum_lo", "min", "max"))')"
magnetctl probe list | grep -E "udp_send" | sed 's/^/# /'
hits1=$(probe_hits udp_send)
[[ $hits0 =~ ^[0-9]+$ && $prod0 =~ ^[0-9]+$ ]] && ok "udp_send's hits ($hits0) and the streams' produced ($prod0) read" ||
	not_ok "udp_send's hits and the streams' produced read" "hits '$hits0' produced '$prod0'"
check_eq "udp_send offered nothing to any stream (hits unchanged)" "$hits0" "$hits1"
check "synth del uonly" magnetctl synth del uonly
record_stop syn2
prod1=$(magnetctl -j stream list | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(s["produced"] for s in d if s["name"] != "syn2"))')
check_eq "no stream but syn2 produced anything meanwhile" "$prod0" "$prod1"
check_eq "syn2 holds the final (partial) record: 300 sends, 90000 bytes" "uonly 300 90000 1" \
	"$(magnetctl -j dump "$R/syn2.trace" | python3 -c '
import json, sys
for l in sys.stdin:
    s = json.loads(l).get("synth")
    if s and s["tgid"] == '"$UPID"':
        print(s["name"], s["count"], s["sum_lo"], s["flags"] & 1)')"
diag "phase 3 done at ${SECONDS}s"

# ---- 4. deletion while events flow -----------------------------------------
for s in full2 s3 s4; do
	check "stream create $s" magnetctl stream create $s subbuf-size 1M subbuf-count 8
done
check "enable sock_send into full2" magnetctl probe enable sock_send stream full2
record_start full2 s3 s4
check "synth d1: sock_send by id, len, 20 ms -> s3" \
	magnetctl synth add d1 probe sock_send by id value field 0:4 period 20ms stream s3
check "synth d2: sock_send by pid, interval, 20 ms -> s4" \
	magnetctl synth add d2 probe sock_send by pid value interval period 20ms stream s4
magnetctl -j synth list >"$R/spec_c.json"
udp_sink_start usink3 5002 || bail_out "udp_sink"
bg flood in_a "$MAGNET_TOOLS/udp_flood" -t 60 -i 500 "$IP_B" 5002 6000 100
bg flood2 in_a "$MAGNET_TOOLS/udp_flood" -t 60 -i 700 "$IP_B" 5002 4000 64
wait_line "$(out flood)" '^pid=' 30 && wait_line "$(out flood2)" '^pid=' 30 ||
	diag "the floods did not start"
sleep 0.5
check "synth del d1 while events flow" magnetctl synth del d1
check "stream delete s4 (d2 writes into it) while events flow" magnetctl stream delete s4
check "both floods were still sending after the deletions" \
	kill -0 "${BG_PID[flood]}" "${BG_PID[flood2]}"
check_eq "d2 went with its stream" "[]" "$(magnetctl -j synth list | tr -d ' \n')"
bg_wait flood 60 || diag "flood: exit $?"
bg_wait flood2 60 || diag "flood2: exit $?"
kill "${BG_PID[usink3]}" 2>/dev/null
check "disable sock_send" magnetctl probe disable sock_send
record_stop full2 s3 s4
diag "phase 4 done at ${SECONDS}s"

# ---- the checks of phases 2 and 4 (one Python run) ------------------------
for t in syn s3 s4; do
	magnetctl -j dump "$R/$t.trace" >"$R/$t.jsonl" || not_ok "magnetctl dump $t"
	check "check_trace: $t is well formed (SYNTH records decoded)" \
		check_trace "$R/$t.trace"
done
python3 - "$R" >"$R/spec_all.json" <<'PY'
import json, sys
R = sys.argv[1]
print(json.dumps(json.load(open(R + "/spec_a.json")) + json.load(open(R + "/spec_c.json"))))
PY
python3 "$MAGNET_REPO/tests/tools/synth_check.py" --spec "$R/spec_all.json" \
	--full "$R/full.trace" --full "$R/full2.trace" \
	--synth "$R/syn.trace" --synth "$R/s3.trace" --synth "$R/s4.trace" \
	--dump "$R/syn.jsonl" --dump "$R/s3.jsonl" --dump "$R/s4.jsonl" \
	>"$R/synth_check.tap" 2>&1
tap_import "$R/synth_check.tap" $?

# ---- 5. rmmod with synthesizers present -------------------------------------
check "synth r1 on sock_send (probe module) -> syn" \
	magnetctl synth add r1 probe sock_send by id value size period 100ms stream syn
check "synth r2 on dev_send, enabled nowhere -> syn2" \
	magnetctl synth add r2 probe dev_send by cpu value size period 100ms stream syn2
udp_sink_start usink4 5002 || bail_out "udp_sink"
check "UDP flood with r1, r2 present" udp_send udp4 200 100
kill "${BG_PID[usink4]}" 2>/dev/null
check "rmmod of the modules with synthesizers present" magnet_unload
check_dmesg_clean
done_testing
