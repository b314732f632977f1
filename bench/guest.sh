#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of bench/run.sh: runs inside the VM (scripts/vm-run.sh) as
# root and writes CSV files into $MAGNET_RESULTS.  Benchmarks only: it
# measures and records, it asserts nothing about timing.
#
#   MAGNET_BENCH_MODE=quick|full  (repetitions and durations below)
#   MAGNET_BENCH_PT_REPS, MAGNET_BENCH_PT_DUR: the perturbation part's
#   repetitions and seconds per run; MAGNET_BENCH_SKIP: configurations to
#   leave out (e.g. "m2 m3 bpftrace")
#   MAGNET_BENCH_PARTS="micro inflow perturb fixedrate hooks drain lossless
#   loss lossrule sampling filtering" (default: all eleven); MAGNET_BENCH_HK_REPS:
#   the hooks part's repetitions
# (MAGNET_* variables are what scripts/vm-run.sh hands to the guest.)
#
# Files: micro.csv, inflow.csv, perturb.csv, fixedrate.csv, hooks.csv + hookinfo.csv, drain.csv + memcpy.csv + filewrite.csv,
# lossless.csv, loss.csv, lossrule.csv, sampling.csv, filtering.csv, env.txt, and the
# raw iperf3/tcpdump/bpftrace outputs of each run under raw/.
. "$(dirname "${BASH_SOURCE[0]}")/../tests/vm/lib.sh"

need_root
MAGNET_MODULES="magnet magnet_net magnet_bench"
need_magnet
need_cmd iperf3 taskset

R=$MAGNET_RESULTS
RAW=$R/raw
mkdir -p "$RAW"
mode=${MAGNET_BENCH_MODE:-quick}
parts=${MAGNET_BENCH_PARTS:-micro inflow perturb fixedrate hooks drain lossless loss lossrule sampling filtering}
# part 2b's offered rate: below what every monitored configuration carries
FR_RATE=40M
LOSS_KB="64 256 1024 2048 4096 8192"
KV=$(uname -r)
if [ "$mode" = full ]; then
	MICRO_REPS=5 MICRO_N=20000
	P_REPS=5 P_DUR=10 HK_REPS=7 HK_N=30000
	# the perturbation part: enough interleaved runs for a bootstrap
	# bound on each goodput ratio (single runs spread 9-13 %)
	PT_REPS=12 PT_DUR=8
	IF_REPS=5
	D_REPS=5 D_MS=3000
	LL_REPS=3 LL_MS=2000 LL_LENS="24 256 4064"
	L_REPS=5 L_DUR=6
else
	# one of each: the quick mode shows the shape in under 10 minutes
	MICRO_REPS=2 MICRO_N=20000
	P_REPS=1 P_DUR=2 HK_REPS=2 HK_N=10000
	PT_REPS=3 PT_DUR=2
	IF_REPS=1
	D_REPS=1 D_MS=1000
	LL_REPS=1 LL_MS=1000 LL_LENS="256"
	L_REPS=1 L_DUR=2
	LOSS_KB="64 1024 8192"
fi
# the perturbation part's repetitions and seconds per run, overridden
PT_REPS=${MAGNET_BENCH_PT_REPS:-$PT_REPS}
PT_DUR=${MAGNET_BENCH_PT_DUR:-$PT_DUR}
HK_REPS=${MAGNET_BENCH_HK_REPS:-$HK_REPS}
# clocksource: the guest's current one (TCG guests may fall back from tsc
# to hpet or acpi_pm during a run: every perturbation row records it)
clocksource() {
	cat /sys/devices/system/clocksource/clocksource0/current_clocksource
}
TMPD=$(mktemp -d /tmp/magnet-bench.XXXXXX)
SNAPD=$(mktemp -d /tmp/magnet-bench-snap.XXXXXX)
on_exit "rm -rf $TMPD $SNAPD"
HZ_TCK=$(getconf CLK_TCK)

{
	echo "kernel=$KV"
	echo "mode=$mode"
	echo "cpus=$(nproc)"
	echo "cpu_model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
	echo "mem_kb=$(awk '/MemTotal/ {print $2}' /proc/meminfo)"
	echo "clocksource=$(clocksource)"
	read -r cs </sys/devices/system/clocksource/clocksource0/available_clocksource
	echo "clocksources=$cs"
	echo "tmp_fs=$(stat -f -c %T "$TMPD")"
	echo "iperf3=$(iperf3 --version | head -1)"
	echo "tcpdump=$(tcpdump --version 2>&1 | head -1)"
	echo "bpftrace=$(bpftrace --version 2>&1 | head -1)"
	echo "date=$(date -u +%FT%TZ)"
} >"$R/env.txt"
cat "$R/env.txt"

magnet_load || bail_out "cannot load the modules"
BP=/sys/module/magnet_bench/parameters

# wait_for FILE REGEX SECONDS: like lib.sh's wait_line, but against the
# wall clock (under TCG a 50 ms sleep loop runs much slower than 20/s).
wait_for() {
	local end=$((SECONDS + $3))
	while [ $SECONDS -lt "$end" ]; do
		grep -qE -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}

# stop_consumer PID TAG: SIGINT, then up to 120 s (wall clock) for it to
# finish its output; a consumer that does not stop by then is killed and
# said so (bpftrace was once seen never to return from SIGINT under TCG),
# so that one stuck tool cannot hold up the rest of the run.
stop_consumer() {
	local end=$((SECONDS + 120))
	kill -INT "$1" 2>/dev/null
	while kill -0 "$1" 2>/dev/null && [ $SECONDS -lt "$end" ]; do
		sleep 0.2
	done
	if kill -0 "$1" 2>/dev/null; then
		echo "# $2: consumer $1 did not stop within 120 s of SIGINT: killed"
		kill -KILL "$1" 2>/dev/null
	fi
	wait "$1" 2>/dev/null
}

# vm_busy_ticks: clock ticks all CPUs spent busy (user, nice, system, irq,
# softirq, steal of /proc/stat's "cpu" line) since boot.
vm_busy_ticks() {
	awk '$1 == "cpu" {print $2 + $3 + $4 + $7 + $8 + $9; exit}' /proc/stat
}

# cputicks PID: utime+stime of PID in clock ticks (0 if gone).
cputicks() {
	awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0
}

# sched_ns PID...: nanoseconds every thread of the PIDs spent on a CPU,
# from /proc/PID/task/TID/schedstat (the scheduler's clock, not ticks)
sched_ns() {
	local p t ns s=0
	for p; do
		for t in /proc/"$p"/task/[0-9]*; do
			read -r ns _ 2>/dev/null <"$t/schedstat" && s=$((s + ns))
		done
	done
	echo "$s"
}

# kworker_snap: "PID NS" for every kworker thread (kernel workers: the
# ring-to-user copy of a reader may run in one)
kworker_snap() {
	local p c ns
	for p in /proc/[0-9]*; do
		read -r c 2>/dev/null <"$p/comm" || continue
		[[ $c == kworker* ]] || continue
		read -r ns _ 2>/dev/null <"$p/schedstat" && echo "${p#/proc/} $ns"
	done
}

# kworker_ns SNAP0 SNAP1: CPU ns of kworkers between two snapshots (a
# worker that appeared counts from 0, one that exited is not counted)
kworker_ns() {
	awk 'NR == FNR {a[$1] = $2; next} {s += $2 - ($1 in a ? a[$1] : 0)} END {printf "%.0f\n", s}' "$1" "$2"
}

