#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Buffer modes in a real kernel, under the two-CPU load of
# magnet_selftest.ko (a kthread and a pinned hrtimer per CPU, each event
# carrying a per-CPU, per-context sequence number):
#  - a global-ring stream: one ring for all CPUs; a small load it holds
#    whole has every CPU's events in it; under a load that overruns it, read
#    while loaded, its timestamps never go backwards across CPUs, sequence
#    numbers only grow and the accounting is exact (hits = produced =
#    read + lost, LOST records add up);
#  - an overwrite stream (flight recorder): snapshots during and after the
#    load hold whole records only, per-CPU sequence numbers strictly
#    increasing, the last one at the newest event, at least a ring's worth
#    per CPU; the counters add up (produced = written + lost, written =
#    read + overwritten, lost = events offered while frozen); the snapshot
#    file is a trace that check_trace and magnetctl dump accept;
#  - global + overwrite together;
#  - bad input refused with the kernel's message and nothing created: bad
#    sizes, unknown mode bits, bad snapshot operations, a snapshot of a
#    discard stream, double freeze, resume of a running stream, reading a
#    running flight recorder (EBUSY); GET_STATS in both struct sizes;
#  - a snapshot request that waits for a reader (stopped in its copy to
#    user space by a userfaultfd page) holds no lock of the kernel's other
#    generic netlink families: a family lookup answers meanwhile;
#  - a stream on the local clock: SYSINFO says so, per-CPU time order,
#    exact accounting; synthesizers and application writes refused;
#  - stream delete and rmmod while frozen are clean.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
MAGNET_MODULES="magnet" need_magnet
[ -f "$MAGNET_MODDIR/magnet_selftest.ko" ] || skip_all "magnet_selftest.ko not built"
dmesg_mark
MAGNET_MODULES="magnet"
magnet_load || bail_out "cannot load the modules"
R=$MAGNET_RESULTS
ST=$MAGNET_MODDIR/magnet_selftest.ko
GENL=(python3 "$MAGNET_REPO/tests/tools/genl_req.py")
COUNT=30000		# per CPU; the global ring's lock makes it slow in TCG
COUNT_ENDLESS=2000000000	# producers only rmmod stops
NCPU=$(nproc)

# genl_fail DESC REGEX ARGS...: the raw request is refused with REGEX
genl_fail() {
	local desc=$1 re=$2 out
	shift 2
	out=$("${GENL[@]}" "$@" 2>&1)
	if [ $? -eq 1 ] && grep -qE -- "$re" <<<"$out"; then
		ok "$desc"
	else
		not_ok "$desc" "$out"
	fi
}

# sstat STREAM KEY: a field of "magnetctl -j stream show"
sstat() {
	magnetctl -j stream show "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin); d = d.get("stream", d)
v = d[sys.argv[1]]
print(int(v) if isinstance(v, bool) else v)' "$2"
}

hits() {
	probe_hits selftest
}

# streams: the names of the streams, or "list-failed(RC)" (never "" from
# an error: "nothing was created" compares two listings)
streams() {
	local out

	out=$(magnetctl -j stream list 2>&1) || { echo "list-failed($?): $out"; return 1; }
	python3 -c '
import json, sys
d = json.load(sys.stdin)
d = d["streams"] if isinstance(d, dict) else d
print(" ".join(sorted(s["name"] for s in d)))' <<<"$out" || echo "list-unreadable: $out"
}

# load_st COUNT [PERIOD_US]: (re)load magnet_selftest with COUNT events per
# CPU from its thread and one every PERIOD_US (20) from its timer
load_st() {
	if [ -d /sys/module/magnet_selftest ]; then
		rmmod magnet_selftest || return 1
	fi
	insmod "$ST" count="$1" period_us="${2:-20}"
}

run_load() {
	check "enable selftest into $1" magnetctl probe enable selftest stream "$1"
}

wait_load() {
	check_eq "producers finished ($1)" 0 "$(selftest_wait 90)"
	check "disable selftest ($1)" magnetctl probe disable selftest
}

