#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Several VM tests in one boot, one after the other: the debug-kernel
# tier's way to boot its kernel (3-9 minutes under TCG, longer than most
# tests take) once per batch instead of once per test
# (scripts/debug-tier.sh; tests/vm/README.md).
#
#   batch.sh TIMEOUT_S TEST...       TEST: NAME or tests/vm/NAME.sh
#
# Each test runs through guest-run.sh as a boot of its own would run it,
# into $MAGNET_RESULTS/NAME: output.log, exit-code, dmesg.txt (the boot's
# log up to the test's end), kmemleak scans before and after it, a limit
# of TIMEOUT_S.  Between two tests the batch looks for what a test must
# not leave behind, since the next one would inherit it: MAGNET modules
# still loaded, a magnetfs mount, the namespaces mgA and mgB, a CPU left
# offline, a process of the build tree still running.  It names what it
# found in NAME/leftover.txt, removes it, and fails that test (exit-code
# 1, the test's own status in NAME/test-exit-code).
#
# Prints "batch: NAME rc=RC (S s)" per test.  Exit status 0 if every test
# passed or skipped itself (4), else 1.
set -u
timeout_s=${1:?usage: batch.sh TIMEOUT_S TEST...}
shift
res=${MAGNET_RESULTS:?MAGNET_RESULTS not set}
repo=${MAGNET_REPO:?MAGNET_REPO not set}
build=${MAGNET_BUILD:-$repo/build}
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH

. "$repo/tests/vm/leftovers.sh"

fail=0
for t in "$@"; do
	name=$(basename "$t" .sh)
	script=$repo/tests/vm/$name.sh
	out=$res/$name
	rm -rf "$out"
	mkdir -p "$out"
	s=$(date +%s)
	if [ -f "$script" ]; then
		MAGNET_RESULTS=$out bash "$repo/tests/vm/guest-run.sh" "$timeout_s" "$script"
		rc=$?
	else
		echo "batch: no test $script" | tee "$out/output.log"
		rc=2
		echo "$rc" >"$out/exit-code"
	fi
	left=$(leftovers)
	if [ -n "$left" ]; then
		echo "$left" >"$out/leftover.txt"
		echo "batch: $name left behind (removed now): $left" | tee -a "$out/output.log"
		cp "$out/exit-code" "$out/test-exit-code"
		rc=1
		echo "$rc" >"$out/exit-code"
	fi
	echo "batch: $name rc=$rc ($(($(date +%s) - s)) s)"
	[ "$rc" -eq 0 ] || [ "$rc" -eq 4 ] || fail=1
done
exit "$fail"
