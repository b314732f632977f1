#!/usr/bin/env bash
# Prints the kernel releases MAGNET is built and tested against: every
# installed Debian kernel that has both an image in /boot and headers,
# the standard ones first (sorted), then the PREEMPT_RT ones.
#
# PREEMPT_RT kernels (CONFIG_PREEMPT_RT=y in /boot/config-*) cost a whole
# VM suite each, so by default none is listed: scripts/test.sh builds
# their modules and runs the tests of the paths PREEMPT_RT changes in the
# newest one (scripts/vm-suite.sh).  MAGNET_RT_KERNELS chooses:
#   none (default)    no RT kernel
#   newest            the newest RT kernel (6.12-rt)
#   all               every RT kernel (6.1-rt too)
# MAGNET_KERNELS (space separated) overrides the whole list, e.g.
#   MAGNET_KERNELS=6.1.0-57-rt-amd64 ./scripts/test.sh
set -euo pipefail
if [ -n "${MAGNET_KERNELS:-}" ]; then
	tr ' ' '\n' <<<"$MAGNET_KERNELS" | sed '/^$/d'
	exit 0
fi
rt=${MAGNET_RT_KERNELS:-none}
case $rt in
newest|all|none) ;;
*) echo "kernels.sh: MAGNET_RT_KERNELS must be newest, all or none, not '$rt'" >&2
   exit 2 ;;
esac
std=()
rts=()
while read -r v; do
	if grep -qs '^CONFIG_PREEMPT_RT=y' "/boot/config-$v"; then
		rts+=("$v")
	else
		std+=("$v")
	fi
done < <(for d in /lib/modules/*/; do
	v=$(basename "$d")
	[ -e "/boot/vmlinuz-$v" ] && [ -d "$d/build" ] && echo "$v"
done | sort -V)
[ ${#std[@]} -eq 0 ] || printf '%s\n' "${std[@]}"
[ ${#rts[@]} -eq 0 ] && exit 0
case $rt in
newest) echo "${rts[-1]}" ;;
all) printf '%s\n' "${rts[@]}" ;;
esac
