#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/vm-batch.sh runs many VM tests in one boot and still gives each
# test its own verdict: a test the guest dies or hangs in fails and the
# tests after it get a new boot; a report in a test's slice of the kernel
# log fails that test alone; a boot that starts no test fails its tests
# once, with no boot after it.  A stand-in for vng (first on PATH) plays
# the guest's tests/vm/batch.sh from a plan; no VM is booted.
#
#   test_vm_batch.sh REPO
set -u
repo=${1:?usage: $0 REPO}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# the stand-in for vng (FAKE_PLAN says what each test does)
fake_vng

# run PLAN [TESTS...]: vm-batch.sh with the stand-in; sets RC, OUT, BOOTS
run() {
	local plan=$1
	shift
	rm -f "$tmp/boots"
	OUT=$(FAKE_PLAN="$plan" FAKE_DIR=$tmp PATH="$tmp/bin:$PATH" MAGNET_VM_BATCH_POLL=1 \
		"$repo/scripts/vm-batch.sh" -o "$tmp/res" "$kver" "$@" 2>&1)
	RC=$?
	BOOTS=$(cat "$tmp/boots" 2>/dev/null)
}
# has LINE: OUT has exactly that line
has() { grep -qxF -- "$1" <<<"$OUT"; }

run "t_a=pass t_b=crash t_c=pass t_d=skip" t_a t_b t_c t_d
has "ok - $kver t_a" && has "not ok - $kver t_b" && has "ok - $kver t_c" &&
	has "ok - $kver t_d # SKIP" && [ "$RC" -eq 1 ] &&
	ok "a crash fails its test alone; the others pass" ||
	not_ok "a crash fails its test alone; the others pass" "exit $RC: $OUT"
[ "$BOOTS" = "t_a t_b t_c t_d
t_c t_d" ] && ok "the tests after the crash get a second boot, and only they" ||
	not_ok "the tests after the crash get a second boot, and only they" "$BOOTS"
grep -q "t_b did not end" <<<"$OUT" && grep -q "RIP: 0010:magnet_add" <<<"$OUT" &&
	ok "the crash is reported with its test and its oops" ||
	not_ok "the crash is reported with its test and its oops" "$OUT"

run "t_a=dirty t_b=pass t_c=fail" t_a t_b t_c
has "not ok - $kver t_a" && has "ok - $kver t_b" && has "not ok - $kver t_c" &&
	[ "$BOOTS" = "t_a t_b t_c" ] && [ "$RC" -eq 1 ] &&
	ok "a report in a test's slice of the log fails that test, not the next" ||
	not_ok "a report in a test's slice of the log fails that test, not the next" "exit $RC, boots '$BOOTS': $OUT"
grep -q "BUG: KASAN" <<<"$OUT" && ok "the report is shown" || not_ok "the report is shown" "$OUT"

run "" t_a t_b t_c
has "ok - $kver t_a" && has "ok - $kver t_b" && has "ok - $kver t_c" && [ "$RC" -eq 0 ] &&
	[ "$BOOTS" = "t_a t_b t_c" ] && ok "three passing tests: one boot, exit 0" ||
	not_ok "three passing tests: one boot, exit 0" "exit $RC, boots '$BOOTS': $OUT"

rm -f "$tmp/boots"
OUT=$(FAKE_NOBOOT=1 FAKE_PLAN= FAKE_DIR=$tmp PATH="$tmp/bin:$PATH" MAGNET_VM_BATCH_POLL=1 \
	timeout 120 "$repo/scripts/vm-batch.sh" -o "$tmp/res" "$kver" t_a t_b 2>&1)
RC=$?
BOOTS=$(cat "$tmp/boots" 2>/dev/null)
has "not ok - $kver t_a" && has "not ok - $kver t_b" && [ "$RC" -eq 1 ] &&
	[ "$(wc -l <<<"$BOOTS")" -eq 2 ] &&
	ok "a kernel that never boots: its tests fail once, no boot after vm-run.sh's retry" ||
	not_ok "a kernel that never boots: its tests fail once, no boot after vm-run.sh's retry" "exit $RC, boots '$BOOTS': $OUT"

export MAGNET_VM_TIMEOUT=1 MAGNET_VM_BATCH_GRACE=2
run "t_b=hang" t_a t_b t_c
has "ok - $kver t_a" && has "not ok - $kver t_b" && has "ok - $kver t_c" &&
	[ "$BOOTS" = "t_a t_b t_c
t_c" ] && grep -q "stopping the guest" <<<"$OUT" &&
	ok "a guest hung in a test is stopped; the next test gets a new boot" ||
	not_ok "a guest hung in a test is stopped; the next test gets a new boot" "exit $RC, boots '$BOOTS': $OUT"
for i in 1 2 3 4 5 6 7 8 9 10; do pgrep -f "$tmp/bin/vng" >/dev/null || break; sleep 0.5; done
pgrep -f "$tmp/bin/vng" >/dev/null && not_ok "the hung guest is gone" "$(pgrep -af "$tmp/bin/vng")" ||
	ok "the hung guest is gone"
unset MAGNET_VM_TIMEOUT MAGNET_VM_BATCH_GRACE

MAGNET_VM_BATCH_EACH=1 run "t_b=fail" t_a t_b
has "ok - $kver t_a" && has "not ok - $kver t_b" && [ "$BOOTS" = "t_a
t_b" ] && ok "MAGNET_VM_BATCH_EACH=1: a boot per test" ||
	not_ok "MAGNET_VM_BATCH_EACH=1: a boot per test" "boots '$BOOTS': $OUT"

[ "$fails" -eq 0 ]
