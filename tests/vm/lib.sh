# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Shared helpers for MAGNET guest test scripts (run inside the VM by
# scripts/vm-run.sh, as root).  Source it first:
#
#	. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#	plan 3
#	netns_setup
#	magnet_load
#	...
#	ok "sender pid matches"  /  not_ok "..." "why"  /  check "desc" cmd args
#	done_testing            # prints "N passed, M failed", exits 0/1/4
#
# Exit codes follow kselftest: 0 pass, 1 fail, 4 skip (see skip_all).
# The helpers are safe under "set -e", but the assertion helpers (check,
# check_eq, check_dmesg_clean) return non-zero when the assertion fails so
# that "check ... || diag ..." works: a test script that wants to report
# every assertion should not use set -e (or append "|| true").
# Everything started through these helpers (namespaces, modules, background
# processes) is cleaned up on exit.
#
# Paths, all overridable from the environment (vm-run.sh passes MAGNET_*
# through); defaults are relative to this repo, wherever it is cloned:
#	MAGNET_REPO	repo root
#	MAGNET_BUILD	$MAGNET_REPO/build
#	MAGNET_TOOLS	$MAGNET_BUILD/tests/tools (tcp_sender, tcp_sink, ...)
#	MAGNET_MODDIR	$MAGNET_BUILD/modules/$(uname -r)
#	MAGNET_MODULES	"magnet magnet_net" (loaded in this order)
#	MAGNETCTL	$MAGNET_BUILD/magnetctl/magnetctl
#	MAGNET_RESULTS	writable results dir (vm-run.sh sets it; else a /tmp dir)
#	CHECK_TRACE	python3 tests/tools/check_trace.py (an array)

MAGNET_REPO=${MAGNET_REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
MAGNET_BUILD=${MAGNET_BUILD:-$MAGNET_REPO/build}
MAGNET_TOOLS=${MAGNET_TOOLS:-$MAGNET_BUILD/tests/tools}
MAGNET_MODDIR=${MAGNET_MODDIR:-$MAGNET_BUILD/modules/$(uname -r)}
MAGNET_MODULES=${MAGNET_MODULES:-magnet magnet_net}
MAGNETCTL=${MAGNETCTL:-$MAGNET_BUILD/magnetctl/magnetctl}
if [ -z "${MAGNET_RESULTS:-}" ]; then
	MAGNET_RESULTS=$(mktemp -d /tmp/magnet-results.XXXXXX)
fi
mkdir -p "$MAGNET_RESULTS"
CHECK_TRACE=(python3 "$MAGNET_REPO/tests/tools/check_trace.py")
export MAGNET_REPO MAGNET_BUILD MAGNET_TOOLS MAGNET_MODDIR MAGNETCTL MAGNET_RESULTS
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH

# The test network: two namespaces joined by one veth pair, nothing else.
NS_A=mgA
NS_B=mgB
VETH_A=mgveth0		# in $NS_A
VETH_B=mgveth1		# in $NS_B
IP_A=10.77.0.1
IP_B=10.77.0.2
NET_MTU=1500

# ------------------------------------------------------------------
# TAP output
# ------------------------------------------------------------------
_tap_n=0
_tap_pass=0
_tap_fail=0
_tap_skip=0
_tap_plan=

# plan N: announce the number of assertions (optional; checked at the end).
plan() {
	_tap_plan=$1
	echo "TAP version 13"
	echo "1..$1"
}

diag() {
	local l
	while IFS= read -r l; do echo "# $l"; done <<<"$*"
}

# ok DESC
ok() {
	_tap_n=$((_tap_n + 1))
	_tap_pass=$((_tap_pass + 1))
	echo "ok $_tap_n - $1"
}

# not_ok DESC [DIAGNOSTIC...]
not_ok() {
	_tap_n=$((_tap_n + 1))
	_tap_fail=$((_tap_fail + 1))
	echo "not ok $_tap_n - $1"
	shift
	[ $# -eq 0 ] || diag "$*"
}

# skip DESC REASON: an assertion that could not be made.
skip() {
	_tap_n=$((_tap_n + 1))
	_tap_skip=$((_tap_skip + 1))
	echo "ok $_tap_n - $1 # SKIP ${2:-}"
}

# check DESC CMD [ARGS...]: ok if CMD succeeds, else not_ok with its output.
check() {
	local desc=$1 out rc=0
	shift
	out=$("$@" 2>&1) || rc=$?
	if [ $rc -eq 0 ]; then
		ok "$desc"
	else
		not_ok "$desc" "command failed (exit $rc): $*" "$out"
	fi
	return $rc
}

# tap_import FILE RC: count the TAP lines a helper program wrote to FILE
# ("ok - DESC", "not ok - DESC # WHY", "# DIAG") as this test's assertions.
# RC is the helper's exit status: a helper that died (a traceback, a
# missing module) or wrote no check at all is a failure of its own, never
# a silent pass with the checks it did not reach.
tap_import() {
	local line w n=0 nok=0 file=$1 rc=${2:?tap_import FILE RC: the helper exit status missing}
	while IFS= read -r line; do
		case $line in
		"ok - "*) n=$((n + 1)); ok "${line#ok - }" ;;
		"not ok - "*) n=$((n + 1)); nok=$((nok + 1)); w=${line#not ok - }
			not_ok "${w%% # *}" "${w#* # }" ;;
		"# "*) diag "${line#\# }" ;;
		esac
	done <"$file"
	if [ "$n" -eq 0 ]; then
		not_ok "$(basename "$file"): the helper wrote no check (exit $rc)" \
			"$(tail -n 5 "$file")"
	elif [ "$rc" -ne 0 ] && [ "$nok" -eq 0 ]; then
		not_ok "$(basename "$file"): the helper failed (exit $rc) after $n checks" \
			"$(tail -n 5 "$file")"
	fi
}