# scan TRACE KIND [COUNT]: records of magnet_selftest in a trace file.
# KIND global: timestamps never back across CPUs; snap: per CPU.  Always:
# whole records up to the end of the file, per (CPU, context) sequence
# numbers strictly increasing.  With COUNT: each CPU's last task event is
# its newest (sequence COUNT - 1).  Prints "events lost ncpus minpercpu".
scan() {
	python3 - "$@" <<'PY'
import struct, sys
path, kind = sys.argv[1], sys.argv[2]
newest = int(sys.argv[3]) if len(sys.argv) > 3 else None
data = open(path, "rb").read()
off, names, last, lost, flags = 0, {}, {}, 0, None
prev, per_cpu = {}, {}
while off < len(data):
    assert off + 32 <= len(data), ("torn header at the end", off)
    size, ev, cpu, aid, ts, pid, tgid = struct.unpack_from("<HHIQQII", data, off)
    assert size >= 32 and size % 8 == 0, ("bad size", off, size)
    assert off + size <= len(data), ("torn record", off, size, len(data))
    if ev == 0:
        flags = struct.unpack_from("<I", data, off + 32 + 52)[0]
    elif ev == 2:
        names[struct.unpack_from("<H", data, off + 32)[0]] = \
            data[off + 40:off + 72].split(b"\0")[0].decode()
    if ev == 1 or ev >= 16:
        key = -1 if kind == "global" else cpu
        assert ts >= prev.get(key, 0), ("time went back", off, cpu, ts, prev.get(key))
        prev[key] = ts
    if ev == 1:
        lost += struct.unpack_from("<Q", data, off + 32)[0]
    elif names.get(ev) == "selftest":
        seq, pcpu, irq = struct.unpack_from("<QII", data, off + 32)
        assert pcpu == cpu, ("payload cpu", off, pcpu, cpu)
        k = (cpu, irq)
        assert seq > last.get(k, -1), ("sequence not increasing", off, k, seq, last.get(k))
        last[k] = seq
        per_cpu[cpu] = per_cpu.get(cpu, 0) + 1
    off += size
assert flags is not None, "no SYSINFO"
if kind == "global":
    assert flags & 1, ("SYSINFO flags 0x%x: not global" % flags)
if newest is not None:
    for cpu in per_cpu:
        assert last.get((cpu, 0)) == newest - 1, \
            ("cpu %d: last task sequence %s, newest %d" % (cpu, last.get((cpu, 0)), newest - 1))
print(sum(per_cpu.values()), lost, len(per_cpu), min(per_cpu.values() or [0]))
PY
}

check "load magnet_selftest (count=$COUNT per CPU)" load_st $COUNT
_magnet_loaded+=(magnet_selftest)

# ---- bad input ---------------------------------------------------------
before=$(streams) || not_ok "list the streams" "$before"
expect_fail "bad sub-buffer size refused for a global stream" 2 "sub-buffer size 5000" \
	magnetctl stream create bad global subbuf-size 5000
expect_fail "unknown mode keyword is a usage error" 1 "unexpected argument 'ring'" \
	magnetctl stream create bad ring
expect_fail "a mode keyword given twice is a usage error" 1 "'overwrite' given twice" \
	magnetctl stream create bad overwrite overwrite
genl_fail "unknown mode bits refused (extack)" "errno=22 msg=stream mode 0x4: unknown bits 0x4" \
	STREAM_NEW STREAM_NAME=str:bad STREAM_MODE=u32:4
genl_fail "mode of the wrong type refused" "errno=(22|34)" \
	STREAM_NEW STREAM_NAME=str:bad STREAM_MODE=u8:1
check_eq "nothing was created" "$before" "$(streams)"

check "create discard stream d" magnetctl stream create d
check "create overwrite stream fr (16 KiB x 4 per CPU)" \
	magnetctl stream create fr subbuf-size 16K subbuf-count 4 overwrite
expect_fail "snapshot of a discard stream refused" 2 "stream 'd' is not in overwrite mode" \
	magnetctl stream snapshot d -o "$R/never.trace"
expect_fail "freeze of a discard stream refused" 2 "not in overwrite mode" \
	magnetctl stream freeze d
