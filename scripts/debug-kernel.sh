#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Builds (once) MAGNET's debug kernel: Debian's linux-source-6.12 with
# virtme-ng's minimal config plus KASAN, UBSAN, lockdep (PROVE_LOCKING),
# DEBUG_ATOMIC_SLEEP, KMEMLEAK, DEBUG_OBJECTS, PREEMPT, the lockdown LSM
# and module signing with a key of the tier's own
# (scripts/debug-kernel/debug.config, then debug-post.config).
#
#   scripts/debug-kernel.sh            build if not cached; print the release
#   scripts/debug-kernel.sh --release  print the release if built, else fail
#   scripts/debug-kernel.sh --dir      print the cache dir if built, else fail
#   scripts/debug-kernel.sh --config-only
#                                      extract and configure, check the
#                                      config, do not build
#   scripts/debug-kernel.sh --dir-of RELEASE
#                                      print the cache dir of a built kernel
#                                      of that release (any config), else fail
#
# The kernel is cached outside the repo, in
# $MAGNET_DEBUG_KERNEL_CACHE (default /var/cache/magnet/debug-kernel)/HASH,
# HASH over the two config files, this script's RECIPE number, gcc's
# and the linux-source package's version; a second run with the same inputs only prints.
# The cache dir holds linux/ (the built tree: linux/arch/x86/boot/bzImage,
# what build-modules.sh builds against), signing_key.pem (key and
# certificate that signed the kernel's and MAGNET's modules), release
# (the kernel release, "6.12.N-mdbg-HASH8") and build-time (seconds).
# scripts/build-modules.sh and scripts/vm-run.sh take that release as
# KVER; vm-run boots it with --append no5lvl (TCG has no LA57).
#
# Builds with "nice -n 10 make -j${MAGNET_DEBUG_KERNEL_JOBS:-2}" (times:
# docs/DEBUG_KERNEL.md).  Last line on stdout: the release; progress on
# stderr.  One build per HASH at a time (flock); a second caller waits.
# A build that was stopped (killed, a machine shut down) resumes where
# make was on the next run.
#
# MAGNET_DEBUG_KERNEL_VARIANT=kcsan adds scripts/debug-kernel/kcsan.config
# after debug.config: KCSAN (data races) instead of KASAN, a kernel of
# its own (its own HASH and release).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${MAGNET_DEBUG_KERNEL_CACHE:-/var/cache/magnet/debug-kernel}
frag=$top/scripts/debug-kernel/debug.config
post=$top/scripts/debug-kernel/debug-post.config
variant=${MAGNET_DEBUG_KERNEL_VARIANT:-}
vfrag=
if [ -n "$variant" ]; then
	vfrag=$top/scripts/debug-kernel/$variant.config
	[ -r "$vfrag" ] || { echo "debug-kernel: no variant '$variant' ($vfrag)" >&2; exit 2; }
fi
jobs=${MAGNET_DEBUG_KERNEL_JOBS:-2}
pkg=linux-source-6.12
tarball=/usr/src/linux-source-6.12.tar.xz

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo

log() { echo "debug-kernel: $*" >&2; }

