#!/bin/bash
# Harness self-test guest: lib.sh helpers under set -e, then an early
# exit without done_testing, which must still count as a failure.
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
set -e
netns_setup
netns_setup			# twice: tears down and rebuilds
ok "netns_setup twice under set -e"
[ -z "$(dmesg_suspicious)" ]
ok "dmesg_suspicious under set -e"
in_a ip -br addr show dev "$VETH_A" | grep -q "$IP_A/24"
ok "address configured"
false				# aborts the script: summary must say failed
ok "not reached"
done_testing