expect_fail "snapshot needs -o FILE" 1 "missing '-o FILE'" magnetctl stream snapshot fr
expect_fail "a snapshot that cannot be written: exit 3, the write's error" 3 \
	"stream snapshot fr: /dev/full: copying .*No space left on device" \
	magnetctl stream snapshot fr -o /dev/full
check_eq "the failed snapshot resumed fr" 0 "$(sstat fr frozen)"
genl_fail "snapshot without an operation refused" "errno=22 msg=a snapshot operation .* is required" \
	STREAM_SNAPSHOT STREAM_NAME=str:fr
genl_fail "unknown snapshot operation refused" "errno=22 msg=snapshot operation 7: must be 1 .freeze. or 2 .resume." \
	STREAM_SNAPSHOT STREAM_NAME=str:fr STREAM_SNAPSHOT=u32:7
genl_fail "snapshot of a missing stream refused" "errno=2 msg=no stream named 'nope'" \
	STREAM_SNAPSHOT STREAM_NAME=str:nope STREAM_SNAPSHOT=u32:1
expect_fail "resume of a running stream refused" 2 "stream 'fr' is not frozen" \
	magnetctl stream resume fr
FR=$(magnetctl -j stream show fr | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("stream",d)["path"])')
expect_fail "reading a running flight recorder fails with EBUSY" 1 "Device or resource busy" \
	cat "$FR"
check "freeze fr" magnetctl stream freeze fr
expect_fail "a second freeze refused" 2 "stream 'fr' is frozen already" magnetctl stream freeze fr
check_eq "show -j: frozen" 1 "$(sstat fr frozen)"
check_eq "show -j: mode" "percpu,overwrite" "$(sstat fr mode)"
check_eq "status file: mode and frozen of fr" "0x2 1" \
	"$(awk -F'\t' '$1 == "fr" { print $13, $14 }' /sys/kernel/debug/magnet/status)"
n=$(cat "$FR" | wc -c)
if [ "$n" -gt 0 ]; then ok "frozen empty stream reads its SYSINFO/EVENTDEFs then EOF ($n bytes)"; else not_ok "frozen stream readable" "$n bytes"; fi
check "resume fr" magnetctl stream resume fr
check_eq "show -j: running again" 0 "$(sstat fr frozen)"

# A request that waits holds no lock another family needs.  A reader
# stopped in its copy to user space (a userfaultfd page,
# tests/tools/uffd_read.c) holds frozen fr's read_lock, and a RESUME of fr
# waits for it.  The family is parallel_ops, so meanwhile a family lookup
# (nlctrl's GETFAMILY, which every generic netlink client makes first) and
# a STATUS_GET answer at once.  Before, the waiting RESUME held the
# kernel's genl_mutex: every non-parallel family of the machine waited too.
# (The sysctl is there when the kernel has userfaultfd: Debian's kernels,
# the debug kernel since 4 December.)
if [ -x "$MAGNET_TOOLS/uffd_read" ] && [ -e /proc/sys/vm/unprivileged_userfaultfd ]; then
	check "freeze fr (a reader will stop in its copy)" magnetctl stream freeze fr
	# the guest's own /tmp: a FIFO (the results directory is 9p)
	ctl=$(mktemp -u /tmp/uffd.XXXXXX)
	mkfifo "$ctl"
	exec 7<>"$ctl"
	"$MAGNET_TOOLS/uffd_read" "$FR" <"$ctl" >"$R/uffd.out" 2>&1 &
	upid=$!
	on_exit "kill $upid"
	check "the reader stops in its copy to user space (read_lock held)" \
		wait_line "$R/uffd.out" '^faulted' 20
	bg resume magnetctl stream resume fr
	sleep 1
	check "the RESUME waits for the reader" kill -0 "${BG_PID[resume]}"
	# (a request stuck on genl_mutex cannot be killed: wait, then release)
	t0=$(date +%s%N)
	bg status magnetctl status
	end=$((SECONDS + 30))
	while [ $SECONDS -lt $end ] && kill -0 "${BG_PID[status]}" 2>/dev/null; do
		sleep 0.2
	done
	ms=$((($(date +%s%N) - t0) / 1000000))
	if kill -0 "${BG_PID[status]}" 2>/dev/null; then
		not_ok "meanwhile a family lookup and STATUS_GET answer" \
			"still waiting after $ms ms"
	else
		wait "${BG_PID[status]}"
		check_eq "meanwhile a family lookup and STATUS_GET answer ($ms ms)" 0 $?
	fi
	echo go >&7
	wait "$upid"
	check_eq "the reader's read returns once its page is there" 0 $?
	check "it read fr's metadata" grep -qE '^read [1-9]' "$R/uffd.out"
	bg_wait resume 20
	check_eq "then the RESUME completes" 0 $?
	bg_wait status 20 >/dev/null
	check_eq "fr runs again" 0 "$(sstat fr frozen)"
	exec 7>&-
	rm -f "$ctl"
