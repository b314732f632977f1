#!/bin/bash
# Harness self-test guest: its exit status (3) must reach the host.
echo "exiting with 3"
exit 3
