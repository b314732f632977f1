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
#   scripts/debug-tier.sh [TEST...]     TEST: t_NAME, fuzz or races
#                                       (default: every tests/vm/t_*.sh,
#                                       fuzz, races, then debugfs-off and
#                                       lockdown)
#
# MAGNET_DEBUG_TESTS="t_a t_b" also picks the tests; "debugfs-off" stands
# for t_magnetfs in a boot with debugfs=off, "lockdown" for the two
# lockdown boots.  Per-test time limit MAGNET_VM_TIMEOUT
# (default here 1800 s: the debug kernel under TCG is several times
# slower).  User space must be built (build/).
#
# The kernel boots once for all the tests, not once per test (a boot
# takes 3-9 minutes under TCG, more than most tests): tests/vm/batch.sh
# runs them one after the other in the guest, each through guest-run.sh
# as a boot of its own would run it (kmemleak scans before and after),
# and fails a test that leaves modules, mounts, namespaces, offline CPUs
# or processes behind.  Two boots in fact: the tests of
# tests/vm/tcg-single.txt get one on single-threaded TCG.  A test in
# which the guest dies or hangs (no test starts or ends for
# MAGNET_VM_TIMEOUT + 300 s: the guest is stopped) fails, and the tests
# after it get a boot of their own.  Each test's slice of the kernel log
# (from its start to its end marker) is checked against
# tests/vm/dmesg-patterns.txt, and the whole boot's log by vm-run.sh.
# MAGNET_DEBUG_BOOT_EACH=1 boots once per test instead (the way to tell
# which test a leak or a report outside the tests' slices belongs to).
#
# Results: build/vm-results/RELEASE/boot-N/ (vm-run.sh's files for the
# boot) and boot-N/TEST/ (each test's).  Prints one "debug-tier: ok -
# NAME" / "debug-tier: not ok - NAME" line per step and the times; exits
# non-zero if any failed.
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
	tests+=(fuzz races debugfs-off lockdown)
fi
# the kernel's ynl CLI, which t_ynl drives the family with (as scripts/test.sh)
./scripts/ynl-tools.sh >build/ynl-tools.log 2>&1 ||
	echo "debug-tier: the ynl tools did not build (build/ynl-tools.log): t_ynl will fail"
patterns=tests/vm/dmesg-patterns.txt

# tcg_single TEST: one of the tests that run with every vCPU in one host
# thread (tests/vm/tcg-single.txt: they patch code the other vCPU runs all
# the time), as scripts/test.sh runs them
tcg_single() {
	grep -v '^#' tests/vm/tcg-single.txt | grep -qw -- "$1"
}

# log_hits LOG TEST: the lines of TEST's slice of LOG (from its
# guest-run.sh start marker to its end marker, or to the end of LOG)
# that dmesg-patterns.txt calls suspicious
log_hits() {
	local hits
	[ -s "$1" ] || return 0
	hits=$(awk -v s="magnet-vm: start $2.sh on " -v e="magnet-vm: end $2.sh rc=" \
		'index($0, s) { on = 1 } on { print } on && index($0, e) { exit }' "$1" |
		grep -F -f <(grep -v '^#' "$patterns"))
	if [ -n "${MAGNET_DMESG_IGNORE:-}" ] && [ -n "$hits" ]; then
		hits=$(grep -v -E -- "$MAGNET_DMESG_IGNORE" <<<"$hits")
	fi
	[ -z "$hits" ] || printf '%s\n' "$hits"
}

# kill_tree PID: PID and every process under it
kill_tree() {
	local c
	for c in $(pgrep -P "$1"); do kill_tree "$c"; done
	kill "$1" 2>/dev/null
}

