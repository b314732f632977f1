#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Correlators (docs/CORRELATE.md) in a real kernel.  A correlator pairs each
# send's events at the transport, IP, device and socket layers per socket
# and writes one CORR record per send with the time spent between layers.
#  1. Points nobody enabled get their hooks for a correlator alone; the
#     kernel reader's accounting is exact (events read = written into the
#     internal stream = its "read" counter, nothing lost).
#  2. UDP datagrams and paced 10 KB TCP writes between two namespaces: the
#     full trace of the points (a user stream, magnetctl record) paired in
#     user space (tests/tools/corr_pair.py) gives exactly the correlator's
#     records (same chains, timestamps, counts, bytes), for the send path
#     and for the receive path (dev_recv, ip_recv, udp_recv|tcp_recv,
#     sock_recv keyed by the receiving socket).
#  2b. The same chain against each send's own times: 20 paced 10 KB TCP
#     writes (TCP_NODELAY, no autocorking) and 100 UDP datagrams, each timed by its sender, each one
#     complete chain whose transport step and sock_send lie inside that
#     send's call, sock_send after dev_send (6.1 and 6.12 alike).
#  3. Deleting the correlator, and the stream it writes to, while traffic
#     flows: its last records are read, nothing lost, the recorder ends.
#  4. Bad requests are refused with messages; root has all 16 correlators
#     while an unprivileged watch has sockstat's internal ones; rmmod with
#     a correlator.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
need_magnet
need_tools tcp_sender tcp_sink udp_flood udp_sink sock_client
dmesg_mark

netns_setup || bail_out "network namespaces"
magnet_load || bail_out "cannot load the modules"

R=$MAGNET_RESULTS
PAIR=(python3 "$MAGNET_REPO/tests/tools/corr_pair.py")
WINDOW=50000000		# 50 ms
CHAIN="udp_send|tcp_send,ip_send,dev_send,sock_send"
# the receive path: dev_recv and ip_recv carry the receiving socket's ID
RXCHAIN="dev_recv,ip_recv,udp_recv|tcp_recv,sock_recv"

# jget JSON KEY: a top-level (or first-object) value; "no-KEY" when JSON
# has none (two missing values never compare equal)
jget() {
	python3 -c '
import json, sys
try:
    d = json.loads(sys.argv[1])
    if isinstance(d, list): d = d[0]
    for k in ("corr", "stream"):
        if isinstance(d, dict) and k in d and isinstance(d[k], dict): d = d[k]
    print(d[sys.argv[2]])
except Exception as e:
    print("no-%s(%s)" % (sys.argv[2], type(e).__name__))' "$1" "$2"
}

# --- 1. hooks for the correlator alone; the kernel reader's accounting --
check "stream create c0out" magnetctl stream create c0out
check "correlate add c0: udp_send,ip_send,dev_send (no user stream has them)" \
	magnetctl correlate add c0 chain udp_send,ip_send,dev_send window 20ms stream c0out
