#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The reports in a kernel log: the lines that match a pattern of
# tests/vm/dmesg-patterns.txt (an oops, a warning, a lockup, a KASAN,
# UBSAN, lockdep or kmemleak report, ...), less those that match the
# extended regex $MAGNET_DMESG_IGNORE.  The one check of a kernel log,
# used by scripts/vm-run.sh (a boot's whole log), scripts/vm-batch.sh
# (one test's slice of it) and tests/vm/lib.sh (in the guest, since a
# mark).
#
#   tests/vm/log-reports.sh [-n] [FILE]    FILE: default standard input
#
# -n: each line prefixed with its line number, as grep -n does.  Prints
# nothing for a clean log; exit status 0 either way, 2 on bad usage.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
num=
if [ "${1:-}" = -n ]; then
	num=-n
	shift
fi
[ $# -le 1 ] || { echo "usage: $0 [-n] [FILE]" >&2; exit 2; }
in=${1:--}
[ "$in" = - ] || [ -r "$in" ] || { echo "$0: cannot read $in" >&2; exit 2; }
hits=$(grep $num -F -f <(grep -v '^#' "$here/dmesg-patterns.txt") -- "$in")
if [ -n "${MAGNET_DMESG_IGNORE:-}" ] && [ -n "$hits" ]; then
	hits=$(grep -v -E -- "$MAGNET_DMESG_IGNORE" <<<"$hits")
fi
[ -z "$hits" ] || printf '%s\n' "$hits"
exit 0
