#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The debug-kernel tier: MAGNET's VM tests in a kernel with KASAN, UBSAN,
# lockdep, DEBUG_ATOMIC_SLEEP, KMEMLEAK, DEBUG_OBJECTS and PREEMPT
# (scripts/debug-kernel.sh builds it once and caches it outside the
# repo), a kmemleak scan after each test (tests/vm/guest-run.sh), and the
# lockdown boots (tests/vm/t_lockdown.sh under lockdown=integrity and
# lockdown=confidentiality, t_lockdown_raise.sh raising integrity to
# confidentiality; the kernel trusts the key MAGNET's modules are signed
# with).  Any report in the kernel log fails the test
# (tests/vm/dmesg-patterns.txt).
#
#   scripts/debug-tier.sh [TEST...]     TEST: t_NAME, fuzz or races
#                                       (default: every tests/vm/t_*.sh,
#                                       fuzz, races, then debugfs-off and
#                                       lockdown)
#
# MAGNET_DEBUG_TESTS="t_a t_b" also picks the tests; "debugfs-off" stands
# for t_magnetfs in a boot with debugfs=off, "lockdown" (or t_lockdown_raise) for
# the three lockdown boots.  Per-test time limit MAGNET_VM_TIMEOUT
# (default here 1800 s: the debug kernel under TCG is several times
# slower; twice that on single-threaded TCG, where both vCPUs share one
# host thread).  User space must be built (build/).
#
# The kernel boots once for many tests, not once per test (a boot takes
# 3-9 minutes under TCG, more than most tests): scripts/vm-batch.sh runs
# them one after the other in one boot (tests/vm/batch.sh: each through
# guest-run.sh as a boot of its own would run it, with its kmemleak
# scans; a test that leaves modules, mounts, namespaces, an offline CPU
# or a process behind fails), a test the guest dies or hangs in fails and
# the tests after it get a new boot.  Two boots in fact: the tests of
# tests/vm/tcg-single.txt get one on single-threaded TCG.
# MAGNET_VM_BATCH_EACH=1 boots once per test instead.
#
# Results: build/vm-results/RELEASE/batch/boot-N/TEST/ (and
# batch-tcg-single/, t_magnetfs-debugfs-off/, t_lockdown-MODE/,
# t_lockdown_raise/).  Prints
# one "debug-tier: ok - NAME" / "debug-tier: not ok - NAME" line per step
# and the times; exits non-zero if any failed.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export MAGNET_VM_TIMEOUT=${MAGNET_VM_TIMEOUT:-1800}
# races.sh: a control operation slower than this has hung (a loaded host
# runs this kernel up to 5x slower than a quiet one: 30 s did not do)
export MAGNET_RACE_OP_S=${MAGNET_RACE_OP_S:-120}
t0=$(date +%s)
fails=0
skips=0
res() {	# res NAME RC (4: the test skipped itself, e.g. a kernel without IPv6)
	if [ "$2" -eq 0 ]; then
		echo "debug-tier: ok - $1"
	elif [ "$2" -eq 4 ]; then
		skips=$((skips + 1))
		echo "debug-tier: ok - $1 # SKIP"
	else
		fails=$((fails + 1))
		echo "debug-tier: not ok - $1"
	fi
}

rel=$(./scripts/debug-kernel.sh | tail -n 1)
[ -n "$rel" ] && ./scripts/debug-kernel.sh --dir-of "$rel" >/dev/null
rc=$?
res "debug kernel built ($rel)" $rc
[ $rc -eq 0 ] || exit 1
t_kernel=$(($(date +%s) - t0))

