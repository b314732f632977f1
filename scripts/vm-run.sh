#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run a guest test script inside a real Debian kernel booted with virtme-ng.
#
#   scripts/vm-run.sh [-o DIR] [-t SECONDS] [-m MEM] [-c CPUS] KVER|all SCRIPT [ARGS...]
#
# Boots /boot/vmlinuz-KVER (TCG, 9p root: the host filesystem read-only,
# the VM has its own /tmp), runs SCRIPT [ARGS...] as root from the repo
# root, and checks the kernel log afterwards.  KVER "all" runs every
# /boot/vmlinuz-* in turn.  A KVER with no /boot/vmlinuz-KVER that is the
# release of the debug-kernel tier's kernel (scripts/debug-kernel.sh)
# boots that kernel's bzImage from its cache, with "no5lvl" added to the
# command line (its 5-level paging does not boot under TCG).
#
#   -o DIR      results directory (default build/vm-results/KVER/<script
#               name without .sh>); writable in the guest, passed to the
#               script as $MAGNET_RESULTS.
#   -t SECONDS  time limit of the guest script (default $MAGNET_VM_TIMEOUT
#               or 600); the VM as a whole gets 120 s more for boot and
#               log collection.
#   -m MEM      guest memory (default 2G).     -c CPUS  vCPUs (default 2).
#
# The guest script sees MAGNET_RESULTS, MAGNET_REPO (repo root), MAGNET_KVER
# and every MAGNET_* variable (and MAGNETCTL) of the caller's environment,
# e.g. MAGNET_MODDIR, MAGNET_TOOLS.  MAGNET_VM_APPEND is added to the
# guest kernel's command line (e.g. MAGNET_VM_APPEND=debugfs=off);
# MAGNET_VM_QEMU_OPTS to qemu's (e.g. "-accel tcg,thread=single": every
# vCPU in one host thread, tests/vm/README.md "Text patching under TCG").
# It should use tests/vm/lib.sh.  After it, the guest saves dmesg into the
# results dir; the host fails the run if the log has an oops, a warning, a
# lockup, ... (patterns: tests/vm/dmesg-patterns.txt; lines matching the
# extended regex $MAGNET_DMESG_IGNORE are ignored).
#
# Results dir: output.log (script output), console.log (what vng printed
# on stdout), kernel-console.log (the serial console at loglevel 5 plus
# vng's own messages: has the oops when the kernel panics), exit-code,
# dmesg.txt, dmesg-live.txt, elapsed (seconds), vm-cmd.sh (what the guest
# ran: environment and command).
#
# The guest's TSC is marked reliable (tsc=reliable): under TCG on a busy
# host the clocksource watchdog finds it skewed against the HPET (a vCPU
# descheduled between the two reads), marks it unstable and flips
# sched_clock's static key, a text patch that another vCPU's stale
# translation can hit as an "Oops: int3" in sched_clock_cpu (seen in a
# 6.12 guest beside another guest; tests/vm/README.md, "Text patching
# under TCG").
#
# A guest whose kernel never got as far as starting the script (a crash
# at boot, before any module is loaded: emulated 6.12 guests rarely take
# an int3 oops in sched_clock_cpu there) is booted once more; the first
# attempt's consoles are kept as *.boot1.log and the retry is reported.
#
# Prints "ok - KVER TEST" or "not ok - KVER TEST" (with "# SKIP" for exit 4).
# Exit status: the guest script's (0 pass, 1 fail, 4 skip), 1 if the kernel
# log is dirty or the guest never finished, 2 for usage errors.
set -u

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
	echo "usage: $0 [-o DIR] [-t SECONDS] [-m MEM] [-c CPUS] KVER|all SCRIPT [ARGS...]" >&2
	echo "(details in the comment at the top of $0)" >&2
	exit 2
}

outdir=
timeout_s=${MAGNET_VM_TIMEOUT:-600}
mem=2G
cpus=2
while getopts "o:t:m:c:h" opt; do
	case $opt in
	o) outdir=$OPTARG ;;
	t) timeout_s=$OPTARG ;;
	m) mem=$OPTARG ;;
	c) cpus=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || usage
