#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/ynl-tools.sh [DIR]: the kernel's YNL tools (tools/net/ynl: the
# cli.py that drives any generic netlink family from its YAML spec, and
# ynl-gen-c.py) from Debian's linux-source-6.12 into DIR (default
# build/ynl), once: DIR/tools/net/ynl/cli.py.  tests/vm/t_ynl.sh drives
# MAGNET's family with it from docs/magnet.yaml.  Prints the cli.py path.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$top/build/ynl}
src=/usr/src/linux-source-6.12.tar.xz
cli=$dir/tools/net/ynl/cli.py
if [ ! -e "$cli" ]; then
	[ -e "$src" ] || { echo "ynl-tools: $src missing (apt install linux-source-6.12)" >&2; exit 1; }
	rm -rf "$dir.tmp"
	mkdir -p "$dir.tmp"
	tar -xJf "$src" -C "$dir.tmp" --strip-components=1 --wildcards \
		'linux-source-6.12/tools/net/ynl/*'
	rm -rf "$dir"
	mv "$dir.tmp" "$dir"
fi
echo "$cli"
