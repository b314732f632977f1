#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run VM tests in as few boots as they take: one boot runs them one after
# the other (tests/vm/batch.sh in the guest, each test through
# guest-run.sh as a boot of its own would run it).  For kernels whose boot
# costs more than their tests: the debug-kernel tier's (3-9 minutes under
# TCG), scripts/debug-tier.sh.
#
#   scripts/vm-batch.sh [-o DIR] KVER TEST...     TEST: NAME of tests/vm/NAME.sh
#
# A test in which the guest dies, or hangs (no test has started or ended
# for MAGNET_VM_TIMEOUT + MAGNET_VM_BATCH_GRACE s, default 300: the guest
# is stopped), fails, and the tests after it get a boot of their own; a
# boot that starts no test at all fails the tests it had.  Each test's
# slice of the kernel log (from guest-run.sh's start marker to its end
# marker, or to the end of the log) is checked against
# tests/vm/dmesg-patterns.txt; a report outside every slice (the whole
# boot's log, checked by vm-run.sh) fails that boot.
#
#   -o DIR   results (default build/vm-results/KVER/batch): DIR/boot-N/ has
#            vm-run.sh's files of boot N (vm-run.log its output), and
#            DIR/boot-N/TEST/ each test's (batch.sh, guest-run.sh).
#
# MAGNET_VM_TIMEOUT (default 600): each test's limit.  MAGNET_VM_QEMU_OPTS
# and every other MAGNET_* variable go to vm-run.sh as usual.
# MAGNET_VM_BATCH_EACH=1 boots once per test.  Prints "ok - KVER TEST",
# "ok - KVER TEST # SKIP" or "not ok - KVER TEST" per test, as vm-run.sh,
# "batch: TEST rc=RC (S s)" per test and "# vm-batch: boot N: E s in all,
# S s in its tests" per boot (scripts/vm-suite.sh's time table);
# exit status 0 if no test failed, else 1 (2: usage).
set -u
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
	echo "usage: $0 [-o DIR] KVER TEST..." >&2
	exit 2
}
dir=
while getopts "o:h" opt; do
	case $opt in
	o) dir=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || usage
kver=$1
shift
timeout_s=${MAGNET_VM_TIMEOUT:-600}
grace=${MAGNET_VM_BATCH_GRACE:-300}
dir=${dir:-$repo/build/vm-results/$kver/batch}
rm -rf "$dir"
mkdir -p "$dir" || exit 2

fails=0
result() {	# result TEST RC
	case $2 in
	0) echo "ok - $kver $1" ;;
	4) echo "ok - $kver $1 # SKIP" ;;
	*)
		echo "not ok - $kver $1"
		fails=$((fails + 1))
		;;
	esac
}

# log_hits LOG TEST: the suspicious lines of TEST's slice of LOG
log_hits() {
	[ -s "$1" ] || return 0
	awk -v s="magnet-vm: start $2.sh on " -v e="magnet-vm: end $2.sh rc=" \
		'index($0, s) { on = 1 } on { print } on && index($0, e) { exit }' "$1" |
		"$repo/tests/vm/log-reports.sh"
}

# kill_tree PID: PID and every process under it
kill_tree() {
	local c
	for c in $(pgrep -P "$1"); do kill_tree "$c"; done
	kill "$1" 2>/dev/null
}

boots=0
left=()
# boot TEST...: the tests in one boot; those it did not reach in left[]
boot() {
	local out pid start last now t rc hits log
	boots=$((boots + 1))
	out=$dir/boot-$boots
	mkdir -p "$out"
	echo "# vm-batch: boot $boots${MAGNET_VM_QEMU_OPTS:+ ($MAGNET_VM_QEMU_OPTS)}: $*"
	"$repo/scripts/vm-run.sh" -o "$out" -t $(($# * timeout_s + 600)) "$kver" \
		"$repo/tests/vm/batch.sh" "$timeout_s" "$@" >"$out/vm-run.log" 2>&1 &
	pid=$!
	start=$(date +%s)
	# each test's limit holds in the guest: no test started or ended for
	# longer than that means the guest's kernel is stuck
	while kill -0 "$pid" 2>/dev/null; do
		sleep "${MAGNET_VM_BATCH_POLL:-20}"
		last=$(find "$out" -mindepth 1 -maxdepth 2 \( -type d -o -name exit-code \) \
			-printf '%T@\n' | sort -n | tail -n 1)
		last=${last%.*}
		[ "${last:-0}" -gt "$start" ] || last=$start
		now=$(date +%s)
		if [ $((now - last)) -gt $((timeout_s + grace)) ]; then
			echo "# vm-batch: boot $boots: no test started or ended for $((now - last)) s: stopping the guest" |
				tee -a "$out/vm-run.log"
			kill_tree "$pid"
			break
		fi
	done
	wait "$pid"
	grep -E '^# vm-run|^batch: ' "$out/vm-run.log"
	# the boot's own time: all of it less its tests'
	echo "# vm-batch: boot $boots: $(cat "$out/elapsed" 2>/dev/null || echo $(($(date +%s) - start))) s in all, $(sed -n 's/^batch: .* rc=[0-9]* (\([0-9]*\) s)$/\1/p' \
		"$out/vm-run.log" | awk '{ s += $1 } END { print s + 0 }') s in its tests"
	left=()
	for t in "$@"; do
		if [ -s "$out/$t/exit-code" ]; then
			rc=$(cat "$out/$t/exit-code")
			log=$out/$t/dmesg.txt
		elif [ -d "$out/$t" ]; then
			rc=1
			log=$out/kernel-console.log
			echo "# vm-batch: $t did not end: the guest died or hung in it ($log)"
		else
			left+=("$t")
			continue
		fi
		hits=$(log_hits "$log" "$t")
		if [ -n "$hits" ]; then
			echo "# vm-batch: $t: suspicious kernel log lines in its slice of $log:"
			head -n 20 <<<"$hits" | sed 's/^/#   /'
			{ [ "$rc" -eq 0 ] || [ "$rc" -eq 4 ]; } && rc=1
		fi
		result "$t" "$rc"
	done
	if grep -q '^# vm-run: kernel log is dirty' "$out/vm-run.log"; then
		echo "# vm-batch: boot $boots: a report in its kernel log ($out/vm-run.log)"
		result "boot-$boots (kernel log)" 1
	fi
}

each=${MAGNET_VM_BATCH_EACH:-0}
while [ $# -gt 0 ]; do
	if [ "$each" = 1 ]; then
		batch=("$1")
		shift
	else
		batch=("$@")
		set --
	fi
	boot "${batch[@]}"
	if [ ${#left[@]} -eq ${#batch[@]} ]; then
		# it started none of them: a boot that fails before any test
		for t in "${left[@]}"; do
			echo "# vm-batch: boot $boots started no test: $t not run"
			result "$t" 1
		done
	elif [ "$each" != 1 ]; then
		set -- "${left[@]}"
	fi
done
echo "# vm-batch: $kver: $boots boot(s), $fails failed"
[ $fails -eq 0 ]
