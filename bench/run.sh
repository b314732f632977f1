#!/usr/bin/env bash
# MAGNET benchmarks, one command:
#
#   ./bench/run.sh [--quick|--full] [KVER|all]
#
# Installs what it needs (scripts/install-deps.sh, bench/install.sh),
# builds magnetctl (in build/bench, a build tree of its own) and the
# modules for KVER, boots KVER in a VM (scripts/vm-run.sh: TCG, 2 vCPUs,
# 2 GiB) and runs bench/guest.sh there, which writes CSV files into
# bench/results/KVER/; then bench/report.py turns every
# bench/results/*/ into docs/benchmarks.md and docs/img/bench-*.png.
#
# --quick (default): one run of each configuration (three, interleaved, in
# the perturbation part), short runs, about 8 minutes for one kernel on an
# idle host (more than 15 on a busy one).  --full: >= 5 repetitions of
# every configuration (12 of the perturbation part, 3 of the lossless
# search), about 80 minutes per kernel.  --lttng: also build lttng-modules
# (bench/lttng-build.sh, 10-20 minutes per kernel: a clone of stable-2.13,
# or without network Debian's lttng-modules-dkms source, which builds for
# 6.1 but not 6.12) and add LTTng to the perturbation experiment; a
# previous build in build/bench/lttng/KVER is used without the flag.
# KVER defaults to 6.12.95+deb12-amd64 if installed, else the newest
# kernel of scripts/kernels.sh; "all" runs every kernel there.
#
# These are measurements, never tests: nothing here passes or fails on a
# number.  MAGNET_BENCH_PARTS="micro perturb drain loss" runs a subset
# (parts: see bench/guest.sh): its CSV files and raw outputs replace those
# of the same parts in bench/results/KVER/, the other parts' results stay,
# and its log and VM description go to output-PARTS.log and
# env-PARTS.txt.  MAGNET_BENCH_RESULTS=DIR puts the results in DIR/KVER/
# instead and the report in DIR/benchmarks.md (and DIR/img/): a trial run
# that leaves bench/results/ and docs/ alone.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
mode=quick
kver=
lttng=
for a; do
	case $a in
	--quick) mode=quick ;;
	--full) mode=full ;;
	--lttng) lttng=1 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
	-*) echo "usage: $0 [--quick|--full] [--lttng] [KVER|all]" >&2; exit 2 ;;
	*) kver=$a ;;
	esac
done

./scripts/install-deps.sh
./bench/install.sh

kernels=$(./scripts/kernels.sh)
if [ -z "$kver" ]; then
	if grep -qx '6.12.95+deb12-amd64' <<<"$kernels"; then
		kver=6.12.95+deb12-amd64
	else
		kver=$(tail -1 <<<"$kernels")
	fi
fi
[ "$kver" = all ] && kvers=$kernels || kvers=$kver

# A private user-space build: the shared build/ may be rebuilt by someone
# else while the VM runs.
cmake -S . -B build/bench -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/bench -j2 --target magnetctl stream_drain udp_flood udp_sink >/dev/null
export MAGNETCTL=$top/build/bench/magnetctl/magnetctl
export MAGNET_TOOLS=$top/build/bench/tests/tools
export MAGNET_BENCH_MODE=$mode
[ "$mode" = full ] && limit=7200 || limit=1800
results=${MAGNET_BENCH_RESULTS:-$top/bench/results}
mkdir -p "$results"
results=$(cd "$results" && pwd)
if [ "$results" = "$top/bench/results" ]; then
	doc=$top/docs/benchmarks.md
else
	doc=$results/benchmarks.md
fi

rc=0
for k in $kvers; do
	./scripts/build-modules.sh "$k" >/dev/null
	# a copy of the modules: the shared build/modules may be rebuilt meanwhile
	mods=$top/build/bench/modules/$k
	mkdir -p "$mods"
	cp "$top/build/modules/$k"/*.ko "$mods/"
	lt=$top/build/bench/lttng/$k
	if [ -n "$lttng" ] && ! ls "$lt"/*.ko >/dev/null 2>&1; then
		./bench/lttng-build.sh "$k" || echo "bench: no LTTng for $k"
	fi
	if ls "$lt"/*.ko >/dev/null 2>&1; then
		export MAGNET_LTTNG_MODDIR=$lt
	else
		unset MAGNET_LTTNG_MODDIR
	fi
	res=$results/$k
	if [ -n "${MAGNET_BENCH_PARTS:-}" ]; then
		# a subset: run aside, then merge into the kernel's results
		out=$top/build/bench/parts/$k
		rm -rf "$out"
	else
		out=$res
		rm -rf "$out"
	fi
	mkdir -p "$out"
	echo "bench: $k ($mode${MAGNET_BENCH_PARTS:+, parts: $MAGNET_BENCH_PARTS}), results in $res"
	# the host's load before and after: the VM's numbers are only as
	# quiet as the machine that emulates it
	{ echo "start=$(date -u +%FT%TZ) nproc=$(nproc) $(uptime)"; } >"$out/host-load.txt"
	MAGNET_MODDIR=$mods ./scripts/vm-run.sh -o "$out" -t "$limit" "$k" bench/guest.sh || rc=1
	{ echo "end=$(date -u +%FT%TZ) $(uptime)"; } >>"$out/host-load.txt"
	if [ "$out" != "$res" ]; then
		tag=$(tr ' ' '-' <<<"$MAGNET_BENCH_PARTS")
		mkdir -p "$res/raw"
		cp "$out"/*.csv "$res/" 2>/dev/null || true
		cp -r "$out/raw/." "$res/raw/" 2>/dev/null || true
		for f in output.log env.txt host-load.txt; do
			[ -f "$out/$f" ] && cp "$out/$f" "$res/${f%.*}-$tag.${f##*.}"
		done
	fi
done
python3 bench/report.py --results "$results" --doc "$doc"
echo "bench: $doc written"
exit $rc
