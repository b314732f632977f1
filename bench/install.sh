#!/usr/bin/env bash
# Installs what bench/run.sh needs on top of scripts/install-deps.sh: the
# tools MAGNET is compared with (tcpdump, bpftrace), perf (part inflow) and gnuplot for the
# plots, lttng-tools (used only if bench/lttng-build.sh built LTTng's
# kernel modules).  Idempotent.
set -euo pipefail
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
need=()
for p in tcpdump:tcpdump bpftrace:bpftrace perf:linux-perf gnuplot:gnuplot-nox lttng:lttng-tools; do
	command -v "${p%%:*}" >/dev/null || need+=("${p#*:}")
done
[ ${#need[@]} -eq 0 ] && exit 0
export DEBIAN_FRONTEND=noninteractive
# another apt may be running (shared machine): wait for its lock
for i in $(seq 1 60); do
	$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null && exit 0
	$SUDO apt-get update -qq || true
	sleep 10
done
echo "bench/install.sh: could not install ${need[*]}" >&2
exit 1
