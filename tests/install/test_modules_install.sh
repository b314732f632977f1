#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make` and `make modules_install` as docs/INSTALL.md gives them, for
# kernel KVER, from a copy of the sources (a user's checkout): the
# modules built, installed under INSTALL_MOD_PATH/lib/modules/KVER/updates
# (kbuild's INSTALL_MOD_PATH, so that this machine's /lib/modules, which
# every VM shares, is not written), depmod run on them (magnet_net
# depends on magnet), the version scripts/version.sh gives, and no test
# or benchmark module installed.  scripts/test.sh runs it for the newest
# kernel; the modules installed this way load in the VM tests' kernels
# as build-modules.sh's do (the same Kbuild).
#
#   test_modules_install.sh REPO KVER
set -u
repo=${1:?usage: $0 REPO KVER}
kver=${2:?usage: $0 REPO KVER}
[ -d "/lib/modules/$kver/build" ] || { echo "SKIP: no headers for $kver"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1${2:+: $2}"; fails=$((fails + 1)); }

src=$tmp/magnet
mkdir -p "$src"
(cd "$repo" && git ls-files -z 2>/dev/null | xargs -0 cp --parents -t "$src" 2>/dev/null) ||
	cp -r "$repo/." "$src"
make -C "$src" -j"$(nproc)" KVER="$kver" >"$tmp/make.log" 2>&1 &&
	ok "make KVER=$kver" || not_ok "make KVER=$kver" "$(tail -n 20 "$tmp/make.log")"
root=$tmp/root
make -C "$src" KVER="$kver" INSTALL_MOD_PATH="$root" modules_install >"$tmp/install.log" 2>&1 &&
	ok "make modules_install (INSTALL_MOD_PATH)" ||
	not_ok "make modules_install (INSTALL_MOD_PATH)" "$(tail -n 20 "$tmp/install.log")"
up=$root/lib/modules/$kver/updates
missing=
for m in magnet magnet_net magnet_sched magnet_mm magnet_tcpip magnet_example; do
	[ -n "$(find "$up" -name "$m.ko*" 2>/dev/null)" ] || missing+=" $m"
done
[ -z "$missing" ] && ok "magnet.ko and the probe modules are under updates/" ||
	not_ok "magnet.ko and the probe modules are under updates/" "missing:$missing ($(ls -R "$up" 2>&1 | head))"
found=$(find "$up" -name 'magnet_selftest*' -o -name 'magnet_bench*' 2>&1)
[ -z "$found" ] && ok "no test or benchmark module installed" ||
	not_ok "no test or benchmark module installed" "$found"
grep -Eq '^updates/(probes/)?magnet_net\.ko(\.[a-z]+)?: updates/magnet\.ko' "$root/lib/modules/$kver/modules.dep" 2>/dev/null &&
	ok "depmod ran: magnet_net depends on magnet" ||
	not_ok "depmod ran: magnet_net depends on magnet" "$(grep magnet "$root/lib/modules/$kver/modules.dep" 2>&1)"
v=$(modinfo -F version "$(find "$up" -name 'magnet.ko*' | head -n 1)" 2>&1)
[ "$v" = "$("$repo/scripts/version.sh")" ] && ok "the installed magnet.ko's version is $v" ||
	not_ok "the installed magnet.ko's version is scripts/version.sh's" "$v"
[ "$fails" -eq 0 ]