else
	skip "a waiting request holds no global lock" "uffd_read not built or no userfaultfd in this kernel"
fi

# GET_STATS: the first layout (56 bytes, old binaries) and the current one
check "GET_STATS in both sizes" python3 - "$FR" <<'PY'
import fcntl, struct, sys
def ior(nr, size):
    return (2 << 30) | (size << 16) | (0xB7 << 8) | nr
fd = open(sys.argv[1], "rb", buffering=0)
try:
    fd.read(1)
except OSError as e:
    assert e.errno == 16, e      # EBUSY: running flight recorder
old = fcntl.ioctl(fd, ior(1, 56), bytes(56))
new = fcntl.ioctl(fd, ior(1, 88), bytes(88))
big = fcntl.ioctl(fd, ior(1, 104), b"\xff" * 104)
assert len(old) == 56 and old == new[:56], (old, new)
assert big[88:] == bytes(16), "unknown tail not zeroed"
try:
    fcntl.ioctl(fd, ior(1, 48), bytes(48))
    raise AssertionError("a size below the first layout accepted")
except OSError as e:
    assert e.errno == 25, e      # ENOTTY
print("ok")
PY

# ---- global ring, every CPU's events --------------------------------------
# A load that fits the ring whole (200 thread events per CPU, a timer event
# every 2 ms: a few thousand 48-byte records in 4 MiB even if a vCPU waits
# seconds for its turn), so that what it holds does not depend on when the
# host schedules which vCPU: nothing lost, every CPU's events in the one ring.
check "reload magnet_selftest (count=200 per CPU, timer every 2 ms)" load_st 200 2000
check "create global stream g1 (2 MiB x 2, one ring)" \
	magnetctl stream create g1 subbuf-size 2M subbuf-count 2 global
bg rec1 "$MAGNETCTL" record g1 -o "$R/g1.trace"
sleep 1
run_load g1
wait_load "global, small"
kill -INT "${BG_PID[rec1]}"
bg_wait rec1 30
check_eq "record of g1 stops cleanly" 0 $?
check_eq "g1: nothing lost" 0 "$(sstat g1 lost)"
if out=$(scan "$R/g1.trace" global 2>&1); then
	read -r ev glost ncpu minc <<<"$out"
	check_eq "g1: events of every CPU in the one ring ($ev events)" "$NCPU" "$ncpu"
	check_eq "g1: events read = written" "$(sstat g1 written)" "$ev"
else
	not_ok "g1: timestamps never go back across CPUs, sequences grow" "$out"
fi
check "stream delete g1" magnetctl stream delete g1
check "reload magnet_selftest (count=$COUNT per CPU)" load_st $COUNT

# ---- global ring under load ------------------------------------------
# 512 KiB hold about a sixth of the load: the load starves the reader (under
# TCG a few reads in the whole run), and what does not fit is lost and
# counted.  Which CPUs' events the ring keeps then depends on the host's
# scheduling of the vCPUs, so only the small load above checks that.
# The reader reads as often as it can (--watermark 0, the kernel's rule).
check "create global stream g (256 KiB x 2, one ring)" \
	magnetctl stream create g subbuf-size 256K subbuf-count 2 global
