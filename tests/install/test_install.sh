#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_install.sh BUILD_DIR: "cmake --install" into a temporary DESTDIR,
# then build a small program against what was installed only (header,
# pkg-config file, library; found through PKG_CONFIG_SYSROOT_DIR), run it
# against the installed libmagnet.so.0, and check the soname, the man
# pages with their .so links, the interposer and magnetctl.
set -u
build=$1
dest=$(mktemp -d /tmp/magnet-install.XXXXXX)
trap 'rm -rf "$dest"' EXIT
prefix=/usr/local
fail=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fail=1; }

if ! out=$(DESTDIR=$dest cmake --install "$build" --prefix "$prefix" 2>&1); then
	bad "cmake --install failed: $out"
	exit 1
fi
root=$dest$prefix
libdir=$(cd "$root" && find . -name libmagnet.so.0 -printf '%h\n' | head -n 1)
libdir=${libdir#./}
for f in include/magnet/libmagnet.h include/magnet/uapi/magnet.h include/magnet/uapi/magnet_genl.h \
	"$libdir/libmagnet.so" "$libdir/libmagnet.so.0" "$libdir/libmagnet_preload.so" \
	"$libdir/pkgconfig/libmagnet.pc" sbin/magnetctl share/man/man8/magnetctl.8 \
	share/man/man3/libmagnet.3 share/man/man3/magnet_ctl_open.3 \
	share/man/man3/magnet_ctl_close.3 share/man/man3/libmagnet_preload.3; do
	[ -e "$root/$f" ] || bad "not installed: $prefix/$f"
done
[ $fail -eq 0 ] && ok "header, UAPI header, library, interposer, pkg-config file, magnetctl, man pages installed under $prefix"

soname=$(readelf -d "$root/$libdir/libmagnet.so.0" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libmagnet.so.0 ] && ok "soname libmagnet.so.0" || bad "soname '$soname'"
[ "$(readlink "$root/$libdir/libmagnet.so")" = libmagnet.so.0 ] &&
	ok "libmagnet.so -> libmagnet.so.0" || bad "libmagnet.so link: $(readlink "$root/$libdir/libmagnet.so")"
link=$(cat "$root/share/man/man3/magnet_sorted_next.3")
[ "$link" = ".so man3/magnet_sorted_open.3" ] && ok "man3 .so links (magnet_sorted_next.3 -> magnet_sorted_open.3)" ||
	bad "magnet_sorted_next.3 holds '$link'"
if MANPATH=$root/share/man man -w magnet_stream_create_opts >/dev/null 2>&1 ||
	! command -v man >/dev/null; then
	ok "man finds magnet_stream_create_opts(3)"
else
	bad "man -w magnet_stream_create_opts"
fi

export PKG_CONFIG_SYSROOT_DIR=$dest
export PKG_CONFIG_PATH=$root/$libdir/pkgconfig
cflags=$(pkg-config --cflags libmagnet) && libs=$(pkg-config --libs libmagnet) ||
	bad "pkg-config libmagnet"
# users write #include <magnet/uapi/magnet.h>: no bare uapi/ on their path
case " $cflags " in
*"/magnet "*) bad "pkg-config --cflags puts \${includedir}/magnet on the include path: $cflags" ;;
*) ok "pkg-config --cflags is the include dir alone ($cflags)" ;;
esac
# one version: the symbol map's newest node, the .pc file, the library's file name
ver=$("$(dirname "$0")/../../scripts/version.sh")
pcver=$(pkg-config --modversion libmagnet)
[ "$pcver" = "$ver" ] && [ -e "$root/$libdir/libmagnet.so.$ver" ] &&
	ok "version $ver in the map, the .pc file and libmagnet.so.$ver" ||
	bad "version: scripts/version.sh $ver, .pc $pcver, $(cd "$root/$libdir" && ls libmagnet.so.*)"
cat >"$dest/prog.c" <<'PROG'
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <magnet/libmagnet.h>
#include <magnet/uapi/magnet.h>