mkdir -p build
log=build/modules-$rel.log
./scripts/build-modules.sh "$rel" W=1 >"$log" 2>&1
rc=$?
if grep -E "warning:|error:" "$log"; then rc=1; fi
for m in "build/modules/$rel"/*.ko; do
	tail -c 28 "$m" | grep -q '~Module signature appended~' ||
		{ echo "debug-tier: $m is not signed"; rc=1; }
done
res "modules build without warnings and are signed on $rel" $rc
[ $rc -eq 0 ] || exit 1

tests=("$@")
[ ${#tests[@]} -gt 0 ] || read -ra tests <<<"${MAGNET_DEBUG_TESTS:-}"
if [ ${#tests[@]} -eq 0 ]; then
	for t in tests/vm/t_*.sh; do
		t=$(basename "$t" .sh)
		[ "$t" = t_lockdown ] || [ "$t" = t_lockdown_raise ] || tests+=("$t")
	done
	tests+=(fuzz races debugfs-off lockdown)
fi
# the kernel's ynl CLI, which t_ynl drives the family with (as scripts/test.sh)
./scripts/ynl-tools.sh >build/ynl-tools.log 2>&1 ||
	echo "debug-tier: the ynl tools did not build (build/ynl-tools.log): t_ynl will fail"

# tcg_single TEST: one of the tests that run with every vCPU in one host
# thread (tests/vm/tcg-single.txt: they patch code the other vCPU runs all
# the time), as scripts/test.sh runs them
tcg_single() {
	grep -v '^#' tests/vm/tcg-single.txt | grep -qw -- "$1"
}

# run_batch NAME OPTS LIMIT TEST...: the tests in as few boots as they
# take, LIMIT seconds each (scripts/vm-batch.sh, results in
# build/vm-results/RELEASE/NAME/)
run_batch() {
	local name=$1 opts=$2 limit=$3 line
	shift 3
	while IFS= read -r line; do
		case $line in
		"ok - $rel "*" # SKIP") line=${line#ok - }; res "${line% # SKIP}" 4 ;;
		"ok - $rel "*) res "${line#ok - }" 0 ;;
		"not ok - $rel "*) res "${line#not ok - }" 1 ;;
		*) echo "debug-tier: | $line" ;;
		esac
	done < <(MAGNET_VM_QEMU_OPTS=$opts MAGNET_VM_TIMEOUT=$limit ./scripts/vm-batch.sh \
		-o "build/vm-results/$rel/$name" "$rel" "$@")
}

t1=$(date +%s)
multi=()
single=()
lockdown=0
debugfs_off=0
for t in "${tests[@]}"; do
	if [ "$t" = lockdown ] || [ "$t" = t_lockdown_raise ]; then
		lockdown=1
	elif [ "$t" = debugfs-off ]; then
		debugfs_off=1
	elif tcg_single "$t"; then
		single+=("$t")
	else
		multi+=("$t")
	fi
done
[ ${#multi[@]} -eq 0 ] ||
	run_batch batch "${MAGNET_VM_QEMU_OPTS:-}" "$MAGNET_VM_TIMEOUT" "${multi[@]}"
[ ${#single[@]} -eq 0 ] ||
	run_batch batch-tcg-single "${MAGNET_VM_QEMU_OPTS:-"-accel tcg,thread=single"}" \
		$((2 * MAGNET_VM_TIMEOUT)) "${single[@]}"
if [ $debugfs_off -eq 1 ]; then
	# a kernel without debugfs: magnetfs alone (as scripts/test.sh)
	MAGNET_VM_APPEND=debugfs=off ./scripts/vm-run.sh \
		-o "build/vm-results/$rel/t_magnetfs-debugfs-off" "$rel" tests/vm/t_magnetfs.sh
	res "$rel t_magnetfs with debugfs=off" $?
fi
if [ $lockdown -eq 1 ]; then
	for mode in integrity confidentiality; do
		MAGNET_VM_APPEND="lockdown=$mode" ./scripts/vm-run.sh \
			-o "build/vm-results/$rel/t_lockdown-$mode" "$rel" tests/vm/t_lockdown.sh
		res "$rel t_lockdown (lockdown=$mode)" $?
	done
	# raised at run time from integrity (it cannot be undone: alone)
	MAGNET_VM_APPEND="lockdown=integrity" ./scripts/vm-run.sh \
		-o "build/vm-results/$rel/t_lockdown_raise" "$rel" tests/vm/t_lockdown_raise.sh
	res "$rel t_lockdown_raise (from lockdown=integrity)" $?
fi
echo "debug-tier: kernel ${t_kernel} s (0 if cached), tests $(($(date +%s) - t1)) s, total $(($(date +%s) - t0)) s; $fails failed, $skips skipped"
[ $fails -eq 0 ]
