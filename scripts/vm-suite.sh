#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The VM part of scripts/test.sh: every integration test of tests/vm/ in
# each kernel given, each kernel's boots of its own (t_magnetfs with
# debugfs=off, t_lockdown_raise, the fuzzer), the tests of the paths
# PREEMPT_RT changes in the newest RT kernel, and the README's demo, in
# two lanes side by side: two guests at a time, one a host core.  A guest
# spends much of a test waiting (lingers, pacing, timers, shutdowns), and
# the tests in tcg-single.txt run every vCPU on one host thread, so a
# lone guest leaves a core idle most of the run.
#
#   scripts/vm-suite.sh KVER...     the kernels whose modules are built
#
# The lanes: the first kernel, third, ... in lane 1, the second, fourth,
# ... in lane 2; lane 1's kernels run their multi-threaded batch first,
# lane 2's their one-thread batch first, so that a run the budget cuts
# short has still run every test once; then each kernel's other batch,
# its boots of its own; then the RT tests (lane 1 the multi-threaded
# ones, lane 2 those of tcg-single.txt) and the demo (lane 2).
#
# A step starts only if its estimate (minutes on a slow CI machine) fits
# in MAGNET_CI_BUDGET_MIN (default 86) minutes of the run (SECONDS: the
# caller's start); one left out is a "skip - STEP: WHY" line, counted on
# the closing line.
#
# Environment:
#   SUITE_DIR              results and times (scripts/suite-lib.sh); unset:
#                          build/suite, and this script reports and ends
#                          with "N passed, M failed, K skipped" itself
#   SUITE_VM_RESULTS       where the VM steps' results go (default
#                          build/vm-results: KVER/batch/..., KVER/NAME/)
#   MAGNET_SUITE_LANES     1 or 2 (default 2)
#   MAGNET_SUITE_TESTS     the tests to run (names of tests/vm/t_*.sh;
#                          default all)
#   MAGNET_SUITE_EXTRAS    0: no boots of their own
#   MAGNET_RT_TESTS        the tests of the RT kernel (default below)
#   MAGNET_SUITE_RT        the RT kernel to run them in (default the newest
#                          installed RT kernel, none when MAGNET_KERNELS is
#                          set or it is one of KVER); "none": none
#   MAGNET_SUITE_DEMO      0: no demo (default 1: scripts/demo.sh in the
#                          last kernel, with the Release build)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. scripts/suite-lib.sh

[ $# -ge 1 ] || { echo "usage: $0 KVER..." >&2; exit 2; }
own_report=
if [ -z "${SUITE_DIR:-}" ]; then
	own_report=1
	suite_init "$top/build/suite"
fi
kernels=("$@")
res=${SUITE_VM_RESULTS:-build/vm-results}
lanes=${MAGNET_SUITE_LANES:-2}
case $lanes in
1 | 2) ;;
*) echo "vm-suite: MAGNET_SUITE_LANES must be 1 or 2, not '$lanes'" >&2; exit 2 ;;
esac

# the VM tests CI runs in the newest PREEMPT_RT kernel
rt_tests=${MAGNET_RT_TESTS:-"t_stress t_readpath t_magnetfs t_synth t_corr t_sockstat t_hotplug t_bufmode"}

# Tests that switch hooks on and off in code both vCPUs run all the time run
# with every vCPU in one host thread (the list and why: tests/vm/tcg-single.txt)
tcg_single_tests=$(grep -v '^#' tests/vm/tcg-single.txt)
tcg_single() {	# TEST-NAME
	grep -qw -- "$1" <<<"$tcg_single_tests"
}
single_opts=${MAGNET_VM_QEMU_OPTS:-"-accel tcg,thread=single"}

ci_budget=${MAGNET_CI_BUDGET_MIN:-86}
in_budget() {	# in_budget STEP EST-MINUTES
	local used=$((SECONDS / 60))

	[ $((used + $2)) -le "$ci_budget" ] && return 0
	skip "$1" "$used min elapsed, and its $2 more would pass the $ci_budget min budget (MAGNET_CI_BUDGET_MIN)"
	return 1
}

