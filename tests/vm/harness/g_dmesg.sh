#!/bin/bash
# Harness self-test guest: check_dmesg_clean sees a kernel warning line
# after dmesg_mark, and only after it.
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
plan 2
dmesg_mark
check_dmesg_clean "clean right after the mark"
echo "<4>WARNING: CPU: 0 PID: 1 at fake.c:1 fake_function (harness self-test)" >/dev/kmsg
if [ -n "$(dmesg_suspicious)" ]; then
	ok "dmesg_suspicious reports the warning"
else
	not_ok "dmesg_suspicious reports the warning"
fi
done_testing
