#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The debug-kernel tier: MAGNET's VM tests in a kernel with KASAN, UBSAN,
# lockdep, DEBUG_ATOMIC_SLEEP, KMEMLEAK, DEBUG_OBJECTS and PREEMPT
# (scripts/debug-kernel.sh builds it once and caches it outside the
# repo), a kmemleak scan after each test (tests/vm/guest-run.sh), and the
# lockdown boots (tests/vm/t_lockdown.sh under lockdown=integrity and
# lockdown=confidentiality; the kernel trusts the key MAGNET's modules
# are signed with).  Any report in the kernel log fails the test
# (tests/vm/dmesg-patterns.txt).
#
#   scripts/debug-tier.sh [TEST...]     TEST: t_NAME (default: every
#                                       tests/vm/t_*.sh, then the two
#                                       lockdown boots)
#
# MAGNET_DEBUG_TESTS="t_a t_b" also picks the tests (scripts/test.sh uses
# it); "lockdown" stands for the two lockdown boots.  Per-test time
# limit MAGNET_VM_TIMEOUT (default here 1800 s: the debug kernel under
# TCG is several times slower).  User space must be built (build/).
# Prints one "debug-tier: ok - NAME" / "debug-tier: not ok - NAME" line
# per step and the times; exits non-zero if any failed.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export MAGNET_VM_TIMEOUT=${MAGNET_VM_TIMEOUT:-1800}
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
		[ "$t" = t_lockdown ] || tests+=("$t")
	done
	tests+=(lockdown)
fi
# the kernel's ynl CLI, which t_ynl drives the family with (as scripts/test.sh)
./scripts/ynl-tools.sh >build/ynl-tools.log 2>&1 ||
	echo "debug-tier: the ynl tools did not build (build/ynl-tools.log): t_ynl will fail"
t1=$(date +%s)
for t in "${tests[@]}"; do
	s=$(date +%s)
	if [ "$t" = lockdown ]; then
		for mode in integrity confidentiality; do
			MAGNET_VM_APPEND="lockdown=$mode" ./scripts/vm-run.sh \
				-o "build/vm-results/$rel/t_lockdown-$mode" "$rel" tests/vm/t_lockdown.sh
			res "$rel t_lockdown (lockdown=$mode)" $?
		done
	else
		opts=${MAGNET_VM_QEMU_OPTS:-}
		# every vCPU in one host thread for the tests that patch code the
		# other vCPU runs all the time (tests/vm/tcg-single.txt), as
		# scripts/test.sh runs them
		grep -v '^#' tests/vm/tcg-single.txt | grep -qw -- "$t" &&
			opts=${opts:-"-accel tcg,thread=single"}
		MAGNET_VM_QEMU_OPTS=$opts ./scripts/vm-run.sh "$rel" "tests/vm/$t.sh"
		res "$rel $t" $?
	fi
	echo "debug-tier: $t took $(($(date +%s) - s)) s"
done
echo "debug-tier: kernel ${t_kernel} s (0 if cached), tests $(($(date +%s) - t1)) s, total $(($(date +%s) - t0)) s; $fails failed, $skips skipped"
[ $fails -eq 0 ]
