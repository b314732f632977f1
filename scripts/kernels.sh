#!/usr/bin/env bash
# Prints the kernel releases MAGNET is built and tested against: every
# installed Debian kernel that has both an image in /boot and headers.
# MAGNET_KERNELS (space separated) overrides the list.
set -euo pipefail
if [ -n "${MAGNET_KERNELS:-}" ]; then
	tr ' ' '\n' <<<"$MAGNET_KERNELS" | sed '/^$/d'
	exit 0
fi
for d in /lib/modules/*/; do
	v=$(basename "$d")
	[ -e "/boot/vmlinuz-$v" ] && [ -d "$d/build" ] && echo "$v"
done | sort -V
