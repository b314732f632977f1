#!/usr/bin/env bash
# MAGNET's demo, from a fresh machine: installs what it needs, builds
# MAGNET, boots the newest installed kernel in a VM (virtme-ng), loads the
# modules, traces a TCP sender (10 KB every 20 ms) and an iperf3 UDP run
# between two network namespaces, and prints what each layer of the stack
# saw.  The trace is left in build/vm-results/<kernel>/demo-guest/.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
./scripts/install-deps.sh
# MAGNET_BUILD: the build directory (default build/; scripts/test.sh runs
# the demo with its Release build, build/release)
build=${MAGNET_BUILD:-$top/build}
export MAGNET_BUILD=$build
mkdir -p "$build"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >"$build/demo-cmake.log" 2>&1
cmake --build "$build" -j"$(nproc)" >"$build/demo-build.log" 2>&1 ||
	{ tail -n 30 "$build/demo-build.log"; exit 1; }
kver=${1:-$(MAGNET_RT_KERNELS=none ./scripts/kernels.sh | tail -n 1)}
# W=1 as scripts/test.sh builds them, so that its build is reused
./scripts/build-modules.sh "$kver" W=1 >/dev/null
export MAGNET_MODDIR=$top/build/modules/$kver
exec ./scripts/vm-run.sh "$kver" scripts/demo-guest.sh
