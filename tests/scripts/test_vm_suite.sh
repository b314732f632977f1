#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/vm-suite.sh, the VM part of scripts/test.sh, checks itself: a
# run with one test made to fail fails and names it on its last lines; a
# run whose time budget is too small names every step it left out and
# counts them on the closing line; every test and every boot is a row of
# the time table.  tests/scripts/fake-vng stands in for vng: no VM is
# booted.
#
#   test_vm_suite.sh REPO
set -u
repo=${1:?usage: $0 REPO}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fake_vng
# two kernels where /boot has them, to fill both lanes
k2=$(ls /boot/vmlinuz-* | sed -n 2p)
k2=${k2#/boot/vmlinuz-}
ks=("$kver" ${k2:+"$k2"})

# run PLAN: the suite with the stand-in; sets RC, OUT, LAST
run() {
	rm -rf "$tmp/suite" "$tmp/res" "$tmp/boots"
	OUT=$(FAKE_PLAN="$1" FAKE_DIR=$tmp PATH="$tmp/bin:$PATH" MAGNET_VM_BATCH_POLL=1 \
		SUITE_DIR=$tmp/suite SUITE_VM_RESULTS=$tmp/res MAGNET_SUITE_RT=none \
		MAGNET_SUITE_DEMO=0 MAGNET_SUITE_TESTS="t_net t_mm t_hotplug" \
		bash -c '. "$1/scripts/suite-lib.sh"; suite_init "$SUITE_DIR"
			"$1/scripts/vm-suite.sh" "${@:2}"; suite_report "$SECONDS"' _ "$repo" "${ks[@]}" 2>&1)
	RC=$?
	LAST=$(tail -n 1 <<<"$OUT")
}
has() { grep -qxF -- "$1" <<<"$OUT"; }
# per kernel: 2 batches (t_net t_mm; t_hotplug) and 3 boots of their own
steps=$((5 * ${#ks[@]}))
tests=$((6 * ${#ks[@]}))

run "t_mm=fail"
[ "$RC" -ne 0 ] && [ "$LAST" = "$((tests - ${#ks[@]})) passed, ${#ks[@]} failed, 0 skipped" ] &&
	ok "a test made to fail fails the run: '$LAST'" ||
	not_ok "a test made to fail fails the run" "exit $RC, last line '$LAST': $OUT"
has "failed: $kver t_mm" && ok "the end of the run names the failed test" ||
	not_ok "the end of the run names the failed test" "$OUT"
for k in "${ks[@]}"; do
	for row in "$k t_net" "$k t_mm" "$k t_hotplug" "$k batch boot 1: boot, shutdown, log checks" \
		"$k batch-tcg-single boot 1: boot, shutdown, log checks" "$k fuzz (a boot of its own)" \
		"$k t_magnetfs with debugfs=off (a boot of its own)" "$k t_lockdown_raise (a boot of its own)"; do
		grep -qE "^\| $(sed 's/[][().*+?|^$]/\\&/g' <<<"$row") \| [0-9]+ \|$" "$tmp/suite/times.md" ||
			{ not_ok "time table row '$row'" "$(cat "$tmp/suite/times.md")"; continue 2; }
	done
	ok "the time table has a row for each test and boot of $k"
done
grep -q '^| \*\*the whole run\*\*' "$tmp/suite/times.md" && has "== time per step, slowest first ($tmp/suite/times.md)" &&
	ok "the table is printed and written, with the run's total" ||
	not_ok "the table is printed and written, with the run's total" "$OUT"

MAGNET_CI_BUDGET_MIN=0 run ""
[ "$RC" -eq 0 ] && [ "$LAST" = "0 passed, 0 failed, $steps skipped" ] &&
	ok "a budget too small: every step left out, counted: '$LAST'" ||
	not_ok "a budget too small: every step left out, counted" "exit $RC, last line '$LAST': $OUT"
n=$(grep -c '^skipped: .*would pass the 0 min budget (MAGNET_CI_BUDGET_MIN)$' <<<"$OUT")
[ "$n" -eq "$steps" ] && grep -q "^skipped: $kver batch (t_net t_mm)" <<<"$OUT" &&
	ok "each step left out is named with its reason ($n)" ||
	not_ok "each step left out is named with its reason" "$n of $steps: $OUT"
[ ! -e "$tmp/boots" ] && ok "nothing booted" || not_ok "nothing booted" "$(cat "$tmp/boots")"

[ "$fails" -eq 0 ]
