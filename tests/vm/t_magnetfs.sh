#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# magnetfs, the file system type: magnet.ko registers it and makes
# /sys/kernel/magnet but mounts nothing; magnetctl record mounts it there
# on first use as root, and says how to mount it to a user who may not;
# inside "ip netns exec" (a fresh sysfs) magnetctl mounts it in that mount
# namespace and records; a second mount by hand shares the superblock,
# streams appear and disappear in both, reads and ioctls work through it,
# uid=/gid=/mode= and remount grant a group read access, bad options are
# refused, a file open across deletion drains to EOF, and the module stays
# loaded while magnetfs is mounted.
MAGNET_MODULES=${MAGNET_MODULES:-magnet}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
need_magnet
ST=$MAGNET_MODDIR/magnet_selftest.ko
[ -f "$ST" ] || skip_all "magnet_selftest.ko not built"
grep -qw magnetfs /proc/filesystems && skip_all "magnetfs already registered"
dmesg_mark
# not magnet_load: it mounts magnetfs, which is what magnetctl must do here
insmod "$MAGNET_MODDIR/magnet.ko" || bail_out "cannot load magnet.ko"
_magnet_loaded=(magnet)
on_exit magnet_unload
R=$MAGNET_RESULTS
M1=/sys/kernel/magnet
M2=$(mktemp -d /tmp/magnetfs.XXXXXX)
M3=$(mktemp -d /tmp/magnetfs.XXXXXX)
on_exit "umount $M1; umount $M2; umount $M3; rmmod magnet_selftest"

nobody() { setpriv --reuid=65534 --regid="${GID:-65534}" --clear-groups --inh-caps=-all "$@"; }
# the streams' files (the sockstat file, docs/SOCKSTAT.md, is in every mount)
listing() { (cd "$1" && LC_ALL=C ls -A | grep -vx sockstat | tr '\n' ' ' | sed 's/ $//'); }

# rd.py PATH: read everything pending without blocking; print
# "sysinfo_ok NRECORDS NPROBE" (first record SYSINFO with the endian magic)
cat >"$R/rd.py" <<'PY'
import errno, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
buf = b""
while True:
    try:
        b = os.read(fd, 1 << 20)
    except OSError as e:
        if e.errno == errno.EAGAIN:
            break
        raise
    if not b:
        break
    buf += b
os.close(fd)
size, ev = struct.unpack_from("<HH", buf, 0) if len(buf) >= 36 else (0, 99)
magic = struct.unpack_from("<I", buf, 32)[0] if len(buf) >= 36 else 0
first = "sysinfo_ok" if ev == 0 and size >= 36 and magic == 0x01234567 else \
	"sysinfo_bad(size=%d,event=%d,magic=%#x)" % (size, ev, magic)
off = n = probe = 0
while off + 4 <= len(buf):
    size, ev = struct.unpack_from("<HH", buf, off)
    if size < 32:
        break
    n += 1
    probe += ev >= 16
    off += size
print(first, n, probe)
PY
# stats.py PATH: MAGNET_IOC_GET_STATS through the file; print produced read
cat >"$R/stats.py" <<'PY'
import fcntl, os, struct, sys
IOC = (2 << 30) | (56 << 16) | (0xB7 << 8) | 0x01
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
st = struct.unpack("<7Q", fcntl.ioctl(fd, IOC, bytes(56)))
os.close(fd)
print(st[0], st[3])
PY
# eof.py PATH: blocking reads until end of file; print the bytes read
cat >"$R/eof.py" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
print("open", flush=True)
n = 0
while True:
    b = os.read(fd, 1 << 16)
    if not b:
        break
    n += len(b)
print("eof", n, flush=True)
PY

# --- mount ----------------------------------------------------------
grep -qw magnetfs /proc/filesystems && ok "magnetfs registered" || not_ok "magnetfs registered"
[ -d $M1 ] && ok "$M1 exists" || not_ok "$M1 exists"
check_eq "magnet.ko mounts nothing itself" 0 "$(grep -c ' magnetfs ' /proc/mounts)"
check_eq "$M1 is an empty sysfs directory" "62656572|" "$(stat -f -c %t $M1)|$(ls -A $M1)"
[ -e /sys/module/magnet/parameters/automount ] &&
	not_ok "no automount parameter" "$(ls /sys/module/magnet/parameters)" || ok "no automount parameter"