mode=build
case ${1:-} in
--release) mode=release ;;
--dir) mode=dir ;;
--config-only) mode=config ;;
--dir-of)
	[ $# -eq 2 ] || { echo "usage: $0 --dir-of RELEASE" >&2; exit 2; }
	for d in "$cache"/*/; do
		if [ -f "$d/done" ] && [ "$(cat "$d/release")" = "$2" ]; then
			echo "${d%/}"
			exit 0
		fi
	done
	exit 1
	;;
"") ;;
*) echo "usage: $0 [--release|--dir|--dir-of RELEASE]" >&2; exit 2 ;;
esac

srcver() { dpkg-query -W -f '${Version}' "$pkg" 2>/dev/null || true; }

ver=$(srcver)
if [ -z "$ver" ] || [ ! -r "$tarball" ]; then
	case $mode in build | config) ;; *) log "$pkg is not installed"; exit 1 ;; esac
	log "installing $pkg"
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		"$pkg" flex bison bc libelf-dev libssl-dev dwarves xz-utils >/dev/null
	ver=$(srcver)
fi
# RECIPE: bump when a change to this script changes the kernel it builds.
RECIPE=1
hash=$( { cat "$frag" ${vfrag:+"$vfrag"} "$post"; echo "recipe $RECIPE $pkg $ver"; gcc --version | sed -n 1p; } |
	sha256sum | cut -c1-16)
dir=$cache/$hash
if [ -f "$dir/done" ]; then
	case $mode in
	release) cat "$dir/release" ;;
	dir) echo "$dir" ;;
	build)
		log "cached: $dir (built in $(cat "$dir/build-time") s)"
		cat "$dir/release"
		;;
	esac
	exit 0
fi
case $mode in build | config) ;; *) log "not built yet (run $0)"; exit 1 ;; esac

$SUDO mkdir -p "$cache"
[ -w "$cache" ] || $SUDO chown "$(id -u):$(id -g)" "$cache"
exec 9>"$cache/$hash.lock"
if ! flock -n 9; then
	log "another build of $dir is running: waiting for it"
	flock 9
fi
if [ -f "$dir/done" ]; then
	log "cached: $dir (built in $(cat "$dir/build-time") s)"
	cat "$dir/release"
	exit 0
fi
start=$(date +%s)
if [ -f "$dir/configured" ] && [ -f "$dir/linux/.config" ]; then
	# a build that was stopped: make carries on where it was
	log "resuming the build in $dir (configured $(cat "$dir/configured"); build-time counts this run only)"
	cd "$dir/linux"
else
	rm -rf "$dir"
	mkdir -p "$dir/linux"
	log "$pkg $ver -> $dir"
	log "extracting $tarball"
	tar -xf "$tarball" -C "$dir/linux" --strip-components=1

	# The signing key of the tier's own: signs the kernel's modules
	# (MODULE_SIG_ALL) and MAGNET's (build-modules.sh); the kernel trusts its
	# certificate, so lockdown=integrity boots load MAGNET.
	key=$dir/signing_key.pem
	cat >"$dir/x509.genkey" <<-EOF
	[ req ]
	default_bits = 3072
	distinguished_name = req_distinguished_name
	prompt = no
	string_mask = utf8only
	x509_extensions = myexts

	[ req_distinguished_name ]
	O = MAGNET debug-kernel tier
	CN = MAGNET debug-kernel signing key $hash

	[ myexts ]
	basicConstraints=critical,CA:FALSE
	keyUsage=digitalSignature
	subjectKeyIdentifier=hash
	authorityKeyIdentifier=keyid
	EOF
	openssl req -new -nodes -utf8 -sha256 -days 36500 -batch -x509 \
		-config "$dir/x509.genkey" -outform PEM -out "$key" -keyout "$key" 2>/dev/null
	chmod 600 "$key"

	cd "$dir/linux"
	log "configuring (virtme-configkernel --defconfig + debug.config)"
	{
		cat "$frag" ${vfrag:+"$vfrag"}
		echo "CONFIG_LOCALVERSION=\"-mdbg-${hash:0:8}\""
		echo "# CONFIG_LOCALVERSION_AUTO is not set"
		echo "CONFIG_MODULE_SIG_KEY=\"$key\""
		echo 'CONFIG_SYSTEM_TRUSTED_KEYS=""'
	} >"$dir/debug.config"
	virtme-configkernel --defconfig --custom "$dir/debug.config" >"$dir/config.log" 2>&1 ||
		{ tail -20 "$dir/config.log" >&2; exit 1; }
	cat "$post" >>.config
	make olddefconfig >>"$dir/config.log" 2>&1
	# Every y/n item asked for must have made it (a dependency missing turns
	# it off silently); the last word on an item counts.
	missing=
	while IFS= read -r l; do
		case $l in
		CONFIG_*=y)
			grep -qx "$l" .config || missing+=" ${l%=y}"
			;;
		"# CONFIG_"*" is not set")
			s=${l#\# }
			s=${s%% *}
			! grep -q "^$s=[ym]" .config || missing+=" !$s"
			;;
		esac
	done < <(cat "$frag" ${vfrag:+"$vfrag"} "$post" |
		sed -n 's/^\(CONFIG_[A-Za-z0-9_]*\)=y$/\1 &/p; s/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/\1 &/p' |
		awk '{ k = $1; sub(/^[^ ]* /, ""); last[k] = $0; if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
		     END { for (i = 1; i <= n; i++) print last[order[i]] }')
	if [ -n "$missing" ]; then
		log "config items not as asked:$missing"
		exit 1
	fi
	date -u +%FT%TZ >"$dir/configured"
fi
if [ "$mode" = config ]; then
	log "configured: $dir/linux/.config"
	exit 0
fi

log "building (nice -n 10 make -j$jobs), log in $dir/build.log"
if ! nice -n 10 make -j"$jobs" >>"$dir/build.log" 2>&1; then
	tail -30 "$dir/build.log" >&2
	log "build failed (log: $dir/build.log)"
	exit 1
fi
make -s kernelrelease >"$dir/release"
echo $(($(date +%s) - start)) >"$dir/build-time"
touch "$dir/done"
log "built $(cat "$dir/release") in $(cat "$dir/build-time") s: $dir/linux/arch/x86/boot/bzImage"
cat "$dir/release"