# check_eq DESC EXPECTED ACTUAL
check_eq() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		not_ok "$1" "expected '$2', got '$3'"
		return 1
	fi
}

# skip_all REASON: nothing can be tested here (kselftest exit 4).
skip_all() {
	echo "1..0 # SKIP $*"
	_tap_skipped_all=1
	exit 4
}

# bail_out REASON: a broken precondition, stop with failure.
bail_out() {
	echo "Bail out! $*"
	_tap_fail=$((_tap_fail + 1))
	done_testing
}

# done_testing: summary line "N passed, M failed"; exit 0 / 1 / 4 (all skipped).
done_testing() {
	local rc=0
	if [ -n "$_tap_plan" ] && [ "$_tap_plan" -ne "$_tap_n" ]; then
		echo "# planned $_tap_plan assertions but ran $_tap_n"
		_tap_fail=$((_tap_fail + 1))
	fi
	[ $_tap_skip -eq 0 ] || echo "# $_tap_skip skipped"
	echo "$_tap_pass passed, $_tap_fail failed"
	if [ $_tap_fail -gt 0 ]; then
		rc=1
	elif [ $_tap_pass -eq 0 ] && [ $_tap_skip -gt 0 ]; then
		rc=4
	fi
	_tap_done=1
	exit $rc
}

# ------------------------------------------------------------------
# Cleanup: callbacks run in reverse order on exit (also on errors).
# ------------------------------------------------------------------
_cleanups=()

# on_exit CMD...: run CMD (one string, eval'd) when the script exits.
on_exit() {
	_cleanups+=("$*")
}