check_eq "show -j: mode global" "global" "$(sstat g mode)"
bg rec "$MAGNETCTL" record g -o "$R/g.trace" --watermark 0
sleep 1
h0=$(hits)
t0=$(date +%s)
run_load g
wait_load global
kill -INT "${BG_PID[rec]}"
bg_wait rec 30
check_eq "record of g stops cleanly" 0 $?
produced=$(sstat g produced); lost=$(sstat g lost); written=$(sstat g written)
h=$(($(hits) - h0))
diag "global stream g: $(($(date +%s) - t0)) s, hits=$h produced=$produced written=$written lost=$lost read=$(sstat g read)"
check_eq "g: every event offered is produced (hits)" "$h" "$produced"
check_eq "g: produced = written + lost" "$produced" "$((written + lost))"
check "g trace: well formed, global time order, produced = read + lost" \
	check_trace "$R/g.trace" --stream g --expect-produced "$produced" --expect-lost "$lost"
if out=$(scan "$R/g.trace" global 2>&1); then
	read -r ev glost ncpu minc <<<"$out"
	ok "g: timestamps never go back across CPUs, sequences grow ($ev events, $ncpu CPUs)"
	check_eq "g: events read = written" "$written" "$ev"
else
	not_ok "g: timestamps never go back across CPUs, sequences grow" "$out"
fi
check "stream delete g" magnetctl stream delete g

# ---- the local clock (docs/FORMAT.md "Clocks") ----------------------------
# per-CPU rings stamped with local_clock(): SYSINFO names it, each CPU's
# records are in time order, the accounting is exact; what carries
# CLOCK_MONOTONIC times (synthesizers, correlators, application events) is
# refused with the reason
before=$(streams) || not_ok "list the streams" "$before"
expect_fail "an unknown clock is a usage error naming it" 1 "bad clock 'tsc'" \
	magnetctl stream create bad clock tsc
genl_fail "clock 3 refused by the policy" "errno=34" \
	STREAM_NEW STREAM_NAME=str:bad STREAM_CLOCK=u32:3
expect_fail "local clock with app-write refused (extack)" 2 \
	"application events carry CLOCK_MONOTONIC times" \
	magnetctl stream create bad clock local app-write
check_eq "no stream was created" "$before" "$(streams)"
check "create stream lc on the local clock" magnetctl stream create lc clock local subbuf-size 256K
check_eq "show -j: clock local" "local" "$(sstat lc clock)"
check_eq "show -j: clock of a default stream" "monotonic" "$(sstat d clock)"
expect_fail "a synthesizer into a local-clock stream refused (extack)" 2 \
	"stream 'lc' uses the local clock" \
	magnetctl synth add sl probe selftest by cpu value field 0:8 period 1s stream lc
LC=$(sstat lc path)
check "write() of application events into lc refused: EOPNOTSUPP" python3 - "$LC" <<'PY'
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
try:
    os.write(fd, bytes(80))
    raise SystemExit("accepted")
except OSError as e:
    assert e.errno == errno.EOPNOTSUPP, e
PY
check "reload magnet_selftest (count=$COUNT per CPU)" load_st $COUNT
bg rec "$MAGNETCTL" record lc -o "$R/lc.trace"
sleep 1
h0=$(hits)
run_load lc
wait_load "local clock"
kill -INT "${BG_PID[rec]}"
bg_wait rec 30
check_eq "record of lc stops cleanly" 0 $?
produced=$(sstat lc produced); lost=$(sstat lc lost); written=$(sstat lc written)
check_eq "lc: every event offered is produced (hits)" "$(($(hits) - h0))" "$produced"
check_eq "lc: produced = written + lost" "$produced" "$((written + lost))"
check "lc trace: well formed, produced = read + lost" \
	check_trace "$R/lc.trace" --stream lc --expect-produced "$produced" --expect-lost "$lost"
check_eq "lc trace: SYSINFO clock_id 2 (local)" 2 \
	"$(python3 -c 'import struct,sys; print(struct.unpack_from("<I", open(sys.argv[1],"rb").read(), 44)[0])' "$R/lc.trace")"
