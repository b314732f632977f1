#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Prints MAGNET's version, MAJOR.MINOR.0, from the one place it is kept: the
# newest version node of libmagnet's symbol map (LIBMAGNET_MAJOR.MINOR in
# libmagnet/libmagnet.map), as libbpf derives its version from libbpf.map.
# A release that adds symbols adds a node and so bumps the version; CMake
# (project VERSION, the .pc file), the DKMS package and the Debian packages
# all take it from here.
top=$(cd "$(dirname "$0")/.." && pwd)
v=$(sed -n 's/^LIBMAGNET_\([0-9][0-9]*\.[0-9][0-9]*\)[[:space:]]*{.*/\1/p' \
	"$top/libmagnet/libmagnet.map" | sort -t. -k1,1n -k2,2n | tail -1)
[ -n "$v" ] || { echo "version.sh: no LIBMAGNET_X.Y node in libmagnet.map" >&2; exit 1; }
echo "$v.0"
