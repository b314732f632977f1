#!/usr/bin/env bash
# Builds MAGNET's kernel modules for kernel KVER (default: the running one,
# else the newest with headers) into build/modules/KVER/.  The sources are
# copied there first so that several kernels can be built side by side.
# Extra arguments go to make (e.g. W=1, C=2).
# KVER is an installed kernel (/lib/modules/KVER/build) or the release of
# the debug-kernel tier's kernel (scripts/debug-kernel.sh: its build tree
# in the cache).  When the kernel's .config names a signing key by an
# absolute path that exists (the debug tier's), the modules are signed
# with it, so kernels booted with lockdown= load them.
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
if [ ! -d "$kdir" ] && dbg=$("$top/scripts/debug-kernel.sh" --dir-of "$kver" 2>/dev/null); then
	kdir=$dbg/linux
fi
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
"$top/scripts/version.sh" >"$src/VERSION"
# the test and benchmark modules too (Kbuild leaves them out unless asked)
make -s -j"$(nproc)" -C "$kdir" M="$src" MAGNET_TEST_MODULES=y modules "$@"
cp "$src/magnet.ko" "$src"/probes/*.ko "$src"/tests/kmod/*.ko "$src"/bench/kmod/*.ko "$out/"
key=$(sed -n 's/^CONFIG_MODULE_SIG_KEY="\(\/.*\)"$/\1/p' "$kdir/.config" 2>/dev/null || true)
if grep -qx 'CONFIG_MODULE_SIG=y' "$kdir/.config" 2>/dev/null && [ -n "$key" ] && [ -r "$key" ] &&
	[ -r "$kdir/certs/signing_key.x509" ]; then
	hash=$(sed -n 's/^CONFIG_MODULE_SIG_HASH="\(.*\)"$/\1/p' "$kdir/.config")
	for m in "$out"/*.ko; do
		"$kdir/scripts/sign-file" "${hash:-sha256}" "$key" "$kdir/certs/signing_key.x509" "$m"
	done
	echo "build-modules: signed with $key"
fi
echo "build-modules: $kver -> $out: $(cd "$out" && ls *.ko | tr '\n' ' ')"
