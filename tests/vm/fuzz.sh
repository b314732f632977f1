#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The bounded fuzzer (tests/tools/fuzz_magnet.py, driven by docs/magnet.yaml):
# random and mutated netlink requests of every command and attribute,
# sequences of create/delete/enable/disable/snapshot over streams,
# filters, synthesizers, correlators and run-time kprobes, random ioctls,
# reads, writes, polls and mmaps on the stream and sockstat files, while a
# UDP flood runs over the veth pair into a stream that magnetctl records
# and the fuzzer's own readers block on the pool's streams.  Fails on a
# hang (an answer not within 30 s), an answer that makes no sense (see
# the fuzzer), a kernel splat, modules that do not unload afterwards, or
# a kmemleak report where the kernel has kmemleak.
#
#	MAGNET_FUZZ_SEED      seed (default: today's date, YYYYMMDD; printed)
#	MAGNET_FUZZ_COUNT     operations (default 4000)
#	MAGNET_FUZZ_DURATION  stop after this many seconds too (default 75)
#
# A longer run by hand (tests/vm/README.md):
#	MAGNET_FUZZ_COUNT=1000000 MAGNET_FUZZ_DURATION=900 \
#		scripts/vm-run.sh -t 1200 KVER tests/vm/fuzz.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
need_tools udp_flood udp_sink
need_magnet
SEED=${MAGNET_FUZZ_SEED:-$(date -u +%Y%m%d)}
COUNT=${MAGNET_FUZZ_COUNT:-4000}
DUR=${MAGNET_FUZZ_DURATION:-75}
R=$MAGNET_RESULTS
KML=/sys/kernel/debug/kmemleak
plan 8
diag "seed=$SEED count=$COUNT duration=${DUR}s (MAGNET_FUZZ_SEED/COUNT/DURATION)"
dmesg_mark
netns_setup || bail_out "cannot set up the namespaces"
magnet_load || bail_out "cannot load the modules"
if [ -w "$KML" ]; then
	echo scan >"$KML"
	echo clear >"$KML"
fi

magnetctl stream create fzlive subbuf-size 16K subbuf-count 4 >/dev/null
check "live traffic into stream fzlive" magnetctl probe enable udp_send ip_send dev_send udp_recv stream fzlive
bg rec "$MAGNETCTL" record fzlive -o "$R/fzlive.trace"
record_started rec || diag "record: $(cat "$(out rec)")"
udp_sink_start sink 5002 || diag "udp_sink did not start"
# a flood that lasts as long as the fuzzer: batches of 2000 datagrams
bg flood sh -c "while :; do ip netns exec $NS_A $MAGNET_TOOLS/udp_flood -i 100 $IP_B 5002 2000 200 >/dev/null 2>&1; done"

rc=0
# at most 1 GiB of address space (4000 operations ran within it on 6.1 and
# 6.12, 2026-11-28): a fuzzer that grows without bound fails here with a
# MemoryError and its traceback, rather than starving the guest into soft
# lockups that look like the kernel's (CI, 2026-11-28)
timeout $((DUR * 3 + 300)) prlimit --as=$((1 << 30)) \
	python3 "$MAGNET_REPO/tests/tools/fuzz_magnet.py" \
	--seed "$SEED" --count "$COUNT" --duration "$DUR" --timeout 30 \
	>"$R/fuzz.out" 2>&1 || rc=$?
diag "$(head -n 80 "$R/fuzz.out")"
[ $rc -eq 0 ] || diag "$(tail -n 15 "$R/fuzz.out")"
case $rc in
0) ok "fuzzer: no failure (seed $SEED)" ;;
3) not_ok "fuzzer: no failure (seed $SEED)" "a request hung: replay with MAGNET_FUZZ_SEED=$SEED" ;;
124) not_ok "fuzzer: no failure (seed $SEED)" "did not finish within $((DUR * 3 + 300)) s, replay with MAGNET_FUZZ_SEED=$SEED" ;;
*) not_ok "fuzzer: no failure (seed $SEED)" "exit $rc, replay with MAGNET_FUZZ_SEED=$SEED" ;;
esac
n=$(kv "$R/fuzz.out" operations)
[ "${n:-0}" -gt 0 ] && ok "fuzzer ran $n operations" || not_ok "fuzzer ran operations" "$(tail -n 5 "$R/fuzz.out")"

kill "${BG_PID[flood]}" 2>/dev/null
wait "${BG_PID[flood]}" 2>/dev/null
check "control still answers" magnetctl status
kill -INT "${BG_PID[rec]}" 2>/dev/null
bg_wait rec 30 >/dev/null
# the fuzzer's objects go with the module; everything must be releasable
for k in fzk0 fzk1; do magnetctl probe del $k >/dev/null 2>&1; done
for s in fz0 fz1 fz2 fzow fzlive; do magnetctl stream delete $s >/dev/null 2>&1; done
check_eq "no stream left" 0 "$(list_count stream '^fz')"
check "the modules unload after the fuzzer" magnet_unload

if [ -w "$KML" ]; then
	echo scan >"$KML"
	sleep 1
	echo scan >"$KML"
	cat "$KML" >"$R/kmemleak.txt"
	if [ -s "$R/kmemleak.txt" ]; then
		not_ok "kmemleak: nothing leaked" "$(head -n 30 "$R/kmemleak.txt")"
	else
		ok "kmemleak: nothing leaked"
	fi
else
	skip "kmemleak: nothing leaked" "no kmemleak in this kernel"
fi
check_dmesg_clean
done_testing
