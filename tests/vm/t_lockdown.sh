#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Lockdown (issue 15): in a kernel booted with lockdown=integrity or
# lockdown=confidentiality,
#  - an unsigned module is refused, MAGNET's signed modules load;
#  - magnetfs works: records read and ioctls through /sys/kernel/magnet,
#    magnetctl record by name;
#  - the stream's debugfs file is refused (EPERM: lockdown refuses debugfs
#    files with an ioctl) and magnetctl record on it says why;
#  - run-time kprobes follow the kernel's own policy (LOCKDOWN_KPROBES, as
#    tracefs kprobe_events and perf): refused with the reason under
#    confidentiality, allowed under integrity.
# Skips unless the kernel is locked down: the debug-kernel tier boots it
# twice (MAGNET_VM_APPEND=lockdown=integrity, =confidentiality); its kernel
# trusts the key build-modules.sh signed MAGNET's modules with.
MAGNET_MODULES=${MAGNET_MODULES:-magnet}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
need_magnet
ST=$MAGNET_MODDIR/magnet_selftest.ko
UNSIGNED=$MAGNET_MODDIR/src/tests/kmod/magnet_selftest.ko
[ -f "$ST" ] || skip_all "magnet_selftest.ko not built"
mountpoint -q /sys/kernel/security || mount -t securityfs none /sys/kernel/security 2>/dev/null
mode=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/security/lockdown 2>/dev/null)
case $mode in
integrity | confidentiality) ;;
*) skip_all "the kernel is not locked down (lockdown: ${mode:-no lockdown LSM}): boot with lockdown=" ;;
esac
tail -c 28 "$MAGNET_MODDIR/magnet.ko" | grep -q '~Module signature appended~' ||
	skip_all "$MAGNET_MODDIR/magnet.ko is not signed (build it against the debug-kernel tier's kernel)"
grep -qw magnetfs /proc/filesystems && skip_all "magnetfs already registered"
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null

plan 17
diag "lockdown=$mode"
dmesg_mark
R=$MAGNET_RESULTS

# --- modules ---------------------------------------------------------------
if [ -f "$UNSIGNED" ] && ! tail -c 28 "$UNSIGNED" | grep -q 'Module signature appended'; then
	msg=$(insmod "$UNSIGNED" 2>&1)
	rc=$?
	[ $rc -ne 0 ] && ok "an unsigned module is refused: $msg" ||
		{ rmmod magnet_selftest; not_ok "an unsigned module is refused" "insmod $UNSIGNED succeeded"; }
	dmesg | grep -q 'unsigned module loading is restricted' &&
		ok "the kernel log says unsigned modules are restricted" ||
		not_ok "the kernel log says unsigned modules are restricted" "$(dmesg | tail -5)"
else
	skip "an unsigned module is refused" "no unsigned copy at $UNSIGNED"
	skip "the kernel log says unsigned modules are restricted" "no unsigned copy"
fi
magnet_load && ok "signed magnet.ko loads" || bail_out "signed magnet.ko does not load under lockdown=$mode"
on_exit "rmmod magnet_selftest 2>/dev/null"
magnetfs_mounted && ok "magnetfs mounted on /sys/kernel/magnet" ||
	not_ok "magnetfs mounted on /sys/kernel/magnet" "$(grep magnetfs /proc/mounts)"

# --- magnetfs ----------------------------------------------------------------
cat >"$R/rd.py" <<'PY'
import errno, fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
n = 0
while True:
    try:
        b = os.read(fd, 1 << 20)
    except OSError as e:
        if e.errno == errno.EAGAIN:
            break
        raise
    if not b:
        break
    n += len(b)
IOC = (2 << 30) | (56 << 16) | (0xB7 << 8) | 0x01    # MAGNET_IOC_GET_STATS
st = struct.unpack("<7Q", fcntl.ioctl(fd, IOC, bytes(56)))
print(n, st[0])
PY
st_round() {	# st_round STREAM: the selftest's 1000 events per CPU into STREAM
	if [ -d /sys/module/magnet_selftest ]; then
		rmmod magnet_selftest || return 1
	fi
	insmod "$ST" count=1000 period_us=200 || return 1
	magnetctl probe enable selftest stream "$1" || return 1
	selftest_wait 90 >/dev/null
	magnetctl probe disable selftest
}
check "stream create S" magnetctl stream create S
check "stream create T" magnetctl stream create T
check "signed magnet_selftest: 1000 events per CPU into S" st_round S
read -r nbytes produced <<<"$(python3 "$R/rd.py" /sys/kernel/magnet/S 2>&1)"
[ "${nbytes:-0}" -ge $((1000 * 32)) ] && [ "${produced:-0}" -ge 1000 ] &&
	ok "read and GET_STATS through magnetfs ($nbytes bytes, $produced produced)" ||
	not_ok "read and GET_STATS through magnetfs" "bytes=$nbytes produced=$produced"
check "magnet_selftest again: into T" st_round T
out=$(magnetctl record T -o "$R/t.trace" --duration 1 2>&1)
check_eq "magnetctl record T (by name: magnetfs) exits 0" 0 $?
n=$(dump_count "$R/t.trace" selftest)
[ "${n:-0}" -ge 1000 ] && ok "the recorded trace has the selftest records ($n)" ||
	not_ok "the recorded trace has the selftest records" "$n; $out"

# --- debugfs -----------------------------------------------------------------
dbg=/sys/kernel/debug/magnet/S
if [ -e "$dbg" ]; then
	out=$(python3 -c 'import os, sys; os.open(sys.argv[1], os.O_RDONLY)' "$dbg" 2>&1)
	grep -q 'Operation not permitted' <<<"$out" && ok "open($dbg) is refused: EPERM" ||
		not_ok "open($dbg) is refused: EPERM" "$out"
	out=$(magnetctl record "$dbg" -o "$R/d.trace" --duration 1 2>&1)
	rc=$?
	[ $rc -eq 6 ] && grep -q "locked down ($mode)" <<<"$out" && grep -q magnetfs <<<"$out" &&
		ok "magnetctl record on the debugfs file says why: $out" ||
		not_ok "magnetctl record on the debugfs file says why (exit 6)" "exit $rc: $out"
else
	skip "open($dbg) is refused: EPERM" "no debugfs file"
	skip "magnetctl record on the debugfs file says why" "no debugfs file"
fi

# --- run-time kprobes ------------------------------------------------------
out=$(magnetctl probe add kp_lock kprobe vfs_write 2>&1)
rc=$?
if [ "$mode" = confidentiality ]; then
	[ $rc -eq 6 ] && grep -q 'locked down' <<<"$out" &&
		ok "a run-time kprobe is refused with the reason: $out" ||
		not_ok "a run-time kprobe is refused with the reason (exit 6)" "exit $rc: $out"
	check_eq "no probe kp_lock" 0 "$(list_count probe '^kp_lock$')"
else
	[ $rc -eq 0 ] && grep -q 'probe kp_lock: event ID' <<<"$out" &&
		ok "a run-time kprobe is allowed under integrity (as kprobe_events): $out" ||
		not_ok "a run-time kprobe is allowed under integrity (as kprobe_events)" "exit $rc: $out"
	check "probe del kp_lock" magnetctl probe del kp_lock
fi

check "rmmod magnet_selftest" rmmod magnet_selftest
check_dmesg_clean
done_testing
