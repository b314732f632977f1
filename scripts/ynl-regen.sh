#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/ynl-regen.sh [--check]: generate include/uapi/magnet_genl.h (the
# generic netlink family's C names: commands, attribute sets, multicast
# group) from docs/magnet.yaml with the kernel's own generator, ynl-gen-c
# (tools/net/ynl of linux-source-6.12, scripts/ynl-tools.sh), as the
# kernel's families are: the family is written once, in the spec.
# --check: change nothing, exit 1 if the header in the tree is not what
# the spec generates (scripts/test.sh runs it).
#
# ynl-gen-c reads the schema two directories above the spec and looks
# upwards for the kernel tree's MAINTAINERS file (it loops forever without
# one), so it runs in a scratch tree shaped like the kernel's.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
check=0
[ "${1:-}" = --check ] && check=1
cli=$("$top/scripts/ynl-tools.sh")
gen=$(dirname "$cli")/ynl-gen-c.py
out=$top/include/uapi/magnet_genl.h
proto=$(sed -n 's/^protocol: *//p' "$top/docs/magnet.yaml")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/netlink/specs"
: >"$tmp/MAINTAINERS"
cp "$top/tests/netlink/$proto.yaml" "$tmp/netlink/"
cp "$top/docs/magnet.yaml" "$tmp/netlink/specs/"
(cd "$tmp" && timeout 120 python3 "$gen" --mode uapi --header \
	--spec netlink/specs/magnet.yaml -o "$tmp/magnet_genl.h")
# name the spec where it is in this tree
sed -i 's|^/\*\tnetlink/specs/magnet.yaml \*/$|/*\tdocs/magnet.yaml */|' "$tmp/magnet_genl.h"
if [ $check -eq 1 ]; then
	if ! diff -u "$out" "$tmp/magnet_genl.h"; then
		echo "ynl-regen: $out is not what docs/magnet.yaml generates; run scripts/ynl-regen.sh" >&2
		exit 1
	fi
	echo "ynl-regen: $out is current"
else
	cp "$tmp/magnet_genl.h" "$out"
	echo "ynl-regen: wrote $out"
fi