en=$(magnetctl -j probe list | python3 -c '
import json, sys
ps = json.load(sys.stdin); ps = ps["probes"] if isinstance(ps, dict) else ps
print(sum(1 for p in ps if p["name"] in ("udp_send", "ip_send", "dev_send") and p["enabled"]))')
check_eq "the points are not enabled into any user stream" 0 "$en"
udp_sink_start us0 5002 || bail_out "udp_sink did not start"
check "UDP: 300 datagrams of 500 bytes, 1 ms apart" udp_send u0 300 500 -i 1000
bg_wait us0 10
sleep 0.5
j=$(magnetctl -j correlate show c0)
echo "$j" >"$R/c0.json"
diag "c0: $j"
ev=$(jget "$j" events); w=$(jget "$j" in_written); rd=$(jget "$j" in_read)
check_eq "kernel reader: events read = events the internal stream took" "$w" "$ev"
check_eq "kernel reader: the stream's read counter = events read" "$ev" "$rd"
check_eq "no internal-stream loss" 0 "$(jget "$j" lost)"
check_eq "no event out of timestamp order" 0 "$(jget "$j" late)"
c=$(jget "$j" completed)
closed=$(( c + $(jget "$j" expired) + $(jget "$j" partial) ))
check_eq "c0 closed one chain per datagram" 300 "$closed"
# the emulated guest's first send can take longer than the window
if [ "$c" -ge 290 ]; then ok "c0 completed $c of 300 chains"; else not_ok "c0 completed >= 290 chains" "$c"; fi
check_eq "c0: records written = chains closed" "$(jget "$j" records)" "$closed"
check "correlate del c0" magnetctl correlate del c0
check "stream delete c0out" magnetctl stream delete c0out

# --- 2. the layer-latency records vs pairing the full trace -----------
check "stream create full (1 MiB x 4)" magnetctl stream create full subbuf-size 1M subbuf-count 4
check "stream create cout" magnetctl stream create cout subbuf-size 256K subbuf-count 4
check "stream create crx" magnetctl stream create crx subbuf-size 256K subbuf-count 4
check "enable the chains' points into full" \
	magnetctl probe enable udp_send tcp_send ip_send dev_send sock_send \
	dev_recv ip_recv udp_recv tcp_recv sock_recv stream full
check "correlate add lat chain $CHAIN window 50ms stream cout" \
	magnetctl correlate add lat chain "$CHAIN" window 50ms stream cout
check "correlate add rx chain $RXCHAIN window 50ms stream crx" \
	magnetctl correlate add rx chain "$RXCHAIN" window 50ms stream crx
magnetctl -j correlate list >"$R/list.json"
check "correlate list -j names lat with its chain" \
	python3 -c 'import json,sys; l=json.load(open(sys.argv[1])); l=l.get("correlators",l) if isinstance(l,dict) else l; c=[x for x in l if x["name"]=="lat"][0]; assert c["chain"]=="udp_send|tcp_send,ip_send,dev_send,sock_send" and c["window_ns"]==50000000 and c["stream"]=="cout", c' "$R/list.json"
magnetctl correlate show lat >"$R/show.txt"
check "correlate show prints a table" grep -q "^lat " "$R/show.txt"

bg recfull "$MAGNETCTL" record full -o "$R/full.trace"
bg reccorr "$MAGNETCTL" record cout -o "$R/corr.trace"
bg recrx "$MAGNETCTL" record crx -o "$R/rx.trace"
sleep 1
tcp_sink_start ts 5001 || bail_out "tcp_sink did not start"
check "TCP: 40 writes of 10240 bytes every 20 ms" tcp_send tcp 40
tino=$(kv "$(out tcp)" ino)
bg_wait ts 10
rtino=$(kv "$(out ts)" ino)
udp_sink_start us 5002 || bail_out "udp_sink did not start"
# -t 60: a debug kernel under TCG sends 400 in more than the default 10 s
check "UDP: 400 datagrams of 1000 bytes, 2 ms apart" udp_send udp 400 1000 -i 2000 -t 60
uino=$(kv "$(out udp)" ino)
bg_wait us 10
ruino=$(kv "$(out us)" ino)
urcv=$(kv "$(out us)" datagrams)
sleep 0.5
kill -INT "${BG_PID[recfull]}"
bg_wait recfull 30
check_eq "record of the full trace ends cleanly" 0 $?
sleep 1
j=$(magnetctl -j correlate show lat)
echo "$j" >"$R/lat.json"
diag "lat: $j"
jrx=$(magnetctl -j correlate show rx)
echo "$jrx" >"$R/rx.json"
diag "rx: $jrx"
kill -INT "${BG_PID[reccorr]}"
bg_wait reccorr 30
check_eq "record of the correlator's stream ends cleanly" 0 $?
kill -INT "${BG_PID[recrx]}"
bg_wait recrx 30
check_eq "record of the receive correlator's stream ends cleanly" 0 $?
check_eq "rx: no internal-stream loss" 0 "$(jget "$jrx" lost)"
check_eq "rx: no event out of timestamp order" 0 "$(jget "$jrx" late)"
# the receive path per datagram and segment, keyed by the receiving
# sockets: exactly what pairing the full trace in user space gives
"${PAIR[@]}" "$R/full.trace" "$R/rx.trace" --chain "$RXCHAIN" --window $WINDOW \
	--key "$rtino" --key "$ruino" --expect-min 200 --json "$R/pair-rx.json" >"$R/pair-rx.tap" 2>&1
tap_import "$R/pair-rx.tap" $?
read -r nrx nrxdone < <(magnetctl -j dump "$R/rx.trace" | python3 -c '
import json, sys
n = d = 0
for line in sys.stdin:
    c = json.loads(line)
    if c.get("corr") and c["abstract_id"] == '"$ruino"':
        n += 1
        d += c["corr"]["reached"] == 4
print(n, d)')
# every datagram opens a chain at dev_recv; it completes when the
# receiver reads it before the next one arrives (timing: not asserted
# beyond half, the pairing above checks each record exactly)
check_eq "rx: one record per UDP datagram received" "${urcv:-?}" "$nrx"
if [ "${nrxdone:-0}" -ge $((${urcv:-400} / 2)) ]; then ok "rx: $nrxdone of $urcv datagrams followed from dev_recv to sock_recv"; else not_ok "rx: at least half of $urcv datagrams followed from dev_recv to sock_recv" "$nrxdone"; fi
check "correlate del rx" magnetctl correlate del rx
check "stream delete crx" magnetctl stream delete crx
check_eq "lat: no internal-stream loss" 0 "$(jget "$j" lost)"
check_eq "lat: no event out of timestamp order" 0 "$(jget "$j" late)"
check_eq "lat: no pending-table overflow" 0 "$(jget "$j" overflow)"
check_eq "lat: the stream's read counter = events read" "$(jget "$j" events)" "$(jget "$j" in_read)"
# every chain exactly as pairing the full trace gives it; how many complete
# is timing (a step longer than the window expires its chain, as a host
# that deschedules the vCPU can make it: 425 of the 440 in the debug
# kernel beside a CI run, 29 November), so only most of them must
"${PAIR[@]}" "$R/full.trace" "$R/corr.trace" --chain "$CHAIN" --window $WINDOW \
	--key "$tino" --key "$uino" --expect-min 330 --json "$R/pair.json" >"$R/pair.tap" 2>&1
tap_import "$R/pair.tap" $?
check "magnetctl dump decodes the CORR records" \
	bash -c "'$MAGNETCTL' dump '$R/corr.trace' | grep -q 'CORR'"
read -r nall ndone < <(magnetctl -j dump "$R/corr.trace" | python3 -c '
import json, sys
n = d = 0
for line in sys.stdin:
    r = json.loads(line)
    c = r.get("corr")
    if c and r["abstract_id"] == '"$uino"':
        assert c["nsteps"] == 4 and len(c["steps"]) == 4, c
        n += 1
        d += c["flags"] == 0 and c["reached"] == 4
print(n, d)')
check_eq "magnetctl -j dump: one 4-step record per UDP datagram" 400 "$nall"
# the emulated guest's first sends can take longer than the window, and a
# loaded host's stalls too (timing: most of them, not all)
if [ "$ndone" -ge 300 ]; then ok "$ndone of them complete"; else not_ok ">= 300 of 400 complete" "$ndone"; fi
check "check_trace.py accepts the CORR trace" check_trace "$R/corr.trace"

# --- 2b. each send's own chain, against the send's own times ---------
# The documented chain means the same on every kernel: sock_send is the
# send's return (6.12's tracepoint, 6.1's kretprobe), so each send's four
# events lie inside its call, sock_send last.  The senders time each call
# (CLOCK_MONOTONIC right before and after it, -T); every send must give one
# complete chain of its own (tests/tools/corr_sends.py).  A 1 s window: a
# slow emulated send completes its chain, and a chain that took the next
# send's sock_send would too, and fail the times.
check "corr_sends.py self-test: chains of their own pass, the next send's sock_send fails" \
	python3 "$MAGNET_REPO/tests/tools/corr_sends.py" --self-test
check "stream create cown" magnetctl stream create cown subbuf-size 256K subbuf-count 4
check "correlate add own chain $CHAIN window 1s stream cown" \
	magnetctl correlate add own chain "$CHAIN" window 1s stream cown
bg recown "$MAGNETCTL" record cown -o "$R/own.trace"
sleep 1
# A write goes out inside its call only when TCP holds nothing back: with
# an earlier write still unacknowledged (a stalled emulated guest),
# autocorking keeps a whole write for later (1 of 20 in 6.12 on
# 7 December) and its chain ends at tcp_send (skip, docs/CORRELATE.md).
# Off in the sender's namespace for these writes, and Nagle (-n) too.
check "tcp_autocorking off in the sender's namespace" in_a sysctl -qw net.ipv4.tcp_autocorking=0
tcp_sink_start tsown 5001 || bail_out "tcp_sink did not start"
check "TCP: 20 timed writes of 10240 bytes every 20 ms (TCP_NODELAY)" \
	tcp_send tcpown 20 -n -T "$R/own-tcp.times"
otino=$(kv "$(out tcpown)" ino)
bg_wait tsown 10
check "tcp_autocorking back on" in_a sysctl -qw net.ipv4.tcp_autocorking=1
udp_sink_start usown 5002 100 || bail_out "udp_sink did not start"
check "UDP: 100 timed datagrams of 1000 bytes, 2 ms apart" \
	udp_send udpown 100 1000 -i 2000 -t 60 -T "$R/own-udp.times"
ouino=$(kv "$(out udpown)" ino)
bg_wait usown 10
sleep 0.5
check "correlate del own (its open chains, if any, flushed as records)" \
	magnetctl correlate del own
kill -INT "${BG_PID[recown]}"
bg_wait recown 30
check_eq "record of own's stream ends cleanly" 0 $?
check "stream delete cown" magnetctl stream delete cown
own_check() {	# own_check LABEL INO NAME
	python3 "$MAGNET_REPO/tests/tools/corr_sends.py" "$R/own.trace" --key "$2" \
		--times "$R/own-$3.times" --label "$1" --json "$R/own-$3.json" \
		>"$R/own-$3.tap" 2>&1
	tap_import "$R/own-$3.tap" $?
}
own_check TCP "$otino" tcp
own_check UDP "$ouino" udp

# --- 3. deletion while traffic flows ---------------------------------
bg reccorr2 "$MAGNETCTL" record cout -o "$R/corr2.trace"
udp_sink_start us2 5002 || bail_out "udp_sink did not start"
bg flood in_a "$MAGNET_TOOLS/udp_flood" -t 60 -i 500 "$IP_B" 5002 6000 200
sleep 1
check "correlate del lat while datagrams flow" magnetctl correlate del lat
check_eq "no correlator left" "[]" "$(magnetctl -j correlate list | python3 -c 'import json,sys; l=json.load(sys.stdin); l=l.get("correlators",l) if isinstance(l,dict) else l; print(json.dumps(l))')"
# lat2 never completes (udp_recv is the receiving socket's): one chain open
# per datagram, each closed by the next (restart), the last by the deletion
check "correlate add lat2 chain udp_send,udp_recv into cout" \
	magnetctl correlate add lat2 chain udp_send,udp_recv window 5s stream cout
# until lat2 has seen 400 events (about 200 datagrams), not a fixed time: an
# emulated guest (PREEMPT_RT, a busy host) may send only ~50 per second
while kill -0 "${BG_PID[flood]}" 2>/dev/null; do
	[ "$(jget "$(magnetctl -j correlate show lat2)" events)" -ge 400 ] 2>/dev/null && break
	sleep 0.1
done
check "stream delete cout (lat2 writes into it) while datagrams flow" magnetctl stream delete cout
bg_wait reccorr2 30
check_eq "the recorder of cout reads to the end and exits" 0 $?
check_eq "the correlator went with its stream" "[]" "$(magnetctl -j correlate list | python3 -c 'import json,sys; l=json.load(sys.stdin); l=l.get("correlators",l) if isinstance(l,dict) else l; print(json.dumps(l))')"
kill "${BG_PID[flood]}" 2>/dev/null
bg_wait flood 10
bg_wait us2 10
read -r total restarted flushed < <(magnetctl -j dump "$R/corr2.trace" | python3 -c '
import json, sys
t = r = f = 0
for line in sys.stdin:
    c = json.loads(line).get("corr")
    if c:
        t += 1
        r += c["flags"] == 2 and c["nsteps"] == 2
        f += c["flags"] == 8 and c["nsteps"] == 2
print(t, r, f)')
diag "records read after the deletions: total $total, restart $restarted, flush $flushed"
if [ "$restarted" -gt 100 ]; then ok "lat2 closed chains by restart ($restarted)"; else not_ok "lat2 closed chains by restart" "$restarted"; fi
check_eq "deleting the stream flushed lat2's open chain into it" 1 "$flushed"
check "trace of cout across both deletions is valid, nothing lost" check_trace "$R/corr2.trace"

# --- 4. bad input ------------------------------------------------------
check "stream create bad" magnetctl stream create bad
check "correlate add ok1 (for the duplicate test)" \
	magnetctl correlate add ok1 chain udp_send,ip_send window 1ms stream bad
refuse() {	# refuse DESC MESSAGE-REGEX ARGS...
	local desc=$1 re=$2 rc
	shift 2
	magnetctl correlate "$@" >"$R/refuse.out" 2>&1
	rc=$?
	if [ $rc -ne 0 ] && grep -Eq "$re" "$R/refuse.out"; then
		ok "refused: $desc"
	else
		not_ok "refused: $desc" "rc=$rc: $(cat "$R/refuse.out")"
	fi
}
refuse "unknown point by ID" "unknown point: no probe has event ID 1000" \
	add x chain udp_send,1000 window 1ms stream bad
refuse "unknown point by name" "unknown point 'nosuch'" \
	add x chain udp_send,nosuch window 1ms stream bad
refuse "chain too short" "chain too short" add x chain udp_send window 1ms stream bad
refuse "chain too long" "chain too long: at most 8 steps" \
	add x chain sock_send,udp_send,tcp_send,ip_send,dev_send,sock_recv,udp_recv,tcp_recv,ip_recv window 1ms stream bad
refuse "five points in a step" "at most 4 points" \
	add x chain "udp_send|tcp_send|sock_recv|udp_recv|tcp_recv,ip_send" window 1ms stream bad
refuse "a point twice" "point 'ip_send' is in the chain twice" \
	add x chain udp_send,ip_send,ip_send window 1ms stream bad
refuse "window too small" "window 10 ns out of range" \
	add x chain udp_send,ip_send window 10ns stream bad
refuse "window too large" "out of range" add x chain udp_send,ip_send window 11s stream bad
refuse "unknown destination stream" "unknown destination stream: no stream named 'nope'" \
	add x chain udp_send,ip_send window 1ms stream nope
refuse "duplicate name" "correlator 'ok1' already exists" \
	add ok1 chain udp_send,ip_send window 1ms stream bad
refuse "bad name" "bad correlator name" add .x chain udp_send,ip_send window 1ms stream bad
refuse "del of an unknown correlator" "no correlator named 'zz'" del zz
refuse "missing window (CLI)" "missing window" add x chain udp_send,ip_send stream bad
check_eq "exit code 2 when the kernel refuses" 2 "$(magnetctl correlate add x chain udp_send window 1ms stream bad >/dev/null 2>&1; echo $?)"
check_eq "exit code 1 on a usage error" 1 "$(magnetctl correlate add x chain udp_send >/dev/null 2>&1; echo $?)"

# --- 4b. the 16 correlators are root's alone ----------------------------
# An unprivileged watch of a socket makes sockstat's two internal
# correlators (docs/SOCKSTAT.md); they take none of root's 16 places.
# ip_recv's consumers (status file): one more for .sockstat_rx's tap.
ip_recv_users() {
	awk '$2 == "ip_recv" { print $NF }' /sys/kernel/debug/magnet/status
}
u0=$(ip_recv_users)
bg watcher setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$MAGNET_TOOLS/sock_client" recv -t 60 5031 1
if wait_line "$(out watcher)" '^ready' 20; then
	ok "an unprivileged process watches its socket"
else
	not_ok "an unprivileged process watches its socket" "$(cat "$(out watcher)")"
fi
check_eq "the watch made the receive correlator: ip_recv has one consumer more" \
	"$((u0 + 1))" "$(ip_recv_users)"
have=$(magnetctl -j correlate list | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')
made=0
for ((i = have + 1; i <= 16; i++)); do
	magnetctl correlate add "q$i" chain udp_send,ip_send window 1ms stream bad \
		>>"$R/quota.out" 2>&1 && made=$((made + 1))
done
check_eq "root makes all 16 correlators beside the watch's internal ones ($have there)" \
	"$((16 - have))" "$made"
refuse "a 17th correlator" "too many correlators \(at most 16\)" \
	add q17 chain udp_send,ip_send window 1ms stream bad
for ((i = have + 1; i <= 16; i++)); do
	magnetctl correlate del "q$i" >/dev/null 2>&1
done
kill "${BG_PID[watcher]}" 2>/dev/null
bg_wait watcher 10

# --- rmmod with a correlator present ----------------------------------
check "correlate add last (taps points of magnet_net)" \
	magnetctl correlate add last chain "$CHAIN" window 10ms stream bad
check "disable the user's points" magnetctl probe disable udp_send tcp_send ip_send dev_send sock_send \
	dev_recv ip_recv udp_recv tcp_recv sock_recv
udp_sink_start us3 5002 || bail_out "udp_sink did not start"
check "UDP with the correlator alone" udp_send u3 100 100
bg_wait us3 10
check "modules unload with correlators present" magnet_unload
check_dmesg_clean
done_testing
