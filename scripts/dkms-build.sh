#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Builds the DKMS package for kernel KVER the way `dkms install` would,
# but into a tree of its own, build/dkms/ (source tree build/dkms/src,
# DKMS tree build/dkms/tree): nothing in /usr/src, /var/lib/dkms or
# /lib/modules changes, so the host's modules and other users of
# build/modules are untouched.  tests/vm/t_dkms.sh installs the result
# with `dkms install` into the VM's /lib/modules and loads it with modprobe.
# DKMS signs the modules with its own key (/var/lib/dkms/mok.key, made on
# first use), as it does on any Debian machine.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kver=${1:?usage: dkms-build.sh KVER}
command -v dkms >/dev/null || { echo "dkms-build: dkms is not installed (scripts/install-deps.sh)" >&2; exit 1; }
out=$top/build/dkms
ver=$("$top/scripts/version.sh")
mkdir -p "$out/src" "$out/tree"
# a fresh source tree and no stale build for this kernel
"$top/scripts/dkms-source.sh" "$out/src" >/dev/null
dk=(dkms --sourcetree "$out/src" --dkmstree "$out/tree")
"${dk[@]}" remove -m magnet -v "$ver" -k "$kver" >/dev/null 2>&1 || true
rm -rf "$out/tree/magnet/$ver/$kver"
"${dk[@]}" build -m magnet -v "$ver" -k "$kver"
"${dk[@]}" status -m magnet -v "$ver" -k "$kver"