boots=0
left=()
# boot_batch OPTS TEST...: the tests in one boot (vm-run.sh of
# tests/vm/batch.sh); the tests it did not reach in left[]
boot_batch() {
	local opts=$1 out pid last now t rc hits log start
	shift
	boots=$((boots + 1))
	out=build/vm-results/$rel/boot-$boots
	rm -rf "$out"
	mkdir -p "$out"
	echo "debug-tier: boot $boots${opts:+ ($opts)}: $*"
	MAGNET_VM_QEMU_OPTS=$opts ./scripts/vm-run.sh -o "$out" \
		-t $(($# * MAGNET_VM_TIMEOUT + 600)) "$rel" tests/vm/batch.sh \
		"$MAGNET_VM_TIMEOUT" "$@" >"$out/vm-run.log" 2>&1 &
	pid=$!
	start=$(date +%s)
	# a test's own limit is enforced in the guest: no test started or
	# ended for longer than that means the guest's kernel is stuck
	while kill -0 "$pid" 2>/dev/null; do
		sleep 20
		last=$(find "$out" -mindepth 1 -maxdepth 2 \( -type d -o -name exit-code \) \
			-printf '%T@\n' | sort -n | tail -n 1)
		last=${last%.*}
		[ "${last:-0}" -gt "$start" ] || last=$start
		now=$(date +%s)
		if [ $((now - last)) -gt $((MAGNET_VM_TIMEOUT + 300)) ]; then
			echo "debug-tier: boot $boots: no test started or ended for $((now - last)) s: stopping the guest" |
				tee -a "$out/vm-run.log"
			kill_tree "$pid"
			break
		fi
	done
	wait "$pid"
	grep -E '^# vm-run|^batch: ' "$out/vm-run.log" | sed 's/^/debug-tier: | /'
	left=()
	for t in "$@"; do
		if [ -s "$out/$t/exit-code" ]; then
			rc=$(cat "$out/$t/exit-code")
			log=$out/$t/dmesg.txt
		elif [ -d "$out/$t" ]; then
			# started and never ended: the guest died or hung in it
			rc=1
			log=$out/kernel-console.log
			echo "debug-tier: $t did not end: the guest died or hung in it ($out/kernel-console.log)"
		else
			left+=("$t")
			continue
		fi
		hits=$(log_hits "$log" "$t")
		if [ -n "$hits" ]; then
			echo "debug-tier: $t: suspicious kernel log lines in its slice of $log:"
			head -n 20 <<<"$hits" | sed 's/^/debug-tier:   /'
			{ [ "$rc" -eq 0 ] || [ "$rc" -eq 4 ]; } && rc=1
		fi
		res "$rel $t" "$rc"
	done
	# the whole boot's log, outside the tests' slices too
	if grep -q '# vm-run: kernel log is dirty' "$out/vm-run.log"; then
		res "$rel boot $boots: kernel log clean ($out/vm-run.log)" 1
	fi
}

# run_tests OPTS TEST...: as many boots as the tests take (a test the
# guest dies in ends its boot; the next boot starts after it)
run_tests() {
	local opts=$1 t
	shift
	while [ $# -gt 0 ]; do
		if [ "${MAGNET_DEBUG_BOOT_EACH:-0}" = 1 ]; then
			boot_batch "$opts" "$1"
			[ ${#left[@]} -eq 0 ] || res "$rel $1 (not run: boot $boots never started it)" 1
			shift
			continue
		fi
		boot_batch "$opts" "$@"
		if [ ${#left[@]} -eq $# ]; then
			# not even the first one started: the guest does not boot
			for t in "${left[@]}"; do
				res "$rel $t (not run: boot $boots never started a test)" 1
			done
			return
		fi
		set -- "${left[@]}"
	done
}

t1=$(date +%s)
multi=()
single=()
lockdown=0
debugfs_off=0
for t in "${tests[@]}"; do
	if [ "$t" = lockdown ]; then
		lockdown=1
	elif [ "$t" = debugfs-off ]; then
		debugfs_off=1
	elif tcg_single "$t"; then
		single+=("$t")
	else
		multi+=("$t")
	fi
done
[ ${#multi[@]} -eq 0 ] || run_tests "${MAGNET_VM_QEMU_OPTS:-}" "${multi[@]}"
[ ${#single[@]} -eq 0 ] || run_tests "${MAGNET_VM_QEMU_OPTS:-"-accel tcg,thread=single"}" "${single[@]}"
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
fi
echo "debug-tier: kernel ${t_kernel} s (0 if cached), tests $(($(date +%s) - t1)) s, total $(($(date +%s) - t0)) s; $fails failed, $skips skipped"
[ $fails -eq 0 ]