check "stream create early" magnetctl stream create early
# a user who may not mount it is told how, and nothing is mounted
out=$(nobody "$MAGNETCTL" record early -o /tmp/nobody.trace 2>&1)
rc=$?
check_eq "non-root record without the mount: exit 6 (permission)" 6 "$rc"
grep -qF "magnetctl: record early: magnetfs is not mounted on $M1 and only root may mount it: as root, mount -t magnetfs magnetfs $M1" <<<"$out" &&
	ok "the message names the path and the command" || not_ok "the message names the path and the command" "$out"
check_eq "still nothing mounted" 0 "$(grep -c ' magnetfs ' /proc/mounts)"
# root: magnetctl record mounts it on first use
check "magnetctl record early (root) mounts magnetfs and records" \
	"$MAGNETCTL" record early -o "$R/early.trace" --duration 0.2
check_eq "one mount, on $M1, nosuid,nodev,noexec" "1 magnetfs $M1 magnetfs rw,nosuid,nodev,noexec,relatime" \
	"$(grep -c ' magnetfs ' /proc/mounts) $(grep ' magnetfs ' /proc/mounts | cut -d' ' -f1-4)"
check "the trace it wrote dumps" magnetctl dump "$R/early.trace"
check "mount -t magnetfs none $M2" mount -t magnetfs none "$M2"
check_eq "statfs type is MAGNETFS_MAGIC" 4d474e54 "$(stat -f -c %t $M1)"
check_eq "a stream created before the second mount is listed there" early "$(listing "$M2")"
check "stream create S" magnetctl stream create S
# with debugfs (the usual case) netlink reports its file; without
# (MAGNET_VM_APPEND=debugfs=off) the magnetfs one
if [ -d /sys/kernel/debug/magnet ]; then want=/sys/kernel/debug/magnet/S; else want=$M1/S; diag "no debugfs"; fi
path=$(magnetctl -j stream show S | python3 -c 'import json,sys; d=json.load(sys.stdin); d=d.get("stream",d); print(d["path"])')
check_eq "the stream path netlink reports" "$want" "$path"
check_eq "both mounts show both streams" "S early|S early" "$(listing $M1)|$(listing "$M2")"
check_eq "stream files are root-only by default" "400 0 0" "$(stat -c '%a %u %g' $M1/S)"
check_eq "root directory follows mode (search for all: sockstat)" "511 0 0" "$(stat -c '%a %u %g' $M1)"
check_eq "the sockstat file: 0444 root whatever the mode" "444 0 0" "$(stat -c '%a %u %g' $M1/sockstat)"
check "stream delete early" magnetctl stream delete early
check_eq "a deleted stream disappears from both mounts" "S|S" "$(listing $M1)|$(listing "$M2")"

# --- reading and ioctl through the mount --------------------------------
check "insmod magnet_selftest count=1000" insmod "$ST" count=1000
check "enable selftest into S" magnetctl probe enable selftest stream S
selftest_wait >/dev/null || diag "selftest still running"
out=$(python3 "$R/rd.py" $M1/S 2>&1)
read -r first nrec nprobe <<<"$out"
check_eq "first record read through magnetfs is SYSINFO" sysinfo_ok "$first"
[ "${nprobe:-0}" -ge 1000 ] && ok "selftest records read through magnetfs ($nprobe)" ||
	not_ok "selftest records read through magnetfs" "$out"
out=$(python3 "$R/stats.py" "$M2/S" 2>&1)
read -r produced nread <<<"$out"
[ "${produced:-0}" -ge 1000 ] && [ "${nread:-0}" -ge 1000 ] &&
	ok "MAGNET_IOC_GET_STATS through magnetfs (produced $produced, read $nread)" ||
	not_ok "MAGNET_IOC_GET_STATS through magnetfs" "$out"

# magnetctl record NAME prefers the magnetfs file
bg rec "$MAGNETCTL" record S -o "$R/S.trace"
sleep 1
fd=$(ls -l /proc/"${BG_PID[rec]}"/fd 2>/dev/null | grep -o '/[^ ]*/S$' | head -1)
check_eq "magnetctl record S reads $M1/S" "$M1/S" "$fd"
kill -INT "${BG_PID[rec]}"
bg_wait rec 20 || diag "recorder: exit $?"
check "the recorded trace dumps" magnetctl dump "$R/S.trace"

