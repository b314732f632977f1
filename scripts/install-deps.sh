#!/usr/bin/env bash
# Installs everything MAGNET needs to build and to test in real kernels:
# compilers and libraries, Debian's 6.1 kernel and headers, 6.12 from
# bookworm-backports, the PREEMPT_RT flavours of both (linux-image-rt-amd64:
# 6.1-rt from bookworm, 6.12-rt from bookworm-backports), qemu and a pinned
# virtme-ng, and what the debug-kernel tier (scripts/debug-kernel.sh)
# builds its kernel from: linux-source-6.12 and the kernel build's tools;
# dkms (scripts/dkms-build.sh, tests/vm/t_dkms.sh).
# Idempotent.
set -euo pipefail

VNG_VERSION=1.42
PERFETTO_VERSION=0.59.1

# The one release it supports is Debian 12 (bookworm): the kernels, their
# headers and bookworm-backports come from there.  Anywhere else it says so
# and stops before changing anything (MAGNET_SKIP_DEPS=1: install the
# packages below by hand and go on).
rel=$( . /etc/os-release 2>/dev/null; echo "${ID:-?} ${VERSION_CODENAME:-?}")
if [ "$rel" != "debian bookworm" ]; then
	pretty=$( . /etc/os-release 2>/dev/null; echo "${PRETTY_NAME:-unknown}")
	if [ "${MAGNET_SKIP_DEPS:-}" = 1 ]; then
		echo "install-deps: $pretty is not Debian 12 (bookworm); MAGNET_SKIP_DEPS=1: nothing installed, nothing changed" >&2
		exit 0
	fi
	echo "install-deps: this host runs $pretty; this script supports Debian 12 (bookworm) only" >&2
	echo "install-deps: nothing was changed.  Install the equivalents of the packages listed in $0" >&2
	echo "install-deps: by hand, then run again with MAGNET_SKIP_DEPS=1" >&2
	exit 1
fi

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo

# bookworm-backports (the 6.12 kernels) in a file of our own, unless the
# host's sources already have it; the host's own sources are only read
src=/etc/apt/sources.list.d/debian.sources
bp=/etc/apt/sources.list.d/magnet-backports.sources
if [ ! -f "$bp" ] && ! grep -rqsE '^[^#]*bookworm-backports' /etc/apt/sources.list \
	/etc/apt/sources.list.d/; then
	uri=$(sed -n 's/^URIs: *//p' "$src" 2>/dev/null | head -1 || true)
	[ -n "$uri" ] || uri=$(sed -n 's/^deb \(\[[^]]*\] \)\?\([^ ]*\) bookworm .*/\2/p' \
		/etc/apt/sources.list 2>/dev/null | head -1 || true)
	: "${uri:=http://deb.debian.org/debian}"
	$SUDO tee "$bp" >/dev/null <<EOT
Types: deb
URIs: $uri
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOT
fi

stamp=/var/lib/magnet-deps.stamp
want="v13"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && command -v vng >/dev/null; then
	exit 0
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
	build-essential cmake pkg-config libnl-3-dev libnl-genl-3-dev \
	libaio-dev liburing-dev fio libcmocka-dev sparse \
	linux-image-amd64 linux-headers-amd64 \
	linux-image-rt-amd64 linux-headers-rt-amd64 \
	qemu-system-x86 iproute2 iperf3 ethtool kmod busybox-static \
	python3-pip python3-venv python3-yaml udev procps socat dkms tshark \
	python3-jsonschema babeltrace2 libbabeltrace2-dev gnuplot-nox prometheus >/dev/null
# the debug-kernel tier: a kernel built from Debian's source
$SUDO apt-get install -y -qq --no-install-recommends \
	linux-source-6.12 flex bison bc libelf-dev libssl-dev dwarves xz-utils openssl >/dev/null
# the meta-packages move to 6.12; the 6.1 kernels installed above stay
$SUDO apt-get install -y -qq --no-install-recommends -t bookworm-backports \
	linux-image-amd64 linux-headers-amd64 \
	linux-image-rt-amd64 linux-headers-rt-amd64 >/dev/null 2>&1 || \
$SUDO apt-get install -y -qq --no-install-recommends -t bookworm-backports \
	'linux-image-6.12*-amd64' 'linux-headers-6.12*-amd64' >/dev/null
if ! command -v vng >/dev/null || [ "$(vng --version 2>/dev/null | awk '{print $2}')" != "$VNG_VERSION" ]; then
	pip3 install -q --break-system-packages "virtme-ng==$VNG_VERSION" 2>/dev/null || \
		pip3 install -q "virtme-ng==$VNG_VERSION"
fi
# perfetto's trace protos, to decode convert --to perfetto's output: for
# the python3 on PATH (ctest's test_cli) and for Debian's /usr/bin/python3,
# the one tests/vm/lib.sh's PATH gives the VM tests (t_convert)
for py in python3 /usr/bin/python3; do
	"$py" -c "import perfetto.protos.perfetto.trace.perfetto_trace_pb2" 2>/dev/null && continue
	"$py" -m pip install -q --break-system-packages "perfetto==$PERFETTO_VERSION" 2>/dev/null ||
		"$py" -m pip install -q "perfetto==$PERFETTO_VERSION"
	"$py" -c "import perfetto.protos.perfetto.trace.perfetto_trace_pb2"
done
echo "$want" | $SUDO tee "$stamp" >/dev/null
