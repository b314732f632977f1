# SPDX-License-Identifier: GPL-2.0
#
# Shared start of the harness-script tests (sourced): a kernel release
# for vm-run.sh to find in /boot (skip, 77, without one), a temporary
# directory removed at exit, TAP lines and the stand-in for vng.  Sets kver,
# tmp, fails; defines fake_vng, ok DESC and not_ok DESC [WHY].
kver=$(ls /boot/vmlinuz-* 2>/dev/null | head -1)
kver=${kver#/boot/vmlinuz-}
[ -n "$kver" ] || { echo "SKIP: no /boot/vmlinuz-* (vm-run needs a kernel file)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1${2:+: $2}"; fails=$((fails + 1)); }
# fake_vng: tests/scripts/fake-vng as vng in $tmp/bin (the tests put it first on PATH)
fake_vng() {
	mkdir -p "$tmp/bin"
	ln -s "$(dirname "$(realpath "${BASH_SOURCE[0]}")")/fake-vng" "$tmp/bin/vng"
}
