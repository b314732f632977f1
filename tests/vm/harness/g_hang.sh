#!/bin/bash
# Harness self-test guest: hangs; vm-run.sh -t must cut it off.
echo "sleeping forever"
sleep 100000
