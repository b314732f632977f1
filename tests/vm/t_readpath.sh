#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The magnetfs read path in a real kernel (docs/IOCTL.md): a read that
# waits for the watermark, one released by the timeout (with data and with
# nothing), the minimum event count, O_NONBLOCK, poll and epoll readiness by
# the rule, SIGIO with si_fd (F_SETSIG), libaio completion, timeout and
# io_cancel, a process killed with reads in flight, reads in flight while
# the stream is deleted, io_cancel racing io_submit and racing the work
# item of a read with a long timeout, SIGIO again after a read that found
# nothing, an io_uring read, fio as a third-party libaio
# client, libmagnet's read(), libaio and io_uring readers draining a
# stream to its end with exact accounting, a span another file holds (it
# meets no reader's rule: the reader sleeps to its timeout), and bad input.  Events: the udp_send probe, fed by datagrams that
# tests/tools/readpath sends to 127.0.0.1:9.  Timing checks are generous
# lower bounds only.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
need_magnet
RP=$MAGNET_TOOLS/readpath
[ -x "$RP" ] || skip_all "$RP not built (libaio-dev, liburing-dev)"
dmesg_mark
magnet_load || bail_out "cannot load the modules"
R=$MAGNET_RESULTS

check "stream create rp" magnetctl stream create rp
check "enable udp_send into rp" magnetctl probe enable udp_send stream rp
F=/sys/kernel/debug/magnet/rp

# rp SUBTEST DESC: one readpath subtest, its measurements as diagnostics
rp() {
	local out rc=0
	out=$(timeout 60 "$RP" "$1" "$F" 2>&1) || rc=$?
	echo "$out" >"$R/rp-$1.out"
	if [ $rc -eq 0 ]; then
		ok "$2"
		diag "$1: $(grep -v '^ok$' <<<"$out" | tr '\n' ' ')"
	else
		not_ok "$2" "exit $rc" "$out"
	fi
}

rp watermark "read waits for the watermark"
rp timeout "timeout releases a read with what there is (whole records)"
rp timeout-empty "timeout with nothing there: ETIMEDOUT"
rp min-events "read waits for the minimum event count"
rp nonblock "O_NONBLOCK: EAGAIN until the rule is met"
rp poll "poll readiness by the rule"
rp epoll "epoll readiness by the rule"
rp sigio "SIGIO by the rule, F_SETSIG signal with si_fd"
rp sigio-eagain "SIGIO again after a read or GET_SPAN that found nothing (another file took the data)"
rp aio "libaio: io_submit returns at once, reads complete by the rule"
rp aio-timeout "libaio: timeout completes a read with ETIMEDOUT"
rp aio-cancel "libaio: io_cancel completes reads with ECANCELED"
rp aio-cancel-race "libaio: io_cancel racing io_submit, every read completes with ECANCELED (no lost cancel)"
rp aio-cancel-timed "libaio: a read with a 60 s timeout cancelled while its work runs completes with ECANCELED at once, its process exits"
rp uring "io_uring read completes by the rule"
rp badinput "bad input: ENOTTY, EINVAL for watermark, timeout, minimum count"
rp held-span "data in a span another file holds meets no rule: poll not readable, a read sleeps to its timeout (no spin)"
rp kicks "deferred wake-ups with and without a watermark (measured)"

# kill_in_flight MODE READY DESC: readpath MODE submits reads nobody
# completes; once it prints READY it is killed: it must die (status 137,
# no wait for the reads) and its stream file must close
kill_in_flight() {
	local mode=$1 ready=$2 desc=$3 rc readers
	bg kif "$RP" "$mode" "$F"
	if wait_line "$(out kif)" "$ready" 10; then
		kill -9 "${BG_PID[kif]}"
		bg_wait kif 20
		rc=$?
		[ $rc -eq 137 ] && ok "$desc" || not_ok "$desc" "status $rc"
	else
		not_ok "$desc" "$(cat "$(out kif)")"
	fi
	readers=$(magnetctl -j stream show rp | python3 -c 'import json,sys; d=json.load(sys.stdin); d=d.get("stream",d); print(d["readers"])')
	check_eq "$mode: its file is closed" 0 "$readers"
}

kill_in_flight aio-hang '^submitted=16' "process with 16 libaio reads in flight killed"
rp watermark "the stream reads on after that"
# the same with io_uring, also with IOSQE_ASYNC (its worker threads issue
# the reads without a non-blocking attempt): io_uring has no cancel
# callback for a queued read; the exiting task must not wait for reads
# nobody completes
for mode in uring-hang uring-hang-async; do
	kill_in_flight "$mode" '^submitted=' "$mode: process with io_uring reads in flight killed"
done
rp watermark "the stream reads on after the io_uring process"

# fio as a third-party libaio client.  It sizes its job by the file (stream
# files are zero-size debugfs files) and takes the short reads for an end.
# Traffic flows until fio is done, and fio has 120 s: in the debug kernel
# under TCG, with a fixed 4000 sends and 30 s, fio had not finished
# (2026-11-28; killed, it left no output to say where it waited)
if command -v fio >/dev/null; then
	python3 -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