if out=$(scan "$R/lc.trace" snap 2>&1); then
	read -r ev llost ncpu minc <<<"$out"
	ok "lc: each CPU's timestamps never go back, sequences grow ($ev events, $ncpu CPUs)"
	check_eq "lc: events read = written" "$written" "$ev"
else
	not_ok "lc: each CPU's timestamps never go back" "$out"
fi
check "stream delete lc" magnetctl stream delete lc

# ---- overwrite under load, snapshots -------------------------------------
# Producers that only rmmod stops, so that the first snapshot and the
# freeze below happen while they run whatever the host's speed: the
# checks wait for what they need (events offered) instead of sleeping.
check "reload magnet_selftest (endless producers)" load_st $COUNT_ENDLESS
h0=$(hits)
run_load fr
# wait_hits N: until the point has counted N more than at h0 (90 s at most)
wait_hits() {
	local i
	for i in $(seq 1 300); do
		[ $(($(hits) - h0)) -ge "$1" ] && return 0
		sleep 0.3
	done
	return 1
}
# more than the rings hold (4 x 16 KiB of 48-byte records per CPU)
check "the producers filled every ring of fr" wait_hits $((NCPU * 4 * 16384 / 48 * 2))
t1=$(date +%s%N)
check "snapshot of fr during the load" magnetctl stream snapshot fr -o "$R/fr1.trace"
diag "snapshot 1 took $((($(date +%s%N) - t1) / 1000000)) ms"
# frozen while events are offered: each one is counted as lost while frozen
check "freeze fr during the load" magnetctl stream freeze fr
hf=$(($(hits) - h0))
check "events offered while fr is frozen" wait_hits $((hf + 1))
r=$(cat /sys/module/magnet_selftest/parameters/running)
[ "$r" -gt 0 ] && ok "producers still running while frozen ($r)" ||
	not_ok "producers still running while frozen" "$r"
check "resume fr during the load" magnetctl stream resume fr
check "disable selftest (endless producers)" magnetctl probe disable selftest
# a second load (sequence numbers from 0 again) overwrites all the first
# left, far more than a ring holds per CPU: a snapshot after it holds
# every CPU's newest events
hA=$(($(hits) - h0))	# the reload registers a new point, its hits from 0
check "reload magnet_selftest (count=$COUNT per CPU)" load_st $COUNT
run_load fr
wait_load "overwrite, second load"
check "snapshot of fr after the load" magnetctl stream snapshot fr -o "$R/fr2.trace"
magnetctl -j stream show fr >"$R/fr.stats.json"
produced=$(sstat fr produced); written=$(sstat fr written); lost=$(sstat fr lost)
read_=$(sstat fr read); ow=$(sstat fr overwritten); fl=$(sstat fr frozen_lost)
h=$((hA + $(hits)))
diag "overwrite stream fr: hits=$h produced=$produced written=$written lost=$lost read=$read_ overwritten=$ow frozen_lost=$fl"
check_eq "fr: every event offered is produced (hits)" "$h" "$produced"
check_eq "fr: produced = written + lost" "$produced" "$((written + lost))"
check_eq "fr: written = read + overwritten (all read)" "$written" "$((read_ + ow))"
check_eq "fr: all losses are events offered while frozen" "$lost" "$fl"
[ "$ow" -gt 0 ] && ok "fr: events were overwritten ($ow)" || not_ok "fr: events were overwritten" "$ow"
[ "$fl" -gt 0 ] && ok "fr: events offered while frozen counted ($fl)" ||
	not_ok "fr: events offered while frozen were counted" "$fl"
# a ring's worth per CPU: 3 full sub-buffers of 48-byte records at least
minwant=$((3 * 16384 / 48))
if out1=$(scan "$R/fr1.trace" snap 2>&1); then
	read -r ev1 l1 n1 min1 <<<"$out1"
	ok "snapshot 1: whole records, sequences strictly increasing ($ev1 events)"
else
	not_ok "snapshot 1: whole records, sequences strictly increasing" "$out1"
	ev1=0 l1=0
