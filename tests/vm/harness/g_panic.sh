#!/bin/bash
# Harness self-test guest: crashes the kernel (sysrq c).
echo "crashing the kernel"
sync
echo c >/proc/sysrq-trigger
sleep 30