# vm_batch KVER NAME OPTS TEST...: the tests in as few boots as they take
# (scripts/vm-batch.sh: one boot runs them one after the other, a test in
# which the guest dies fails and the rest get a boot of their own; each
# test's slice of the kernel log is checked), results in
# build/vm-results/KVER/NAME/; a test that skips itself fails, as here
# every test must run.  Each test's time and each boot's own (boot,
# shutdown, log checks) are rows of the time table.
vm_batch() {
	local k=$1 name=$2 opts=$3 line t s
	shift 3
	while IFS= read -r line; do
		case $line in
		"ok - $k "*" # SKIP") line=${line#ok - }; result "${line% # SKIP} (skipped itself)" 1 ;;
		"ok - $k "*) result "${line#ok - }" 0 ;;
		"not ok - $k "*) result "${line#not ok - }" 1 ;;
		"batch: "*" rc="*" s)")
			echo "$line"
			t=${line#batch: }
			s=${line##*(}
			time_row "${s% s)}" "$k ${t%% *}"
			;;
		"# vm-batch: boot "*" s in all, "*" s in its tests")
			echo "$line"
			read -r _ _ _ t s _ <<<"$line"
			s=$((s - $(sed 's/.* in all, \([0-9]*\) s in its tests/\1/' <<<"$line")))
			time_row $((s > 0 ? s : 0)) "$k $name boot ${t%:}: boot, shutdown, log checks"
			;;
		*) echo "$line" ;;
		esac
	done < <(MAGNET_VM_QEMU_OPTS=$opts ./scripts/vm-batch.sh \
		-o "$res/$k/$name" "$k" "$@")
}

# the kernels' tests, in two batches, not a boot each (a boot costs about
# 20 s): those that toggle hooks in code both vCPUs run all the time on
# one host thread (tcg-single.txt), with the races (3-4 minutes, without
# the CPU hotplug of the debug tier's runs, which once made these
# kernels warn on their own: tests/vm/README.md, "Fuzzing and races";
# t_hotplug covers MAGNET under hotplug), the others multi-threaded
multi=()
single=()
for t in ${MAGNET_SUITE_TESTS:-$(cd tests/vm && ls t_*.sh | sed 's/\.sh$//')}; do
	case $t in
	# a locked-down boot of a kernel that trusts the modules' key: the
	# debug-kernel tier's (scripts/debug-tier.sh)
	t_lockdown) continue ;;
	# raises lockdown for good: a boot of its own (extras)
	t_lockdown_raise) continue ;;
	# the installed Debian packages' test: scripts/deb-test.sh installs
	# them on the machine first, a tier of its own (docs/INSTALL.md)
	t_deb) continue ;;
	# last: it installs the DKMS package in the guest
	t_dkms) continue ;;
	esac
	if tcg_single "$t"; then single+=("$t"); else multi+=("$t"); fi
done
[ -z "${MAGNET_SUITE_TESTS:-}" ] && multi+=(t_dkms)
[ -z "${MAGNET_SUITE_TESTS:-}" ] && single+=(races)