fi
if out2=$(scan "$R/fr2.trace" snap $COUNT 2>&1); then
	read -r ev2 l2 n2 min2 <<<"$out2"
	ok "snapshot 2: whole records, increasing, ends at each CPU's newest event ($ev2 events)"
	check_eq "snapshot 2: every CPU" "$NCPU" "$n2"
	[ "$min2" -ge "$minwant" ] && ok "snapshot 2: a ring's worth per CPU ($min2 >= $minwant)" ||
		not_ok "snapshot 2: a ring's worth per CPU" "$min2 < $minwant"
else
	not_ok "snapshot 2: whole records, increasing, ends at the newest" "$out2"
	ev2=0 l2=0
fi
check_eq "fr: events in the snapshots = read" "$read_" "$((ev1 + ev2))"
[ $((l1 + l2)) -le "$lost" ] && ok "fr: LOST records in the snapshots ($((l1 + l2))) <= lost" ||
	not_ok "fr: LOST records <= lost" "$((l1 + l2)) > $lost"
check "snapshot 2 is a valid trace (check_trace)" check_trace "$R/fr2.trace" --stream fr
check "magnetctl dump reads the snapshot" sh -c "'$MAGNETCTL' dump '$R/fr2.trace' >'$R/fr2.dump'"
check_eq "show -j: resumed after the snapshot" 0 "$(sstat fr frozen)"

# ---- global + overwrite ------------------------------------------------
check "reload magnet_selftest (count=$COUNT per CPU)" load_st $COUNT
check "create global overwrite stream go" \
	magnetctl stream create go subbuf-size 8K subbuf-count 3 global overwrite
check_eq "show -j: mode" "global,overwrite" "$(sstat go mode)"
run_load go
wait_load "global overwrite"
check "snapshot of go" magnetctl stream snapshot go -o "$R/go.trace"
if out=$(scan "$R/go.trace" global $COUNT 2>&1); then
	read -r ev gl nc mc <<<"$out"
	[ "${ev:-0}" -gt 0 ] && ok "go: global time order, whole records, newest last ($ev events, $nc CPUs)" ||
		not_ok "go: global time order, whole records, newest last" "no event in the snapshot: $out"
else
	not_ok "go: global time order, whole records, newest last" "$out"
fi
check "go snapshot: check_trace (global order across CPUs)" check_trace "$R/go.trace" --stream go
check_eq "go: written = read + overwritten" "$(sstat go written)" \
	"$(($(sstat go read) + $(sstat go overwritten)))"
# the span consumer on a frozen recorder: mmap'ed rings, GET/PUT_SPAN
check "reload magnet_selftest (count=$COUNT per CPU)" load_st $COUNT
run_load go
wait_load "global overwrite, spans"
GO=$(magnetctl -j stream show go | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("stream",d)["path"])')
check "freeze go" magnetctl stream freeze go
# hold a span, try to resume (refused), check the mapping, put it back
cat >"$R/hold.py" <<'PY'
import ctypes, fcntl, os, struct, sys, time
# mmap(2) itself: Python's mmap module refuses files whose size is 0
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long]
PROT_READ, PROT_WRITE, MAP_SHARED, MAP_FAILED = 1, 2, 1, 2**64 - 1
def mmap(length, prot, offset):
    addr = libc.mmap(None, length, prot, MAP_SHARED, fd, offset)
    return None if addr in (None, MAP_FAILED) else addr
fd = os.open(sys.argv[1], os.O_RDONLY)
GET = (3 << 30) | (48 << 16) | (0xB7 << 8) | 0x16
PUT = (0xB7 << 8) | 0x17
meta = ctypes.create_string_buffer(1 << 16)
while True:
    req = bytearray(struct.pack("=IIQQQQII", 0, 0, 0, 0, 0,
                                ctypes.addressof(meta), len(meta), 0))
    fcntl.ioctl(fd, GET, req, True)
    flags, ring, off, ln, ev, _, mlen, _ = struct.unpack("=IIQQQQII", req)
    if ln:
        break
