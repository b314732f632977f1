#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of scripts/vm-run.sh: runs inside the virtme-ng VM (as root).
#
#   guest-run.sh TIMEOUT_S GUEST_SCRIPT [ARGS...]
#
# Environment (set by vm-run.sh): MAGNET_RESULTS (writable, shared with
# the host), MAGNET_REPO, MAGNET_KVER.  Writes into MAGNET_RESULTS:
#   output.log     the guest script's stdout+stderr (also shown live)
#   exit-code      its exit status
#   dmesg.txt      the kernel log after it finished
#   dmesg-live.txt the kernel log streamed while it ran (survives a hang)
timeout_s=$1
shift
script=$1
shift

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH
res=${MAGNET_RESULTS:?MAGNET_RESULTS not set}
cd "${MAGNET_REPO:-/}" || exit 1

rm -f "$res/exit-code" "$res/dmesg.txt"
dmesg --follow >"$res/dmesg-live.txt" 2>/dev/null &
follow_pid=$!
echo "magnet-vm: start $(basename "$script") on $(uname -r)" >/dev/kmsg

if [ -x "$script" ]; then
	cmd=("$script" "$@")
else
	cmd=(bash "$script" "$@")
fi

# The guest script runs in its own session so a hung one can be killed
# and the kernel log still collected.
set -o pipefail
timeout --kill-after=10 "$timeout_s" "${cmd[@]}" </dev/null 2>&1 | tee "$res/output.log"
rc=${PIPESTATUS[0]}
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
	echo "magnet-vm: guest script timed out after ${timeout_s}s" | tee -a "$res/output.log"
	# Show where tasks are stuck (this makes the log "dirty" on purpose).
	echo w >/proc/sysrq-trigger 2>/dev/null
fi
echo "$rc" >"$res/exit-code"

echo "magnet-vm: end $(basename "$script") rc=$rc" >/dev/kmsg
sleep 0.2
dmesg >"$res/dmesg.txt"
kill "$follow_pid" 2>/dev/null
wait "$follow_pid" 2>/dev/null
sync
exit "$rc"
