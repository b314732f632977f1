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
mkdir -p build
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >build/cmake.log 2>&1
cmake --build build -j"$(nproc)" >build/build.log 2>&1 || { tail -n 30 build/build.log; exit 1; }
kver=${1:-$(MAGNET_RT_KERNELS=none ./scripts/kernels.sh | tail -n 1)}
./scripts/build-modules.sh "$kver" >/dev/null
exec ./scripts/vm-run.sh "$kver" scripts/demo-guest.sh
