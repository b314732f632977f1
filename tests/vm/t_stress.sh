#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The fast path under load in a real kernel: magnet_selftest.ko calls
# magnet_add() as fast as it can from a kthread on every CPU while a pinned
# hrtimer adds events from hardirq context on the same CPU, into small
# rings that a concurrent reader cannot keep up with.  Asserts: the rings
# survive nesting (every record well formed, per-CPU time order, per-CPU
# and per-context sequence numbers only ever increase), losses happen and
# are all reported (produced = read + lost, exactly, and per CPU against
# the producers' own counts), a duplicate probe name is refused, and the
# kernel log stays clean.  Then rings that hold everything: every event of
# every CPU and context is in the trace, once, in order.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
MAGNET_MODULES="magnet" need_magnet
[ -f "$MAGNET_MODDIR/magnet_selftest.ko" ] || skip_all "magnet_selftest.ko not built"
dmesg_mark
MAGNET_MODULES="magnet magnet_net"
magnet_load || bail_out "cannot load the modules"
R=$MAGNET_RESULTS
ST=$MAGNET_MODDIR/magnet_selftest.ko

nprobes() {
	magnetctl -j probe list | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'
}
n0=$(nprobes)
[ "${n0:-0}" -ge 10 ] || bail_out "probe list before the refused module: '$n0'"
if insmod "$ST" dup_name=tcp_send 2>"$R/dup.err"; then
	not_ok "a duplicate probe name is refused"
	rmmod magnet_selftest
else
	grep -q "File exists" "$R/dup.err" && ok "a duplicate probe name is refused (EEXIST)" ||
		not_ok "a duplicate probe name is refused (EEXIST)" "$(cat "$R/dup.err")"
fi
check_eq "nothing left of the refused module (magnet_net's $n0 probes only)" "$n0" "$(nprobes)"

check "load magnet_selftest" insmod "$ST" count=300000 period_us=20
_magnet_loaded+=(magnet_selftest)
check "stream create st (16 KiB x 2 per CPU)" magnetctl stream create st subbuf-size 16K subbuf-count 2
bg rec "$MAGNETCTL" record st -o "$R/st.trace"
sleep 1
check "enable selftest" magnetctl probe enable selftest stream st
check_eq "producers finished" 0 "$(selftest_wait)"
check "disable selftest" magnetctl probe disable selftest
kill -INT "${BG_PID[rec]}"
bg_wait rec 30
check_eq "record stops cleanly" 0 $?
stats=$(magnetctl -j stream show st)
echo "$stats" >"$R/st.stats.json"
produced=$(python3 -c 'import json,sys; d=json.load(sys.stdin); d=d.get("stream",d); print(d["produced"])' <<<"$stats")
lost=$(python3 -c 'import json,sys; d=json.load(sys.stdin); d=d.get("stream",d); print(d["lost"])' <<<"$stats")
diag "stream st: produced=$produced lost=$lost"
if [ "$lost" -gt 0 ] && [ "$produced" -gt 600000 ]; then
	ok "the reader fell behind: $lost of $produced lost"
else
	not_ok "the reader fell behind" "produced=$produced lost=$lost"
fi
check "trace: well formed, per-CPU order, produced = read + lost" \
	check_trace "$R/st.trace" --stream st --expect-produced "$produced" --expect-lost "$lost"

# the producers' own counts say what the trace must hold
# (tests/tools/selftest_seq.py): per CPU and context the sequence numbers
# only grow, hardirq events carry no pid, and per CPU every event the
# producers made is in the trace or counted by a LOST record of that CPU
cat /sys/module/magnet_selftest/parameters/produced >"$R/st.produced"
diag "producers (CPU task hardirq): $(tr '\n' ';' <"$R/st.produced")"
check "per CPU: sequence numbers only grow, producers' events = read + LOST" \
	python3 "$MAGNET_REPO/tests/tools/selftest_seq.py" "$R/st.trace" "$R/st.produced"
check "stream delete st" magnetctl stream delete st

# Rings that hold everything (60 000 task events and the hardirq ones of
# each CPU fill some 20 of its 64 sub-buffers): every event of
# every CPU and context, once, in order, nothing lost
check "stream create all (128 KiB x 64 per CPU)" magnetctl stream create all subbuf-size 128K subbuf-count 64
bg rec2 "$MAGNETCTL" record all -o "$R/all.trace"
record_started rec2 || diag "recorder: $(cat "$(out rec2)")"
check "rmmod magnet_selftest" rmmod magnet_selftest
check "insmod magnet_selftest count=60000" insmod "$ST" count=60000 period_us=100
check "enable selftest into all" magnetctl probe enable selftest stream all
check_eq "producers finished" 0 "$(selftest_wait)"
check "disable selftest" magnetctl probe disable selftest
cat /sys/module/magnet_selftest/parameters/produced >"$R/all.produced"
diag "producers (CPU task hardirq): $(tr '\n' ';' <"$R/all.produced")"
kill -INT "${BG_PID[rec2]}"
bg_wait rec2 30
check_eq "record stops cleanly" 0 $?
check "every event once, in order, none lost" \
	python3 "$MAGNET_REPO/tests/tools/selftest_seq.py" "$R/all.trace" "$R/all.produced" --lossless
check "stream delete all" magnetctl stream delete all

# A deleted stream whose rings are full still owes its last LOST records
# (the flush at deletion finds no room): a reader that drains to end of
# file after the deletion gets them.  The reader opens first and reads only
# after the deletion.
check "stream create full (4 KiB x 2 per CPU)" magnetctl stream create full subbuf-size 4K subbuf-count 2
cat >"$R/late.py" <<'PY'
import os, struct, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
print("open", flush=True)
while not os.path.exists(sys.argv[2]):
    time.sleep(0.05)
data = b""
while True:
    b = os.read(fd, 1 << 20)
    if not b:
        break
    data += b
off = lost = events = 0
while off + 32 <= len(data):
    size, ev = struct.unpack_from("<HH", data, off)
    if ev == 1:
        lost += struct.unpack_from("<Q", data, off + 32)[0]
    elif ev >= 16:
        events += 1
    off += size
print("read", events, "lost", lost, flush=True)
PY
rm -f "$R/late.go"
bg late python3 "$R/late.py" /sys/kernel/magnet/full "$R/late.go"
wait_line "$(out late)" '^open' 20 || diag "reader: $(cat "$(out late)")"
check "rmmod magnet_selftest" rmmod magnet_selftest
check "insmod magnet_selftest count=20000" insmod "$ST" count=20000 period_us=20
check "enable selftest into full" magnetctl probe enable selftest stream full
selftest_wait >/dev/null
check "disable selftest" magnetctl probe disable selftest
stats=$(magnetctl -j stream show full)
read -r produced lost < <(python3 -c 'import json,sys; d=json.load(sys.stdin); d=d.get("stream",d); print(d["produced"], d["lost"])' <<<"$stats")
[ "${lost:-0}" -gt 0 ] && ok "the unread rings overflowed: $lost of $produced lost" ||
	not_ok "the unread rings overflowed" "produced=$produced lost=$lost"
check "stream delete full (its reader still open)" magnetctl stream delete full
touch "$R/late.go"
bg_wait late 30
read -r _ nread _ nlost <<<"$(grep '^read' "$(out late)")"
check_eq "the reader gets every LOST record after the deletion" "$lost" "${nlost:-none}"
check_eq "events read + LOST = produced" "$produced" "$(( ${nread:-0} + ${nlost:-0} ))"
check "modules unload" magnet_unload
check_dmesg_clean
done_testing