# --- permissions and remount -----------------------------------------
refused_eacces "non-root refused by default (EACCES)" nobody cat $M1/S
check "remount,gid=1234,mode=0440" mount -o remount,gid=1234,mode=0440 $M1
check_eq "remount changes existing files in both mounts" "440 0 1234|440 0 1234" \
	"$(stat -c '%a %u %g' $M1/S)|$(stat -c '%a %u %g' "$M2/S")"
check_eq "root directory after remount" "551 0 1234" "$(stat -c '%a %u %g' $M1)"
grep -E " $M1 magnetfs .*gid=1234,mode=440" /proc/mounts >/dev/null &&
	ok "/proc/mounts shows the options" || not_ok "/proc/mounts shows the options" "$(grep magnetfs /proc/mounts)"
out=$(GID=1234 nobody python3 - $M1/S <"$R/rd.py" 2>&1)
check_eq "group 1234 may read" sysinfo_ok "${out%% *}"
refused_eacces "other non-root still refused (EACCES)" nobody cat $M1/S
check "stream create T after the remount" magnetctl stream create T
check_eq "new files get the remounted options" "440 0 1234" "$(stat -c '%a %u %g' "$M2/T")"
check "remount,mode=0400" mount -o remount,mode=0400 "$M2"
check_eq "a remount keeps options it does not name" "400 0 1234" "$(stat -c '%a %u %g' $M1/T)"

# --- bad options ------------------------------------------------------
# expect_refused DESC MSG OPTIONS: the mount fails, the kernel says MSG
# (mount(2) logs the fs_context message to the kernel log)
expect_refused() {
	local desc=$1 msg=$2
	if mount -t magnetfs -o "$3" none "$M3" 2>/dev/null; then
		not_ok "$desc" "accepted"
	elif dmesg | tail -5 | grep -qF "magnetfs: $msg"; then
		ok "$desc"
	else
		not_ok "$desc" "no 'magnetfs: $msg' in the kernel log"
	fi
}
expect_refused "unknown option refused" "Unknown parameter 'bogus'" bogus=1
expect_refused "mode=abc refused" "Bad value for 'mode'" mode=abc
expect_refused "mode=01777 refused" "mode 1777: only permission bits" mode=01777
expect_refused "uid=x refused" "Bad value for 'uid'" uid=x
check_eq "nothing mounted by the refused mounts" 2 "$(grep -c ' magnetfs ' /proc/mounts)"

# --- deletion while open ------------------------------------------------
bg eof python3 "$R/eof.py" $M1/T
for i in $(seq 1 100); do grep -q '^open' "$R/eof.out" && break; sleep 0.1; done
check "stream delete T while open" magnetctl stream delete T
bg_wait eof 20
grep -q "^eof" "$R/eof.out" && ok "a reader of a deleted stream sees EOF" ||
	not_ok "a reader of a deleted stream sees EOF" "$(cat "$R/eof.out")"
check_eq "T is gone from both mounts" "S|S" "$(listing $M1)|$(listing "$M2")"

# --- a fresh superblock is populated -----------------------------------
check "umount both" umount $M1 "$M2"
check "mount again" mount -t magnetfs none "$M3"
check_eq "fill_super lists existing streams" S "$(listing "$M3")"
check_eq "a new superblock starts with the defaults" "400 0 0" "$(stat -c '%a %u %g' "$M3/S")"

# --- open vs delete --------------------------------------------------------
# Openers hammer the stream's files (debugfs, where ->open runs inside the
# file's active reference, and magnetfs) while the stream is deleted and
# created again: a deletion must never wait for an open that waits for
# the deletion.  Each delete gets 20 s; a deadlock leaves it hanging.
DBG=/sys/kernel/debug/magnet/race
cat >"$R/opener.py" <<'PY'
import os, sys, time
end = time.time() + float(sys.argv[1])
print("started", flush=True)
n = ok = 0
while time.time() < end:
    for p in sys.argv[2:]:
        n += 1
        try:
            fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            continue
        ok += 1
        try:
            os.read(fd, 4096)
        except OSError:
            pass
        os.close(fd)
print("opens=%d ok=%d" % (n, ok))
PY
bg opener1 python3 "$R/opener.py" 40 "$DBG" "$M3/race"
bg opener2 python3 "$R/opener.py" 40 "$DBG" "$M3/race"
for o in opener1 opener2; do
	check "$o runs before the first delete" wait_line "$(out $o)" '^started$' 30
done
race_ok=0
for i in $(seq 1 40); do
	magnetctl stream create race subbuf-size 4K >/dev/null 2>&1 || break
	timeout 20 "$MAGNETCTL" stream delete race >/dev/null 2>&1 || break
	race_ok=$i
