#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The Debian packages as a user meets them: builds them and runs lintian
# (scripts/deb-build.sh), installs them on this machine with apt-get (which
# pulls in dkms and the libraries), has DKMS build and install the modules
# for each test kernel (scripts/kernels.sh), boots each kernel and runs
# tests/vm/t_deb.sh there (modprobe, the packaged magnetctl, babeltrace2
# plugin and libmagnet-dev), then purges the packages, which must take the
# DKMS modules with them.  Needs root.  About 10 minutes on an idle host;
# not part of scripts/test.sh (docs/INSTALL.md "Debian packages").  Run it
# alone: DKMS and depmod rewrite /lib/modules/KVER, which every VM of this
# machine shares, and a VM booting meanwhile may find it half written.
#
#	scripts/deb-test.sh [KVER...]
# Ends with "N passed, M failed" like scripts/test.sh.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
[ "$(id -u)" -eq 0 ] || { echo "deb-test: needs root (it installs packages)" >&2; exit 1; }
pass=0
fail=0
result() {	# result NAME RC
	if [ "$2" -eq 0 ]; then
		pass=$((pass + 1)); echo "ok - $1"
	else
		fail=$((fail + 1)); echo "not ok - $1"
	fi
}
finish() {
	echo "$pass passed, $fail failed"
	[ $fail -eq 0 ]
	exit
}

./scripts/install-deps.sh || { echo "install-deps failed"; exit 1; }
# the traffic tools the VM test drives (not packaged)
cmake -S . -B build >/dev/null && cmake --build build -j"$(nproc)" --target udp_flood udp_sink >/dev/null
result "traffic tools build" $?
./scripts/deb-build.sh
result "packages build, lintian clean (build/deb/lintian.log)" $?
[ $fail -eq 0 ] || finish

ver=$(./scripts/version.sh)
pkgs=(magnet-dkms libmagnet0 libmagnet-dev magnetctl babeltrace2-plugin-magnet)
purge() {
	DEBIAN_FRONTEND=noninteractive apt-get purge -y -q "${pkgs[@]}" >build/deb/purge.log 2>&1
}
trap purge EXIT
debs=()
for p in "${pkgs[@]}"; do debs+=("$(ls build/deb/"${p}"_"$ver"_*.deb)"); done
DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${debs[@]/#/./}" >build/deb/install.log 2>&1
result "apt-get install the packages" $?
[ $fail -eq 0 ] || { tail -20 build/deb/install.log; finish; }

kernels=${*:-$(./scripts/kernels.sh)}
for k in $kernels; do
	# the postinst has DKMS build for every installed kernel with headers;
	# this makes sure of KVER ("already installed": nothing to do)
	dkms install -m magnet -v "$ver" -k "$k" >"build/deb/dkms-$k.log" 2>&1 ||
		grep -q "already installed" "build/deb/dkms-$k.log"
	result "dkms install magnet/$ver for $k (from magnet-dkms)" $?
	./scripts/vm-run.sh "$k" tests/vm/t_deb.sh
	result "$k t_deb" $?
done

purge
result "apt-get purge" $?
trap - EXIT
left=$(ls -d /lib/modules/*/updates/dkms/magnet*.ko* /usr/src/magnet-"$ver" 2>/dev/null)
[ -z "$left" ]
result "the purge took the DKMS modules and sources with it${left:+ (left: $left)}" $?
finish