while True:
    for i in range(100):
        s.sendto(b"x", ("127.0.0.1", 9))
    time.sleep(0.01)
' >/dev/null 2>&1 &
	tp=$!
	timeout -k 5 120 fio --name=rp --filename="$F" --ioengine=libaio --iodepth=4 \
		--rw=read --bs=16k --size=64k --readonly --invalidate=0 \
		--output-format=json --output="$R/fio.json" >"$R/fio.err" 2>&1
	frc=$?
	kill $tp 2>/dev/null
	wait $tp 2>/dev/null
	[ $frc -eq 0 ] || echo "fio: exit $frc (124: not done within 120 s)" >>"$R/fio.err"
	# fio counts a short read of a regular file as short, not as bytes
	got=$(python3 -c '
import json, sys
t = open(sys.argv[1]).read()
j = json.loads(t[t.index("{"):])["jobs"][0]
print(j["error"], j["read"]["total_ios"], j["read"]["short_ios"], j["read"]["io_bytes"])' "$R/fio.json" 2>/dev/null)
	read -r ferr fios fshort fbytes <<<"${got:-x 0 0 0}"
	if [ "$ferr" = 0 ] && [ "${fios:-0}" -gt 0 ]; then
		ok "fio --ioengine=libaio: its reads of the stream complete"
		diag "fio: ios=$fios short=$fshort io_bytes=$fbytes"
	else
		not_ok "fio --ioengine=libaio: its reads of the stream complete" "$(cat "$R/fio.err")" "$got"
	fi
else
	skip "fio --ioengine=libaio: its reads of the stream complete" "fio not installed"
fi

# magnetctl record on libaio with a read rule: nothing lost at SIGINT
bg recw magnetctl record rp -o "$R/wm.trace" --watermark 4K --timeout 200 --min-events 10
sleep 1
python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(500):
    s.sendto(b"x", ("127.0.0.1", 9))
'
sleep 0.5
kill -INT "${BG_PID[recw]}"
bg_wait recw 20
check_eq "record --watermark --timeout --min-events stops cleanly on SIGINT" 0 $?
n=$(dump_count "$R/wm.trace" udp_send)
[ "${n:-0}" -ge 500 ] && ok "record kept all 500 events ($n)" ||
	not_ok "record kept all 500 events" "got $n"
# send30: 30 udp_send events, about 1.5 KB: below any watermark used here
send30() {
	python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(30):
    s.sendto(b"x", ("127.0.0.1", 9))
'
}
# a tail below the watermark, no timeout in sight: the drain at SIGINT
# still reads it (the rule is lifted for the drain)
bg recd magnetctl record rp -o "$R/tail.trace" --watermark 4K --timeout 60000
sleep 1
send30
kill -INT "${BG_PID[recd]}"
bg_wait recd 20
check_eq "record with a 60 s timeout stops at once on SIGINT" 0 $?
check_eq "record kept the 30 events below the watermark" 30 \
	"$(dump_count "$R/tail.trace" udp_send)"
# without options record batches: a quarter of a CPU's ring (at most 256 KiB) or
# 200 ms, and says so
ring=$(magnetctl -j stream show rp | python3 -c 'import json,sys; d=json.load(sys.stdin); d=d.get("stream",d); print(d["subbuf_size"] * d["subbuf_count"])')
wm=$((ring / 4 < 262144 ? ring / 4 : 262144))
# rec30 NAME [OPTIONS]: magnetctl -j record rp into $R/NAME.trace around
# send30, stopped by SIGINT; rule_of NAME: "watermark timeout min-events"
# from its JSON summary
rec30() {
	local name=$1
	shift
	bg "$name" "$MAGNETCTL" -j record rp -o "$R/$name.trace" "$@"
	sleep 1
	send30
	kill -INT "${BG_PID[$name]}"
	bg_wait "$name" 20
}
rule_of() {
	python3 -c 'import json,sys; d=[json.loads(l) for l in sys.stdin if l.startswith("{")][-1]; print(d["watermark"], d["timeout_ms"], d["min_events"])' <"$(out "$1")" 2>&1
}
rec30 recdef
check_eq "record's default rule: watermark $wm, timeout 200 ms, min-events 0" "$wm 200 0" "$(rule_of recdef)"
check_eq "record's default rule kept the 30 events" 30 \
	"$(dump_count "$R/recdef.trace" udp_send)"
# --watermark 0: the kernel's rule, a read per record
rec30 rec0 --watermark 0
check_eq "record --watermark 0: the kernel's rule (watermark 0, no timeout)" "0 0 0" "$(rule_of rec0)"
check_eq "record --watermark 0 kept the 30 events" 30 \
	"$(dump_count "$R/rec0.trace" udp_send)"
# --switch-timer: the default watermark, the timer as timeout; events far
# below the watermark reach the file while the recorder still runs (live
# viewing), not only at the stop
bg recsw "$MAGNETCTL" -j record rp -o "$R/recsw.trace" --switch-timer 100
sleep 1
send30
n=0
for i in $(seq 1 100); do
	# a failed dump (the file cut inside a record) reads as no count yet
	n=$(dump_count "$R/recsw.trace" udp_send)
	[ "$n" -ge 30 ] 2>/dev/null && break
	sleep 0.2
done
kill -0 "${BG_PID[recsw]}" 2>/dev/null && running=yes || running=no
check_eq "record --switch-timer 100: the 30 events are in the file while it records" "30 yes" "$n $running"
kill -INT "${BG_PID[recsw]}"
bg_wait recsw 20
check_eq "record --switch-timer stops cleanly" 0 $?
check_eq "record --switch-timer 100: watermark $wm, timeout 100 ms" "$wm 100 0" "$(rule_of recsw)"
magnetctl record rp -o "$R/bad.trace" --switch-timer 100 --timeout 5 >/dev/null 2>"$R/bad.err"
rc=$?
[ $rc -eq 1 ] && grep -q "give one of --switch-timer and --timeout" "$R/bad.err" &&
	ok "record refuses --switch-timer with --timeout" ||
	not_ok "record refuses --switch-timer with --timeout" "exit $rc: $(cat "$R/bad.err")"
magnetctl record rp -o "$R/bad.trace" --watermark 1M >/dev/null 2>"$R/bad.err"
rc=$?
[ $rc -eq 1 ] && grep -q "read rule" "$R/bad.err" && ok "record refuses a watermark above the ring" ||
	not_ok "record refuses a watermark above the ring" "exit $rc: $(cat "$R/bad.err")"

# reads in flight while the stream is deleted: they complete, then EOF
bg eof "$RP" aio-eof "$F"
wait_line "$(out eof)" '^submitted=4' 10
sleep 0.5
check "stream delete with reads in flight" magnetctl stream delete rp
bg_wait eof 30
check_eq "reads in flight complete after the deletion" 0 $?
grep -q '^completed=4' "$(out eof)" || diag "$(cat "$(out eof)")"

# libmagnet's three read paths as a client (tests/tools/stream_drain): read
# until the stream ends, every record whole, each CPU's records in time
# order across reads, exact accounting: the events
# read are the events written, the LOST records add up to the losses.  A
# 2 x 16 KiB ring and a burst of 3000 datagrams make some loss likely.
SD=$MAGNET_TOOLS/stream_drain
for m in read aio uring span; do
	if [ ! -x "$SD" ]; then
		skip "stream_drain -m $m: exact accounting" "$SD not built"
		continue
	fi
	magnetctl stream create "dr$m" subbuf-size 16K subbuf-count 2 >/dev/null &&
		magnetctl probe enable udp_send stream "dr$m" >/dev/null ||
		{ not_ok "stream_drain -m $m: set-up" "stream dr$m"; continue; }
	bg "drain$m" "$SD" -m "$m" -d 4 -b 8192 /sys/kernel/debug/magnet/"dr$m"
	sleep 0.5
	python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(3000):
    s.sendto(b"x", ("127.0.0.1", 9))
'
	sleep 0.5
	magnetctl probe disable udp_send >/dev/null
	magnetctl stream flush "dr$m" >/dev/null
	magnetctl -j stream show "dr$m" >"$R/dr$m.json"
	magnetctl stream delete "dr$m" >/dev/null
	bg_wait "drain$m" 30
	rc=$?
	o=$(out "drain$m")
	read -r written lost < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); d = d.get("stream", d)
