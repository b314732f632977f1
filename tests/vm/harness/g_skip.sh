#!/bin/bash
# Harness self-test guest: skips (kselftest 4).
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
skip_all "nothing to test here"
