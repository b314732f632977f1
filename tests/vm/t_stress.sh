#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The fast path under load in a real kernel: magnet_selftest.ko calls
# magnet_add() as fast as it can from a kthread on every CPU while a pinned
# hrtimer adds events from hardirq context on the same CPU, into small
# rings that a concurrent reader cannot keep up with.  Asserts: the rings
# survive nesting (every record well formed, per-CPU time order, per-CPU
# and per-context sequence numbers only ever increase), losses happen and
# are all reported (produced = read + lost, exactly), a duplicate probe
# name is refused, and the kernel log stays clean.
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

# sequence numbers per CPU and context only grow; hardirq events have pid 0
check "selftest sequence numbers only grow, hardirq events carry no pid" python3 - "$R/st.trace" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
off, names, last, n = 0, {}, {}, {0: 0, 1: 0}
while off < len(data):
    size, ev, cpu, aid, ts, pid, tgid = struct.unpack_from("<HHIQQII", data, off)
    if ev == 2:
        names[struct.unpack_from("<H", data, off + 32)[0]] = data[off + 40:off + 72].split(b"\0")[0].decode()
    elif names.get(ev) == "selftest":
        seq, pcpu, irq = struct.unpack_from("<QII", data, off + 32)
        assert pcpu == cpu, (off, pcpu, cpu)
        key = (cpu, irq)
        # on failure, both records: offsets, timestamps, and what lies between
        if seq <= last.get(key, (-1,))[0]:
            pseq, poff, pts = last[key]
            kinds = {}
            o = poff
            while o < off:
                s, e = struct.unpack_from("<HH", data, o)
                kinds[e] = kinds.get(e, 0) + 1
                o += s
            raise AssertionError("sequence went back: key %s: seq %d at offset %d ts %d after seq %d at offset %d ts %d; records between, by event ID: %s; file %d bytes"
                                 % (key, seq, off, ts, pseq, poff, pts, kinds, len(data)))
        last[key] = (seq, off, ts)
        if irq:
            assert pid == 0 and tgid == 0, ("hardirq event with a pid", off, pid)
        else:
            assert pid != 0, ("task event without a pid", off)
        n[irq] += 1
    off += size
# hardirq events are a fraction of a percent of what the selftest produces
# here, and the reader keeps only what lands just after it frees a
# sub-buffer: under this much loss none may survive (t_filter checks that
# every hardirq event carries pid 0, without loss)
assert n[0] > 0, n
print("task events %d, hardirq events %d" % (n[0], n[1]))
PY
check "stream delete st" magnetctl stream delete st

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