_lib_exit() {
	local rc=$? i
	trap - EXIT
	set +e
	for ((i = ${#_cleanups[@]} - 1; i >= 0; i--)); do
		eval "${_cleanups[i]}" >/dev/null 2>&1
	done
	if [ -z "${_tap_done:-}" ] && [ -z "${_tap_skipped_all:-}" ] && [ $_tap_n -gt 0 ]; then
		# The script exited without done_testing: still print the summary.
		echo "# script exited early (status $rc)"
		[ $rc -ne 0 ] || rc=1
		echo "$_tap_pass passed, $((_tap_fail + 1)) failed"
	fi
	exit $rc
}
trap _lib_exit EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------------
# Small utilities
# ------------------------------------------------------------------

# need_root / need_cmd CMD...: skip the whole test if missing.
need_root() {
	[ "$(id -u)" -eq 0 ] || skip_all "must run as root (use scripts/vm-run.sh)"
}

need_cmd() {
	local c
	for c; do
		command -v "$c" >/dev/null || skip_all "command '$c' not found"
	done
}

# need_tools [NAME...]: the traffic tools (default: all four) must be built.
need_tools() {
	local t
	[ $# -gt 0 ] || set -- tcp_sender tcp_sink udp_flood udp_sink
	for t; do
		[ -x "$MAGNET_TOOLS/$t" ] ||
			skip_all "$MAGNET_TOOLS/$t not built (cmake --build build)"
	done
}

# wait_line FILE REGEX [TIMEOUT_S=10]: wait until FILE has a line matching
# the extended REGEX; 1 on timeout.
wait_line() {
	local file=$1 re=$2 t=${3:-10} i
	for ((i = 0; i < t * 20; i++)); do
		grep -qE -- "$re" "$file" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# kv FILE KEY: the value of the last "KEY=value" word in FILE (tool output).
kv() {
	grep -oE "(^|[[:space:]])$2=[^[:space:]]*" "$1" 2>/dev/null | tail -n 1 |
		sed -E "s/^[[:space:]]*$2=//"
}

# bg NAME CMD...: start CMD in the background, stdout+stderr into
# $MAGNET_RESULTS/NAME.out; killed on exit if still running.
# BG_PID[NAME] is its pid (CMD's own, also for "in_a/in_b CMD" and
# "magnetctl ...", so kill -INT "${BG_PID[NAME]}" reaches it).  Wait for
# it with bg_wait.
declare -A BG_PID=()
bg() {
	local name=$1
	shift
	# Namespaced commands are exec'd by ip(8), so $! is the command itself.
	case $1 in
	in_a) set -- ip netns exec "$NS_A" "${@:2}" ;;
	in_b) set -- ip netns exec "$NS_B" "${@:2}" ;;
	magnetctl) set -- "$MAGNETCTL" "${@:2}" ;;
	esac
	"$@" >"$MAGNET_RESULTS/$name.out" 2>&1 &
	BG_PID[$name]=$!
	on_exit "kill ${BG_PID[$name]}"
}

# bg_wait NAME [TIMEOUT_S=30]: wait for it, return its exit status
# (124 and kill after the timeout).
bg_wait() {
	local name=$1 t=${2:-30} pid=${BG_PID[$1]} i
	for ((i = 0; i < t * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		return 124
	fi
	wait "$pid"
}

# record_started NAME [SECONDS]: wait until the "magnetctl record" started
# as bg job NAME says "recording" (its stream is open, SIGINT handled: a
# background job starts with SIGINT ignored until magnetctl sets it).
record_started() {
	wait_line "$MAGNET_RESULTS/$1.out" '^magnetctl: recording ' "${2:-20}"
}

# out NAME: path of a bg job's output file.
out() {
	echo "$MAGNET_RESULTS/$1.out"
}

# ------------------------------------------------------------------
# Network: two namespaces and a veth pair
# ------------------------------------------------------------------

# in_a CMD... / in_b CMD...: run CMD inside namespace mgA / mgB.
in_a() { ip netns exec "$NS_A" "$@"; }
in_b() { ip netns exec "$NS_B" "$@"; }

# netns_setup [MTU=1500]: mgA (10.77.0.1/24, mgveth0) <-> mgB (10.77.0.2/24,
# mgveth1), IPv6 off, static neighbours (no ARP traffic), segmentation and
# receive offloads off so every skb is wire sized.  Torn down on exit.
netns_setup() {
	local mtu=${1:-$NET_MTU} ns dev mac_a mac_b bad
	NET_MTU=$mtu
	netns_teardown
	modprobe veth 2>/dev/null || true
	ip netns add "$NS_A" || return 1
	ip netns add "$NS_B" || return 1
	on_exit netns_teardown
	ip link add "$VETH_A" netns "$NS_A" type veth peer name "$VETH_B" netns "$NS_B" || return 1
	for ns in "$NS_A" "$NS_B"; do
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 || true
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 || true
		ip -n "$ns" link set lo up
	done
	ip -n "$NS_A" addr add "$IP_A/24" dev "$VETH_A"
	ip -n "$NS_B" addr add "$IP_B/24" dev "$VETH_B"
	for ns in "$NS_A:$VETH_A" "$NS_B:$VETH_B"; do
		dev=${ns#*:}
		ns=${ns%%:*}
		ip -n "$ns" link set "$dev" mtu "$mtu" || return 1
		ip netns exec "$ns" ethtool -K "$dev" tso off gso off gro off \
			>/dev/null 2>&1 || true
		# Not every kernel knows every feature name; ignore those.
		ip netns exec "$ns" ethtool -K "$dev" tx-udp-segmentation off \
			>/dev/null 2>&1 || true
		ip netns exec "$ns" ethtool -K "$dev" rx-gro-list off >/dev/null 2>&1 || true
		ip -n "$ns" link set "$dev" up || return 1
		bad=$(ip netns exec "$ns" ethtool -k "$dev" |
			grep -E '^(tcp-segmentation-offload|generic-segmentation-offload|generic-receive-offload):' |
			grep -v ': off' || true)
		if [ -n "$bad" ]; then
			echo "netns_setup: offloads still on for $dev: $bad" >&2
			return 1
		fi
	done
	mac_a=$(ip -n "$NS_A" -br link show "$VETH_A" | awk '{print $3}')
	mac_b=$(ip -n "$NS_B" -br link show "$VETH_B" | awk '{print $3}')
	ip -n "$NS_A" neigh replace "$IP_B" lladdr "$mac_b" dev "$VETH_A" nud permanent
	ip -n "$NS_B" neigh replace "$IP_A" lladdr "$mac_a" dev "$VETH_B" nud permanent
	IFINDEX_A=$(ip netns exec "$NS_A" cat "/sys/class/net/$VETH_A/ifindex")
	IFINDEX_B=$(ip netns exec "$NS_B" cat "/sys/class/net/$VETH_B/ifindex")
	export IFINDEX_A IFINDEX_B
}

netns_teardown() {
	ip netns del "$NS_A" 2>/dev/null || true
	ip netns del "$NS_B" 2>/dev/null || true
	return 0
}

# ------------------------------------------------------------------
# Traffic (tools in $MAGNET_TOOLS; see their source for the options)
# ------------------------------------------------------------------

# tcp_sink_start NAME PORT [SINK_OPTS...]: tcp_sink in mgB, waits until it
# listens.  Output in $(out NAME): ready, pid= ino= (accepted socket), bytes=.
tcp_sink_start() {
	local name=$1 port=$2
	shift 2
	bg "$name" in_b "$MAGNET_TOOLS/tcp_sink" "$@" "$port"
	wait_line "$(out "$name")" '^ready' 10
}

# udp_sink_start NAME PORT [EXPECT] [SINK_OPTS...] (opts first if both).
udp_sink_start() {
	local name=$1 port=$2
	shift 2
	bg "$name" in_b "$MAGNET_TOOLS/udp_sink" "$port" "$@"
	wait_line "$(out "$name")" '^ready' 10
}

# tcp_send NAME COUNT [SENDER_OPTS...]: tcp_sender in mgA to $IP_B:5001
# (override with TCP_PORT), in the foreground; output in $(out NAME).
tcp_send() {
	local name=$1 count=$2
	shift 2
	in_a "$MAGNET_TOOLS/tcp_sender" "$@" "$IP_B" "${TCP_PORT:-5001}" "$count" \
		>"$(out "$name")" 2>&1
}

# udp_send NAME COUNT SIZE [FLOOD_OPTS...]: udp_flood in mgA to $IP_B:5002
# (override with UDP_PORT), in the foreground.
udp_send() {
	local name=$1 count=$2 size=$3
	shift 3
	in_a "$MAGNET_TOOLS/udp_flood" "$@" "$IP_B" "${UDP_PORT:-5002}" "$count" "$size" \
		>"$(out "$name")" 2>&1
}

# ------------------------------------------------------------------
# Kernel log
# ------------------------------------------------------------------
_dmesg_mark=

# dmesg_mark: later check_dmesg_clean calls only look at newer lines.
dmesg_mark() {
	_dmesg_mark="magnet-test-mark-$$-$RANDOM"
	echo "$_dmesg_mark" >/dev/kmsg
}

# dmesg_suspicious: print kernel log lines (since the last dmesg_mark)
# matching tests/vm/dmesg-patterns.txt, minus $MAGNET_DMESG_IGNORE.  A
# mark that has scrolled out of the kernel's log buffer leaves the whole
# buffer to scan, not nothing (the host scans the log streamed from the
# start as well: scripts/vm-run.sh).
dmesg_suspicious() {
	local log
	log=$(dmesg)
	if [ -n "$_dmesg_mark" ]; then
		if grep -q -- "$_dmesg_mark" <<<"$log"; then
			log=$(sed -n "/$_dmesg_mark/,\$p" <<<"$log")
		else
			diag "the kernel log wrapped past this test's mark: scanning all of it" >&2
		fi
	fi
	"$MAGNET_REPO/tests/vm/log-reports.sh" <<<"$log"
}

# check_dmesg_clean [DESC]: one TAP assertion that the kernel log is clean.
check_dmesg_clean() {
	local bad
	bad=$(dmesg_suspicious)
	if [ -z "$bad" ]; then
		ok "${1:-kernel log clean}"
	else
		not_ok "${1:-kernel log clean}" "$(head -n 20 <<<"$bad")"
		return 1
	fi
}

# ------------------------------------------------------------------
# MAGNET modules and magnetctl
# ------------------------------------------------------------------
_magnet_loaded=()

# need_magnet: skip the test unless the modules and magnetctl are built.
need_magnet() {
	local m
	for m in $MAGNET_MODULES; do
		[ -f "$MAGNET_MODDIR/$m.ko" ] ||
			skip_all "$MAGNET_MODDIR/$m.ko not built for $(uname -r)"
	done
	[ -x "$MAGNETCTL" ] || skip_all "$MAGNETCTL not built"
}

# magnet_load [MODULE ARGS...]: insmod every module of $MAGNET_MODULES from
# $MAGNET_MODDIR in order (module parameters can be given to the first one:
# magnet_load subbuf_size=4096), and mount magnetfs on /sys/kernel/magnet
# after the core, as the packaged sys-kernel-magnet.mount unit does (the
# module mounts nothing itself).  Unloaded on exit in reverse order.
magnet_load() {
	local m first=1 ko
	for m in $MAGNET_MODULES; do
		ko=$MAGNET_MODDIR/$m.ko
		if [ $first -eq 1 ]; then
			insmod "$ko" "$@" || { echo "magnet_load: insmod $ko failed" >&2; return 1; }
			first=0
		else
			insmod "$ko" || { echo "magnet_load: insmod $ko failed" >&2; return 1; }
		fi
		_magnet_loaded+=("$m")
		if [ "$m" = magnet ]; then
			magnetfs_mount || { echo "magnet_load: cannot mount magnetfs on /sys/kernel/magnet" >&2; return 1; }
		fi
	done
	on_exit magnet_unload
}

# magnetfs_mount: mount magnetfs on /sys/kernel/magnet unless it is there
magnetfs_mount() {
	magnetfs_mounted || mount -t magnetfs magnetfs /sys/kernel/magnet
}

# magnetfs_umount_all: unmount every magnetfs mount, the one on
# /sys/kernel/magnet included (rmmod magnet is refused while one exists);
# 1 if one stays (a file still open).
magnetfs_umount_all() {
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		grep -q ' magnetfs ' /proc/mounts || return 0
		umount -a -t magnetfs 2>/dev/null || sleep 0.3
	done
	! grep -q ' magnetfs ' /proc/mounts
}

# magnetfs_mounted: magnetfs is mounted on /sys/kernel/magnet
magnetfs_mounted() {
	grep -q '^[^ ]* /sys/kernel/magnet magnetfs ' /proc/mounts
}

# magnet_unload: rmmod what magnet_load loaded, in reverse order, after
# unmounting magnetfs; 1 if any rmmod failed (e.g. a stream still open).
magnet_unload() {
	local i rc=0
	for ((i = ${#_magnet_loaded[@]} - 1; i >= 0; i--)); do
		[ "${_magnet_loaded[i]}" = magnet ] && { magnetfs_umount_all || rc=1; }
		rmmod "${_magnet_loaded[i]}" || rc=1
	done
	_magnet_loaded=()
	return $rc
}

# refused_eacces DESC CMD...: an assertion that CMD fails for lack of
# permission (its error says "Permission denied": EACCES or EPERM's text
# from the tools), not for any other reason, and neither hangs (10 s) nor
# succeeds
_refused_n=0
refused_eacces() {
	local desc=$1 name rc out

	shift
	# a bg job, not timeout(1): CMD may be a shell function (a test's
	# "nobody" wrapper)
	_refused_n=$((_refused_n + 1))
	name=refused$_refused_n
	bg "$name" "$@" </dev/null
	bg_wait "$name" 10
	rc=$?
	out=$(head -c 300 "$(out "$name")")
	if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "Permission denied" <<<"$out"; then
		ok "$desc"
	else
		not_ok "$desc" "exit $rc${out:+: $out}"
	fi
}

# magnetctl ARGS...: run the built magnetctl.
magnetctl() {
	"$MAGNETCTL" "$@"
}

# dump_count TRACE EVENT: records of EVENT in TRACE, by the event column of
# "magnetctl dump" (the EVENTDEF line that names EVENT is not one of them).
# A dump that fails (a damaged or cut trace) prints "dump-failed(RC): its
# error" instead of a number, so no count read before the damage passes a
# comparison (and the failing check shows the error).
dump_count() {
	local out rc err

	err=$(mktemp)
	out=$("$MAGNETCTL" dump --no-header "$1" 2>"$err" | awk -F'\t' -v e="$2" '$4 == e' | wc -l;
		exit "${PIPESTATUS[0]}")
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "dump-failed($rc): $(head -c 200 "$err" | tr '\n' ' ')"
	else
		echo "$out"
	fi
	rm -f "$err"
	return $rc
}

# ctl_list OBJECT: "magnetctl -j OBJECT list" (probe, stream, synth, ...)
# on stdout; a listing that fails prints "list-failed(RC): its error" and
# returns RC, so "none left" is never read from an error.
ctl_list() {
	local out rc

	out=$("$MAGNETCTL" -j "$1" list 2>&1)
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "list-failed($rc): $(head -c 200 <<<"$out" | tr '\n' ' ')"
		return $rc
	fi
	printf '%s\n' "$out"
}

# list_count OBJECT ERE: the objects of "magnetctl -j OBJECT list" whose
# name matches the extended regex ERE (ctl_list's error otherwise).
list_count() {
	local out rc

	out=$(ctl_list "$1")
	rc=$?
	[ $rc -eq 0 ] || { echo "$out"; return $rc; }
	python3 -c '
import json, re, sys
d = json.load(sys.stdin)
if isinstance(d, dict):
    d = next(v for v in d.values() if isinstance(v, list))
print(sum(1 for o in d if re.search(sys.argv[1], o["name"])))' "$2" <<<"$out"
}

# list_field OBJECT NAME FIELD: FIELD of the object NAME in "magnetctl -j
# OBJECT list" (a probe's hits, a synthesizer's missed, ...); summed over
# the entries of that name (a probe's, one per CPU).  ctl_list's error,
# or "no-OBJECT" when there is none.
list_field() {
	local out rc

	out=$(ctl_list "$1")
	rc=$?
	[ $rc -eq 0 ] || { echo "$out"; return $rc; }
	python3 -c '
import json, sys
d = json.load(sys.stdin)
if isinstance(d, dict):
    d = next(v for v in d.values() if isinstance(v, list))
v = [o[sys.argv[3]] for o in d if o["name"] == sys.argv[2]]
print(sum(v) if v and all(isinstance(x, int) for x in v)
      else str(v[0]) if v else "no-" + sys.argv[1])' "$1" "$2" "$3" <<<"$out"
}

# stream_field STREAM FIELD: a counter of "magnetctl -j stream list"
# (produced, written, lost, read, ...) of STREAM; "no-stream" when there
# is none.
stream_field() {
	list_field stream "$1" "$2"
}

# probe_hits PROBE: the events PROBE offered to its stream (0 when there
# is no such probe: a module unloaded).
probe_hits() {
	local v

	v=$(list_field probe "$1" hits)
	[ "$v" = no-probe ] && v=0
	echo "$v"
}

# expect_fail DESC EXIT ERE CMD...: CMD fails with exit status EXIT and
# its stderr matches the extended regex ERE.
expect_fail() {
	local desc=$1 want=$2 re=$3 err rc
	shift 3
	err=$("$@" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" -eq "$want" ] && grep -qE -- "$re" <<<"$err"; then
		ok "$desc"
	else
		not_ok "$desc" "exit $rc (want $want), stderr: $err"
	fi
}

# possible_cpus: how many CPUs the kernel sizes its per-CPU things for
# (num_possible_cpus(); nproc counts the online ones, or fewer)
possible_cpus() {
	awk -F, '{n = 0; for (i = 1; i <= NF; i++) { split($i, r, "-"); n += (r[2] == "" ? 1 : r[2] - r[1] + 1) } print n}' /sys/devices/system/cpu/possible
}

# selftest_wait [SECONDS=60]: until magnet_selftest's producers are done
# (at most SECONDS); prints how many still run and succeeds when none does.
selftest_wait() {
	local t=${1:-60} r i

	for ((i = 0; i < t * 10; i++)); do
		r=$(cat /sys/module/magnet_selftest/parameters/running)
		[ "$r" = 0 ] && break
		sleep 0.1
	done
	echo "$r"
	[ "$r" = 0 ]
}

# check_trace ARGS...: run tests/tools/check_trace.py (TAP on stdout). Its
# assertions are not counted by this library; use it through check, e.g.
#	check "trace is valid" check_trace "$t" --mtu 1500
check_trace() {
	"${CHECK_TRACE[@]}" "$@"
}
