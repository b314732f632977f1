#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# gen-symbols.sh MAP: libmagnet0's symbols file (deb-symbols(5)) from the
# library's version script: every symbol of node LIBMAGNET_X.Y, and the
# node itself, with the minimal version X.Y.0 (the package version that
# brought it, scripts/version.sh).  dpkg-gensymbols, at check level 4
# (debian/rules), fails the build if the library exports anything else.
set -eu
map=${1:?usage: gen-symbols.sh MAP}
echo "libmagnet.so.0 libmagnet0 #MINVER#"
echo "* Build-Depends-Package: libmagnet-dev"
awk '
/^LIBMAGNET_[0-9]+\.[0-9]+[ \t]*\{/ {
	node = $1; sub(/[ \t]*\{.*/, "", node)
	ver = node; sub(/^LIBMAGNET_/, "", ver)
	printf " %s@%s %s.0\n", node, node, ver
	next
}
/^[ \t]*(global|local):/ { next }
node != "" && /^[ \t]*[A-Za-z_][A-Za-z0-9_]*;/ {
	sym = $1; sub(/;.*/, "", sym)
	printf " %s@%s %s.0\n", sym, node, ver
}
/^\}/ { node = "" }
' "$map"
