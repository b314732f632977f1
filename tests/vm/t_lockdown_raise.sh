#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Lockdown raised while MAGNET runs (issue 15): a kernel booted without
# lockdown, or under lockdown=integrity, raised to confidentiality with
# MAGNET loaded and a run-time kprobe defined and armed once before:
#  - that kprobe can no longer be armed, into a stream or for a
#    synthesizer, and the refusal says why (before, only KPROBE_NEW asked
#    the lockdown LSM: the old probe still armed and recorded argument
#    registers; tracefs' kprobe_events asks at every registration);
#  - a new run-time kprobe is refused;
#  - magnetfs still works: the selftest's events read by name;
#  - a stream's debugfs file is refused (EPERM) from then on.
# A raise cannot be undone: scripts/test.sh and the debug-kernel tier boot
# this test alone.  Skips in a kernel without the lockdown LSM, or one
# already at confidentiality (t_lockdown.sh covers that boot).
MAGNET_MODULES=${MAGNET_MODULES:-magnet}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
need_magnet
mountpoint -q /sys/kernel/security || mount -t securityfs none /sys/kernel/security 2>/dev/null
LD=/sys/kernel/security/lockdown
mode() { sed -n 's/.*\[\(.*\)\].*/\1/p' "$LD" 2>/dev/null; }
case $(mode) in
none | integrity) ;;
confidentiality) skip_all "already locked down (confidentiality): t_lockdown.sh's boot" ;;
*) skip_all "no lockdown LSM ($LD)" ;;
esac
ST=$MAGNET_MODDIR/magnet_selftest.ko
[ -f "$ST" ] || skip_all "magnet_selftest.ko not built"
grep -qw magnetfs /proc/filesystems && skip_all "magnetfs already registered"
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null

diag "lockdown at boot: $(mode)"
dmesg_mark
R=$MAGNET_RESULTS
magnet_load && ok "magnet.ko loads" || bail_out "magnet.ko does not load"
on_exit "rmmod magnet_selftest 2>/dev/null"

check "stream create S" magnetctl stream create S
check "probe add kp_raise kprobe vfs_write" magnetctl probe add kp_raise kprobe vfs_write
check "enable kp_raise into S before the raise" magnetctl probe enable kp_raise stream S
check "disable kp_raise" magnetctl probe disable kp_raise
w0=$(stream_field S written)
# loaded now: a Debian kernel refuses unsigned modules once locked down
# (the selftest's producers start only when it is enabled)
insmod "$ST" count=500 period_us=200
check_eq "insmod magnet_selftest before the raise" 0 $?

echo confidentiality >"$LD"
check_eq "lockdown raised to confidentiality" confidentiality "$(mode)"

expect_fail "arming kp_raise into a stream is refused with the reason" 6 \
	"probe 'kp_raise': attaching kprobe:vfs_write is not permitted: the kernel is locked down" \
	magnetctl probe enable kp_raise stream S
dd if=/dev/zero of="$R/w.out" bs=1 count=100 status=none
check_eq "nothing recorded from kp_raise since ($w0 before)" "$w0" "$(stream_field S written)"
expect_fail "arming kp_raise for a synthesizer is refused with the reason" 6 \
	"probe 'kp_raise': attaching kprobe:vfs_write is not permitted: the kernel is locked down" \
	magnetctl synth add sy probe kp_raise value size period 100ms stream S
expect_fail "a new run-time kprobe is refused" 6 "locked down" \
	magnetctl probe add kp_new kprobe vfs_read

check "enable selftest into S" magnetctl probe enable selftest stream S
check_eq "the selftest producers finished" 0 "$(selftest_wait)"
check "disable selftest" magnetctl probe disable selftest
out=$(magnetctl record S -o "$R/s.trace" --duration 1 2>&1)
check_eq "magnetctl record S (by name: magnetfs) exits 0" 0 $?
n=$(dump_count "$R/s.trace" selftest)
[ "${n:-0}" -ge 500 ] && ok "the trace read through magnetfs has the selftest records ($n)" ||
	not_ok "the trace read through magnetfs has the selftest records" "$n; $out"
dbg=/sys/kernel/debug/magnet/S
if [ -e "$dbg" ]; then
	out=$(python3 -c 'import os, sys; os.open(sys.argv[1], os.O_RDONLY)' "$dbg" 2>&1)
	grep -q 'Operation not permitted' <<<"$out" && ok "open($dbg) is refused: EPERM" ||
		not_ok "open($dbg) is refused: EPERM" "$out"
else
	skip "open($dbg) is refused: EPERM" "no debugfs file"
fi

check "probe del kp_raise" magnetctl probe del kp_raise
check "stream delete S" magnetctl stream delete S
check "rmmod magnet_selftest" rmmod magnet_selftest
check "modules unload" magnet_unload
check_dmesg_clean
done_testing
