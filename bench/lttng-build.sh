#!/usr/bin/env bash
# Builds LTTng's kernel modules (lttng-modules 2.13, to match Debian
# bookworm's lttng-tools 2.13) for kernel KVER into
# build/bench/lttng/KVER/, for the LTTng rows of bench/run.sh.  Optional:
# without it the benchmarks leave LTTng out.  LTTng's code is never copied
# into MAGNET's tree.  The source, first found of:
#
#   $LTTNG_MODULES_SRC   a clone or bare repository (branch $LTTNG_BRANCH,
#                        default stable-2.13), or a plain source tree such
#                        as /usr/src/lttng-modules-2.13.9
#   build/bench/lttng/src.git, an earlier clone
#   a clone of https://github.com/lttng/lttng-modules (needs network)
#   Debian's lttng-modules-dkms source (no network to GitHub needed: the
#   package if installed, else fetched with apt-get download from the
#   configured archive and unpacked under build/bench/lttng/deb); bookworm's
#   2.13.9 builds for kernels up to 6.2 only, and not for Debian's 6.1.0-56 and later
#   (6.1.175's hrtimer_start tracepoint changed), so those need stable-2.13
#   (without network: a mirror of the repository as $LTTNG_MODULES_SRC)
#
#   bench/lttng-build.sh KVER
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kver=${1:?usage: $0 KVER}
branch=${LTTNG_BRANCH:-stable-2.13}
base=$top/build/bench/lttng
mkdir -p "$base"

# debian_src: prints the directory of Debian's lttng-modules source
debian_src() {
	local d
	d=$(ls -d /usr/src/lttng-modules-2.13* 2>/dev/null | tail -1)
	if [ -z "$d" ]; then
		rm -rf "$base/deb"
		mkdir -p "$base/deb"
		(cd "$base/deb" && apt-get download lttng-modules-dkms >&2) || return 1
		dpkg-deb -x "$base/deb"/lttng-modules-dkms_*.deb "$base/deb/root" || return 1
		d=$(ls -d "$base/deb/root/usr/src"/lttng-modules-* | tail -1)
	fi
	echo "$d"
}

# pick_src: prints the source (a git directory or a plain tree)
pick_src() {
	if [ -n "${LTTNG_MODULES_SRC:-}" ]; then
		echo "$LTTNG_MODULES_SRC"
	elif [ -d "$base/src.git" ]; then
		echo "$base/src.git"
	elif GIT_TERMINAL_PROMPT=0 timeout 120 git clone -q --bare --single-branch -b "$branch" \
		https://github.com/lttng/lttng-modules "$base/src.git" >&2; then
		echo "$base/src.git"
	else
		rm -rf "$base/src.git"
		echo "lttng-build: no clone of lttng-modules (no network?), using Debian's lttng-modules-dkms" >&2
		debian_src
	fi
}

# unpack SRC DIR REVFILE: the source's tree into DIR, its revision into REVFILE
unpack() {
	local src=$1 gitdir=$1
	[ -d "$src/.git" ] && gitdir=$src/.git
	if git --git-dir="$gitdir" rev-parse -q --verify "$branch^{commit}" >/dev/null 2>&1; then
		git --git-dir="$gitdir" archive --format=tar "$branch" | tar -x -C "$2"
		git --git-dir="$gitdir" log -1 --format='%H %s' "$branch" >"$3"
	elif [ -f "$src/Makefile" ]; then
		cp -r "$src/." "$2/"
		echo "$src (source tree)" >"$3"
	else
		echo "lttng-build: $src is neither a git repository with $branch nor a source tree" >&2
		return 1
	fi
}

src=$(pick_src)
out=$base/$kver
rm -rf "$out.src" "$out"
mkdir -p "$out.src" "$out"
unpack "$src" "$out.src" "$out/REVISION"
make -C "$out.src" -j"$(nproc)" KERNELDIR="/lib/modules/$kver/build" >"$out/build.log" 2>&1 || {
	echo "lttng-build: build for $kver from $(cat "$out/REVISION") failed, see $out/build.log" >&2
	rm -f "$out"/*.ko
	exit 1
}
find "$out.src" -name '*.ko' -exec cp {} "$out/" \;
echo "lttng-build: $kver -> $out ($(ls "$out"/*.ko | wc -l) modules, $(cut -c1-40 "$out/REVISION"))"
