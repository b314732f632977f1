#!/bin/bash
# Harness self-test guest: exits 0, but the kernel prints call traces
# (sysrq l: backtrace of all CPUs), so vm-run.sh must fail the run.
echo l >/proc/sysrq-trigger
sleep 1
exit 0