print(d["written"], d["lost"])' "$R/dr$m.json")
	ev=$(kv "$o" events); lr=$(kv "$o" lost_reported); bad=$(kv "$o" bad)
	dis=$(kv "$o" disorder)
	if [ $rc -eq 0 ] && [ "$ev" = "$written" ] && [ "$lr" = "$lost" ] &&
		[ "$bad" = 0 ] && [ "$dis" = 0 ] && [ $((written + lost)) -ge 3000 ]; then
		ok "stream_drain -m $m: all $written events read whole and in order, $lost lost reported"
		diag "$m: $(cat "$o")"
	else
		not_ok "stream_drain -m $m: exact accounting" \
			"exit $rc; stream written=$written lost=$lost" "$(cat "$o")"
	fi
done

# the span consumer (magnetctl record) with its stream deleted under it:
# it takes what is left, then ends by itself, exit 0, the trace whole
check "stream create rdel" magnetctl stream create rdel subbuf-size 16K subbuf-count 2
check "enable udp_send into rdel" magnetctl probe enable udp_send stream rdel
bg recdel "$MAGNETCTL" -j record rdel -o "$R/recdel.trace"
record_started recdel
send30
check "stream delete rdel under the recorder" magnetctl stream delete rdel
bg_wait recdel 30
check_eq "record ends by itself when its stream is deleted (exit 0)" 0 $?
check_eq "record of the deleted stream kept the 30 events" 30 \
	"$(dump_count "$R/recdel.trace" udp_send)"
check "the deleted stream's trace is well formed (check_trace)" check_trace "$R/recdel.trace"

check "modules unload" magnet_unload
check_dmesg_clean
done_testing
