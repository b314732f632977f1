#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The suite from wherever a user clones: scripts/vm-run.sh hands a clone
# under a directory the guest mounts over (/tmp, /var/tmp, /run, ...)
# to the guest read-only, with the results at a guest path of their own;
# elsewhere the guest sees the clone through its root.  scripts/test.sh
# refuses at once a clone the user nobody (the VM tests' unprivileged
# checks) cannot reach, naming the directory.  tests/scripts/fake-vng
# stands in for vng.
#
#   test_clone_dirs.sh REPO
set -u
repo=${1:?usage: $0 REPO}
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fake_vng

# copy DIR: the scripts a run needs, in a clone at DIR
copy() {
	mkdir -p "$1"
	(cd "$repo" && cp -r --parents scripts tests/vm tests/tools/genl_req.py "$1/")
}
# args_of DIR: the vng arguments of a vm-run.sh from a clone at DIR
args_of() {
	rm -f "$tmp/args"
	FAKE_DIR=$tmp PATH="$tmp/bin:$PATH" "$1/scripts/vm-run.sh" -o "$1/build/r" "$kver" \
		"$1/tests/vm/tcg_textpoke.sh" >/dev/null 2>&1
	cat "$tmp/args" 2>/dev/null
}

vt=$(mktemp -d /var/tmp/magnet-clone.XXXXXX)
trap 'rm -rf "$tmp" "$vt"' EXIT
for d in "$vt/repo" "$tmp/repo"; do
	copy "$d"
	a=$(args_of "$d")
	grep -qF -- "--rodir $d " <<<"$a" && grep -qF -- "--rwdir /tmp/magnet-vm-results=$d/build/r " <<<"$a" &&
		ok "a clone in ${d%/*/*}: handed to the guest, results at a guest path of their own" ||
		not_ok "a clone in ${d%/*/*}: handed to the guest, results at a guest path of their own" "$a"
done
# /srv: a directory the guest does not mount over (as root, like the suite)
h=$(mktemp -d /srv/magnet-clone.XXXXXX) || { echo "SKIP: /srv not writable"; exit 77; }
chmod 0755 "$h"
copy "$h/repo"
a=$(args_of "$h/repo")
grep -qF -- "--rwdir $h/repo/build/r=$h/repo/build/r " <<<"$a" && ! grep -qF -- --rodir <<<"$a" &&
	ok "a clone the guest sees through its root: its own paths" ||
	not_ok "a clone the guest sees through its root: its own paths" "$a"
rm -rf "$h"

# a clone under a directory only its owner may enter
mkdir -m 0700 "$tmp/private"
copy "$tmp/private/repo"
out=$(timeout 60 "$tmp/private/repo/scripts/test.sh" 2>&1)
rc=$?
[ $rc -eq 1 ] && grep -qF "test.sh: the VM tests run checks as the user nobody, who cannot reach $tmp/private/repo: $tmp/private is mode 700: others cannot enter it." <<<"$out" &&
	[ "$(wc -l <<<"$out")" -eq 2 ] &&
	ok "test.sh refuses at once a clone nobody cannot reach, naming the directory" ||
	not_ok "test.sh refuses at once a clone nobody cannot reach, naming the directory" "exit $rc: $out"

[ "$fails" -eq 0 ]
