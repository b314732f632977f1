# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the guest scripts that run tests one after the other in one
# boot (batch.sh, repeat.sh): what a test must not leave behind, since
# the next one would inherit it.  Needs $build (the build tree whose
# processes count as the test's).
#
# leftovers: print what the last test left behind, and remove it
leftovers() {
	local m p c
	for p in $(pgrep -f "^[^ ]*$build/" | grep -vx "$$"); do
		echo "process $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
		kill -9 "$p" 2>/dev/null
	done
	if grep -q ' magnetfs ' /proc/mounts; then
		echo "magnetfs mounted on $(awk '$3 == "magnetfs" { print $2 }' /proc/mounts | paste -sd ' ')"
		umount -a -t magnetfs 2>/dev/null
	fi
	# dependents first: magnet.ko goes last
	for m in $(awk '$1 ~ /^magnet/ { print $1 }' /proc/modules | sort -r); do
		echo "module $m loaded"
		rmmod "$m" 2>/dev/null
	done
	for c in /sys/devices/system/cpu/cpu[0-9]*/online; do
		[ "$(cat "$c")" = 0 ] || continue
		echo "${c%/online} offline"
		echo 1 >"$c"
	done
	for m in mgA mgB; do
		ip netns list 2>/dev/null | grep -qw "^$m" || continue
		echo "network namespace $m"
		ip netns del "$m"
	done
}
