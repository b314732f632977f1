#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Puts the kernel modules' sources where DKMS takes them from,
# DEST/magnet-VERSION (DEST defaults to /usr/src), with dkms.conf's
# version filled in, and prints that directory.  Then, as root:
#
#	dkms install magnet/VERSION		(builds, installs, runs depmod)
#	modprobe magnet_net			(loads magnet.ko first)
#
# The version is scripts/version.sh's.  The test and benchmark modules are
# left out: DKMS builds what a user loads.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-/usr/src}
ver=$("$top/scripts/version.sh")
dir=$dest/magnet-$ver
rm -rf "$dir"
mkdir -p "$dir"
for d in ring kmod magnetfs probes include; do
	cp -a "$top/$d" "$dir/"
done
cp "$top/Kbuild" "$top/Makefile" "$dir/"
echo "$ver" >"$dir/VERSION"
sed "s/#MODULE_VERSION#/$ver/" "$top/dkms.conf" >"$dir/dkms.conf"
echo "$dir"
