#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# magnet_mm.ko in a real kernel: a process writes one byte to each of N
# fresh anonymous pages (N user write faults at those addresses), another
# read()s /dev/zero into N fresh pages (N kernel-mode write faults on user
# addresses, no kernel instruction pointer), and the page allocator's
# alloc/free events carry order, gfp flags, migrate type and node.  No
# field of any record may hold a kernel address.  The module is unloaded
# and loaded while a reader records.
MAGNET_MODULES="magnet magnet_mm"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
need_magnet
need_tools
[ -x "$MAGNET_TOOLS/proc_load" ] || skip_all "proc_load not built"
dmesg_mark
magnet_load || bail_out "cannot load the modules"

R=$MAGNET_RESULTS
N=64
EVENTS="fault_user fault_kernel page_alloc page_free"

n=$(magnetctl -j probe list | python3 -c '
import json, sys
ps = json.load(sys.stdin)
ps = ps["probes"] if isinstance(ps, dict) else ps
print(" ".join(sorted(p["name"] for p in ps if p.get("module") == "magnet_mm")))')
check_eq "magnet_mm registers its four probes" "fault_kernel fault_user page_alloc page_free" "$n"

check "stream create mm (1 MiB x 8)" magnetctl stream create mm subbuf-size 1M subbuf-count 8
# shellcheck disable=SC2086
check "enable the memory probes" magnetctl probe enable $EVENTS stream mm
bg rec "$MAGNETCTL" record mm -o "$R/mm.trace"
sleep 0.5
"$MAGNET_TOOLS/proc_load" touch "$N" >"$R/touch.out" 2>&1
check_eq "touch $N fresh pages" 0 $?
"$MAGNET_TOOLS/proc_load" kread "$N" >"$R/kread.out" 2>&1
check_eq "read /dev/zero into $N fresh pages" 0 $?
sleep 0.3
# shellcheck disable=SC2086
check "disable the memory probes" magnetctl probe disable $EVENTS
kill -INT "${BG_PID[rec]}"
bg_wait rec 20
check_eq "record stops cleanly" 0 $?

magnetctl -j dump "$R/mm.trace" >"$R/mm.jsonl"
python3 - "$R/mm.jsonl" "$R/touch.out" "$R/kread.out" "$N" >"$R/check.tap" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
def kv(path):
    return dict(w.split("=", 1) for w in open(path).read().split() if "=" in w)
t, k, N = kv(sys.argv[2]), kv(sys.argv[3]), int(sys.argv[4])
out = []
def ok(cond, what, why=""):
    out.append(("ok" if cond else "not ok") + " - " + what + ("" if cond else " # " + why))
W, U, P, I, A = 1, 2, 4, 8, 16
def faults(name, who):
    pid, base, ps = int(who["pid"]), int(who["base"], 16), int(who["page_size"])
    l = [r for r in recs if r["name"] == name and r["pid"] == pid]
    inside = [r for r in l if base <= r["fault"]["address"] < base + N * ps]
    return l, inside, {(r["fault"]["address"] - base) // ps for r in inside}
lost = sum(r["lost"]["count"] for r in recs if r["name"] == "LOST")
ok(lost == 0, "no events lost", "lost=%d" % lost)
l, inside, pages = faults("fault_user", t)
ok(len(pages) == N, "user faults on each of the %d pages (%d faults from pid %s)" % (N, len(l), t["pid"]), "pages=%d" % len(pages))
ok(all(r["fault"]["flags"] & (W | U | A) == W | U | A and r["fault"]["error_code"] & 6 == 6 for r in inside),
   "they are user-mode writes with the address", str([r["fault"] for r in inside][:2]))
ok(all(0 < r["fault"]["ip"] < 1 << 47 for r in l), "user faults carry a user instruction pointer")
ok(all(r["abstract_id"] == int(t["pid"]) for r in l), "abstract ID = the process")
l, inside, pages = faults("fault_kernel", k)
ok(len(pages) == N, "kernel-mode faults on each of the %d pages read into (%d faults)" % (N, len(l)), "pages=%d" % len(pages))
ok(all(r["fault"]["flags"] & (W | U | A) == W | A for r in inside), "they are kernel-mode writes to user addresses",
   str([r["fault"] for r in inside][:2]))
fk = [r for r in recs if r["name"] == "fault_kernel"]
ok(all(r["fault"]["ip"] == 0 for r in fk), "no kernel fault records an instruction pointer")
allf = [r for r in recs if r["name"] in ("fault_user", "fault_kernel")]
ok(all(r["fault"]["address"] < 1 << 47 if r["fault"]["flags"] & A else r["fault"]["address"] == 0 for r in allf),
   "fault addresses are user addresses, present only with F_ADDR")
pa = [r for r in recs if r["name"] == "page_alloc"]
pf = [r for r in recs if r["name"] == "page_free"]
ok(len(pa) >= N and len(pf) > 0, "page_alloc (%d) and page_free (%d) events" % (len(pa), len(pf)))
ok(all(r["page"]["order"] <= 10 and r["page"]["node"] >= 0 and 0 <= r["page"]["migratetype"] < 8 and r["page"]["gfp_flags"] != 0
       for r in pa if not r["page"]["flags"] & 1), "page_alloc: order, node, migrate type, gfp flags")
ok(any(r["page"]["order"] == 0 and r["pid"] == int(t["pid"]) for r in pa), "order-0 allocations in the faulting process")
ok(all(r["page"]["migratetype"] == -1 and r["page"]["gfp_flags"] == 0 and r["page"]["node"] >= 0 for r in pf), "page_free: order and node only")
bad = []
for r in recs:
    for key in ("fault", "page"):
        for f, v in r.get(key, {}).items():
            if isinstance(v, int) and v >= 1 << 63:
                bad.append((r["name"], f, hex(v)))
ok(not bad, "no kernel address in any memory record", str(bad[:3]))
print("# %d user faults, %d kernel faults, %d page allocs, %d page frees" %
      (len([r for r in allf if r["name"] == "fault_user"]), len(fk), len(pa), len(pf)))
print("\n".join(out))
PY
tap_import "$R/check.tap" $?

# load/unload while a reader records, with the hooks attached
check "enable page_alloc and fault_user again" magnetctl probe enable page_alloc fault_user stream mm
bg rec2 "$MAGNETCTL" record mm -o "$R/mm2.trace"
sleep 0.5
"$MAGNET_TOOLS/proc_load" touch 16 >/dev/null
check "rmmod magnet_mm while recording" rmmod magnet_mm
check "insmod magnet_mm while recording" insmod "$MAGNET_MODDIR/magnet_mm.ko"
check "enable the new points" magnetctl probe enable fault_user page_free stream mm
"$MAGNET_TOOLS/proc_load" touch 16 >/dev/null
check "rmmod again" rmmod magnet_mm
check "insmod again" insmod "$MAGNET_MODDIR/magnet_mm.ko"
kill -INT "${BG_PID[rec2]}"
bg_wait rec2 20
check_eq "the reader ends cleanly" 0 $?

check "stream delete mm" magnetctl stream delete mm
check "modules unload" magnet_unload
check_dmesg_clean
done_testing