batch_multi() {	# KVER
	[ ${#multi[@]} -gt 0 ] || return 0
	in_budget "$1 batch (${multi[*]})" 34 &&
		vm_batch "$1" batch "${MAGNET_VM_QEMU_OPTS:-}" "${multi[@]}"
}
batch_single() {	# KVER
	[ ${#single[@]} -gt 0 ] || return 0
	in_budget "$1 batch-tcg-single (${single[*]})" 12 &&
		MAGNET_RACE_HOTPLUG_S=0 vm_batch "$1" batch-tcg-single "$single_opts" "${single[@]}"
}
# own_boot KVER NAME DIR EST-MINUTES SCRIPT [VM-RUN-OPTION...]: a boot of
# its own, results in $res/KVER/DIR
own_boot() {
	local k=$1 name=$2 dir=$3 est=$4 script=$5
	shift 5
	in_budget "$k $name" "$est" || return 0
	timed "$k $name (a boot of its own)" vm_run -o "$res/$k/$dir" "$@" "$k" "$script"
	result "$k $name" $?
}
# vm_run ARGS...: scripts/vm-run.sh, its verdict line a comment (the
# verdict counted is result()'s)
vm_run() {
	./scripts/vm-run.sh "$@" | sed -E 's/^(not )?ok - /# vm-run: &/'
	return "${PIPESTATUS[0]}"
}
extras() {	# KVER
	[ "${MAGNET_SUITE_EXTRAS:-1}" = 1 ] || return 0
	# a kernel without debugfs (many production kernels): magnetfs alone
	MAGNET_VM_APPEND=debugfs=off own_boot "$1" "t_magnetfs with debugfs=off" \
		t_magnetfs-debugfs-off 4 tests/vm/t_magnetfs.sh
	# lockdown raised to confidentiality with MAGNET loaded: cannot be
	# undone, so alone in its boot
	own_boot "$1" t_lockdown_raise t_lockdown_raise 4 tests/vm/t_lockdown_raise.sh
	# the bounded fuzzer, 75 s with today's seed (printed: replay with
	# MAGNET_FUZZ_SEED=S), on one vCPU: toggling hooks under traffic
	# hangs (6.1) or crashes (6.12) a guest with two vCPUs under TCG with
	# no MAGNET bug, as its stale translation of a patched instruction
	# shows (tests/vm/README.md, "Text patching under TCG")
	own_boot "$1" fuzz fuzz 4 tests/vm/fuzz.sh -c 1
}

# The newest PREEMPT_RT kernel, unless booted above for the whole suite:
# the tests of the paths RT changes (spinlocks that sleep, irq_work and
# timers in threads, the raw locks' irq-off sections), in two batches.
# The whole suite in it by hand: MAGNET_KERNELS=<6.12-rt release> ./scripts/test.sh
rt=${MAGNET_SUITE_RT:-}
if [ -z "$rt" ] && [ -z "${MAGNET_KERNELS:-}" ]; then
	rt=$(MAGNET_RT_KERNELS=newest ./scripts/kernels.sh | tail -n 1)
	grep -qs '^CONFIG_PREEMPT_RT=y' "/boot/config-$rt" || rt=
	printf '%s\n' "${kernels[@]}" | grep -qx -- "$rt" && rt=
fi
[ "$rt" = none ] && rt=
rt_multi=()
rt_single=()
for t in $rt_tests; do
	if tcg_single "$t"; then rt_single+=("$t"); else rt_multi+=("$t"); fi
done
rt_batch() {	# multi|single
	[ -n "$rt" ] || return 0
	if [ "$1" = multi ] && [ ${#rt_multi[@]} -gt 0 ]; then
		in_budget "$rt (PREEMPT_RT) batch (${rt_multi[*]})" 30 &&
			vm_batch "$rt" batch "${MAGNET_VM_QEMU_OPTS:-}" "${rt_multi[@]}"
	elif [ "$1" = single ] && [ ${#rt_single[@]} -gt 0 ]; then
		in_budget "$rt (PREEMPT_RT) batch-tcg-single (${rt_single[*]})" 12 &&
			vm_batch "$rt" batch-tcg-single "$single_opts" "${rt_single[@]}"
	fi
}

# The README's first command, as a user runs it (the Release build that
# scripts/test.sh made, the modules it built)
demo() {
	local k=${kernels[${#kernels[@]} - 1]} log=$res/demo.log
	[ "${MAGNET_SUITE_DEMO:-1}" = 1 ] || return 0
	in_budget "scripts/demo.sh in $k" 4 || return 0
	MAGNET_BUILD=$top/build/release timed "scripts/demo.sh in $k" ./scripts/demo.sh "$k" \
		>"$log" 2>&1
	result "scripts/demo.sh in $k (README's first command; $log)" $?
}

# lane N: its kernels' steps, then its RT batch (and lane 2 the demo)
lane() {
	local n=$1 i k
	for i in "${!kernels[@]}"; do
		[ $((i % 2 + 1)) -eq "$n" ] || continue
		k=${kernels[$i]}
		if [ "$n" -eq 1 ]; then
			batch_multi "$k"; batch_single "$k"
		else
			batch_single "$k"; batch_multi "$k"
		fi
		extras "$k"
	done
	if [ "$n" -eq 1 ]; then
		rt_batch multi
	else
		rt_batch single
		demo
	fi
}

echo "== the VM suite: ${kernels[*]}${rt:+, $rt (PREEMPT_RT: $rt_tests)}, in $lanes lane(s)"
if [ "$lanes" -eq 2 ]; then
	lane 1 &
	l1=$!
	lane 2
	wait "$l1"
else
	lane 1
	lane 2
fi
if [ -n "$own_report" ]; then
	suite_report "$SECONDS"
	exit
fi
exit 0