# rx_drops: "RCVBUF BACKLOG": datagrams the receiving socket in $NS_B
# refused (UDP RcvbufErrors) and packets dropped for a full backlog
# (/proc/net/softnet_stat, all CPUs), counters since boot
rx_drops() {
	local rcvbuf d s=0
	# shellcheck disable=SC2016
	rcvbuf=$(ip netns exec "$NS_B" awk '$1 == "Udp:" {
		if (!c) { for (i = 2; i <= NF; i++) if ($i == "RcvbufErrors") c = i } else { print $c; exit } }' /proc/net/snmp)
	while read -r _ d _; do s=$((s + 16#$d)); done </proc/net/softnet_stat
	echo "${rcvbuf:-0} $s"
}

# show_stat OBJECT NAME KEY...: the values of `magnetctl -j OBJECT show
# NAME`, space separated
show_stat() {
	local j k out=()
	j=$(magnetctl -j "$1" show "$2")
	shift 2
	for k; do
		out+=("$(grep -oE "\"$k\":[0-9]+" <<<"$j" | head -1 | cut -d: -f2)")
	done
	echo "${out[*]}"
}

stream_stat() {	# stream_stat NAME KEY... : the stream's values, space separated
	show_stat stream "$@"
}

# ------------------------------------------------------------------
# 1. cost per event
# ------------------------------------------------------------------
bench_cmd() {	# bench_cmd CPU "cmd..." -> prints result line
	taskset -c "$1" sh -c "echo '$2' > $BP/cmd" || return 1
	cat "$BP/result"
}

micro_row() {	# micro_row KV MODE LEN REP LOST "RESULT LINE"
	local w
	local -A d=()
	for w in $6; do d[${w%%=*}]=${w#*=}; done
	echo "$1,$2,$3,$4,${d[ns_med]},${d[ns_p10]},${d[ns_p90]},${d[cyc_med]},$5"
}

micro() {
	local rep len line mode csv=$R/micro.csv
	echo "kernel,mode,len,rep,ns_med,ns_p10,ns_p90,cyc_med,lost" >"$csv"
	for rep in $(seq 1 "$MICRO_REPS"); do
		# the loop alone, a disabled point, and one read of each clock
		# a ring may stamp with (docs/FORMAT.md "Clocks")
		for mode in empty off clock-tsc clock-local clock-mono; do
			line=$(bench_cmd 1 "time $mode 0 $MICRO_N") || continue
			echo "# $line"
			micro_row "$KV" "$mode" 0 "$rep" 0 "$line" >>"$csv"
		done
		for len in 0 16 64 256 1024; do
			# a stream big enough for every event of the run: no drop path
			magnetctl stream create mb subbuf-size 4M subbuf-count 8 >/dev/null || bail_out "stream mb"
			magnetctl probe enable bench stream mb >/dev/null || bail_out "enable bench"
			line=$(bench_cmd 1 "time magnet $len $MICRO_N")
			magnetctl probe disable bench >/dev/null
			lost=$(stream_stat mb lost)
			magnetctl stream delete mb >/dev/null
			echo "# $line lost=$lost"
			micro_row "$KV" magnet "$len" "$rep" "$lost" "$line" >>"$csv"
			# the same on the local clock (ftrace's clock)
			magnetctl stream create ml subbuf-size 4M subbuf-count 8 clock local >/dev/null ||
				bail_out "stream ml"
			magnetctl probe enable bench stream ml >/dev/null || bail_out "enable bench"
			line=$(bench_cmd 1 "time magnet $len $MICRO_N")
			magnetctl probe disable bench >/dev/null
			lost=$(stream_stat ml lost)
			magnetctl stream delete ml >/dev/null
			echo "# local clock: $line lost=$lost"
			micro_row "$KV" magnet_local "$len" "$rep" "$lost" "$line" >>"$csv"
			line=$(bench_cmd 1 "time ftrace $len $MICRO_N")
			echo "# $line"
			micro_row "$KV" ftrace "$len" "$rep" 0 "$line" >>"$csv"
		done
		# the drop path: a full ring nobody reads
		magnetctl stream create mbfull subbuf-size 4096 subbuf-count 2 >/dev/null
		magnetctl probe enable bench stream mbfull >/dev/null
		line=$(bench_cmd 1 "time magnet 64 $MICRO_N")
		magnetctl probe disable bench >/dev/null
		lost=$(stream_stat mbfull lost)
		magnetctl stream delete mbfull >/dev/null
		echo "# full ring: $line lost=$lost"
			micro_row "$KV" magnet_full "64" "$rep" "$lost" "$line" >>"$csv"
	done
}

# ------------------------------------------------------------------
# 2. perturbation: iperf3 UDP flood mgA -> mgB under each monitor
# ------------------------------------------------------------------
EV1="sock_send"
EV2="sock_send udp_send"
EV3="sock_send udp_send ip_send"
EV4="sock_send udp_send ip_send dev_send"

bpftrace_script() {	# the same four functions as MAGNET's m4
	local sock
	if [ -d /sys/kernel/tracing/events/sock/sock_send_length ] ||
		[ -d /sys/kernel/debug/tracing/events/sock/sock_send_length ]; then
		sock='tracepoint:sock:sock_send_length /args->ret > 0/ { printf("%llu %d %d sock_send %d\n", nsecs, cpu, tid, args->ret); }'
	else
		sock='kretprobe:__sock_sendmsg /(int64)retval > 0/ { printf("%llu %d %d sock_send %d\n", nsecs, cpu, tid, (int64)retval); }'
	fi
	cat <<BT
BEGIN { printf("ready\n"); }
$sock
kprobe:udp_sendmsg { printf("%llu %d %d udp_send %d\n", nsecs, cpu, tid, arg2); }
kprobe:ip_output { printf("%llu %d %d ip_send %llu\n", nsecs, cpu, tid, arg2); }
tracepoint:net:net_dev_start_xmit { printf("%llu %d %d dev_send %d\n", nsecs, cpu, tid, args->len); }
BT
}

# The kernel's own tracer (ftrace) on the same four hooks as m4 on this
# kernel, as trace events into its per-CPU ring of 4 MiB (MAGNET's 4 x
# 1 MiB) in overwrite mode, which nobody reads: the peer of m4fr.
# sock_send is the sock:sock_send_length event where the kernel has it
# (6.3+), dev_send the net:net_dev_start_xmit event; the function entries
# (udp_sendmsg, ip_output, and __sock_sendmsg / sock_sendmsg before 6.3)
# are fprobe events where the kernel has them (6.12: an ftrace_ops entry
# callback, MAGNET's own mechanism there), else kprobe events (6.1: a
# kprobe on the function's ftrace site).  Not the function tracer: it
# registers ftrace's comm recorder on sched_switch and sched_wakeup each
# time it starts, and patching those hot sites once a repetition crashed
# a 6.12 guest under TCG (an int3 in ttwu_do_activate() that the kernel's
# text_poke_bp() handler did not claim, 29 November 2026); record-cmd is
# off for the same reason.  "ftraceoff" registers the same hooks with
# recording off (tracing_on 0): each hook runs, finds the ring off and
# returns: the four hooks with the kernel's own handlers, nothing
# recorded, the floor of any tracer that hooks these four places here.
TRACEFS=/sys/kernel/tracing
FTRACE_GROUP=mgbench
ftrace_usable() {
	mountpoint -q "$TRACEFS" || mount -t tracefs nodev "$TRACEFS" 2>/dev/null
	[ -w "$TRACEFS/dynamic_events" ] && [ -d "$TRACEFS/events/net/net_dev_start_xmit" ]
}

# ftrace_probe NAME FUNCTION: an entry event NAME at FUNCTION in
# $FTRACE_GROUP: an fprobe event if the kernel has them, else a kprobe event
ftrace_probe() {
	echo "f:$FTRACE_GROUP/$1 $2" >>"$TRACEFS/dynamic_events" 2>/dev/null ||
		echo "p:$FTRACE_GROUP/$1 $2" >>"$TRACEFS/dynamic_events"
}

# ftrace_start on|off
ftrace_start() {
	local T=$TRACEFS sockfn=
	echo 0 >"$T/tracing_on" && echo nop >"$T/current_tracer" &&
		echo 0 >"$T/options/record-cmd" || return 1
	FTRACE_KB=$(awk '{print $1; exit}' "$T/buffer_size_kb")
	echo 4096 >"$T/buffer_size_kb" && echo 1 >"$T/options/overwrite" && : >"$T/trace" || return 1
	if [ -d "$T/events/sock/sock_send_length" ]; then
		echo 1 >"$T/events/sock/sock_send_length/enable" || return 1
	else
		if grep -qw __sock_sendmsg /proc/kallsyms; then sockfn=__sock_sendmsg; else sockfn=sock_sendmsg; fi
		ftrace_probe sock_send "$sockfn" || return 1
	fi
	ftrace_probe udp_send udp_sendmsg && ftrace_probe ip_send ip_output &&
		echo 1 >"$T/events/$FTRACE_GROUP/enable" &&
		echo 1 >"$T/events/net/net_dev_start_xmit/enable" || return 1
	if [ -z "${FTRACE_SAID:-}" ]; then
		FTRACE_SAID=1
		echo "# ftrace's entry hooks: $(tr '\n' ';' <"$T/dynamic_events")"
	fi
	[ "$1" = off ] || echo 1 >"$T/tracing_on"
}

# ftrace_stop: recording off, hooks removed; "PRODUCED LOST" from the
# ring's per-CPU statistics: events written (in the ring now, plus
# overwritten) and dropped (ring full; none in overwrite mode)
ftrace_stop() {
	local T=$TRACEFS e
	echo 0 >"$T/tracing_on"
	cat "$T"/per_cpu/cpu*/stats | awk '
		/^entries:/ {p += $2} /^overrun:/ {p += $2}
		/^dropped events:/ {d += $3}
		END {print p + 0, d + 0}'
	echo 0 >"$T/events/enable"
	for e in sock_send udp_send ip_send; do
		[ -d "$T/events/$FTRACE_GROUP/$e" ] && echo "-:$FTRACE_GROUP/$e" >>"$T/dynamic_events"
	done
	: >"$T/trace"
	echo "${FTRACE_KB:-1408}" >"$T/buffer_size_kb"
	echo 1 >"$T/options/record-cmd"
	echo 1 >"$T/tracing_on"
}

# run_iperf TAG: one UDP flood (1400-byte datagrams, no rate limit, or
# $IP_RATE bits/s) for $P_DUR s; sets IP_GOODPUT (received Mb/s) IP_SENT
# (offered Mb/s) IP_LOSS (% datagrams lost) IP_SCPU IP_RCPU (iperf3's own
# CPU %, sender and receiver process) IP_PKTS (datagrams received)
# IP_SPKTS (datagrams sent) IP_RCVBUF IP_BACKLOG (receiver drops, see
# rx_drops) IP_BUSY (CPU seconds the whole VM spent, all CPUs, /proc/stat).
run_iperf() {
	local tag=$1 sj=$RAW/$tag.server.json cj=$RAW/$tag.client.json
	local spid try end b0 r0 q0 r1 q1
	ip netns exec "$NS_B" iperf3 -s -1 -J -p 5201 >"$sj" 2>&1 &
	spid=$!
	# under load the server may take seconds to listen
	end=$((SECONDS + 30))
	until ip netns exec "$NS_B" ss -Hltn 'sport = :5201' | grep -q 5201; do
		[ $SECONDS -lt $end ] || break
		sleep 0.2
	done
	b0=$(vm_busy_ticks)
	read -r r0 q0 < <(rx_drops)
	for try in 1 2 3; do
		# shellcheck disable=SC2086 # IP_WRAP: a command prefix (part inflow)
		${IP_WRAP:-} ip netns exec "$NS_A" iperf3 -c "$IP_B" -p 5201 -u -b "${IP_RATE:-0}" -l 1400 -t "$P_DUR" -J >"$cj" 2>&1
		grep -q '"error"' "$cj" || break
		sleep 1
		b0=$(vm_busy_ticks)
	done
	IP_BUSY=$(awk -v a="$b0" -v b="$(vm_busy_ticks)" -v hz="$HZ_TCK" 'BEGIN {printf "%.3f", (b - a) / hz}')
	end=$((SECONDS + 20))
	while kill -0 "$spid" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.2; done
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	read -r r1 q1 < <(rx_drops)
	IP_RCVBUF=$((r1 - r0)) IP_BACKLOG=$((q1 - q0))
	read -r IP_GOODPUT IP_SENT IP_LOSS IP_SCPU IP_RCPU IP_PKTS IP_SPKTS < <(python3 - "$cj" <<'PY'
import json, sys
try:
    e = json.load(open(sys.argv[1]))["end"]
    r, s, cpu = e["sum_received"], e["sum_sent"], e["cpu_utilization_percent"]
    print("%.3f %.3f %.4f %.2f %.2f %d %d" % (r["bits_per_second"] / 1e6, s["bits_per_second"] / 1e6,
          r.get("lost_percent", 0), cpu["host_total"], cpu["remote_total"],
          r.get("packets", 0) - r.get("lost_packets", 0), s.get("packets", 0)))
except Exception:
    print("nan nan nan nan nan 0 0")
PY
)
}

# LTTng: only when $MAGNET_LTTNG_MODDIR has lttng-modules built for this
# kernel (bench/lttng-build.sh) and lttng-tools is installed.  The modules
# go into a writable /lib/modules/KVER (modules.builtin plus
# extra/, depmod'ed) bind-mounted over the read-only one, so that
# lttng-sessiond can modprobe them; veth and everything else the benchmark
# needs is loaded before.
LTTNG_OK=
lttng_setup() {
	local d=${MAGNET_LTTNG_MODDIR:-} root=/tmp/magnet-bench-modroot
	[ -n "$d" ] && [ -d "$d" ] && ls "$d"/*.ko >/dev/null 2>&1 || return 1
	command -v lttng >/dev/null && command -v lttng-sessiond >/dev/null || return 1
	rm -rf "$root"
	# only LTTng's modules (they depend on nothing else); copying the
	# whole tree over 9p takes minutes under TCG
	mkdir -p "$root/lib/modules/$KV/extra/lttng"
	cp "/lib/modules/$KV"/modules.builtin* "$root/lib/modules/$KV/" 2>/dev/null || true
	: >"$root/lib/modules/$KV/modules.order"
	cp "$d"/*.ko "$root/lib/modules/$KV/extra/lttng/"
	# LTTng 2.13's writeback probe names an event this kernel has
	# renamed (folio_wait_writeback) and WARNs as it loads, which would
	# fail the run's kernel-log check; lttng-sessiond treats probe modules
	# as optional, and the kprobe events here need none of them
	rm -f "$root/lib/modules/$KV/extra/lttng/lttng-probe-writeback.ko"
	depmod -b "$root" "$KV" || return 1
	mount --bind "$root/lib/modules/$KV" "/lib/modules/$KV" || return 1
	on_exit "umount /lib/modules/$KV"
	# the guest's / is the host's, read-only: lttng's home under /tmp
	export LTTNG_HOME=/tmp/magnet-bench-lttng-home
	mkdir -p "$LTTNG_HOME"
	lttng-sessiond -d >"$RAW/lttng-sessiond.out" 2>&1 || return 1
	sleep 2
	on_exit "kill $(pgrep -d' ' -x lttng-sessiond)"
	lttng list -k >"$RAW/lttng-list.out" 2>&1 || return 1
	LTTNG_OK=1
}

# lttng_start CONTEXTS...: the same four layers as m4, as kprobes, with
# the context fields CONTEXTS (lttng add-context -t) on every event
lttng_start() {
	local sockfn c ctx=()
	for c; do ctx+=(-t "$c"); done
	lttng create mgbench --output="$TMPD/lt" >/dev/null || return 1
	lttng enable-channel -k ch --subbuf-size=1M --num-subbuf=4 >/dev/null || return 1
	if [ ${#ctx[@]} -gt 0 ]; then
		lttng add-context -k -c ch "${ctx[@]}" >/dev/null || return 1
	fi
	if grep -qw __sock_sendmsg /proc/kallsyms; then sockfn=__sock_sendmsg; else sockfn=sock_write_iter; fi
	lttng enable-event -k -c ch --probe="$sockfn" sock_send >/dev/null &&
	lttng enable-event -k -c ch --probe=udp_sendmsg udp_send >/dev/null &&
	lttng enable-event -k -c ch --probe=ip_output ip_send >/dev/null &&
	lttng enable-event -k -c ch --probe=dev_hard_start_xmit dev_send >/dev/null &&
	lttng start >/dev/null
}

# lttngctx's context fields: 4+4+4+4+4+16 bytes, with the compact event
# header (4 bytes) and the kprobe's ip (8) a 48-byte event, the size of
# MAGNET's m4 records (32-byte header, 16-byte payload)
LTTNG_CTX="pid tid ppid prio nice procname"
LTTNG_CTX_BYTES=48

# lttng_counts DIR BYTES: "EVENTS DISCARDED EVENT_BYTES PACKETS" of the
# kernel trace in DIR, from its packet headers alone (the guest has no
# trace decoder).  lttng-modules 2.13 on x86 writes packed packets: 32 bytes
# of header, 52 of context (content_size and packet_size in bits,
# events_discarded counted per stream), then events of BYTES bytes each,
# 9 more when the compact header carries a full timestamp (the first
# event of a packet, a gap over 2^27 ns); per packet the count is the
# solution of content = n * BYTES + 9 * k with the fewest such headers.
# EVENTS is empty if some packet has no solution (not BYTES-sized events).
lttng_counts() {
	python3 - "$1" "$2" <<'PY'
import os, struct, sys
top, size = sys.argv[1], int(sys.argv[2])
events = disc = nbytes = packets = 0
ok = True
for root, dirs, files in os.walk(top):
    dirs[:] = [d for d in dirs if d != "index"]
    for name in files:
        if name == "metadata":
            continue
        last = 0
        with open(os.path.join(root, name), "rb") as f:
            while True:
                h = f.read(84)
                if len(h) < 84 or struct.unpack_from("<I", h)[0] != 0xC1FC1FC1:
                    break
                content, psize, _, last = struct.unpack_from("<QQQQ", h, 48)
                c = content // 8 - 84
                ks = [k for k in range(size) if c - 9 * k >= 0 and (c - 9 * k) % size == 0]
                ok = ok and bool(ks)
                events += (c - 9 * ks[0]) // size if ks else 0
                nbytes += c
                packets += 1
                f.seek(psize // 8 - 84, 1)
        disc += last
print("%s %d %d %d" % (events if ok else "", disc, nbytes, packets))
PY
}

# consumer_start CFG TAG: starts what CFG records with, sets CPIDS (the
# consumer processes) and EV (MAGNET's events, empty for the others)
consumer_start() {
	local cfg=$1 tag=$2 rule="" clk=""
	CPIDS="" EV=""
	case $cfg in
	m1) EV=$EV1 ;; m2) EV=$EV2 ;; m3) EV=$EV3 ;; m4) EV=$EV4 ;;
	# m4 on a stream of the local clock (no clocksource read per event)
	m4local) EV=$EV4 clk="clock local" ;;
	# the kernel's default read rule: a read completes at the first record
	m4eager) EV=$EV4 rule="--watermark 0" ;;
	# the decomposition of m4's cost: the hooks alone, every event
	# refused by a filter before a byte is copied (m4drop); the hooks and
	# the writes into a ring nobody reads (m4fr); m4 adds the recorder
	m4drop | m4fr) EV=$EV4 ;;
	h_*) EV=${cfg#h_} ;;
	esac
	case $cfg in
	m4drop)
		magnetctl stream create net subbuf-size 1M subbuf-count 4 >/dev/null || bail_out "stream net"
		# the filter first: no event gets past it into the stream
		magnetctl filter add all drop >/dev/null || bail_out "filter all drop"
		# shellcheck disable=SC2086
		magnetctl probe enable $EV stream net >/dev/null || bail_out "enable $EV" ;;
	h_* | m4fr)
		# the hook(s) into a flight recorder nobody reads: the hooks
		# and magnet_add(), no consumer, no drop path
		magnetctl stream create net subbuf-size 1M subbuf-count 4 overwrite >/dev/null ||
			bail_out "stream net"
		# shellcheck disable=SC2086
		magnetctl probe enable $EV stream net >/dev/null || bail_out "enable $EV" ;;
	m*)
		# shellcheck disable=SC2086
		magnetctl stream create net subbuf-size 1M subbuf-count 4 $clk >/dev/null || bail_out "stream net"
		# shellcheck disable=SC2086
		magnetctl probe enable $EV stream net >/dev/null || bail_out "enable $EV"
		# shellcheck disable=SC2086
		"$MAGNETCTL" record net -o "$TMPD/net.trace" $rule >"$RAW/$tag.record.out" 2>&1 &
		CPIDS=$!
		sleep 0.3 ;;
	ftrace | ftraceoff)
		ftrace_start "$([ "$cfg" = ftraceoff ] && echo off || echo on)" ||
			bail_out "ftrace on the four hooks" ;;
	tcpdump)
		ip netns exec "$NS_A" tcpdump -i "$VETH_A" -s 96 -n -w "$TMPD/t.pcap" udp >"$RAW/$tag.tcpdump.out" 2>&1 &
		CPIDS=$!
		wait_for "$RAW/$tag.tcpdump.out" 'listening on' 60 ;;
	bpftrace)
		bpftrace_script >"$TMPD/m4.bt"
		# -B line: with -o or a redirected stdout bpftrace buffers whole blocks
		bpftrace -B line "$TMPD/m4.bt" >"$TMPD/bt.out" 2>"$RAW/$tag.bpftrace.out" &
		CPIDS=$!
		wait_for "$TMPD/bt.out" '^ready' 240 || echo "# bpftrace did not start: $(tail -3 "$RAW/$tag.bpftrace.out")" ;;
	lttng | lttngctx)
		# shellcheck disable=SC2046
		lttng_start $([ "$cfg" = lttngctx ] && echo "$LTTNG_CTX") >"$RAW/$tag.lttng.out" 2>&1 ||
			echo "# lttng start failed: $(tail -3 "$RAW/$tag.lttng.out")"
		CPIDS=$(pgrep -d' ' -x lttng-consumerd) ;;
	esac
}

# consumer_stop CFG TAG: stops it; sets PROD LOST (events the tracer
# produced and lost by its own count), TR_EV TR_LOST TR_BYTES (events,
# lost events and bytes of events in the trace it wrote)
consumer_stop() {
	local cfg=$1 tag=$2 o wr
	PROD=0 LOST=0 TR_EV="" TR_LOST="" TR_BYTES=""
	case $cfg in
	m4drop)
		# shellcheck disable=SC2086
		magnetctl probe disable $EV >/dev/null
		# every event the hooks made, refused: the filter's count
		PROD=$(show_stat filter all dropped)
		read -r TR_EV LOST < <(stream_stat net written lost)
		magnetctl filter del all >/dev/null
		magnetctl stream delete net >/dev/null ;;
	h_* | m4fr)
		# shellcheck disable=SC2086
		magnetctl probe disable $EV >/dev/null
		read -r PROD TR_EV LOST < <(stream_stat net produced written lost)
		magnetctl stream delete net >/dev/null ;;
	m*)
		# shellcheck disable=SC2086
		magnetctl probe disable $EV >/dev/null
		stop_consumer "$CPIDS" "$tag"
		read -r PROD wr LOST < <(stream_stat net produced written lost)
		magnetctl stream delete net >/dev/null
		# "magnetctl: recorded B bytes, N events (records before f26c97f),
		# L lost events to FILE"
		read -r TR_BYTES TR_EV TR_LOST < <(sed -nE \
			's/.*recorded ([0-9]+) bytes, ([0-9]+) (records|events), ([0-9]+) lost events.*/\1 \2 \4/p' \
			"$RAW/$tag.record.out")
		TR_EV=${TR_EV:-$wr} ;;
	ftrace | ftraceoff)
		# ftraceoff writes nothing: PROD and TR_EV stay 0
		read -r PROD LOST < <(ftrace_stop)
		TR_EV=$PROD TR_LOST=$LOST ;;
	tcpdump)
		stop_consumer "$CPIDS" "$tag"
		o=$RAW/$tag.tcpdump.out
		# "N packets received by filter", "M packets dropped by kernel"
		PROD=$(awk '/received by filter/ {print $1}' "$o")
		LOST=$(awk '/dropped by kernel/ {print $1}' "$o")
		TR_EV=$(awk '/packets captured/ {print $1}' "$o") TR_LOST=$LOST
		TR_BYTES=$(stat -c %s "$TMPD/t.pcap") ;;
	lttng | lttngctx)
		o=$RAW/$tag.lttng.out
		# "Warning: N events were discarded ..." on stop
		lttng stop >>"$o" 2>&1
		LOST=$(grep -oE '[0-9]+ events were discarded' "$o" | awk '{s += $1} END {print s + 0}')
		lttng destroy >>"$o" 2>&1
		if [ "$cfg" = lttngctx ]; then
			read -r TR_EV TR_LOST TR_BYTES _ < <(lttng_counts "$TMPD/lt" "$LTTNG_CTX_BYTES")
			PROD=$((${TR_EV:-0} + TR_LOST))
			[ -f "$RAW/lttngctx.metadata" ] || cp "$TMPD/lt/kernel/metadata" "$RAW/lttngctx.metadata" 2>/dev/null
		fi ;;
	bpftrace)
		stop_consumer "$CPIDS" "$tag"
		PROD=$(grep -cv '^ready' "$TMPD/bt.out" || true)
		LOST=$(grep -oE 'Lost [0-9]+ events' "$TMPD/bt.out" "$RAW/$tag.bpftrace.out" 2>/dev/null |
			awk '{s += $2} END {print s + 0}')
		TR_EV=$PROD TR_LOST=$LOST TR_BYTES=$(stat -c %s "$TMPD/bt.out") ;;
	esac
}

