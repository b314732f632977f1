#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Application events (docs/INTERPOSER.md): tcp_sender runs unmodified
# under LD_PRELOAD=libmagnet_preload.so while the kernel's sock_send and
# tcp_send points trace the same stream.  Checked: every application
# write() appears with its bytes and the socket's abstract ID, its call
# contains the kernel's sock_send (entry <= sock_send <= exit), dump
# merges the two in time order, the batches need far fewer write(2) than
# calls (strace), an unprivileged writer is refused by default and
# admitted by app-write, malformed batches are refused with nothing
# written, and deleting the stream or unloading a probe module while the
# application runs leaves it running.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
need_magnet
need_tools tcp_sender tcp_sink
need_cmd python3 strace setpriv
PRELOAD_SRC=$MAGNET_BUILD/libmagnet/libmagnet_preload.so
[ -f "$PRELOAD_SRC" ] || skip_all "$PRELOAD_SRC not built"
dmesg_mark

netns_setup || bail_out "network namespaces"
magnet_load || bail_out "cannot load the modules"
magnetfs_mounted || bail_out "magnetfs is not mounted on /sys/kernel/magnet"

R=$MAGNET_RESULTS
M=/sys/kernel/magnet
# copies an unprivileged user can surely run
BIN=$(mktemp -d /tmp/t_app.XXXXXX)
on_exit "rm -rf $BIN"
cp "$PRELOAD_SRC" "$MAGNET_TOOLS/tcp_sender" "$BIN/"
chmod 755 "$BIN" "$BIN"/*
PRELOAD=$BIN/libmagnet_preload.so
# "ip netns exec" mounts a fresh /sys for the namespace, without the
# magnetfs mount under it: the applications use a second mount (the same
# superblock) outside /sys
MFS=$BIN/mfs
mkdir "$MFS"
mount -t magnetfs none "$MFS" || bail_out "mount magnetfs on $MFS"
on_exit "umount $MFS"
N=200
LEN=10240

# ---- 1. application and kernel events of one socket, one stream -------
check "stream create app (1 MiB x 4)" magnetctl stream create app subbuf-size 1M subbuf-count 4
check "enable sock_send tcp_send into app" magnetctl probe enable sock_send tcp_send stream app
bg rec "$MAGNETCTL" record app -o "$R/app.trace"
sleep 1
tcp_sink_start sink 5001 || bail_out "tcp_sink did not start"
in_a strace -f -qq -e trace=write -o "$R/strace.txt" \
	env MAGNET_STREAM=$MFS/app LD_PRELOAD="$PRELOAD" MAGNET_PRELOAD_STATS=1 \
	MAGNET_FLUSH_MS=5000 "$BIN/tcp_sender" -i 2 "$IP_B" 5001 $N >"$R/tcp.out" 2>&1
check_eq "tcp_sender under the interposer exits 0" 0 $?
bg_wait sink 10
pid=$(kv "$R/tcp.out" pid)
ino=$(kv "$R/tcp.out" ino)
check_eq "tcp_sender wrote $N times" "$N" "$(kv "$R/tcp.out" writes)"
stats=$(grep -o 'magnet_preload: pid.*' "$R/tcp.out")
diag "$stats"
events=$(sed -E 's/.* events=([0-9]+).*/\1/' <<<"$stats")
batches=$(sed -E 's/.* batches=([0-9]+).*/\1/' <<<"$stats")
writes=$(sed -E 's/.* writes=([0-9]+).*/\1/' <<<"$stats")
undelivered=$(sed -E 's/.* undelivered=([0-9]+).*/\1/' <<<"$stats")
check_eq "interposer: nothing undelivered" 0 "$undelivered"
# independent of the interposer's own counters: strace saw the syscalls,
# the stream file is the descriptor >= 1000 it writes to
sock_w=$(grep -cE "^[0-9]+ +write\([0-9]{1,3}, " "$R/strace.txt")
stream_w=$(grep -cE "^[0-9]+ +write\(1[0-9]{3}, " "$R/strace.txt")
diag "strace: $sock_w write(2) on the socket and other descriptors, $stream_w on the stream; interposer: events=$events batches=$batches writes=$writes"
if [ "$events" -ge "$N" ] && [ "$stream_w" -ge 1 ] && [ "$stream_w" -eq "$writes" ] &&
	[ $((stream_w * 20)) -le "$events" ]; then
	ok "$events calls recorded with $stream_w write(2) on the stream (strace), at most 1 per 20 calls"
