#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The papers' context-switch example (Figures 12-13), reproduced:
#
#   bench/cswitch.sh [KVER]      (default 6.12.95+deb12-amd64)
#
# Boots KVER (scripts/vm-run.sh, 2 vCPUs), records sched_switch and
# sched_switch_end on an idle VM and with two busy loops per CPU
# (bench/cswitch-guest.sh), then bench/cswitch_plot.py makes
# docs/img/cswitch.png (CDFs per CPU of the run time between two switches
# and of the switches' own durations).  Needs gnuplot (bench/install.sh).
set -eu
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kver=${1:-6.12.95+deb12-amd64}
out=$repo/build/vm-results/$kver/cswitch
command -v gnuplot >/dev/null || "$repo/bench/install.sh"
"$repo/scripts/vm-run.sh" -t 300 -o "$out" "$kver" bench/cswitch-guest.sh
python3 "$repo/bench/cswitch_plot.py" "$out" "${CSW_PNG:-$repo/docs/img/cswitch.png}"