# pids_ticks PIDS...: the PIDs' utime+stime in clock ticks
pids_ticks() {
	local p s=0
	for p; do s=$((s + $(cputicks "$p"))); done
	echo "$s"
}

perturb_one() {	# perturb_one CONFIG REP: one row of $P_CSV, raw files $P_TAG$CONFIG.REP.*
	local cfg=$1 rep=$2 tag="${P_TAG:-}$1.$2" t0 t1 c0=0 c1=0 s0=0 s1=0 ccpu=0 f
	local kw0=$SNAPD/kw0 kw1=$SNAPD/kw1
	consumer_start "$cfg" "$tag"
	# shellcheck disable=SC2086
	if [ -n "$CPIDS" ]; then c0=$(pids_ticks $CPIDS); s0=$(sched_ns $CPIDS); fi
	kworker_snap >"$kw0"
	t0=$(date +%s.%N)
	run_iperf "$tag"
	t1=$(date +%s.%N)
	kworker_snap >"$kw1"
	if [ -n "$CPIDS" ]; then
		# shellcheck disable=SC2086
		c1=$(pids_ticks $CPIDS); s1=$(sched_ns $CPIDS)
		ccpu=$(awk -v a="$c0" -v b="$c1" -v hz="$HZ_TCK" -v t0="$t0" -v t1="$t1" \
			'BEGIN {printf "%.2f", 100.0 * (b - a) / hz / (t1 - t0)}')
	fi
	consumer_stop "$cfg" "$tag"
	f=$(du -sk "$TMPD" | awk '{print $1}')
	rm -rf "${TMPD:?}"/*
	echo "$KV,$cfg,$rep,$IP_GOODPUT,$IP_SENT,$IP_PKTS,$IP_LOSS,$IP_SCPU,$IP_RCPU,$ccpu,${PROD:-0},${LOST:-0},$f,$IP_BUSY,$(awk -v t0="$t0" -v t1="$t1" 'BEGIN {printf "%.3f", t1 - t0}'),$IP_SPKTS,$IP_RCVBUF,$IP_BACKLOG,$((s1 - s0)),$(kworker_ns "$kw0" "$kw1"),$TR_EV,$TR_LOST,$TR_BYTES,$(clocksource)" >>"$P_CSV"
	rm -f "$kw0" "$kw1"
	echo "# ${P_TAG:-perturb.}$cfg rep $rep: goodput=${IP_GOODPUT}Mb/s loss=$IP_LOSS% rcvbuf_drops=$IP_RCVBUF snd=$IP_SCPU% rcv=$IP_RCPU% consumer=$ccpu% consumer_ms=$(((s1 - s0) / 1000000)) events=$PROD lost=$LOST trace_events=$TR_EV/${IP_SPKTS}dgrams trace_lost=$TR_LOST"
}

# peer_cfgs CFGS...: sets CFGS to CFGS with tcpdump, bpftrace and LTTng as
# available (not in a subshell: lttng_setup starts lttng-sessiond once and
# registers its clean-up); LTTng as lttngctx, its events the size of
# MAGNET's
peer_cfgs() {
	CFGS="$*"
	command -v tcpdump >/dev/null || CFGS=${CFGS/tcpdump/}
	if [[ " $CFGS " == *" ftrace"* ]] && ! ftrace_usable; then
		echo "# ftrace left out: no dynamic events or no net_dev_start_xmit event in $TRACEFS"
		CFGS=${CFGS/ftraceoff/} CFGS=${CFGS/ftrace/}
	fi
	command -v bpftrace >/dev/null && CFGS="$CFGS bpftrace"
	if [ -n "$LTTNG_OK" ] || lttng_setup >"$RAW/lttng-setup.out" 2>&1; then
		CFGS="$CFGS lttngctx"
	else
		echo "# LTTng left out: $(tail -2 "$RAW/lttng-setup.out" 2>/dev/null)"
	fi
	# MAGNET_BENCH_SKIP="m2 bpftrace ...": configurations left out
	local c keep=
	for c in $CFGS; do
		[[ " ${MAGNET_BENCH_SKIP:-} " == *" $c "* ]] || keep="$keep $c"
	done
	CFGS=${keep# }
}

P_HEADER="kernel,config,rep,goodput_mbps,sent_mbps,rcv_packets,loss_pct,sender_cpu,receiver_cpu,consumer_cpu,events,events_lost,file_kb,vm_busy_s,seconds,sent_packets,rcvbuf_drops,backlog_drops,consumer_ns,kworker_ns,trace_events,trace_lost,trace_bytes,clocksource"

# run_cfgs "CFGS" REPS: every configuration REPS times into $P_CSV,
# interleaved: repetition 1 of each, then 2, ..., the order reversed on
# even repetitions (a host whose load drifts favours no configuration)
run_cfgs() {
	local rep cfg order
	for rep in $(seq 1 "$2"); do
		order=$1
		[ $((rep % 2)) -eq 0 ] && order=$(tr ' ' '\n' <<<"$1" | tac | tr '\n' ' ')
		for cfg in $order; do
			case $cfg in
			# "none": magnet_net not loaded (magnet.ko is: magnetctl needs it)
			none*)
				rmmod magnet_bench magnet_net && magnetfs_umount_all && rmmod magnet ||
					bail_out "unload for the baseline"
				perturb_one "$cfg" "$rep"
				insmod "$MAGNET_MODDIR/magnet.ko" && magnetfs_mount &&
					insmod "$MAGNET_MODDIR/magnet_net.ko" &&
					insmod "$MAGNET_MODDIR/magnet_bench.ko" || bail_out "reload" ;;
			*) perturb_one "$cfg" "$rep" ;;
			esac
		done
	done
}

# "none2", a second run without monitoring at the other end of each
# repetition: the A/A control (bench/report.py flags a run whose none2 or
# loaded differs from none by more than 3 %)
perturb() {
	peer_cfgs none loaded m1 m2 m3 m4 m4drop m4fr m4local m4eager ftrace ftraceoff tcpdump
	echo "$P_HEADER" >"$R/perturb.csv"
	P_CSV=$R/perturb.csv P_TAG= IP_RATE=0 P_DUR=$PT_DUR run_cfgs "$CFGS none2" "$PT_REPS"
}

# ------------------------------------------------------------------
# 2b. cost at a fixed rate: the flood of part 2 limited to $FR_RATE, which
#     every configuration carries, so a monitor's cost shows as CPU time
#     rather than as lost goodput (bench/report.py: sender, receiver and
#     consumer CPU per datagram; vm_busy_s, the whole VM's busy time from
#     /proc/stat, undercounts under TCG and is only recorded)
# ------------------------------------------------------------------
# ------------------------------------------------------------------
# 2c. cost of each hook: each network event alone into a flight recorder
#     that nobody reads (so no consumer and no drop path: the hook and
#     magnet_add() only).  $HK_N datagrams of 1400 bytes, udp_flood on
#     CPU 0 in mgA to udp_sink on CPU 1 in mgB; the CPU time is the
#     sender's and receiver's threads' own (CLOCK_THREAD_CPUTIME_ID: the
#     veth's receive softirq runs in the sender's system calls, and the
#     kernels have no IRQ time accounting, so it counts there) plus the
#     ksoftirqd threads'.  Configurations interleaved, the order reversed
#     on even repetitions.  bench/report.py: CPU per datagram above the
#     same repetition's "loaded", divided by events per datagram.
#     hookinfo.csv: each event's hook on this kernel.
# ------------------------------------------------------------------
HOOK_EVENTS="sock_send udp_send ip_send dev_send dev_recv ip_recv udp_recv sock_recv"
hook_one() {	# hook_one CFG REP: one row of hooks.csv
	local cfg=$1 rep=$2 tag=hooks.$1.$2 k0 k1 spid sent rcvd scpu rcpu
	consumer_start "$cfg" "$tag"
	ip netns exec "$NS_B" taskset -c 1 "$MAGNET_TOOLS/udp_sink" -q 1000 -t 120 9100 \
		>"$RAW/$tag.sink" 2>&1 &
	spid=$!
	wait_for "$RAW/$tag.sink" '^ready' 30
	k0=$(sched_ns $(pgrep -x 'ksoftirqd/[0-9]+' | tr '\n' ' '))
	ip netns exec "$NS_A" taskset -c 0 "$MAGNET_TOOLS/udp_flood" -t 120 "$IP_B" 9100 "$HK_N" 1400 \
		>"$RAW/$tag.flood" 2>&1
	wait "$spid"
	k1=$(sched_ns $(pgrep -x 'ksoftirqd/[0-9]+' | tr '\n' ' '))
	consumer_stop "$cfg" "$tag"
	sent=$(sed -nE 's/.*sent=([0-9]+).*/\1/p' "$RAW/$tag.flood")
	scpu=$(sed -nE 's/.*cpu_ns=([0-9]+).*/\1/p' "$RAW/$tag.flood")
	rcvd=$(sed -nE 's/^datagrams=([0-9]+).*/\1/p' "$RAW/$tag.sink")
	rcpu=$(sed -nE 's/^datagrams=.*cpu_ns=([0-9]+).*/\1/p' "$RAW/$tag.sink")
	echo "$KV,$cfg,$rep,${sent:-0},${rcvd:-0},${scpu:-0},${rcpu:-0},$((k1 - k0)),${PROD:-0},${TR_EV:-0},${LOST:-0},$(clocksource)" >>"$R/hooks.csv"
	echo "# $tag: sent=$sent received=$rcvd sender_ns=$scpu receiver_ns=$rcpu ksoftirqd_ns=$((k1 - k0)) events=$PROD lost=$LOST"
}

