#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Builds MAGNET's Debian packages (debian/: magnet-dkms, libmagnet0,
# libmagnet-dev, magnetctl, babeltrace2-plugin-magnet) with
# dpkg-buildpackage in a copy of the tree (build/deb/src: the working tree
# stays clean), then checks them with lintian: any error or warning fails,
# except the overrides in debian/*.lintian-overrides, each explained
# there.  The packages land in build/deb/.  Installs the build
# dependencies it lacks (as root, or through sudo).
#
#	scripts/deb-build.sh		then: apt-get install ./build/deb/*.deb
#
# scripts/deb-test.sh installs them and tests them in the VM kernels.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/deb
src=$out/src
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo

need=(dpkg-dev debhelper dh-dkms fakeroot lintian build-essential cmake pkgconf
	libnl-3-dev libnl-genl-3-dev libaio-dev liburing-dev libbabeltrace2-dev)
missing=()
for p in "${need[@]}"; do
	dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "deb-build: installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}" >/dev/null
fi

rm -rf "$out"
mkdir -p "$src"
# the tracked files and new ones not ignored: what a commit would hold
(cd "$top" && git ls-files -z -co --exclude-standard) |
	(cd "$top" && xargs -0 cp --parents -t "$src" 2>/dev/null) || {
	# not a git checkout: everything but the build tree
	(cd "$top" && tar --exclude=./build -cf - .) | tar -xf - -C "$src"
}
ver=$("$top/scripts/version.sh")
deb=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
if [ "$deb" != "$ver" ]; then
	echo "deb-build: debian/changelog is at $deb, scripts/version.sh says $ver: add a changelog entry (dch -v $ver)" >&2
	exit 1
fi
(cd "$src" && dpkg-buildpackage -b -us -uc -j"$(nproc)") >"$out/build.log" 2>&1 || {
	tail -n 30 "$out/build.log" >&2
	echo "deb-build: dpkg-buildpackage failed, see $out/build.log" >&2
	exit 1
}
changes=$(ls "$out"/magnet_"$ver"_*.changes)
# lintian: every error and warning fails; info tags are printed only
if ! lintian --fail-on error,warning --info "$changes" >"$out/lintian.log" 2>&1; then
	cat "$out/lintian.log" >&2
	echo "deb-build: lintian failed, see $out/lintian.log" >&2
	exit 1
fi
cat "$out/lintian.log"
ls "$out"/*.deb
