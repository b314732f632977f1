# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The test run's bookkeeping, sourced by scripts/test.sh and
# scripts/vm-suite.sh: every verdict and every step's wall time goes to a
# file under SUITE_DIR, so that steps run side by side (vm-suite.sh's two
# lanes, each a subshell) are counted once, at the end, by suite_report.
#
#   SUITE_DIR/results    "ok - NAME", "not ok - NAME" or "skip - NAME: WHY"
#   SUITE_DIR/times.tsv  SECONDS<TAB>STEP, one row a step (builds, boots,
#                        each VM test per kernel)
#   SUITE_DIR/times.md   written by suite_report: the rows as a table,
#                        slowest first, with the run's total
#
# suite_report prints the failures, the table and the closing line
# "N passed, M failed, K skipped", and returns 1 if anything failed.

# suite_init DIR: a new run's files (the old ones are removed)
suite_init() {
	SUITE_DIR=$1
	mkdir -p "$SUITE_DIR"
	: >"$SUITE_DIR/results"
	: >"$SUITE_DIR/times.tsv"
	rm -f "$SUITE_DIR/times.md"
	export SUITE_DIR
}

# result NAME RC: a verdict (RC 0 passes)
result() {
	local line
	if [ "$2" -eq 0 ]; then line="ok - $1"; else line="not ok - $1"; fi
	echo "$line"
	echo "$line" >>"$SUITE_DIR/results"
}

# skip NAME WHY: a step left out, and why
skip() {
	echo "skip - $1: $2"
	echo "skip - $1: $2" >>"$SUITE_DIR/results"
}

# time_row SECONDS STEP
time_row() {
	printf '%s\t%s\n' "$1" "$2" >>"$SUITE_DIR/times.tsv"
}

# timed STEP CMD...: runs CMD, records its wall time as STEP's row, and
# returns its status
timed() {
	local step=$1 t0=$SECONDS rc
	shift
	"$@"
	rc=$?
	time_row $((SECONDS - t0)) "$step"
	return $rc
}

# failed_assertions "KVER TEST": the failing lines of a VM test's log
# (its own boot's or its batch's, the newest), so that a CI log shown
# only in part still names them
failed_assertions() {
	local k t extra log
	read -r k t extra <<<"$1"
	[ -z "$extra" ] && [ -n "$t" ] || return 0
	log=$(ls -t "${SUITE_VM_RESULTS:-build/vm-results}/$k"/{,batch*/boot-*/}"$t"/output.log \
		2>/dev/null | head -n 1)
	[ -n "$log" ] || return 0
	grep -E -A2 '^not ok|^Bail out|exit [0-9]+, [0-9]+s' "$log" | head -n 24 | sed 's/^/    /'
}

# suite_report TOTAL-SECONDS: failures, the time table, the closing line
suite_report() {
	local total=$1 pass fail skipped
	pass=$(grep -c '^ok - ' "$SUITE_DIR/results")
	fail=$(grep -c '^not ok - ' "$SUITE_DIR/results")
	skipped=$(grep -c '^skip - ' "$SUITE_DIR/results")
	{
		echo "| step | seconds |"
		echo "|---|---:|"
		sort -t "$(printf '\t')" -k1,1nr "$SUITE_DIR/times.tsv" |
			awk -F'\t' '{ printf "| %s | %d |\n", $2, $1 }'
		printf '| **the whole run** (wall clock) | **%d** (%d min) |\n' "$total" $((total / 60))
	} >"$SUITE_DIR/times.md"
	echo "== time per step, slowest first ($SUITE_DIR/times.md)"
	cat "$SUITE_DIR/times.md"
	if [ "$skipped" -gt 0 ]; then
		echo "== left out ($skipped): a step the time budget cut is not tested in this run"
		sed -n 's/^skip - /skipped: /p' "$SUITE_DIR/results"
	fi
	if [ "$fail" -gt 0 ]; then
		echo "== what failed"
		sed -n 's/^not ok - //p' "$SUITE_DIR/results" | while IFS= read -r f; do
			echo "failed: $f"
			failed_assertions "$f"
		done
	fi
	echo "$pass passed, $fail failed, $skipped skipped"
	[ "$fail" -eq 0 ]
}
