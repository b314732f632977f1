#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check_docs.sh REPO LIBMAGNET_SO: every symbol libmagnet exports is in its
# version script, declared LIBMAGNET_API in the public header and named by
# a section 3 man page (docs/man3/*.3, NAME line), and every function a
# page names is exported; the pages format without groff warnings.
set -u
repo=$1
so=$2
map=$repo/libmagnet/libmagnet.map
hdr=$repo/libmagnet/include/magnet/libmagnet.h
fail=0
bad() { echo "not ok - $*"; fail=1; }

map_syms=$(sed -n 's/^[[:space:]]*\([a-z_][a-z0-9_]*\);$/\1/p' "$map" | sort -u)
so_syms=$(nm -D --defined-only "$so" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort -u)
man_syms=$(for p in "$repo"/docs/man3/*.3; do
	sed -n '/^\.SH NAME/{n;p;q}' "$p" | sed 's/ \\- .*//' | tr ',' '\n'
done | tr -d ' ' | grep -v '^libmagnet' | sort -u)

for s in $map_syms; do
	grep -qzE "LIBMAGNET_API[^;]*[ *]$s\(" "$hdr" ||
		bad "$s: in libmagnet.map, not declared LIBMAGNET_API in libmagnet.h"
	grep -qx "$s" <<<"$man_syms" || bad "$s: exported, but no docs/man3 page names it"
done
[ "$map_syms" = "$so_syms" ] ||
	bad "exports differ from libmagnet.map: $(diff <(echo "$map_syms") <(echo "$so_syms") | grep '^[<>]' | tr '\n' ' ')"
for s in $man_syms; do
	grep -qx "$s" <<<"$map_syms" || bad "$s: a man page names it, libmagnet.map does not export it"
done
for p in "$repo"/docs/man3/*.3 "$repo"/docs/magnetctl.8; do
	w=$(groff -man -Tutf8 -ww -z "$p" 2>&1)
	[ -z "$w" ] || bad "$(basename "$p"): groff: $w"
done
n_map=$(wc -w <<<"$map_syms")
n_pages=$(ls "$repo"/docs/man3/*.3 | wc -l)
[ $fail -eq 0 ] && echo "ok - $n_map exported functions, each declared, versioned and in one of $n_pages man pages"
exit $fail
