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

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo

src=/etc/apt/sources.list.d/debian.sources
bp=/etc/apt/sources.list.d/magnet-backports.sources
if [ ! -f "$bp" ]; then
	uri=$(sed -n 's/^URIs: *//p' "$src" | head -1)
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
want="v7"
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
	python3-pip python3-venv python3-yaml udev procps socat dkms >/dev/null
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
echo "$want" | $SUDO tee "$stamp" >/dev/null
