#!/usr/bin/env bash
# Builds LTTng's kernel modules (lttng-modules, branch stable-2.13, to
# match Debian bookworm's lttng-tools 2.13) for kernel KVER into
# build/bench/lttng/KVER/, for the LTTng row of bench/run.sh.  Optional:
# without it the benchmarks leave LTTng out.  LTTng's code is never copied
# into MAGNET's tree: the source is a git checkout outside it
# ($LTTNG_MODULES_SRC: a clone or a bare repository; default: a clone of
# https://github.com/lttng/lttng-modules in build/bench/lttng/src.git).
#
#   bench/lttng-build.sh KVER
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kver=${1:?usage: $0 KVER}
branch=${LTTNG_BRANCH:-stable-2.13}
base=$top/build/bench/lttng
src=${LTTNG_MODULES_SRC:-$base/src.git}
mkdir -p "$base"
if [ ! -d "$src" ]; then
	git clone --bare --single-branch -b "$branch" https://github.com/lttng/lttng-modules "$src"
fi
gitdir=$src
[ -d "$src/.git" ] && gitdir=$src/.git
out=$base/$kver
rm -rf "$out.src"
mkdir -p "$out.src" "$out"
git --git-dir="$gitdir" archive --format=tar "$branch" | tar -x -C "$out.src"
git --git-dir="$gitdir" log -1 --format='%H %s' "$branch" >"$out/REVISION"
make -C "$out.src" -j"$(nproc)" KERNELDIR="/lib/modules/$kver/build" >"$out/build.log" 2>&1 || {
	echo "lttng-build: build for $kver failed, see $out/build.log" >&2
	exit 1
}
find "$out.src" -name '*.ko' -exec cp {} "$out/" \;
echo "lttng-build: $kver -> $out ($(ls "$out"/*.ko | wc -l) modules, $(cut -c1-12 "$out/REVISION"))"