hooks() {
	local e rep cfg cfgs=loaded order
	[ -x "$MAGNET_TOOLS/udp_flood" ] && [ -x "$MAGNET_TOOLS/udp_sink" ] || {
		echo "# hooks: udp_flood/udp_sink not built"; return 0; }
	magnetctl -j probe list | python3 -c '
import json, sys
d = json.load(sys.stdin)
d = d["probes"] if isinstance(d, dict) else d
print("event,hook")
for p in d:
    if p.get("module") == "magnet_net":
        print("%s,%s" % (p["name"], p["hook"]))' >"$R/hookinfo.csv"
	for e in $HOOK_EVENTS; do cfgs="$cfgs h_$e"; done
	echo "kernel,config,rep,sent,received,sender_ns,receiver_ns,ksoftirqd_ns,events,written,lost,clocksource" >"$R/hooks.csv"
	for rep in $(seq 1 "$HK_REPS"); do
		order=$cfgs
		[ $((rep % 2)) -eq 0 ] && order=$(tr ' ' '\n' <<<"$cfgs" | tac | tr '\n' ' ')
		for cfg in $order; do
			hook_one "$cfg" "$rep"
		done
	done
}

# ------------------------------------------------------------------
# 2d. cost per event in a real flow: part 1's flood with m1, m4 and m4
#     on a local-clock stream (m4local),
#     sampled by perf on every CPU (cpu-clock: a TCG guest has no PMU)
#     while it runs.  Samples in MAGNET's write path (__magnet_add() and
#     what it calls: the ring's slow path, the clock's anchor) and in the
#     hook handlers (magnet_net's mnet_*), divided by the events
#     produced: CPU time per event in a flow, where the stack's
#     own work between two events has evicted what part 2's tight loop
#     keeps hot.  Samples taken with interrupts off land where they are
#     enabled again, inside __magnet_add(): the time stays its own.
# ------------------------------------------------------------------
IF_HZ=499
# perf report's symbols: MAGNET's write path and the hooks' handlers
IF_ADD_RE='^(__magnet_add|__magnet_clock_anchor|__magnet_ring_reserve|__magnet_ring_sync_nmi|ring_switch|ring_space|ring_write_lost|ring_overwrite_oldest|magnet_write)$'
IF_HOOK_RE='^mnet_'
inflow_one() {	# inflow_one CFG REP: one row of inflow.csv
	local cfg=$1 rep=$2 tag=inflow.$1.$2 counts
	consumer_start "$cfg" "$tag"
	# every CPU, for as long as the sending iperf3 runs (its workload)
	P_DUR=$PT_DUR IP_RATE=0 IP_WRAP="perf record -q -a -e cpu-clock -F $IF_HZ -o $TMPD/perf.data --" \
		run_iperf "$tag"
	consumer_stop "$cfg" "$tag"
	# "Samples Symbol" per symbol, every symbol (no call graph recorded)
	perf report -i "$TMPD/perf.data" --no-children --sort sym -F sample,sym --stdio \
		>"$RAW/$tag.report.txt" 2>"$RAW/$tag.report.err"
	counts=$(awk -v add="$IF_ADD_RE" -v hook="$IF_HOOK_RE" '
		/^#/ || NF < 3 { next }
		{ n = $1; sym = $3; t += n
		  if (sym ~ add) a += n; else if (sym ~ hook) h += n }
		END { printf "%d,%d,%d", t, a, h }' "$RAW/$tag.report.txt")
	rm -rf "${TMPD:?}"/*
	echo "$KV,$cfg,$rep,$IF_HZ,$(nproc),$counts,${PROD:-0},${LOST:-0},${IP_SPKTS:-0},$IP_GOODPUT,$(clocksource)" >>"$R/inflow.csv"
	echo "# $tag: samples,write_path,hooks=$counts events=$PROD lost=$LOST dgrams=$IP_SPKTS goodput=${IP_GOODPUT}Mb/s"
}

inflow() {
	local rep cfg
	command -v perf >/dev/null || { echo "# inflow: no perf (linux-perf) in the guest"; return 0; }
	echo "kernel,config,rep,hz,cpus,samples,write_path_samples,hook_samples,events,lost,sent_packets,goodput_mbps,clocksource" >"$R/inflow.csv"
	sysctl -qw kernel.perf_event_paranoid=-1 kernel.kptr_restrict=0
	for rep in $(seq 1 "$IF_REPS"); do
		for cfg in m1 m4 m4local; do
			inflow_one "$cfg" "$rep"
		done
	done
}

fixedrate() {
	peer_cfgs none loaded m1 m4 m4eager tcpdump
	echo "$P_HEADER" >"$R/fixedrate.csv"
	P_CSV=$R/fixedrate.csv P_TAG=fixedrate. IP_RATE=$FR_RATE run_cfgs "$CFGS" "$P_REPS"
}

# ------------------------------------------------------------------
# 3. drain throughput: a kthread on CPU 0 adds events as fast as it can,
#    a reader on CPU 1 drains them: magnetctl record (whole sub-buffers
#    from the mapped rings, span by span, written to a file in
#    the guest's /tmp) or tests/tools/stream_drain (libmagnet's read(),
#    libaio or io_uring path, into memory), with a 256 KiB watermark
# ------------------------------------------------------------------
# drain_run METHOD LEN RATE MS TAG: the producer on CPU 0 (RATE events/s,
# 0: as fast as it can) for MS ms, one reader on CPU 1; sets DR_SECONDS
# DR_PROD DR_LOST DR_READ DR_BYTES (written), DR_EPS (events delivered per
# second) DR_CPU (reader ticks); raw output in $RAW/TAG.out
drain_run() {
	local m=$1 len=$2 rate=$3 ms=$4 o=$RAW/$5.out cpid c0 c1 line ns
	magnetctl stream create dr subbuf-size 1M subbuf-count 8 >/dev/null || bail_out "stream dr"
	magnetctl probe enable bench stream dr >/dev/null
	if [ "$m" = record ]; then
		taskset -c 1 "$MAGNETCTL" record dr -o "$TMPD/dr.trace" --watermark 256K --timeout 100 >"$o" 2>&1 &
	else
		taskset -c 1 "$MAGNET_TOOLS/stream_drain" -m "$m" -d 4 -b 1048576 -w 262144 \
			/sys/kernel/debug/magnet/dr >"$o" 2>&1 &
	fi
	cpid=$!
	sleep 0.3
	c0=$(cputicks "$cpid")
	line=$(bench_cmd 1 "produce $len $ms 0 $rate")
	c1=$(cputicks "$cpid")
	magnetctl probe disable bench >/dev/null
	if [ "$m" = record ]; then
		kill -INT "$cpid"; wait "$cpid"
	fi
	magnetctl stream flush dr >/dev/null
	read -r DR_PROD DR_LOST DR_READ DR_BYTES < <(stream_stat dr produced lost read bytes)
	magnetctl stream delete dr >/dev/null	# stream_drain reads to the end
	wait "$cpid"
	rm -f "$TMPD"/*
	ns=$(sed -E 's/.* ns=([0-9]+).*/\1/' <<<"$line")
	DR_SECONDS=$(awk -v ns="$ns" 'BEGIN {printf "%.3f", ns / 1e9}')
	DR_EPS=$(awk -v ns="$ns" -v p="$DR_PROD" -v l="$DR_LOST" 'BEGIN {printf "%.0f", (p - l) / (ns / 1e9)}')
	DR_CPU=$((c1 - c0))
}

# dr_row CSV KV METHOD LEN REP [EXTRA...]: one row of the last drain_run
dr_row() {
	local csv=$1
	shift
	python3 - "$DR_SECONDS" "$DR_PROD" "$DR_LOST" "$DR_READ" "$DR_BYTES" "$DR_CPU" "$HZ_TCK" "$@" >>"$csv" <<'PY'
import sys
s, prod, lost, rd, by, cpu, hz = sys.argv[1:8]
s, prod, lost, rd, by = float(s), int(prod), int(lost), int(rd), int(by)
print(",".join(sys.argv[8:]) + ",%.3f,%d,%d,%d,%d,%.2f,%.0f,%.3f,%.1f" % (s, prod, lost, rd, by,
      by / s / 1e6, (prod - lost) / s, 100.0 * lost / max(prod, 1),
      100.0 * int(cpu) / int(hz) / s))
PY
}

# filewrite REP: a row of filewrite.csv, dd's write(2) bandwidth to $TMPD
filewrite() {
	local t0 t1
	t0=$(date +%s%N)
	taskset -c 1 dd if=/dev/zero of="$TMPD/filewrite" bs=256K count=1024 status=none || return 0
	t1=$(date +%s%N)
	rm -f "$TMPD/filewrite"
	echo "$KV,$1,$(awk -v ns=$((t1 - t0)) 'BEGIN {printf "%.0f", 268435456 / (ns / 1e3)}')" >>"$R/filewrite.csv"
	echo "# filewrite: $(tail -1 "$R/filewrite.csv") MB/s"
}

drain_one() {	# drain_one METHOD LEN REP
	drain_run "$1" "$2" 0 "$D_MS" "drain.$1.$2.$3"
	dr_row "$R/drain.csv" "$KV" "$1" "$2" "$3"
	echo "# drain $1 len=$2 rep=$3: $(tail -1 "$R/drain.csv")"
}

drain() {
	local rep len m line methods=record
	[ -x "$MAGNET_TOOLS/stream_drain" ] && methods="record read aio uring"
	echo "kernel,method,len,rep,seconds,produced,lost,read,bytes,MBps,events_per_s,loss_pct,reader_cpu" >"$R/drain.csv"
	echo "kernel,rep,MBps" >"$R/memcpy.csv"
	echo "kernel,rep,MBps" >"$R/filewrite.csv"
	for rep in $(seq 1 "$D_REPS"); do
		# what a copy of whole sub-buffers could reach: memcpy() on CPU 1
		line=$(bench_cmd 1 "memcpy 2048") &&
			echo "$KV,$rep,$(sed -E 's/.*MBps=([0-9]+).*/\1/' <<<"$line")" >>"$R/memcpy.csv"
		echo "# memcpy: $line"
		# what writing a file there can reach: 256 MiB in 256 KiB write(2)s
		# from CPU 1 into the /tmp magnetctl record writes to
		filewrite "$rep"
		for len in 24 64 256 1024 4064; do
			for m in $methods; do
				drain_one "$m" "$len" "$rep"
			done
		done
	done
}

# ------------------------------------------------------------------
# 3b. lossless drain (004 Fig. 4: MB/s "with no lost events"): per reader
#     and payload, a saturated run gives the rate the reader delivers,
#     then the producer is paced at 90 % of it, and at 3/4 of the last
#     rate after each run that lost events, until one loses nothing.
#     Every run is a row of lossless.csv (trial 0: saturated); the report
#     takes the highest lossless rate.
# ------------------------------------------------------------------
lossless() {
	local rep len m rate trial methods=record
	[ -x "$MAGNET_TOOLS/stream_drain" ] && methods="record read aio uring"
	echo "kernel,method,len,rep,trial,target_eps,seconds,produced,lost,read,bytes,MBps,events_per_s,loss_pct,reader_cpu" >"$R/lossless.csv"
	for rep in $(seq 1 "$LL_REPS"); do
		for len in $LL_LENS; do
			for m in $methods; do
				drain_run "$m" "$len" 0 "$LL_MS" "lossless.$m.$len.$rep.0"
				dr_row "$R/lossless.csv" "$KV" "$m" "$len" "$rep" 0 0
				rate=$((DR_EPS * 9 / 10))
				for trial in 1 2 3 4 5 6 7 8; do
					[ "$rate" -gt 0 ] || break
					drain_run "$m" "$len" "$rate" "$LL_MS" "lossless.$m.$len.$rep.$trial"
					dr_row "$R/lossless.csv" "$KV" "$m" "$len" "$rep" "$trial" "$rate"
					[ "$DR_LOST" -eq 0 ] && break
					rate=$((rate * 3 / 4))
				done
				echo "# lossless $m len=$len rep=$rep: $(tail -1 "$R/lossless.csv")"
			done
		done
	done
}

# ------------------------------------------------------------------
# 4. event loss vs buffer size: iperf3 UDP flood, 4 events per packet
# ------------------------------------------------------------------
loss() {
	local rep kb cpid prod lost
	echo "kernel,total_kb_per_cpu,subbuf_kb,subbuf_count,rep,produced,lost,loss_pct,goodput_mbps" >"$R/loss.csv"
	for rep in $(seq 1 "$L_REPS"); do
		for kb in $LOSS_KB; do
			magnetctl stream create ls subbuf-size "$((kb / 2))K" subbuf-count 2 >/dev/null || bail_out "stream ls"
			# shellcheck disable=SC2086
			magnetctl probe enable $EV4 stream ls >/dev/null
			"$MAGNETCTL" record ls -o "$TMPD/ls.trace" >"$RAW/loss.$kb.$rep.out" 2>&1 &
			cpid=$!
			sleep 0.3
			P_DUR=$L_DUR run_iperf "loss.$kb.$rep"
			# shellcheck disable=SC2086
			magnetctl probe disable $EV4 >/dev/null
			kill -INT "$cpid"; wait "$cpid"
			read -r prod lost < <(stream_stat ls produced lost)
			magnetctl stream delete ls >/dev/null
			rm -f "$TMPD"/*
			echo "$KV,$kb,$((kb / 2)),2,$rep,$prod,$lost,$(awk -v l="$lost" -v p="$prod" 'BEGIN {printf "%.4f", 100.0 * l / (p > 0 ? p : 1)}'),$IP_GOODPUT" >>"$R/loss.csv"
			echo "# loss ${kb}K rep $rep: $(tail -1 "$R/loss.csv")"
		done
	done
}

# ------------------------------------------------------------------
# 4b. event loss vs the reader's read rule: the flood of part 4 into
#     2 x 128 KiB per CPU, drained by magnetctl record with several
#     watermark / timeout / minimum-count settings
# ------------------------------------------------------------------
LOSSRULES="eager none wm4K wm64K wm64K-t10 wm64K-t100 me1000-t100"
rule_args() {	# rule_args NAME: magnetctl record options
	case $1 in
	eager) echo "--watermark 0" ;;
	none) ;;
	wm4K) echo "--watermark 4K" ;;
	wm64K) echo "--watermark 64K" ;;
	wm64K-t10) echo "--watermark 64K --timeout 10" ;;
	wm64K-t100) echo "--watermark 64K --timeout 100" ;;
	me1000-t100) echo "--min-events 1000 --timeout 100" ;;
	esac
}

lossrule() {
	local rep rule cpid prod lost
	echo "kernel,rule,args,rep,produced,lost,loss_pct,goodput_mbps" >"$R/lossrule.csv"
	for rep in $(seq 1 "$L_REPS"); do
		for rule in $LOSSRULES; do
			magnetctl stream create lr subbuf-size 128K subbuf-count 2 >/dev/null || bail_out "stream lr"
			# shellcheck disable=SC2086
			magnetctl probe enable $EV4 stream lr >/dev/null
			# shellcheck disable=SC2046
			"$MAGNETCTL" record lr -o "$TMPD/lr.trace" $(rule_args "$rule") >"$RAW/lossrule.$rule.$rep.out" 2>&1 &
			cpid=$!
			sleep 0.3
			P_DUR=$L_DUR run_iperf "lossrule.$rule.$rep"
			# shellcheck disable=SC2086
			magnetctl probe disable $EV4 >/dev/null
			kill -INT "$cpid"; wait "$cpid"
			read -r prod lost < <(stream_stat lr produced lost)
			magnetctl stream delete lr >/dev/null
			rm -f "$TMPD"/*
			echo "$KV,$rule,$(rule_args "$rule" | tr ' ' '_'),$rep,$prod,$lost,$(awk -v l="$lost" -v p="$prod" 'BEGIN {printf "%.4f", 100.0 * l / (p > 0 ? p : 1)}'),$IP_GOODPUT" >>"$R/lossrule.csv"
			echo "# lossrule $rule rep $rep: $(tail -1 "$R/lossrule.csv")"
		done
	done
}

# ------------------------------------------------------------------
# 5. sampling (004 Fig. 5): the iperf3 flood of part 2 with m4, each of
#    the four points sampled 1 in N by a count-sampling filter
# ------------------------------------------------------------------
filter_sums() {	# filter_sums: matched delivered dropped over all filters
	magnetctl -j filter list | python3 -c '
import json, sys
fs = json.load(sys.stdin)
fs = fs.get("filters", fs) if isinstance(fs, dict) else fs
print(sum(f["matched"] for f in fs), sum(f["delivered"] for f in fs), sum(f["dropped"] for f in fs))'
}

sampling() {
	local rep n e cpid c0 c1 t0 t1 ccpu prod lost wr fm fd fdr
	echo "kernel,every,rep,goodput_mbps,sent_mbps,rcv_packets,sender_cpu,receiver_cpu,consumer_cpu,produced,written,lost,matched,dropped" >"$R/sampling.csv"
	local order="off 1 2 5 10 20 40"
	for rep in $(seq 1 "$P_REPS"); do
		# odd repetitions in ascending, even ones in descending order: a
		# host whose load drifts during the run biases no ratio one way
		[ $((rep % 2)) -eq 0 ] && order="40 20 10 5 2 1 off" || order="off 1 2 5 10 20 40"
		for n in $order; do
			cpid="" ccpu=0 prod=0 wr=0 lost=0 fm=0 fdr=0
			if [ "$n" != off ]; then
				magnetctl stream create net subbuf-size 1M subbuf-count 4 >/dev/null || bail_out "stream net"
				if [ "$n" != 1 ]; then
					for e in $EV4; do
						magnetctl filter add "smp_$e" event "$e" every "$n" >/dev/null ||
							bail_out "filter every $n on $e"
					done
				fi
				# shellcheck disable=SC2086
				magnetctl probe enable $EV4 stream net >/dev/null || bail_out "enable"
				"$MAGNETCTL" record net -o "$TMPD/net.trace" >"$RAW/sampling.$n.$rep.record.out" 2>&1 &
				cpid=$!
				sleep 0.3
				c0=$(cputicks "$cpid")
			fi
			t0=$(date +%s.%N)
			run_iperf "sampling.$n.$rep"
			t1=$(date +%s.%N)
			if [ -n "$cpid" ]; then
				c1=$(cputicks "$cpid")
				ccpu=$(awk -v a="$c0" -v b="$c1" -v hz="$HZ_TCK" -v t0="$t0" -v t1="$t1" \
					'BEGIN {printf "%.2f", 100.0 * (b - a) / hz / (t1 - t0)}')
				# shellcheck disable=SC2086
				magnetctl probe disable $EV4 >/dev/null
				kill -INT "$cpid"; wait "$cpid"
				read -r prod wr lost < <(stream_stat net produced written lost)
				read -r fm fd fdr < <(filter_sums)
				for e in $EV4; do magnetctl filter del "smp_$e" >/dev/null 2>&1; done
				magnetctl stream delete net >/dev/null
				rm -rf "${TMPD:?}"/*
			fi
			echo "$KV,$n,$rep,$IP_GOODPUT,$IP_SENT,$IP_PKTS,$IP_SCPU,$IP_RCPU,$ccpu,$prod,$wr,$lost,$fm,$fdr" >>"$R/sampling.csv"
			echo "# sampling 1/$n rep $rep: goodput=${IP_GOODPUT}Mb/s snd=$IP_SCPU% consumer=$ccpu% produced=$prod written=$wr lost=$lost"
		done
	done
}

# ------------------------------------------------------------------
# 6. filtering (004 Fig. 6): two UDP floods at once (ports 5201 and
#    5202); only the first one is wanted.  MAGNET filters in the kernel by
#    the sender's tgid (the other flow's events are refused before any
#    payload is copied); tcpdump filters with BPF on the port.
# ------------------------------------------------------------------
run_iperf2() {	# run_iperf2 TAG HOOK: two floods; HOOK runs just before they start
	local tag=$1 hook=$2 p spids=() end
	for p in 5201 5202; do
		ip netns exec "$NS_B" iperf3 -s -1 -J -p "$p" >"$RAW/$tag.server$p.json" 2>&1 &
		spids+=($!)
	done
	end=$((SECONDS + 30))
	until [ "$(ip netns exec "$NS_B" ss -Hltn 'sport >= :5201 and sport <= :5202' | wc -l)" -ge 2 ]; do
		[ $SECONDS -lt $end ] || break
		sleep 0.2
	done
	# each client waits on a fifo, then execs iperf3 (same pid): the hook
	# knows the pids before any packet is sent
	rm -f "$TMPD/go1" "$TMPD/go2"
	mkfifo "$TMPD/go1" "$TMPD/go2"
	# shellcheck disable=SC2016
	ip netns exec "$NS_A" sh -c 'read _ <"$0"; exec "$@"' "$TMPD/go1" \
		iperf3 -c "$IP_B" -p 5201 -u -b 0 -l 1400 -t "$P_DUR" -J >"$RAW/$tag.c5201.json" 2>&1 &
	FLOW1_PID=$!
	# shellcheck disable=SC2016
	ip netns exec "$NS_A" sh -c 'read _ <"$0"; exec "$@"' "$TMPD/go2" \
		iperf3 -c "$IP_B" -p 5202 -u -b 0 -l 1400 -t "$P_DUR" -J >"$RAW/$tag.c5202.json" 2>&1 &
	FLOW2_PID=$!
	"$hook"
	echo go >"$TMPD/go1"
	echo go >"$TMPD/go2"
	wait "$FLOW1_PID" "$FLOW2_PID"
	end=$((SECONDS + 20))
	for p in "${spids[@]}"; do
		while kill -0 "$p" 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 0.2; done
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	read -r F1_GOODPUT F2_GOODPUT F1_SCPU F2_SCPU < <(python3 - "$RAW/$tag.c5201.json" "$RAW/$tag.c5202.json" <<'PY'
import json, sys
out = []
cpu = []
for f in sys.argv[1:]:
    try:
        e = json.load(open(f))["end"]
        out.append("%.3f" % (e["sum_received"]["bits_per_second"] / 1e6))
        cpu.append("%.2f" % e["cpu_utilization_percent"]["host_total"])
    except Exception:
        out.append("nan"); cpu.append("nan")
print(" ".join(out + cpu))
PY
)
}

FILT_CFG=
filt_hook() {
	case $FILT_CFG in
	magnet-all)
		# shellcheck disable=SC2086
		magnetctl probe enable $EV4 stream net >/dev/null ;;
	magnet-filter)
		magnetctl filter add flow1 tgid "$FLOW1_PID" stream net >/dev/null &&
			magnetctl filter add others drop >/dev/null &&
			# shellcheck disable=SC2086
			magnetctl probe enable $EV4 stream net >/dev/null ||
			echo "# filtering: set-up failed" ;;
	esac
}

filtering() {
	local rep cfg cfgs="none magnet-all magnet-filter tcpdump-filter" cpid c0 c1 ccpu prod wr lost t0 t1
	command -v tcpdump >/dev/null || cfgs=${cfgs/tcpdump-filter/}
	echo "kernel,config,rep,flow1_mbps,flow2_mbps,flow1_sender_cpu,flow2_sender_cpu,consumer_cpu,produced,written,lost" >"$R/filtering.csv"
	for rep in $(seq 1 "$P_REPS"); do
		[ $((rep % 2)) -eq 0 ] && cfgs=$(echo "$cfgs" | tr ' ' '\n' | tac | tr '\n' ' ')
		for cfg in $cfgs; do
			FILT_CFG=$cfg cpid="" ccpu=0 prod=0 wr=0 lost=0
			case $cfg in
			magnet-*)
				magnetctl stream create net subbuf-size 1M subbuf-count 4 >/dev/null || bail_out "stream net"
				"$MAGNETCTL" record net -o "$TMPD/net.trace" >"$RAW/filtering.$cfg.$rep.record.out" 2>&1 &
				cpid=$! ;;
			tcpdump-filter)
				ip netns exec "$NS_A" tcpdump -i "$VETH_A" -s 96 -n -w "$TMPD/t.pcap" udp dst port 5201 \
					>"$RAW/filtering.$cfg.$rep.tcpdump.out" 2>&1 &
				cpid=$!
				wait_for "$RAW/filtering.$cfg.$rep.tcpdump.out" 'listening on' 60 ;;
			esac
			[ -n "$cpid" ] && { sleep 0.3; c0=$(cputicks "$cpid"); }
			t0=$(date +%s.%N)
			run_iperf2 "filtering.$cfg.$rep" filt_hook
			t1=$(date +%s.%N)
			if [ -n "$cpid" ]; then
				c1=$(cputicks "$cpid")
				ccpu=$(awk -v a="$c0" -v b="$c1" -v hz="$HZ_TCK" -v t0="$t0" -v t1="$t1" \
					'BEGIN {printf "%.2f", 100.0 * (b - a) / hz / (t1 - t0)}')
			fi
			case $cfg in
			magnet-*)
				# shellcheck disable=SC2086
				magnetctl probe disable $EV4 >/dev/null 2>&1
				kill -INT "$cpid"; wait "$cpid"
				read -r prod wr lost < <(stream_stat net produced written lost)
				magnetctl filter del flow1 >/dev/null 2>&1
				magnetctl filter del others >/dev/null 2>&1
				magnetctl stream delete net >/dev/null ;;
			tcpdump-filter)
				kill -INT "$cpid"; wait "$cpid"
				prod=$(awk '/received by filter/ {print $1}' "$RAW/filtering.$cfg.$rep.tcpdump.out")
				wr=$(awk '/packets captured/ {print $1}' "$RAW/filtering.$cfg.$rep.tcpdump.out")
				lost=$(awk '/dropped by kernel/ {print $1}' "$RAW/filtering.$cfg.$rep.tcpdump.out") ;;
			esac
			rm -rf "${TMPD:?}"/*
			echo "$KV,$cfg,$rep,$F1_GOODPUT,$F2_GOODPUT,$F1_SCPU,$F2_SCPU,$ccpu,${prod:-0},${wr:-0},${lost:-0}" >>"$R/filtering.csv"
			echo "# filtering $cfg rep $rep: flow1=${F1_GOODPUT}Mb/s flow2=${F2_GOODPUT}Mb/s consumer=$ccpu% produced=$prod written=$wr lost=$lost"
		done
	done
}

netns_setup || bail_out "network namespaces"
for p in $parts; do
	echo "# === $p ($mode) on $KV: $(date -u +%T)"
	"$p"
done
echo "# done: $(date -u +%T)"
magnet_unload || true
ok "benchmarks ran (no timing assertions)"
done_testing
