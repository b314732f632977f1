#!/bin/bash
# By hand (not in scripts/test.sh: it crashes the guest): toggle the kernel's own sock:sock_send_length tracepoint (tracefs,
# no MAGNET module loaded) under a UDP flood, as the fuzzer toggled MAGNET's
# sock_send point; does the int3 Oops in __sys_sendto come without MAGNET?
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need_root
dmesg_mark
netns_setup || bail_out "netns"
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T
E=$T/events/sock/sock_send_length/enable
in_b "$MAGNET_TOOLS/udp_sink" -q 5000 -t 200 5002 >/dev/null 2>&1 &
for f in 1 2; do
	in_a "$MAGNET_TOOLS/udp_flood" -t 120 "$IP_B" 5002 100000000 200 >/dev/null 2>&1 &
done
n=0
end=$((SECONDS + ${X_SECONDS:-90}))
while [ $SECONDS -lt $end ]; do
	echo 1 >$E; echo 0 >$E
	n=$((n + 1))
done
diag "toggled $n times"
kill %2 %3 2>/dev/null
ok "toggled $n times"
check_dmesg_clean
done_testing
