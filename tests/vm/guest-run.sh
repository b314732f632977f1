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
#   kmemleak.txt   kernel with kmemleak (the debug-kernel tier): the
#                  unreferenced objects found after the script
#
# kmemleak: before the script, a scan and "clear" (what boot left behind
# is never reported); after it (its modules unloaded by its exit trap),
# a scan.  Each scan waits 5 s first: kmemleak does not report objects
# younger than that.  Any unreferenced object they report fails the run: the
# kernel logs "N new suspected memory leaks", which the host's dmesg
# patterns catch; the report (with each object's allocation backtrace)
# goes to kmemleak.txt and output.log.  Any object, not only those whose
# backtrace names a MAGNET module: MAGNET's modules are unloaded by then,
# so their frames print as bare addresses, and a leak MAGNET causes in
# the kernel (a reference it never drops) has no MAGNET frame at all.
# Where kmemleak cannot be written (lockdown= refuses debugfs writes)
# the scan is skipped with a note in output.log.
timeout_s=$1
shift
script=$1
shift

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH
res=${MAGNET_RESULTS:?MAGNET_RESULTS not set}
cd "${MAGNET_REPO:-/}" || exit 1

rm -f "$res/exit-code" "$res/dmesg.txt" "$res/kmemleak.txt"
kml=/sys/kernel/debug/kmemleak
kmemleak=
# debugfs is mounted here for kmemleak only if the kernel has it
if ! mountpoint -q /sys/kernel/debug && grep -q ' kmemleak_scan$' /proc/kallsyms 2>/dev/null; then
	mount -t debugfs none /sys/kernel/debug 2>/dev/null
fi
if [ -e "$kml" ]; then
	# objects younger than 5 s are never reported: let boot's age first
	sleep 5
	if { echo scan >"$kml" && echo clear >"$kml"; } 2>/dev/null; then
		kmemleak=1
	else
		kmemleak_note="magnet-vm: $kml not writable (lockdown?): no kmemleak scan"
	fi
fi
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
if [ -n "$kmemleak" ]; then
	# the test's last objects too (kmemleak skips those younger than 5 s)
	sleep 5
	echo scan >"$kml" 2>/dev/null
	cat "$kml" >"$res/kmemleak.txt" 2>/dev/null
	if [ -s "$res/kmemleak.txt" ]; then
		{
			echo "magnet-vm: kmemleak found unreferenced objects after $(basename "$script"):"
			head -n 200 "$res/kmemleak.txt"
		} | tee -a "$res/output.log"
	fi
elif [ -n "${kmemleak_note:-}" ]; then
	echo "$kmemleak_note" | tee -a "$res/output.log"
fi
echo "$rc" >"$res/exit-code"

echo "magnet-vm: end $(basename "$script") rc=$rc" >/dev/kmsg
sleep 0.2
dmesg >"$res/dmesg.txt"
kill "$follow_pid" 2>/dev/null
wait "$follow_pid" 2>/dev/null
sync
exit "$rc"
