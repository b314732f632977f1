#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Harness smoke test, no MAGNET involved: the namespaces, the veth pair,
# the traffic tools and the TAP helpers work in this kernel.
#
#   scripts/vm-run.sh 6.12.95+deb12-amd64 tests/vm/net_smoke.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
need_cmd ip ethtool python3
need_tools

TCP_COUNT=50		# 50 x 10240 bytes every 20 ms: ~1 s
TCP_SIZE=10240
UDP_COUNT=20000
UDP_SIZE=1024

plan 15
dmesg_mark

if netns_setup 1500; then
	ok "netns mgA/mgB with veth pair up"
else
	bail_out "netns_setup failed"
fi
check_eq "MTU 1500 on both ends" "1500 1500" \
	"$(in_a cat /sys/class/net/$VETH_A/mtu) $(in_b cat /sys/class/net/$VETH_B/mtu)"

tx_packets() { in_a cat "/sys/class/net/$VETH_A/statistics/tx_packets"; }

# ---- TCP: the FTP-like sender ----
if tcp_sink_start tsink 5001; then
	ok "tcp_sink listening in $NS_B"
else
	not_ok "tcp_sink listening in $NS_B" "$(cat "$(out tsink)")"
fi
pkts0=$(tx_packets)
t0=$(date +%s%N)
tcp_send tsend "$TCP_COUNT"
rc=$?
t1=$(date +%s%N)
check_eq "tcp_sender exit status" 0 "$rc" || diag "$(cat "$(out tsend)")"
bg_wait tsink 15
check_eq "tcp_sink exit status" 0 "$?" || diag "$(cat "$(out tsink)")"
pkts1=$(tx_packets)

spid=$(kv "$(out tsend)" pid)
sino=$(kv "$(out tsend)" ino)
if [[ $spid =~ ^[0-9]+$ && $sino =~ ^[0-9]+$ && $sino -gt 0 ]]; then
	ok "tcp_sender reports pid=$spid ino=$sino"
else
	not_ok "tcp_sender reports pid and ino" "$(cat "$(out tsend)")"
fi
check_eq "tcp_sender wrote $TCP_COUNT x $TCP_SIZE bytes" \
	"$((TCP_COUNT * TCP_SIZE)) $TCP_COUNT" \
	"$(kv "$(out tsend)" sent) $(kv "$(out tsend)" writes)"
check_eq "tcp_sink received every byte" "$((TCP_COUNT * TCP_SIZE))" "$(kv "$(out tsink)" bytes)"

ms=$(((t1 - t0) / 1000000))
if [ "$ms" -ge $(((TCP_COUNT - 1) * 20)) ] && [ "$ms" -lt 20000 ]; then
	ok "sender paced at 20 ms (${ms} ms for $TCP_COUNT writes)"
else
	not_ok "sender paced at 20 ms" "took ${ms} ms for $TCP_COUNT writes"
fi

# Offloads off => wire-sized segments: at least bytes/MSS data packets.
mss=$((1500 - 20 - 32))	# IPv4 + TCP with timestamps
min_pkts=$(((TCP_COUNT * TCP_SIZE + mss - 1) / mss))
if [ $((pkts1 - pkts0)) -ge "$min_pkts" ]; then
	ok "segments are wire sized ($((pkts1 - pkts0)) packets >= $min_pkts)"
else
	not_ok "segments are wire sized" "only $((pkts1 - pkts0)) tx packets for $((TCP_COUNT * TCP_SIZE)) bytes (offload still on?)"
fi

# ---- UDP: bounded flood ----
if udp_sink_start usink 5002 "$UDP_COUNT" -t 30 -q 2000; then
	ok "udp_sink bound in $NS_B"
else
	not_ok "udp_sink bound in $NS_B" "$(cat "$(out usink)")"
fi
udp_send uflood "$UDP_COUNT" "$UDP_SIZE" -t 20
rc=$?
check_eq "udp_flood sent $UDP_COUNT datagrams" "0 $UDP_COUNT" "$rc $(kv "$(out uflood)" sent)" ||
	diag "$(cat "$(out uflood)")"
bg_wait usink 40
got=$(kv "$(out usink)" datagrams)
if [[ $got =~ ^[0-9]+$ ]] && [ "$got" -gt 0 ] && [ "$got" -le "$UDP_COUNT" ]; then
	ok "udp_sink counted $got of $UDP_COUNT datagrams"
else
	not_ok "udp_sink counted datagrams" "$(cat "$(out usink)")"
fi
diag "udp: $(cat "$(out uflood)" | tr '\n' ' ')/ sink: $(tail -n 1 "$(out usink)")"

check "check_trace.py selftest passes in the guest" \
	python3 "$MAGNET_REPO/tests/tools/selftest_check_trace.py"

check_dmesg_clean "kernel log clean"
done_testing