/* A SYSINFO and an APP record, decoded by the installed library. */
int main(void)
{
	unsigned char buf[MAGNET_REC_HDR_SIZE + sizeof(struct magnet_sysinfo) +
			  MAGNET_APP_REC_SIZE] = { 0 };
	struct magnet_rec_hdr *h = (void *)buf;
	struct magnet_sysinfo *si = (void *)(h + 1);
	struct magnet_rec_hdr *a = (void *)(si + 1);
	struct magnet_app_payload *p = (void *)(a + 1);
	struct magnet_decoder *d = magnet_decoder_new();
	struct magnet_sorted *st;
	struct magnet_rec rec;
	size_t off = 0;
	int n = 0, ret;

	h->size = sizeof(*h) + sizeof(*si);
	si->endian = MAGNET_ENDIAN_MAGIC;
	si->clock_hz = 1000000000;
	a->size = MAGNET_APP_REC_SIZE;
	a->event = MAGNET_EVENT_APP;
	p->entry_ns = 1;
	p->exit_ns = 2;
	p->ret = 100;
	p->call = MAGNET_APP_SENDMSG;
	while ((ret = magnet_rec_next(d, buf, sizeof(buf), &off, &rec)) > 0)
		n++;
	if (ret || n != 2 || rec.kind != MAGNET_REC_APP ||
	    strcmp(magnet_app_call_name(rec.u.app.call), "sendmsg") ||
	    magnet_rec_time(&rec) != 1) {
		printf("decode: ret %d n %d\n", ret, n);
		return 1;
	}
	/* error conventions: negative errno, no errno side channel */
	off = 0;
	buf[0] = 33;
	magnet_decoder_reset(d);
	if (magnet_rec_next(d, buf, sizeof(buf), &off, &rec) != -EBADMSG ||
	    magnet_sorted_open(NULL, 0, &st) != -EINVAL ||
	    magnet_stream_open("/nonexistent/magnet", false) != -ENOENT) {
		printf("error paths\n");
		return 1;
	}
	magnet_decoder_free(d);
	printf("installed libmagnet works\n");
	return 0;
}
PROG
# shellcheck disable=SC2086
if cc -Wall -Werror -o "$dest/prog" "$dest/prog.c" $cflags $libs 2>"$dest/cc.err"; then
	ok "a program builds with \$(pkg-config --cflags --libs libmagnet) against the installed files"
else
	bad "build against the installed files: $(cat "$dest/cc.err")"
fi
run=$(LD_LIBRARY_PATH=$root/$libdir "$dest/prog" 2>&1)
[ "$run" = "installed libmagnet works" ] && ok "it runs against the installed libmagnet.so.0" || bad "run: $run"
lib=$(LD_LIBRARY_PATH=$root/$libdir ldd "$dest/prog" | awk '/libmagnet/ { print $3 }')
[ "$lib" = "$root/$libdir/libmagnet.so.0" ] && ok "ldd resolves libmagnet.so.0 in DESTDIR" || bad "ldd: $lib"
# the netlink spec for the kernel's YNL tools
[ -e "$root/share/ynl/specs/magnet.yaml" ] && ok "docs/magnet.yaml installed to $prefix/share/ynl/specs" ||
	bad "not installed: $prefix/share/ynl/specs/magnet.yaml"
# the exporter's unit runs the installed magnetctl
unit=$root/lib/systemd/system/magnet-export.service
if [ ! -e "$unit" ]; then
	bad "not installed: $prefix/lib/systemd/system/magnet-export.service"
elif grep -qx "ExecStart=$prefix/sbin/magnetctl export --listen 127.0.0.1:9743" "$unit"; then
	ok "magnet-export.service runs $prefix/sbin/magnetctl export"
else
	bad "magnet-export.service: $(grep ExecStart "$unit")"
fi
# the babeltrace2 plugin, where babeltrace2 looks under this prefix, loads
# with the installed library (built when libbabeltrace2-dev is there)
if pkg-config --exists babeltrace2 2>/dev/null || [ -e "$build/babeltrace2/plugins" ]; then
	plug=$root/$libdir/babeltrace2/plugins
	if [ ! -e "$plug/babeltrace-plugin-magnet.so" ]; then
		bad "not installed: $prefix/$libdir/babeltrace2/plugins/babeltrace-plugin-magnet.so"
	elif out=$(LD_LIBRARY_PATH=$root/$libdir babeltrace2 --plugin-path="$plug" \
		list-plugins 2>&1) && grep -q "source.magnet.trace" <<<"$out"; then
		ok "babeltrace2 loads the installed plugin (source.magnet.trace)"
	else
		bad "babeltrace2 list-plugins with the installed plugin: $out"
	fi
fi
exit $fail