kver=$1
script=$2
shift 2

if [ "$kver" = all ]; then
	[ -z "$outdir" ] || { echo "vm-run: -o cannot be used with 'all'" >&2; exit 2; }
	worst=0
	for k in /boot/vmlinuz-*; do
		k=${k#/boot/vmlinuz-}
		"${BASH_SOURCE[0]}" -t "$timeout_s" -m "$mem" -c "$cpus" "$k" "$script" "$@"
		rc=$?
		# fail (non-0/4) beats skip (4) beats pass (0)
		if [ $rc -ne 0 ] && { [ $worst -eq 0 ] || [ $worst -eq 4 ]; }; then
			worst=$rc
		fi
	done
	exit $worst
fi

kernel=/boot/vmlinuz-$kver
extra_append=
if [ ! -r "$kernel" ] && dbg=$("$repo/scripts/debug-kernel.sh" --dir-of "$kver" 2>/dev/null); then
	kernel=$dbg/linux/arch/x86/boot/bzImage
	extra_append=" no5lvl"
fi
[ -r "$kernel" ] || { echo "vm-run: no kernel $kernel" >&2; exit 2; }
[ -f "$script" ] || { echo "vm-run: no guest script $script" >&2; exit 2; }
command -v vng >/dev/null || { echo "vm-run: vng (virtme-ng) not found" >&2; exit 2; }
script=$(realpath "$script")
name=$(basename "$script" .sh)

if [ -z "$outdir" ]; then
	outdir=$repo/build/vm-results/$kver/$name
	rm -rf "$outdir"
fi
mkdir -p "$outdir" || exit 2
outdir=$(realpath "$outdir")
rm -f "$outdir"/{output.log,console.log,kernel-console.log,exit-code,dmesg.txt,dmesg-live.txt,elapsed,vm-cmd.sh} \
	"$outdir"/{kernel-console,console}.boot1.log

# The guest mounts file systems of its own over parts of the host's
# (virtme-ng's init: /tmp, /run, /var/tmp, /var/log, /var/cache, /var/lib/
# apt and others under /var): a checkout under one of them (a CI clone in
# /tmp, a user's in /var/tmp) is handed in read-only, and the results dir,
# which would be hidden there, is mounted at a guest path of its own.
repo_dir=()
guest_out=$outdir
case $repo/ in
/tmp/* | /run/* | /var/*)
	repo_dir=(--rodir "$repo")
	guest_out=/tmp/magnet-vm-results
	;;
esac

# The command the guest runs: env + guest-run.sh + script + args, quoted.
envs=(MAGNET_RESULTS="$guest_out" MAGNET_REPO="$repo" MAGNET_KVER="$kver")
for v in $(compgen -e); do
	case $v in
	MAGNET_RESULTS | MAGNET_REPO | MAGNET_KVER | MAGNET_VM_TIMEOUT) ;;
	MAGNET_* | MAGNETCTL) envs+=("$v=${!v}") ;;
	esac
done
# Written to a file in the shared results dir rather than passed on the
# kernel command line (which vng uses for --exec and which is limited to
# 2 KiB).
{
	echo "# generated by scripts/vm-run.sh; runs inside the guest"
	printf 'export %q\n' "${envs[@]}"
	printf 'exec bash %q %q %q' "$repo/tests/vm/guest-run.sh" "$timeout_s" "$script"
	[ $# -eq 0 ] || printf ' %q' "$@"
	echo
} >"$outdir/vm-cmd.sh"
cmd="bash $(printf %q "$guest_out/vm-cmd.sh")"

echo "# vm-run: $kver $name (timeout ${timeout_s}s, results $outdir)"
start=$(date +%s)
for attempt in 1 2; do
	# timeout(1) signals its whole process group, so qemu dies with vng.
	# stdin is /dev/null: qemu must not fight the terminal.  --verbose
	# sends the kernel's serial console to vng's stderr: kept in
	# kernel-console.log.
	timeout --kill-after=15 $((timeout_s + 120)) \
		vng -r "$kernel" --disable-kvm --force-9p --cpus "$cpus" --memory "$mem" \
		--verbose --append "loglevel=5 tsc=reliable$extra_append${MAGNET_VM_APPEND:+ $MAGNET_VM_APPEND}" "${repo_dir[@]}" \
		${MAGNET_VM_QEMU_OPTS:+"--qemu-opts=$MAGNET_VM_QEMU_OPTS"} \
		--rwdir "$guest_out=$outdir" --cwd "$repo" --exec "$cmd" </dev/null \
		2>"$outdir/kernel-console.log" | tee "$outdir/console.log"
	vng_rc=${PIPESTATUS[0]}
	# guest-run.sh logs "magnet-vm: start" to the console before the script
	if [ -s "$outdir/exit-code" ] || [ -e "$outdir/output.log" ] ||
		grep -q 'magnet-vm: start' "$outdir/kernel-console.log" || [ $attempt -eq 2 ]; then
		break
	fi
	echo "# vm-run: the guest never started $name (vng exit $vng_rc; kernel console in kernel-console.boot1.log): booting once more"
	grep -m 3 -E '] (RIP|Oops|BUG|Kernel panic)' "$outdir/kernel-console.log" | sed 's/^/#   /'
	mv "$outdir/kernel-console.log" "$outdir/kernel-console.boot1.log"
	mv "$outdir/console.log" "$outdir/console.boot1.log"
	rm -f "$outdir/dmesg-live.txt"
done
elapsed=$(($(date +%s) - start))
echo "$elapsed" >"$outdir/elapsed"

fail_reasons=()
if [ -s "$outdir/exit-code" ]; then
	rc=$(cat "$outdir/exit-code")
else
	rc=1
	if [ "$vng_rc" -eq 124 ] || [ "$vng_rc" -eq 137 ]; then
		fail_reasons+=("VM killed after $((timeout_s + 120))s")
	else
		fail_reasons+=("guest did not finish (vng exit $vng_rc: kernel panic or VM failure?)")
	fi
fi

# Scan the kernel log: the final dump if the guest wrote it, else the
# serial console (has the last words of a crashed kernel); then the log
# streamed while the test ran, which still holds what a long or noisy
# run pushed out of the kernel's log buffer before the final dump.
log=$outdir/dmesg.txt
[ -s "$log" ] || log=$outdir/kernel-console.log
dirty=
if [ ! -s "$log" ]; then
	fail_reasons+=("no kernel log saved")
else
	hits=$("$repo/tests/vm/log-reports.sh" -n "$log")
	if [ -z "$hits" ] && [ -s "$outdir/dmesg-live.txt" ]; then
		hits=$("$repo/tests/vm/log-reports.sh" -n "$outdir/dmesg-live.txt")
		[ -z "$hits" ] || log=$outdir/dmesg-live.txt
	fi
	if [ -n "$hits" ]; then
		dirty=1
		fail_reasons+=("kernel log is dirty ($(wc -l <<<"$hits") suspicious lines in $(basename "$log"))")
	fi
fi

for r in "${fail_reasons[@]}"; do
	echo "# vm-run: $r"
done
if [ -n "$dirty" ]; then
	echo "# ---- offending kernel log lines ----"
	head -n 40 <<<"$hits" | sed 's/^/# /'
	first=$(head -n 1 <<<"$hits" | cut -d: -f1)
	first=$((first > 5 ? first - 5 : 1))
	echo "# ---- kernel log from line $first ----"
	tail -n +"$first" "$log" | head -n 60 | sed 's/^/# /'
	echo "# ----"
fi
if [ ! -s "$outdir/exit-code" ] && [ -z "$dirty" ]; then
	echo "# ---- last lines of the kernel console ----"
	tail -n 40 "$outdir/kernel-console.log" | sed 's/^/# /'
fi

if [ -n "$dirty" ] && { [ "$rc" -eq 0 ] || [ "$rc" -eq 4 ]; }; then
	rc=1
fi
echo "# vm-run: $kver $name: exit $rc, ${elapsed}s (boot + run)"
case $rc in
0) echo "ok - $kver $name" ;;
4) echo "ok - $kver $name # SKIP" ;;
*) echo "not ok - $kver $name" ;;
esac
exit "$rc"
