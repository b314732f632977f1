#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Self-test of scripts/vm-run.sh and tests/vm/lib.sh: boots KVER (default
# the newest /boot/vmlinuz-*) once per case and checks each outcome.
#
#   tests/vm/harness/run.sh [KVER]
#
# Takes about 2-3 minutes (8 VM boots).  Prints "N passed, M failed".
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
kver=${1:-$(ls /boot/vmlinuz-* | sed 's|/boot/vmlinuz-||' | sort -V | tail -n 1)}
out=$(mktemp -d /tmp/magnet-harness.XXXXXX)
pass=0
fail=0

# expect NAME WANT_RC REGEX [VM-RUN OPTS...]: run guest NAME, compare the
# exit status and look for REGEX in vm-run.sh's output.
expect() {
	local name=$1 want=$2 re=$3 rc log=$out/$1.log
	shift 3
	MAGNET_HARNESS_PROBE="hello world" \
		"$repo/scripts/vm-run.sh" -o "$out/$name" "$@" "$kver" "$here/$name.sh" \
		"a b" "c" >"$log" 2>&1
	rc=$?
	if [ "$rc" -eq "$want" ] && grep -qE -- "$re" "$log"; then
		pass=$((pass + 1))
		echo "ok - $name: exit $rc ($(cat "$out/$name/elapsed" 2>/dev/null)s)"
	else
		fail=$((fail + 1))
		echo "not ok - $name: exit $rc (want $want), /$re/ $(grep -qE -- "$re" "$log" && echo found || echo 'not found')"
		sed 's/^/#   /' "$log" | tail -n 40
	fi
}

expect g_pass 0 '^ok - .* g_pass$'
expect g_exit3 3 '^not ok - .* g_exit3$'
expect g_skip 4 '^ok - .* g_skip # SKIP$'
expect g_dirty 1 'kernel log is dirty'
expect g_dmesg 1 'WARNING: CPU: 0 PID: 1 at fake'
expect g_hang 124 'timed out after 5s' -t 5
expect g_panic 1 'Kernel panic - not syncing'
expect g_sete 1 '^3 passed, 1 failed$'
[ -f "$out/g_pass/written-by-guest" ] && pass=$((pass + 1)) && echo "ok - guest wrote into the results dir" ||
	{ fail=$((fail + 1)); echo "not ok - guest wrote into the results dir"; }
echo "# logs in $out"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