else
	not_ok "batched writes" "events=$events stream writes=$stream_w interposer writes=$writes"
fi
check "disable the probes" magnetctl probe disable sock_send tcp_send
kill -INT "${BG_PID[rec]}"
bg_wait rec 20
check_eq "record stops cleanly" 0 $?
sjson=$(magnetctl -j stream show app)
echo "$sjson" >"$R/app.stats.json"
accepted=$(python3 -c 'import json,sys; d=json.load(sys.stdin); d=d.get("stream",d); print(d["app_events"], d["app_rejected"], d["lost"])' <<<"$sjson")
check_eq "the kernel accepted every record, refused no batch, lost nothing" "$events 0 0" "$accepted"
check "trace: APP records valid, $N writes of $LEN bytes by pid $pid on socket $ino, each containing its sock_send" \
	check_trace "$R/app.trace" --stream app --app-ino "$ino" --app-pid "$pid" --app-match \
	--app-sends "$N" --app-len "$LEN" --ino "$ino" --send-len "$LEN" --send-count "$N"
check_trace "$R/app.trace" --app-ino "$ino" --app-pid "$pid" --app-match >"$R/app.check" 2>&1
diag "$(grep -E 'contains|lag' "$R/app.check")"

magnetctl dump "$R/app.trace" >"$R/app.dump"
check_eq "magnetctl dump exits 0" 0 $?
# time column in order; each write() line before the sock_send of its call
order=$(awk -F'\t' -v ino="$ino" '
	$4 != "SYSINFO" && $4 != "EVENTDEF" { if ($1 + 0 < prev) bad++; prev = $1 + 0 }
	$4 == "APP" && $5 == ino && $7 ~ /^write / { pending++ ; apps++ }
	$4 == "sock_send" && $5 == ino { if (pending > 0) pending--; else early++; ks++ }
	END { printf "%d %d %d %d\n", bad, early, apps, ks }' "$R/app.dump")
check_eq "dump: time order, every write() shown before its sock_send ($N of each)" "0 0 $N $N" "$order"
grep -m 3 -E "	(APP|sock_send|tcp_send)	$ino	" "$R/app.dump" | while IFS= read -r l; do diag "$l"; done
magnetctl -j dump "$R/app.trace" >"$R/app.dump.json"
n=$(python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    a = r.get("app")
    if a and r["abstract_id"] == int(sys.argv[2]) and a["call"] == "write" \
            and a["ret"] == a["req"] == int(sys.argv[3]) and r["time"] == a["entry_ns"]:
        n += 1
print(n)' "$R/app.dump.json" "$ino" "$LEN")
check_eq "dump -j: $N write records with call, req, ret, entry time" "$N" "$n"

# ---- 2. who may write -------------------------------------------------
check "stream create closed (default: root only)" magnetctl stream create closed
check "stream create open with app-write" magnetctl stream create open app-write
check_eq "modes: closed 400, open 622, root dir searchable" "400 622 511" \
	"$(stat -c %a $M/closed) $(stat -c %a $M/open) $(stat -c %a $M)"
# what an app-write file grants: writing application events, nothing else
cat >"$BIN/wronly.py" <<'PY'
import errno, fcntl, os, select, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
for name, req in (("flush", (0xB7 << 8) | 0x02), ("put_span", (0xB7 << 8) | 0x17)):
    try:
        fcntl.ioctl(fd, req)
        print(name + "=allowed")
    except OSError as e:
        print(name + "=" + errno.errorcode[e.errno])
# a writer is always writable (a full ring drops, counted) and never readable
p = select.poll()
p.register(fd, select.POLLIN | select.POLLOUT)
ev = p.poll(2000)
print("poll=" + ("".join(n for n, b in (("in", select.POLLIN), ("out", select.POLLOUT))
                         if ev and ev[0][1] & b) or "none"))
PY
chmod 644 "$BIN/wronly.py"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups python3 "$BIN/wronly.py" "$MFS/open" 2>&1)
check_eq "a write-only opener may not flush (an IPI per CPU) or take spans; poll says writable" \
	"flush=EBADF put_span=EBADF poll=out" "$(echo $out)"
# root without CAP_NET_ADMIN: the file is writable (CAP_DAC_OVERRIDE), the
# stream is not open to application writes
out=$(setpriv --bounding-set -net_admin python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
try:
    os.write(fd, bytes(80))
    print("written")
except OSError as e:
    print(e.strerror)' "$MFS/closed" 2>&1)
check_eq "application events into a stream without app-write need CAP_NET_ADMIN" \
	"Operation not permitted" "$out"
check_eq "stream show reports app-write" "yes" \
	"$(magnetctl stream show open | sed -n 's/^app-write: *//p')"
tcp_sink_start sink2 5001 || bail_out "tcp_sink did not start"
in_a setpriv --reuid=65534 --regid=65534 --clear-groups \
	env MAGNET_STREAM=$MFS/closed LD_PRELOAD="$PRELOAD" "$BIN/tcp_sender" -i 0 "$IP_B" 5001 20 \
	>"$R/nobody_closed.out" 2>&1
rc=$?
bg_wait sink2 10
if [ $rc -eq 0 ] && grep -q "magnet_preload: cannot open stream '$MFS/closed'.*Permission denied; not recording" "$R/nobody_closed.out" &&
	[ "$(grep -c magnet_preload "$R/nobody_closed.out")" -eq 1 ]; then
	ok "unprivileged writer refused by default: one warning, the program runs unmodified"
else
	not_ok "unprivileged writer refused by default" "rc=$rc $(cat "$R/nobody_closed.out")"
fi
check_eq "closed stream got no application event" 0 \
	"$(magnetctl -j stream show closed | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("stream",d)["app_events"])')"

bg rec2 "$MAGNETCTL" record open -o "$R/open.trace"
sleep 1
tcp_sink_start sink3 5001 || bail_out "tcp_sink did not start"
in_a setpriv --reuid=65534 --regid=65534 --clear-groups \
	env MAGNET_STREAM=$MFS/open LD_PRELOAD="$PRELOAD" MAGNET_PRELOAD_STATS=1 \
	"$BIN/tcp_sender" -i 0 "$IP_B" 5001 20 >"$R/nobody_open.out" 2>&1
check_eq "unprivileged sender on the app-write stream exits 0" 0 $?
bg_wait sink3 10
sleep 0.5
kill -INT "${BG_PID[rec2]}"
bg_wait rec2 20
upid=$(kv "$R/nobody_open.out" pid)
uevents=$(grep -o 'magnet_preload: pid.*' "$R/nobody_open.out" | sed -E 's/.* events=([0-9]+).*/\1/')
uino=$(kv "$R/nobody_open.out" ino)
check "unprivileged writer admitted by app-write: 20 sends of socket $uino by pid $upid" \
	check_trace "$R/open.trace" --app-ino "$uino" --app-pid "$upid" --app-sends 20 --app-len "$LEN"

# ---- 3. malformed batches: refused whole, nothing written, counted ------
python3 - "$M/open" >"$R/malformed.out" 2>&1 <<'EOF'
import errno, os, struct, sys, time
path = sys.argv[1]
def rec(call=3, flags=1, pid=0, res=0, entry=None, exit_=None, size=80, event=5):
    now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    entry = now - 1000 if entry is None else entry
    exit_ = now if exit_ is None else exit_
    hdr = struct.pack("=HHIQQII", size, event, 0, 4242, 0, pid, 0)
    return hdr + struct.pack("=QQqQiHHII", entry, exit_, 100, 100, 7, call, flags, 0, res)
fd = os.open(path, os.O_WRONLY)
cases = [
    ("unknown call", rec() + rec(call=99, flags=2)),
    ("forged pid", rec() + rec(pid=1)),
    ("wrong direction flag", rec(call=5, flags=1)),
    ("reserved field set", rec(res=1)),
    ("exit before entry", rec(entry=10**12, exit_=10**11)),
    ("exit in the future", rec(exit_=time.clock_gettime_ns(time.CLOCK_MONOTONIC) + 10**10)),
    ("wrong event ID", rec(event=16)),
    ("partial record", rec()[:40]),
    ("too large a batch", rec() * 820),
]
for name, buf in cases:
    try:
        os.write(fd, buf)
        print("not ok - %s accepted" % name)
    except OSError as e:
        if e.errno == errno.EINVAL:
            print("ok - %s refused with EINVAL" % name)
        else:
            print("not ok - %s # errno %d" % (name, e.errno))
n = os.write(fd, rec() + rec(call=8, flags=2))
print("%s - a well-formed batch of 2 is accepted # wrote %d" % ("ok" if n == 160 else "not ok", n))
print("# pid %d" % os.getpid())
EOF
tap_import "$R/malformed.out" $?
got=$(magnetctl -j stream show open | python3 -c 'import json,sys; d=json.load(sys.stdin); d=d.get("stream",d); print(d["app_events"] - int(sys.argv[1]), d["app_rejected"])' "$uevents")
check_eq "stream counts 2 more accepted records and 9 refused batches" "2 9" "$got"

# ---- 3b. a full ring: application records lost and counted like events ----
check "stream create tiny (4K x 2 per CPU)" magnetctl stream create tiny subbuf-size 4K subbuf-count 2
python3 - "$M/tiny" >"$R/tiny.out" 2>&1 <<'EOF'
import os, struct, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY)
for b in range(5):
    now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    rec = struct.pack("=HHIQQII", 80, 5, 0, 99, 0, 0, 0) + \
        struct.pack("=QQqQiHHII", now - 10, now, 1, 1, 3, 0, 1, 0, 0)
    n = os.write(fd, rec * 100)
    print("batch %d: %d bytes accepted" % (b, n))
EOF
st=$(magnetctl -j stream show tiny | python3 -c 'import json,sys; d=json.load(sys.stdin); d=d.get("stream",d); print(d["app_events"], d["produced"], d["written"], d["lost"])')
read -r acc prod wr lost <<<"$st"
if [ "$acc" = 500 ] && [ "$prod" = 500 ] && [ $((wr + lost)) -eq 500 ] && [ "$lost" -gt 0 ]; then
	ok "a full ring: 500 APP records accepted, $wr written, $lost lost, produced = written + lost"
else
	not_ok "full ring accounting" "app_events produced written lost: $st; $(cat "$R/tiny.out")"
fi
magnetctl stream flush tiny
timeout 20 "$MAGNETCTL" record tiny -o "$R/tiny.trace" --duration 1 >/dev/null 2>&1
got=$(magnetctl -j dump "$R/tiny.trace" | python3 -c '
import json, sys
apps = lost = 0
for line in sys.stdin:
    r = json.loads(line)
    apps += r["name"] == "APP"
    lost += r.get("lost", {}).get("count", 0)
print(apps, lost)')
check_eq "the trace holds the written records and LOST records for the rest" "$wr $lost" "$got"

# ---- 4. deletion and unloading while the application runs -----------------
check "stream create gone" magnetctl stream create gone
tcp_sink_start sink4 5001 || bail_out "tcp_sink did not start"
# 900 writes, 20 ms apart: 18 s, so that the deletion surely falls inside
# the run even when each look at the stream takes a second (TCG, loaded)
bg app4 in_a env MAGNET_STREAM=$MFS/gone LD_PRELOAD="$PRELOAD" MAGNET_FLUSH_MS=10 \
	"$BIN/tcp_sender" -i 20 "$IP_B" 5001 900
# delete only once the application's records arrive (start-up under TCG
# on a loaded host can take longer than its whole run otherwise)
for i in $(seq 1 100); do
	n=$(magnetctl -j stream show gone | python3 -c 'import json,sys; d=json.load(sys.stdin); d=d.get("stream",d); print(d.get("app_events",0))')
	[ "${n:-0}" -gt 0 ] && break
	sleep 0.2
done
diag "records in the stream before its deletion: $n"
check "delete the stream while the application writes into it" magnetctl stream delete gone
check "rmmod magnet_net while the application runs" rmmod magnet_net
bg_wait app4 60
check_eq "the application keeps running and exits 0" 0 $?
bg_wait sink4 10
if grep -qE "magnet_preload: pid [0-9]+: .*undelivered=[1-9][0-9]* .*last_error=No such file or directory" "$(out app4)"; then
	ok "records after the deletion are counted as undelivered (ENOENT)"
else
	not_ok "undelivered count after deletion" "$(cat "$(out app4)")"
fi
diag "$(grep magnet_preload "$(out app4)")"
insmod "$MAGNET_MODDIR/magnet_net.ko" || not_ok "reload magnet_net"

check_dmesg_clean
done_testing