print("writable=" + ("accepted" if mmap(8192, PROT_READ | PROT_WRITE, 0) else "refused"))
print("misaligned=" + ("accepted" if mmap(8192, PROT_READ, 4096) else "refused"))
stride = 3 * 8192                    # 8K x 3, page-aligned
base = mmap(stride, PROT_READ, ring * stride)
size, event = struct.unpack("=HH", ctypes.string_at(base + off - ring * stride, 4))
print("held ring=%d len=%d events=%d first_size=%d first_event=%d" % (ring, ln, ev, size, event))
sys.stdout.flush()
while not os.path.exists("/tmp/span-put"):
    time.sleep(0.1)
fcntl.ioctl(fd, PUT)
print("put")
PY
bg hold python3 "$R/hold.py" "$GO"
wait_line "$(out hold)" '^held ' 20
expect_fail "resume refused while a reader holds a sub-buffer" 2 "holds a sub-buffer" \
	magnetctl stream resume go
grep -q '^writable=refused' "$(out hold)" && ok "a writable mapping of a stream is refused" ||
	not_ok "a writable mapping of a stream is refused" "$(cat "$(out hold)")"
grep -q '^misaligned=refused' "$(out hold)" && ok "a mapping not at a ring's offset is refused" ||
	not_ok "a mapping not at a ring's offset is refused" "$(cat "$(out hold)")"
read -r fsz fev < <(sed -n 's/^held .*first_size=\([0-9]*\) first_event=\([0-9]*\)/\1 \2/p' "$(out hold)")
[ "${fsz:-0}" -ge 32 ] && [ "${fev:-0}" -ge 1 ] && ok "the held span's first record is in the mapping (size $fsz, event $fev)" ||
	not_ok "the held span's first record is in the mapping" "$(cat "$(out hold)")"
touch /tmp/span-put
bg_wait hold 20
check_eq "the span holder exits cleanly" 0 $?
rm -f /tmp/span-put
r0=$(sstat go read)
if [ -x "$MAGNET_TOOLS/stream_drain" ]; then
	o=$R/spans.out
	"$MAGNET_TOOLS/stream_drain" -m span "$GO" >"$o" 2>&1
	rc=$?
	ev=$(kv "$o" events); bad=$(kv "$o" bad); dis=$(kv "$o" disorder)
	r1=$(sstat go read)
	if [ $rc -eq 0 ] && [ "$bad" = 0 ] && [ "$dis" = 0 ] && [ "$ev" -gt 0 ] &&
		[ $((r1 - r0)) -eq "$ev" ]; then
		ok "spans of the frozen global recorder: $ev events whole, in order, counted as read"
	else
		not_ok "spans of the frozen global recorder" "exit $rc read $r0 -> $r1: $(cat "$o")"
	fi
else
	skip "spans of the frozen global recorder" "stream_drain not built"
fi
check "resume go after the spans were put" magnetctl stream resume go
check_eq "go: written = read + overwritten (spans)" "$(sstat go written)" \
	"$(($(sstat go read) + $(sstat go overwritten)))"
check "stream delete go" magnetctl stream delete go

# ---- deletion and unload while frozen --------------------------------------
# producers that outlast anything a loaded host makes this phase wait for
check "reload magnet_selftest (count=$COUNT_ENDLESS per CPU)" load_st $COUNT_ENDLESS
run_load fr
sleep 1
check "freeze fr under load" magnetctl stream freeze fr
r=$(cat /sys/module/magnet_selftest/parameters/running)
[ "$r" -gt 0 ] && ok "fr frozen while its producers run ($r)" || not_ok "fr frozen while its producers run" "$r"
exec 7<"$FR"
check "stream delete fr while frozen and open" magnetctl stream delete fr
n=$(cat <&7 | wc -c)
exec 7<&-
diag "reader of the deleted frozen stream drained $n bytes"
[ "$n" -gt 0 ] && ok "the open reader drains the deleted frozen stream, then EOF" ||
	not_ok "the open reader drains the deleted frozen stream" "$n bytes"
check "create overwrite stream fr2" magnetctl stream create fr2 overwrite subbuf-size 8K
run_load fr2
sleep 1
check "freeze fr2 under load" magnetctl stream freeze fr2
check "stream delete d" magnetctl stream delete d
check "modules unload while fr2 is frozen" magnet_unload
check_dmesg_clean
done_testing
