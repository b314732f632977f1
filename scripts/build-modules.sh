#!/usr/bin/env bash
# Builds MAGNET's kernel modules for kernel KVER (default: the running one,
# else the newest with headers) into build/modules/KVER/.  The sources are
# copied there first so that several kernels can be built side by side.
# Extra arguments go to make (e.g. W=1, C=2).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kver=${1:-}
[ $# -gt 0 ] && shift
if [ -z "$kver" ]; then
	if [ -d "/lib/modules/$(uname -r)/build" ]; then
		kver=$(uname -r)
	else
		kver=$(ls -1 /lib/modules | sort -V | while read -r v; do
			[ -d "/lib/modules/$v/build" ] && echo "$v"; done | tail -1)
	fi
fi
kdir=/lib/modules/$kver/build
[ -d "$kdir" ] || { echo "build-modules: no kernel headers for '$kver' in $kdir" >&2; exit 1; }
out=$top/build/modules/$kver
src=$out/src
mkdir -p "$src"
# sync sources; keep objects so rebuilds are incremental
for d in ring kmod magnetfs probes include tests/kmod bench/kmod; do
	mkdir -p "$src/$d"
	cp -a "$top/$d/." "$src/$d/"
done
cp "$top/Kbuild" "$src/Kbuild"
make -s -C "$kdir" M="$src" modules "$@"
cp "$src/magnet.ko" "$src"/probes/*.ko "$src"/tests/kmod/*.ko "$src"/bench/kmod/*.ko "$out/"
echo "build-modules: $kver -> $out: $(cd "$out" && ls *.ko | tr '\n' ' ')"
