#!/bin/bash
# Harness self-test guest: passes; checks args, env passthrough, results dir.
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
plan 4
check_eq "arguments arrive intact" "a b|c" "$1|$2"
check_eq "MAGNET_* env passes through" "hello world" "${MAGNET_HARNESS_PROBE:-}"
check "results dir is writable" touch "$MAGNET_RESULTS/written-by-guest"
check_dmesg_clean
done_testing
