#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check_debian.sh REPO: debian/ stays in step with the tree: the newest
# debian/changelog entry is scripts/version.sh's version (a new node in
# libmagnet.map needs a changelog entry, or scripts/deb-build.sh refuses
# to build), and libmagnet0's generated symbols file lists exactly the
# symbols of libmagnet.map, each under its node.  The packages themselves
# are built and tested by scripts/deb-test.sh (docs/INSTALL.md).
set -u
repo=$1
fail=0
bad() { echo "not ok - $*"; fail=1; }
ok() { echo "ok - $*"; }

ver=$("$repo/scripts/version.sh")
deb=$(sed -n '1s/^magnet (\([^)]*\)).*/\1/p' "$repo/debian/changelog")
[ "$deb" = "$ver" ] && ok "debian/changelog is at $ver" ||
	bad "debian/changelog's newest entry is '$deb', scripts/version.sh says $ver: add an entry"

sym=$("$repo/debian/gen-symbols.sh" "$repo/libmagnet/libmagnet.map") || bad "gen-symbols.sh failed"
got=$(sed -n 's/^ \(magnet_[a-z0-9_]*\)@LIBMAGNET_[0-9.]* [0-9.]*$/\1/p' <<<"$sym" | sort)
want=$(sed -n 's/^[[:space:]]*\(magnet_[a-z0-9_]*\);$/\1/p' "$repo/libmagnet/libmagnet.map" | sort)
[ -n "$got" ] && [ "$got" = "$want" ] && ok "symbols file: the map's $(wc -l <<<"$want") symbols" ||
	bad "symbols file differs from the map: $(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | tr '\n' ' ')"
# a symbol's minimal version is its node's
bad_node=$(awk '/^LIBMAGNET_/ { n = $1; sub(/[ \t]*\{.*/, "", n); v = n; sub(/LIBMAGNET_/, "", v) }
	/^[ \t]*magnet_[a-z0-9_]*;$/ { s = $1; sub(/;/, "", s); print " " s "@" n " " v ".0" }' \
	"$repo/libmagnet/libmagnet.map" | grep -vxF -f <(echo "$sym") | head -3)
[ -z "$bad_node" ] && ok "each symbol under its node, with the node's version" ||
	bad "symbols file lacks: $bad_node"
exit $fail
