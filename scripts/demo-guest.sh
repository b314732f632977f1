#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The demo, inside the VM (started by scripts/demo.sh).
. "$(dirname "${BASH_SOURCE[0]}")/../tests/vm/lib.sh"
need_root
need_magnet
need_tools tcp_sender tcp_sink
set -e
R=$MAGNET_RESULTS
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "kernel $(uname -r): loading MAGNET"
netns_setup
magnet_load
magnetctl status

say "probes offered by magnet_net.ko"
magnetctl probe list

say "stream 'demo': 4 sub-buffers of 1 MiB per CPU; all network probes on"
magnetctl stream create demo subbuf-size 1M subbuf-count 4
magnetctl probe enable sock_send sock_recv tcp_send udp_send tcp_recv udp_recv \
	ip_send ip_recv dev_send dev_recv stream demo
bg rec "$MAGNETCTL" record demo -o "$R/demo.trace"
sleep 1

say "traffic: TCP 10 KB every 20 ms (1 s), then iperf3 UDP 20 Mbit/s (2 s), ${IP_A} -> ${IP_B}"
tcp_sink_start sink 5001
tcp_send tcp 50
cat "$(out tcp)"
bg_wait sink 10 || true
bg iperf in_b iperf3 -s -1 -p 5201
sleep 0.5
in_a iperf3 -c "$IP_B" -p 5201 -u -b 20M -l 1400 -t 2 | tail -n 4
bg_wait iperf 10 || true

magnetctl probe disable all
kill -INT "${BG_PID[rec]}"
bg_wait rec 20 || true

say "stream counters"
magnetctl stream list

pid=$(kv "$(out tcp)" pid)
ino=$(kv "$(out tcp)" ino)
say "the TCP sender (pid $pid, socket inode $ino), first records: time cpu pid event socket bytes"
magnetctl dump "$R/demo.trace" | awk -F'\t' -v ino="$ino" '$5 == ino' | head -n 12

say "what each layer saw (from the trace)"
check_trace "$R/demo.trace" --summary

magnetctl stream delete demo
echo
echo "trace: $R/demo.trace ($(stat -c %s "$R/demo.trace") bytes); decode it with: magnetctl dump FILE"
