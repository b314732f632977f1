#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# MAGNET as installed from its Debian packages (scripts/deb-test.sh installs
# them on the host, whose root this VM shares, and has DKMS build the
# modules for this kernel): modprobe loads the DKMS-built modules from
# /lib/modules/KVER/updates/dkms, the packaged /usr/sbin/magnetctl records
# a known UDP workload (every datagram's udp_send event in the trace), the
# packaged babeltrace2 plugin reads that trace without --plugin-path, a
# program built against libmagnet-dev (pkg-config) talks to the loaded
# module, and modprobe -r unloads everything.  Nothing of the build tree
# is used but the traffic tools (tests/tools).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
need_cmd modprobe dpkg-query pkg-config cc
MAGNETCTL=/usr/sbin/magnetctl
KV=$(uname -r)
VER=$("$MAGNET_REPO/scripts/version.sh")
for p in magnet-dkms libmagnet0 libmagnet-dev magnetctl babeltrace2-plugin-magnet; do
	v=$(dpkg-query -W -f '${Version}' "$p" 2>/dev/null) ||
		skip_all "package $p not installed (scripts/deb-test.sh installs them)"
	[ "$v" = "$VER" ] || skip_all "package $p is $v, the tree is $VER (scripts/deb-test.sh)"
done
ls /lib/modules/"$KV"/updates/dkms/magnet.ko* >/dev/null 2>&1 ||
	skip_all "no DKMS build of magnet for $KV (scripts/deb-test.sh)"
[ ! -d /sys/module/magnet ] || bail_out "magnet is already loaded"
need_tools udp_flood udp_sink
plan 17
dmesg_mark
R=$MAGNET_RESULTS
on_exit "rmmod magnet_net 2>/dev/null; magnetfs_umount_all; rmmod magnet 2>/dev/null"

check "modprobe magnet_net (the packaged, DKMS-built module)" modprobe magnet_net ||
	bail_out "modprobe magnet_net: $(modprobe -n -v magnet_net 2>&1)"
check "the core came with it, from updates/dkms" sh -c \
	"test -d /sys/module/magnet && modinfo -n magnet | grep -q /updates/dkms/"
check_eq "the module's version is the packages'" "$VER" "$(cat /sys/module/magnet/version 2>&1)"
check "the packaged magnetctl talks to it" "$MAGNETCTL" status
# magnetfs: the module mounts nothing; the package's unit and udev rule do
# under systemd (this guest runs none), magnetctl record on first use here
U=/lib/systemd/system/sys-kernel-magnet.mount
check "the package installs $U (What=magnetfs, Type=magnetfs, on /sys/kernel/magnet)" sh -c \
	"grep -qx What=magnetfs $U && grep -qx Type=magnetfs $U && grep -qx Where=/sys/kernel/magnet $U"
check "and the udev rule that starts it when magnet loads" \
	grep -q 'KERNEL=="magnet".*SYSTEMD_WANTS.*sys-kernel-magnet.mount' /lib/udev/rules.d/60-magnet.rules

# a known workload: N datagrams, N udp_send events in the trace
N=300
netns_setup
udp_sink_start sink 5002
magnetctl stream create deb subbuf-size 64K subbuf-count 4 >/dev/null 2>&1
check "probe enable udp_send" magnetctl probe enable udp_send stream deb
bg rec "$MAGNETCTL" record deb -o "$R/deb.trace"
record_started rec || diag "rec: $(cat "$(out rec)")"
udp_send flood "$N" 200
magnetctl probe disable udp_send >/dev/null 2>&1
kill -INT "${BG_PID[rec]}"
bg_wait rec 30
n=$(dump_count "$R/deb.trace" udp_send)
check "the packaged magnetctl mounted magnetfs on /sys/kernel/magnet" magnetfs_mounted
check_eq "the packaged magnetctl recorded every datagram's udp_send" "$N" "$n" ||
	diag "$(cat "$(out rec)" "$(out flood)")"

# babeltrace2 finds the packaged plugin by itself
check "babeltrace2 lists the packaged plugin" sh -c \
	"babeltrace2 list-plugins 2>/dev/null | grep -q 'magnet'"
nb=$(babeltrace2 "$R/deb.trace" 2>"$R/bt2.err" | grep -c 'udp_send')
check_eq "babeltrace2 (no --plugin-path) prints the same udp_send events" "$N" "$nb" ||
	diag "$(head -5 "$R/bt2.err")"

# a program built against libmagnet-dev, run against libmagnet0
cat >"$R/status.c" <<'PROG'
#include <stdio.h>
#include <magnet/libmagnet.h>
#include <magnet/uapi/magnet.h>

int main(void)
{
	struct magnet_status st;
	struct magnet_ctl *h;
	int ret = magnet_ctl_open(&h);

	if (ret)
		return 2;
	ret = magnet_status_get(h, &st);
	magnet_ctl_close(h);
	if (ret)
		return 3;
	printf("%s %u\n", st.version, st.nr_probes);
	return 0;
}
PROG
# shellcheck disable=SC2046
check "a program builds against libmagnet-dev (pkg-config libmagnet)" \
	cc -o "$R/status" "$R/status.c" $(pkg-config --cflags --libs libmagnet)
# (/lib is /usr/lib on a merged-/usr system: ld.so may name either)
check "it links the packaged libmagnet.so.0, not the build tree's" sh -c \
	"ldd '$R/status' | grep -Eq 'libmagnet\.so\.0 => (/usr)?/lib/[^ ]+/libmagnet\.so\.0 '"
read -r v np < <("$R/status" 2>&1)
check_eq "it reads the loaded module's version over netlink" "$VER" "$v"
check "and its probes ($np)" test "${np:-0}" -gt 0

magnetctl stream delete deb >/dev/null 2>&1
magnetfs_umount_all
check "modprobe -r magnet_net magnet unloads both" sh -c \
	"modprobe -r magnet_net magnet && ! test -d /sys/module/magnet"
check_dmesg_clean
done_testing
