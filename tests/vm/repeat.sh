#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# One VM test many times in one boot: the tool for a failure seen once
# (issue 15's defect 7: t_stress once saw a selftest sequence number go
# back).  A guest script for scripts/vm-run.sh:
#
#   scripts/vm-run.sh -t SECONDS KVER tests/vm/repeat.sh N TEST
#
# Runs tests/vm/TEST.sh N times, each through guest-run.sh (its own
# kmemleak scans in the debug kernel; a limit of MAGNET_REPEAT_RUN_S,
# default 600 s) into $MAGNET_RESULTS/run-I/.  A run
# that passed leaves only its output.log (its traces would fill the
# host's disk over 100 runs); a failed run keeps everything, traces
# included, for study.  A run that leaves anything behind (a module, a
# mount, a namespace, an offline CPU, a process: leftovers.sh, as in
# batch.sh) fails, and what it left is removed for the next run.  Prints one
# "repeat: TEST run I/N rc=RC (S s)" line per run and a summary
# "repeat: TEST: P passed, F failed of N"; exit status 0 if every run
# passed, 4 if the test skipped itself (then the loop stops), else 1.
# The host's vm-run.sh then checks the whole boot's kernel log, as for
# any test.
set -u
n=${1:?usage: repeat.sh N TEST}
t=${2:?usage: repeat.sh N TEST}
res=${MAGNET_RESULTS:?MAGNET_RESULTS not set}
repo=${MAGNET_REPO:?MAGNET_REPO not set}
name=$(basename "$t" .sh)
script=$repo/tests/vm/$name.sh
case $n in
'' | *[!0-9]* | 0) echo "repeat: N must be a count of runs (1 or more), not '$n'" >&2; exit 2 ;;
esac
[ -f "$script" ] || { echo "repeat: no test $script" >&2; exit 2; }
# each run's own limit (the whole loop's is vm-run.sh's -t)
per=${MAGNET_REPEAT_RUN_S:-600}

. "$repo/tests/vm/leftovers.sh"
build=${MAGNET_BUILD:-$repo/build}

pass=0 fail=0
for i in $(seq 1 "$n"); do
	out=$res/run-$i
	rm -rf "$out"
	mkdir -p "$out"
	s=$(date +%s)
	MAGNET_RESULTS=$out bash "$repo/tests/vm/guest-run.sh" "$per" "$script" >/dev/null 2>&1
	rc=$(cat "$out/exit-code" 2>/dev/null || echo 1)
	left=$(leftovers)
	if [ -n "$left" ]; then
		echo "$left" >"$out/leftover.txt"
		echo "repeat: run $i left behind (removed now): $left"
		rc=1
	fi
	if [ "$rc" -eq 4 ]; then
		# the test skipped itself (what it needs is missing): so would every run
		echo "repeat: $name skipped itself in run $i: $(grep -m1 -E '^1\.\.0|SKIP' "$out/output.log")"
		exit 4
	elif [ "$rc" -eq 0 ]; then
		pass=$((pass + 1))
		find "$out" -mindepth 1 ! -name output.log -delete
	else
		fail=$((fail + 1))
		grep -E '^not ok|^Bail out' "$out/output.log" | sed "s/^/repeat: run $i: /"
	fi
	echo "repeat: $name run $i/$n rc=$rc ($(($(date +%s) - s)) s)"
done
echo "repeat: $name: $pass passed, $fail failed of $n"
[ "$fail" -eq 0 ]
