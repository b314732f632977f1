#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The control plane and bad input in a real kernel: status, streams and
# probes through magnetctl, every rejected request with the kernel's extack
# message and nothing half-done, a non-root caller (reads allowed; changes,
# filters, synthesizers, run-time kprobe symbols and the probes multicast
# group refused: docs/THREATS.md), a stream deleted while
# it is read, probe modules unloaded under a blocked reader, corrupt
# trace files given to dump, and the cap on all streams' rings together
# (magnet.max_rings_mb).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
need_magnet
dmesg_mark
magnet_load || bail_out "cannot load the modules"
R=$MAGNET_RESULTS

streams() {
	magnetctl -j stream list | python3 -c '
import json, sys
d = json.load(sys.stdin)
d = d["streams"] if isinstance(d, dict) else d
print(" ".join(sorted(s["name"] for s in d)))'
}

check "status" magnetctl status
ver=$(magnetctl -j status | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["abi"])')
check_eq "status -j reports ABI 1" 1 "$ver"
grep -q "^magnet " /sys/kernel/debug/magnet/status && ok "status file" || not_ok "status file"

check "stream create s1" magnetctl stream create s1
path=$(magnetctl -j stream show s1 | python3 -c 'import json,sys; d=json.load(sys.stdin); d=d.get("stream",d); print(d["path"])')
check_eq "stream path" /sys/kernel/debug/magnet/s1 "$path"
[ -r "$path" ] && ok "stream file exists" || not_ok "stream file exists"

# bash completion names the live objects (tests/install/test_completion.sh
# checks the grammar without a kernel)
_MAGNETCTL=$MAGNETCTL
. "$MAGNET_REPO/magnetctl/completion/magnetctl.bash"
compl() {	# compl WORDS...: the completions of the last word, sorted
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMPREPLY=()
	_magnetctl
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}
check_eq "completion: stream names" "s1" "$(compl magnetctl stream delete "")"
check_eq "completion: probe names for enable" "dev_recv dev_send" "$(compl magnetctl probe enable dev)"
check_eq "completion: stream after enable ... stream" "s1" "$(compl magnetctl probe enable dev_send stream "")"
check_eq "completion: record's stream" "s1" "$(compl magnetctl -j record s)"

