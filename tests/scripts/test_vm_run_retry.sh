#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/vm-run.sh boots a guest once more when its kernel crashed before
# the test script started, and only then.  A stand-in for vng (first on
# PATH) plays the guest: it crashes at boot, or starts the script and
# crashes in it, or runs it; no VM is booted.
#
#   test_vm_run_retry.sh REPO
set -u
repo=${1:?usage: $0 REPO}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The stand-in: $FAKE_PLAN lists what each boot does (boot-crash,
# script-crash, pass), one word per boot; it counts boots in $tmp/boots.
mkdir -p "$tmp/bin"
cat >"$tmp/bin/vng" <<'VNG'
#!/bin/bash
n=$(($(cat "$FAKE_DIR/boots" 2>/dev/null || echo 0) + 1))
echo "$n" >"$FAKE_DIR/boots"
read -ra plan <<<"$FAKE_PLAN"
what=${plan[$((n - 1))]:-pass}
out=
while [ $# -gt 0 ]; do
	[ "$1" = --rwdir ] && out=${2#*=}
	shift
done
echo "[    0.000000] Linux version fake" >&2
case $what in
boot-crash)
	echo "[    2.400000] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI" >&2
	echo "[    2.400001] RIP: 0010:sched_clock_cpu+0x1/0x10" >&2
	echo "[    2.400002] Kernel panic - not syncing: Attempted to kill init!" >&2
	exit 1 ;;
script-crash)
	echo "[    3.000000] magnet-vm: start t_fake.sh on fake" >&2
	echo "ok 1 - something" >"$out/output.log"
	echo "[    4.000000] Oops: general protection fault [#1]" >&2
	echo "[    4.000001] RIP: 0010:magnet_add+0x10/0x100" >&2
	exit 1 ;;
pass)
	echo "[    3.000000] magnet-vm: start t_fake.sh on fake" >&2
	echo "ok 1 - something" >"$out/output.log"
	echo "[    3.000000] magnet-vm: start t_fake.sh on fake" >"$out/dmesg.txt"
	echo 0 >"$out/exit-code" ;;
esac
VNG
chmod +x "$tmp/bin/vng"
echo 'exit 0' >"$tmp/t_fake.sh"

# run PLAN: vm-run.sh with the stand-in; sets RC, OUT (its output), DIR
run() {
	DIR=$tmp/res.$1
	rm -f "$tmp/boots"
	OUT=$(FAKE_PLAN="$*" FAKE_DIR=$tmp PATH="$tmp/bin:$PATH" \
		"$repo/scripts/vm-run.sh" -o "$DIR" -t 10 "$kver" "$tmp/t_fake.sh" 2>&1)
	RC=$?
	BOOTS=$(cat "$tmp/boots")
}

run boot-crash pass
[ "$RC" -eq 0 ] && [ "$BOOTS" -eq 2 ] && ok "a crash at boot: booted once more, the retry passes" ||
	not_ok "a crash at boot: booted once more, the retry passes" "exit $RC, $BOOTS boots: $OUT"
grep -q "never started t_fake" <<<"$OUT" && grep -q "RIP: 0010:sched_clock_cpu" <<<"$OUT" &&
	ok "the retry is reported with the crash" || not_ok "the retry is reported with the crash" "$OUT"
grep -q "sched_clock_cpu" "$DIR/kernel-console.boot1.log" 2>/dev/null &&
	ok "the first boot's console is kept" || not_ok "the first boot's console is kept"

run boot-crash boot-crash
[ "$RC" -eq 1 ] && [ "$BOOTS" -eq 2 ] && grep -q "^not ok - " <<<"$OUT" &&
	ok "two crashes at boot: no third boot, the run fails" ||
	not_ok "two crashes at boot: no third boot, the run fails" "exit $RC, $BOOTS boots: $OUT"

run script-crash pass
[ "$RC" -eq 1 ] && [ "$BOOTS" -eq 1 ] && grep -q "RIP: 0010:magnet_add" <<<"$OUT" &&
	ok "a crash after the script started: no retry, the run fails with the oops" ||
	not_ok "a crash after the script started: no retry, the run fails with the oops" "exit $RC, $BOOTS boots: $OUT"

run pass
[ "$RC" -eq 0 ] && [ "$BOOTS" -eq 1 ] && ok "a passing run boots once" ||
	not_ok "a passing run boots once" "exit $RC, $BOOTS boots: $OUT"

[ "$fails" -eq 0 ]
