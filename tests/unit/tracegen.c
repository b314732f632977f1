// SPDX-License-Identifier: GPL-2.0-only
#include <byteswap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracegen.h"

void tb_init(struct tbuf *tb, bool swap)
{
	memset(tb, 0, sizeof(*tb));
	tb->swap = swap;
}

void tb_free(struct tbuf *tb)
{
	free(tb->data);
	tb->data = NULL;
}

static __u16 o16(const struct tbuf *tb, __u16 v) { return tb->swap ? bswap_16(v) : v; }
static __u32 o32(const struct tbuf *tb, __u32 v) { return tb->swap ? bswap_32(v) : v; }
static __u64 o64(const struct tbuf *tb, __u64 v) { return tb->swap ? bswap_64(v) : v; }

static void *tb_grow(struct tbuf *tb, size_t n)
{
	void *p;

	if (tb->len + n > tb->cap) {
		tb->cap = (tb->len + n) * 2;
		tb->data = realloc(tb->data, tb->cap);
		if (!tb->data)
			abort();
	}
	p = tb->data + tb->len;
	memset(p, 0, n);
	tb->len += n;
	return p;
}

size_t tb_rec(struct tbuf *tb, __u16 event, __u16 size, __u64 ts,
	      const void *payload, size_t plen)
{
	size_t off = tb->len, total = (MAGNET_REC_HDR_SIZE + plen + 7) & ~7ul;
	struct magnet_rec_hdr h = {
		.size = o16(tb, size ? size : total),
		.event = o16(tb, event),
		.cpu = o32(tb, TB_CPU),
		.abstract_id = o64(tb, TB_ABSTRACT),
		.timestamp = o64(tb, ts),
		.pid = o32(tb, TB_PID),
		.tgid = o32(tb, TB_TGID),
	};
	unsigned char *p = tb_grow(tb, total);

	memcpy(p, &h, sizeof(h));
	if (plen)
		memcpy(p + MAGNET_REC_HDR_SIZE, payload, plen);
	return off;
}

size_t tb_sysinfo(struct tbuf *tb, __u64 ts)
{
	struct magnet_sysinfo si = {
		.endian = o32(tb, MAGNET_ENDIAN_MAGIC),
		.format_major = o16(tb, MAGNET_FORMAT_MAJOR),
		.format_minor = o16(tb, MAGNET_FORMAT_MINOR),
		.abi_version = o32(tb, MAGNET_ABI_VERSION),
		.clock_id = o32(tb, MAGNET_CLOCK_MONOTONIC),
		.clock_hz = o64(tb, 1000000000ull),
		.wall_ns_at_zero = o64(tb, 1700000000000000000ull),
		.nr_cpus = o32(tb, 8),
		.ptr_size = o32(tb, 8),
		.page_size = o32(tb, 4096),
		.subbuf_size = o32(tb, 262144),
		.subbuf_count = o32(tb, 2),
		.stream = "s0",
		.release = "6.1.0-test",
	};

	return tb_rec(tb, MAGNET_EVENT_SYSINFO, 0, ts, &si, sizeof(si));
}

size_t tb_eventdef(struct tbuf *tb, __u16 id, const char *name, __u16 layer,
		   __u16 payload)
{
	struct magnet_eventdef ed = {
		.id = o16(tb, id),
		.layer = o16(tb, layer),
		.payload = o16(tb, payload),
	};

	snprintf(ed.name, sizeof(ed.name), "%s", name);
	return tb_rec(tb, MAGNET_EVENT_EVENTDEF, 0, 0, &ed, sizeof(ed));
}

size_t tb_lost(struct tbuf *tb, __u64 count)
{
	struct magnet_lost l = { .count = o64(tb, count) };

	return tb_rec(tb, MAGNET_EVENT_LOST, 0, 0, &l, sizeof(l));
}

size_t tb_net(struct tbuf *tb, __u16 event, __u32 len, __u32 ifindex,
	      __u16 proto, __u16 flags)
{
	struct magnet_net_payload np = {
		.len = o32(tb, len),
		.ifindex = o32(tb, ifindex),
		.proto = o16(tb, proto),
		.flags = o16(tb, flags),
	};

	return tb_rec(tb, event, 0, 1500000000ull, &np, sizeof(np));
}

size_t tb_app(struct tbuf *tb, __u64 ts, __u16 call, __u64 entry, __u64 exit,
	      __s64 ret)
{
	struct magnet_app_payload a = {
		.entry_ns = o64(tb, entry),
		.exit_ns = o64(tb, exit),
		.ret = (__s64)o64(tb, (__u64)ret),
		.req = o64(tb, 10240),
		.fd = (__s32)o32(tb, 3),
		.call = o16(tb, call),
		.flags = o16(tb, call <= MAGNET_APP_WRITEV ? MAGNET_APP_F_TX :
					MAGNET_APP_F_RX),
	};

	return tb_rec(tb, MAGNET_EVENT_APP, 0, ts, &a, sizeof(a));
}

const char *tb_write_tmp(const struct tbuf *tb, size_t len)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/magnet-test-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		abort();
	if (len && write(fd, tb->data, len) != (ssize_t)len)
		abort();
	close(fd);
	return path;
}

size_t tb_corr(struct tbuf *tb, __u64 ts, __u64 start, __u16 e0, __u16 e1,
	       __u64 delta, __u32 bytes)
{
	struct {
		struct magnet_corr_rec c;
		struct magnet_corr_step s[2];
	} p = {
		.c = { .corr_id = o32(tb, 1), .nsteps = o16(tb, 2),
		       .reached = o16(tb, 2), .start = o64(tb, start) },
		.s = {
			{ .count = o32(tb, 1), .bytes = o32(tb, bytes),
			  .event = o16(tb, e0) },
			{ .delta_ns = o64(tb, delta), .count = o32(tb, 1),
			  .bytes = o32(tb, bytes), .event = o16(tb, e1) },
		},
	};

	return tb_rec(tb, MAGNET_EVENT_CORR, 0, ts, &p, sizeof(p));
}