done
check_eq "40 create/delete rounds while files are opened (no deadlock)" 40 "$race_ok"
for o in opener1 opener2; do
	bg_wait $o 60
	rc=$?
	grep -qE '^opens=[1-9][0-9]* ok=[0-9]+$' "$(out $o)" && [ $rc -eq 0 ] &&
		ok "$o ran to its end: $(tail -n 1 "$(out $o)")" ||
		not_ok "$o ran to its end" "exit $rc: $(head -c 600 "$(out $o)")"
done
check "control still answers after the race" magnetctl stream list

# --- inside a network namespace ----------------------------------------
# "ip netns exec" gives the command a mount namespace of its own with a
# fresh sysfs of the network namespace; magnet.ko's directory is in it,
# empty.  magnetctl mounts magnetfs there (that mount goes with the
# command's mount namespace) and reaches the netlink family, which is in
# the initial network namespace only.
NS=mgfs$$
check "ip netns add $NS" ip netns add $NS
on_exit "ip netns del $NS"
check_eq "the namespace's sysfs has an empty $M1" "62656572|" \
	"$(ip netns exec $NS stat -f -c %t $M1)|$(ip netns exec $NS ls -A $M1)"
check "disable selftest" magnetctl probe disable selftest
check "rmmod magnet_selftest" rmmod magnet_selftest
check "insmod magnet_selftest count=500" insmod "$ST" count=500
check "stream create N" magnetctl stream create N
check "magnetctl stream list inside the namespace" ip netns exec $NS "$MAGNETCTL" stream list
bg nsrec ip netns exec $NS "$MAGNETCTL" record N -o "$R/ns.trace"
record_started nsrec || diag "nsrec: $(cat "$(out nsrec)")"
grep -qF "recording $M1/N " "$(out nsrec)" && ok "inside the namespace record reads $M1/N" ||
	not_ok "inside the namespace record reads $M1/N" "$(cat "$(out nsrec)")"
check "enable selftest into N" magnetctl probe enable selftest stream N
check_eq "the selftest producers finished" 0 "$(selftest_wait)"
kill -INT "${BG_PID[nsrec]}"
bg_wait nsrec 20
check_eq "magnetctl record inside the namespace exits 0" 0 $?
n=$(dump_count "$R/ns.trace" selftest)
[ "${n:-0}" -ge 500 ] && ok "the namespace's trace has the selftest records ($n)" ||
	not_ok "the namespace's trace has the selftest records" "$n; $(cat "$(out nsrec)")"
check_eq "its mount went with its mount namespace: here only $M3" "$M3" \
	"$(awk '$3 == "magnetfs" { print $2 }' /proc/mounts | paste -sd ' ')"

# --- module unload --------------------------------------------------------
check "disable selftest" magnetctl probe disable selftest
check "rmmod magnet_selftest" rmmod magnet_selftest
if rmmod magnet 2>/dev/null; then not_ok "rmmod magnet refused while mounted"; else ok "rmmod magnet refused while mounted"; fi
check "stream S still readable" python3 "$R/rd.py" "$M3/S"
check "umount" umount "$M3"
check "rmmod magnet after umount" rmmod magnet
grep -qw magnetfs /proc/filesystems && not_ok "magnetfs unregistered" || ok "magnetfs unregistered"
[ -e $M1 ] && not_ok "$M1 removed" || ok "$M1 removed"
# the automount parameter is gone: the kernel ignores it, as any unknown one
check "insmod magnet again (automount=0, of old setups)" insmod "$MAGNET_MODDIR/magnet.ko" automount=0
dmesg | tail -5 | grep -qF "magnet: unknown parameter 'automount' ignored" &&
	ok "the kernel ignores automount=0 as unknown" || not_ok "the kernel ignores automount=0 as unknown" "$(dmesg | tail -3)"
check_eq "nothing mounted after the reload" 0 "$(grep -c ' magnetfs ' /proc/mounts)"
[ -d $M1 ] && ok "$M1 back" || not_ok "$M1 back"
check "mount by hand" mount -t magnetfs magnetfs $M1
if rmmod magnet 2>/dev/null; then not_ok "rmmod refused while $M1 is mounted"; else ok "rmmod refused while $M1 is mounted"; fi
check "umount after reload" umount $M1
check "modules unload" magnet_unload
check_dmesg_clean
done_testing
