#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of bench/cswitch.sh (the papers' context-switch example,
# Figures 12-13): records magnet_sched.ko's sched_switch and
# sched_switch_end events (run times and switch durations) for
# $CSW_SECONDS (default 3) seconds twice, on an idle VM and while every
# CPU runs two busy loops (pinned with taskset), into
# $MAGNET_RESULTS/cswitch-idle.trace and cswitch-busy.trace.  Measures
# only; asserts nothing.  Run it through scripts/vm-run.sh.
. "$(dirname "${BASH_SOURCE[0]}")/../tests/vm/lib.sh"

need_root
MAGNET_MODULES="magnet magnet_sched"
need_magnet
need_cmd taskset timeout
R=$MAGNET_RESULTS
S=${CSW_SECONDS:-3}
NCPU=$(nproc)
magnet_load || bail_out "cannot load the modules"

busy() {	# two busy loops per CPU for $S seconds, pinned
	local c i pids=()
	for ((c = 0; c < NCPU; c++)); do
		for i in 1 2; do
			taskset -c "$c" timeout "$S" sh -c 'while :; do :; done' &
			pids+=($!)
		done
	done
	wait "${pids[@]}"
}

run() {	# run NAME CMD...: record sched_switch, sched_switch_end while CMD runs
	local name=$1
	shift
	magnetctl stream create csw subbuf-size 1M subbuf-count 8 || return 1
	magnetctl probe enable sched_switch sched_switch_end stream csw || return 1
	bg "rec-$name" "$MAGNETCTL" record csw -o "$R/cswitch-$name.trace"
	sleep 0.5
	"$@"
	magnetctl probe disable sched_switch sched_switch_end
	kill -INT "${BG_PID[rec-$name]}"
	bg_wait "rec-$name" 30
	magnetctl stream delete csw
}

sleep 1
echo "# idle: $NCPU CPUs, ${S} s"
run idle sleep "$S" || bail_out "idle run failed"
echo "# busy: 2 busy loops per CPU, ${S} s"
run busy busy || bail_out "busy run failed"
{ uname -r; nproc; cat /sys/devices/system/clocksource/clocksource0/current_clocksource; } >"$R/env.txt"
magnet_unload
echo "ok - cswitch traces recorded"
