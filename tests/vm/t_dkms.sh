#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DKMS and modprobe, as a user installs MAGNET: the DKMS package that
# scripts/dkms-build.sh built on the host for this kernel (build/dkms/) is
# installed with `dkms install` into this VM's /lib/modules/KVER (a
# writable tree bound over the read-only one, holding only what modprobe
# needs), and loaded with modprobe: `modprobe magnet_net` must load the
# core, magnet, first (depmod recorded the dependency), magnetctl must
# work against the modules so loaded and record events, `modprobe -r`
# must unload them, and after `dkms remove` modprobe must find nothing.
# Before anything is loaded magnetctl's "not loaded" error must name the
# modprobe to run.  The test and benchmark modules are not in the package.
# Slow under TCG (dkms is a large shell script): about 2 minutes on an idle
# host, 9 with the host loaded 7 times over.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
need_cmd dkms modprobe depmod
[ -x "$MAGNETCTL" ] || skip_all "$MAGNETCTL not built"
KV=$(uname -r)
VER=$("$MAGNET_REPO/scripts/version.sh")
DK=$MAGNET_BUILD/dkms
[ -d "$DK/tree/magnet/$VER/$KV" ] ||
	skip_all "no DKMS build of magnet $VER for $KV (scripts/dkms-build.sh $KV)"
[ ! -d /sys/module/magnet ] || bail_out "magnet is already loaded"
plan 18
dmesg_mark
R=$MAGNET_RESULTS

msg=$(magnetctl status 2>&1)
check_eq "magnetctl status without MAGNET: exit 4" 4 "$?"
check "the error names the modprobe to run" grep -q "modprobe magnet_net" <<<"$msg" ||
	diag "$msg"

# a writable /lib/modules/$KV: the guest's / is the host's, read-only
T=/tmp/magnet-dkms
rm -rf "$T"
mkdir -p "$T/mods"
cp -a "$DK/tree" "$T/tree"
# modules.builtin*: modprobe's view of the kernel; modules.dep: DKMS takes
# the modules' suffix (.ko.xz on 6.12) from it; depmod rewrites it
cp /lib/modules/"$KV"/modules.builtin* /lib/modules/"$KV"/modules.dep "$T/mods/" 2>/dev/null || true
: >"$T/mods/modules.order"
for l in build source; do
	[ -e "/lib/modules/$KV/$l" ] && ln -s "$(readlink -f "/lib/modules/$KV/$l")" "$T/mods/$l"
done
mount --bind "$T/mods" "/lib/modules/$KV" || bail_out "cannot bind a writable /lib/modules/$KV"
on_exit "umount /lib/modules/$KV"
# whatever happens below, nothing stays loaded
on_exit "rmmod magnet_sched magnet_net 2>/dev/null; magnetfs_umount_all; rmmod magnet 2>/dev/null"

dkms=(dkms --dkmstree "$T/tree" --sourcetree "$DK/src")
timeout 400 "${dkms[@]}" install -m magnet -v "$VER" -k "$KV" >"$R/dkms-install.out" 2>&1
check_eq "dkms install succeeds" 0 "$?" ||
	bail_out "dkms install failed: $(tail -20 "$R/dkms-install.out")"
check "dkms status: installed" grep -q "magnet/$VER, $KV, .*: installed" \
	<<<"$("${dkms[@]}" status -m magnet -v "$VER" -k "$KV" 2>&1)"
ls -R "/lib/modules/$KV/updates" >"$R/installed.txt" 2>&1
# shellcheck disable=SC2016
check "magnet.ko and the probe modules installed under updates/dkms" sh -c \
	'cd "$1" && for m in magnet magnet_net magnet_sched magnet_mm magnet_tcpip magnet_example; do
		ls "$m".ko* || exit 1; done' - "/lib/modules/$KV/updates/dkms"
check "no test or benchmark module installed" sh -c \
	"! grep -E 'magnet_(selftest|bench)' '$R/installed.txt'"
check "depmod: magnet_net depends on magnet" grep -Eq \
	'^updates/dkms/magnet_net\.ko(\.[a-z]+)?: updates/dkms/magnet\.ko' "/lib/modules/$KV/modules.dep"

check "modprobe magnet_net" modprobe magnet_net ||
	bail_out "modprobe magnet_net failed; modules.dep: $(grep magnet "/lib/modules/$KV/modules.dep")"
check "magnet (the core) was loaded with it" test -d /sys/module/magnet
check_eq "its version is scripts/version.sh's" "$VER" "$(cat /sys/module/magnet/version 2>&1)"
check "magnet_net is loaded" test -d /sys/module/magnet_net
check "magnetctl status works" magnetctl status
check "the network points are listed" sh -c "'$MAGNETCTL' probe list | grep -qw tcp_send"

# a recording through the modprobe'd modules: processes forked while
# magnet_sched's sched_fork point is enabled
check "modprobe magnet_sched" modprobe magnet_sched
magnetctl stream create dk subbuf-size 64K subbuf-count 4 >/dev/null 2>&1
magnetctl probe enable sched_fork stream dk >/dev/null 2>&1
bg rec "$MAGNETCTL" record dk -o "$R/dk.trace"
record_started rec || diag "rec: $(cat "$(out rec)")"
for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done
magnetctl probe disable sched_fork >/dev/null 2>&1
kill -INT "${BG_PID[rec]}"
bg_wait rec 30
n=$(magnetctl -j dump "$R/dk.trace" 2>/dev/null | python3 -c '
import json, sys
print(sum(json.loads(l).get("name") == "sched_fork" for l in sys.stdin))')
check "the recording holds sched_fork events ($n)" test "$n" -ge 10 ||
	diag "$(cat "$(out rec)")"

modprobe -r magnet_sched magnet_net
magnetfs_umount_all
check "modprobe -r magnet unloads the core" modprobe -r magnet
timeout 300 "${dkms[@]}" remove -m magnet -v "$VER" -k "$KV" >"$R/dkms-remove.out" 2>&1
check "after dkms remove, modprobe magnet_net finds nothing" sh -c \
	"! modprobe magnet_net 2>/dev/null && ! test -d /sys/module/magnet"
check_dmesg_clean
done_testing