expect_fail "duplicate stream" 2 "already exists" magnetctl stream create s1
expect_fail "sub-buffer size not a multiple of 4096" 2 "multiple of 4096" magnetctl stream create s2 subbuf-size 5000
expect_fail "one sub-buffer" 2 "between 2 and 64" magnetctl stream create s2 subbuf-count 1
expect_fail "absurd stream size" 2 "MiB per CPU" magnetctl stream create s2 subbuf-size 16M subbuf-count 64
expect_fail "bad stream name" 2 "bad stream name" magnetctl stream create 'a/b'
expect_fail "reserved stream name" 2 "bad stream name" magnetctl stream create status
expect_fail "size that is not a number" 1 "abc" magnetctl stream create s2 subbuf-size abc
check_eq "failed creates leave nothing behind" "s1" "$(streams)"
expect_fail "unknown probe (exit 5: no such object)" 5 "no probe named 'nosuch'" magnetctl probe enable nosuch stream s1
expect_fail "unknown probe ID" 5 "no probe with ID 999" magnetctl probe enable 999 stream s1
expect_fail "unknown stream" 5 "no stream named 'nosuch'" magnetctl probe enable tcp_send stream nosuch
en=$(magnetctl -j probe list | python3 -c '
import json, sys
d = json.load(sys.stdin)
d = d["probes"] if isinstance(d, dict) else d
print(sum(1 for p in d if p["enabled"]))')
check_eq "failed enables leave every probe disabled" 0 "$en"
expect_fail "delete unknown stream" 5 "no stream named" magnetctl stream delete nosuch
expect_fail "unknown object" 1 "frobnicate" magnetctl frobnicate list

check "enable tcp_send into s1" magnetctl probe enable tcp_send stream s1
check "enable is idempotent" magnetctl probe enable tcp_send stream s1
check "stream create s2" magnetctl stream create s2
expect_fail "a probe feeds one stream at a time" 2 "enabled into stream 's1'" magnetctl probe enable tcp_send stream s2
out=$(magnetctl -j probe enable udp_send nosuch stream s1 2>&1)
rc=$?
check_eq "enable stops at the first refused probe (exit 5: no such probe)" 5 "$rc"
check_eq "-j: one JSON error naming the probe and what was enabled before it" \
	"{\"error\":\"probe enable nosuch (stopped there, after 1 probe(s) enabled): no probe named 'nosuch'\"}" "$out"
check "disable udp_send" magnetctl probe disable udp_send

# a non-root caller: reads allowed, changes refused, stream files closed
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"; }
check "non-root may read status" nobody "$MAGNETCTL" status
expect_fail "non-root cannot create streams (exit 6), told CAP_NET_ADMIN grants it" 6 "Operation not permitted: needs CAP_NET_ADMIN" nobody "$MAGNETCTL" stream create s3
refused_eacces "non-root cannot read a stream (EACCES)" nobody cat "$path"
expect_fail "non-root record: exit 6, naming the mount options that grant it" 6 \
	"Permission denied: .*uid=, gid= or mode=" nobody "$MAGNETCTL" record s1 -o /tmp/magnet-nobody.trace --duration 1

# what a caller without CAP_NET_ADMIN may read (docs/THREATS.md): not
# filters, not synthesizers, not the symbols of run-time kprobes, not the
# probes group; the status, streams, correlators and the catalog it may
GR=(python3 "$MAGNET_REPO/tests/tools/genl_req.py")
EPF="filters name the processes, cgroups and sockets under watch: reading them needs CAP_NET_ADMIN"
EPS="synthesizers single out processes, cgroups and sockets: reading them needs CAP_NET_ADMIN"
check "filter add fp pid 1 drop" magnetctl filter add fp pid 1 drop
check "synth add sp: tcp_send by pid" magnetctl synth add sp probe tcp_send by pid value size period 1s stream s2
check "probe add kw kprobe vfs_write" magnetctl probe add kw kprobe vfs_write
check "correlate add cc: udp_send,ip_send" magnetctl correlate add cc chain udp_send,ip_send window 10ms stream s2
check_eq "completion: filter names" "fp" "$(compl magnetctl filter del "")"
check_eq "completion: synthesizer names" "sp values" "$(compl magnetctl synth show "")"
check_eq "completion: correlator names" "cc" "$(compl magnetctl correlate show "")"
check_eq "completion: the run-time kprobe among the probe names" "kw" "$(compl magnetctl probe del k)"
check "correlate del cc" magnetctl correlate del cc
check_eq "root: FILTER_GET" "errno=0 msg=" "$("${GR[@]}" FILTER_GET FILTER=nest:NAME=str:fp)"
check_eq "non-root: FILTER_GET refused (EPERM) with the reason" "errno=1 msg=$EPF" \
	"$(nobody "${GR[@]}" FILTER_GET FILTER=nest:NAME=str:fp)"
expect_fail "non-root: filter list (dump) refused with the reason (exit 6)" 6 "reading them needs CAP_NET_ADMIN" \
	nobody "$MAGNETCTL" filter list
check_eq "root: SYNTH_GET values" "errno=2 msg=synthesizer 'sp' has seen no event of that key" \
	"$("${GR[@]}" SYNTH_GET SYNTH=nest:NAME=str:sp,VALUES=flag:,KEY_PID=u32:4194305)"
check_eq "non-root: SYNTH_GET values refused (EPERM) with the reason" "errno=1 msg=$EPS" \
	"$(nobody "${GR[@]}" SYNTH_GET SYNTH=nest:NAME=str:sp,VALUES=flag:,KEY_PID=u32:4194305)"
check_eq "non-root: SYNTH_GET of the definition refused too" "errno=1 msg=$EPS" \
	"$(nobody "${GR[@]}" SYNTH_GET SYNTH=nest:NAME=str:sp)"
expect_fail "non-root: synth list (dump) refused" 6 "reading them needs CAP_NET_ADMIN" \
	nobody "$MAGNETCTL" synth list
expect_fail "non-root: synth values (dump) refused" 6 "reading them needs CAP_NET_ADMIN" \
	nobody "$MAGNETCTL" synth show sp values
# hook of kw and of tcp_send, as seen by "$@" ("-": none)
hooks() {
	"$@" "$MAGNETCTL" -j probe list | python3 -c '
import json, sys
d = json.load(sys.stdin)
d = d["probes"] if isinstance(d, dict) else d
h = {p["name"]: p.get("hook", "") for p in d}
print(h.get("kw", "?") or "-", h.get("tcp_send", "?") or "-")'
}
rh=$(hooks)
nh=$(hooks nobody)
check_eq "root: the run-time kprobe's hook in the probe list" "kprobe:vfs_write" "${rh%% *}"
check_eq "non-root: the probe list without the run-time kprobe's symbol, with the probe modules' hooks" \
	"- ${rh#* }" "$nh"
out=$(nobody "${GR[@]}" PROBE_GET PROBE_NAME=str:kw)
check_eq "non-root: PROBE_GET of the run-time kprobe answers (without its hook)" "errno=0 msg=" "$out"
check_eq "non-root: joining the probes multicast group refused (EPERM)" "join=EPERM" \
	"$(nobody python3 "$MAGNET_REPO/tests/tools/genl_mcast.py")"
check_eq "root joins it" "join=OK" "$(python3 "$MAGNET_REPO/tests/tools/genl_mcast.py")"
check "non-root still lists streams" nobody "$MAGNETCTL" stream list
check "non-root still lists correlators" nobody "$MAGNETCTL" correlate list
check "probe del kw" magnetctl probe del kw
check "synth del sp" magnetctl synth del sp
check "filter del fp" magnetctl filter del fp

# reader blocked in read(): probe modules unload, stream deletion ends it
cat >"$R/reader.py" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
n = 0
print("open", flush=True)
while True:
    b = os.read(fd, 65536)
    if not b:
        break
    n += len(b)
print("eof bytes=%d" % n, flush=True)
PY
bg reader python3 "$R/reader.py" "$path"
wait_line "$(out reader)" '^open' 10
sleep 1	# now it sits in read() after SYSINFO and EVENTDEF were taken
pstate=$(awk '{print $3}' "/proc/${BG_PID[reader]}/stat")
check_eq "reader is blocked in read()" S "$pstate"
# without the magnetfs mount on /sys/kernel/magnet, which alone would refuse rmmod
check "umount magnetfs" magnetfs_umount_all
if rmmod magnet 2>/dev/null; then not_ok "core stays while a stream is open"; else ok "core stays while a stream is open (rmmod refused)"; fi
check "probe module unloads under a blocked reader" rmmod magnet_net
_magnet_loaded=(magnet)
kill -0 "${BG_PID[reader]}" 2>/dev/null && ok "reader still waiting" || not_ok "reader still waiting"
check "stream delete while read" magnetctl stream delete s1
bg_wait reader 10
check_eq "reader gets end of file after delete" 0 $?
grep -q '^eof' "$(out reader)" && ok "reader saw EOF" || not_ok "reader saw EOF" "$(cat "$(out reader)")"
check "reload probes" insmod "$MAGNET_MODDIR/magnet_net.ko"
_magnet_loaded=(magnet magnet_net)

# dump: corrupt and truncated traces
check "stream create s3" magnetctl stream create s3
check "enable ip_recv into s3" magnetctl probe enable ip_recv stream s3
ping -c 3 -i 0.2 127.0.0.1 >/dev/null 2>&1
check "disable" magnetctl probe disable ip_recv
magnetctl record s3 -o "$R/good.trace" --duration 1 2>/dev/null
check "dump a good trace" magnetctl dump "$R/good.trace"
size=$(stat -c %s "$R/good.trace")
head -c $((size - 5)) "$R/good.trace" >"$R/trunc.trace"
expect_fail "dump of a truncated trace" 3 "trunc|offset" magnetctl dump "$R/trunc.trace"
head -c 1000 /dev/urandom >"$R/junk.trace"
expect_fail "dump of a non-MAGNET file" 3 "." magnetctl dump "$R/junk.trace"
: >"$R/empty.trace"
expect_fail "dump of an empty file" 3 "." magnetctl dump "$R/empty.trace"
expect_fail "dump of a missing file" 3 "nosuchfile" magnetctl dump "$R/nosuchfile"

check "stream delete s3" magnetctl stream delete s3

# the rings of all streams together stay under magnet.max_rings_mb
P=/sys/module/magnet/parameters/max_rings_mb
check "stream delete s2" magnetctl stream delete s2
check_eq "max_rings_mb is 0 (half of RAM) by default" 0 "$(cat $P)"
echo 8 >$P
# subbuf 512K x 2 per possible CPU: 1 MiB per CPU
mb=$(possible_cpus)
check "cap 8 MiB: stream create c1 ($mb MiB)" magnetctl stream create c1 subbuf-size 512K subbuf-count 2
n=1
while [ $(( (n + 1) * mb )) -le 8 ]; do
	n=$((n + 1))
	check "cap 8 MiB: stream create c$n (streams then hold $((n * mb)) MiB)" \
		magnetctl stream create "c$n" subbuf-size 512K subbuf-count 2
done
expect_fail "cap 8 MiB: one stream more is refused with the totals" 2 \
	"stream would take $mb MiB of rings, streams hold $((n * mb)) MiB, the limit is 8 MiB \(magnet.max_rings_mb\)" \
	magnetctl stream create cx subbuf-size 512K subbuf-count 2
check "a deleted stream gives its share back" magnetctl stream delete c1
check "then the stream fits" magnetctl stream create cx subbuf-size 512K subbuf-count 2
echo 0 >$P
for i in $(seq 2 $n) x; do magnetctl stream delete "c$i"; done

# Each ack carries its own request's extack message: the kernel builds it
# after the handler, outside genl_mutex, while other requests run (one
# buffer shared by every request once handed an unprivileged PROBE_GET
# root's KPROBE_NEW message, or changed under the ack's copy)
out=$(python3 "$MAGNET_REPO/tests/tools/extack_race.py" 8 2>&1)
rc=$?
diag "$out"
[ $rc -eq 0 ] && grep -q "^total requests=[1-9][0-9]* wrong=0 leaked=0$" <<<"$out" &&
	ok "concurrent requests each get their own message ($(tail -n 1 <<<"$out"))" ||
	not_ok "concurrent requests each get their own message" "exit $rc: $out"
check "modules unload" magnet_unload
check_dmesg_clean
done_testing
