// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The span reader (docs/IOCTL.md "Spans", docs/LIBMAGNET.md): records
 * taken from the rings in place, a sub-buffer (or its readable part) at a
 * time, without a copy into a read buffer and without looking at them.
 * Each ring is mapped read-only the first time a span lies in it; the
 * geometry comes from the SYSINFO record that the first span carries.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#define SPAN_META_MIN	(64u << 10)
#define SPAN_META_MAX	(16u << 20)

struct magnet_span_reader {
	int fd;
	char *meta;			/* SYSINFO/EVENTDEF of the last get */
	size_t meta_cap;
	__u64 stride;			/* bytes between rings in the file */
	__u64 ring_bytes;		/* what one mapping covers */
	unsigned int nr_rings;
	void **maps;			/* per ring, MAP_FAILED until mapped */
	bool held;
};

int magnet_span_reader_open(int fd, struct magnet_span_reader **out)
{
	struct magnet_span_reader *sr = calloc(1, sizeof(*sr));

	if (!sr)
		return -ENOMEM;
	sr->fd = fd;
	sr->meta_cap = SPAN_META_MIN;
	sr->meta = malloc(sr->meta_cap);
	if (!sr->meta) {
		free(sr);
		return -ENOMEM;
	}
	*out = sr;
	return 0;
}

/* The geometry, from the first SYSINFO among whole records @p/@len. */
static int span_learn_geometry(struct magnet_span_reader *sr, const char *p,
			       size_t len)
{
	const struct magnet_rec_hdr *h;
	const struct magnet_sysinfo *si;
	unsigned int i, n;
	size_t off;

	for (off = 0; off + sizeof(*h) <= len; off += h->size) {
		h = (const void *)(p + off);
		if (h->size < sizeof(*h) || off + h->size > len)
			return -EPROTO;
		if (h->event != MAGNET_EVENT_SYSINFO || sr->maps)
			continue;
		if (h->size < sizeof(*h) + sizeof(*si))
			return -EPROTO;
		si = (const void *)(h + 1);
		n = si->flags & MAGNET_STREAM_F_GLOBAL ? 1 : si->nr_cpus;
		if (!n || !si->page_size)
			return -EPROTO;
		sr->ring_bytes = (__u64)si->subbuf_size * si->subbuf_count;
		sr->stride = MAGNET_RING_STRIDE(si->subbuf_size,
						si->subbuf_count,
						si->page_size);
		sr->maps = calloc(n, sizeof(*sr->maps));
		if (!sr->maps)
			return -ENOMEM;
		for (i = 0; i < n; i++)
			sr->maps[i] = MAP_FAILED;
		sr->nr_rings = n;
	}
	return 0;
}

static const void *span_map(struct magnet_span_reader *sr, unsigned int ring)
{
	if (!sr->maps || ring >= sr->nr_rings)
		return NULL;
	if (sr->maps[ring] == MAP_FAILED)
		sr->maps[ring] = mmap(NULL, sr->ring_bytes, PROT_READ,
				      MAP_SHARED, sr->fd,
				      (off_t)(ring * sr->stride));
	return sr->maps[ring] == MAP_FAILED ? NULL : sr->maps[ring];
}

int magnet_span_reader_get(struct magnet_span_reader *sr, bool partial,
			   struct magnet_span_view *v)
{
	struct magnet_span sp;
	const char *base;
	int err;

	if (sr->held)
		return -EBUSY;
	for (;;) {
		memset(&sp, 0, sizeof(sp));
		sp.flags = partial ? MAGNET_SPAN_PARTIAL : 0;
		sp.meta_buf = (__u64)(uintptr_t)sr->meta;
		sp.meta_len = (__u32)sr->meta_cap;
		if (ioctl(sr->fd, MAGNET_IOC_GET_SPAN, &sp) == 0)
			break;
		err = -errno;
		if (err == -EINTR)
			continue;
		if (err == -ENODATA)
			return 0;
		if (err != -ENOBUFS || sr->meta_cap >= SPAN_META_MAX)
			return err;
		/* the next metadata record does not fit: a larger buffer */
		free(sr->meta);
		sr->meta_cap *= 4;
		sr->meta = malloc(sr->meta_cap);
		if (!sr->meta)
			return -ENOMEM;
	}
	memset(v, 0, sizeof(*v));
	v->meta = sr->meta;
	v->meta_len = sp.meta_len;
	if (sp.len)
		sr->held = true;
	/*
	 * Errors from here on leave the span held, unread: the consumer
	 * stops, and closing the file gives it back to the ring.
	 */
	if (sp.meta_len) {
		err = span_learn_geometry(sr, sr->meta, sp.meta_len);
		if (err)
			return err;
	}
	if (!sp.len)
		return 1;
	base = span_map(sr, sp.ring);
	if (!base)
		return sr->maps ? -errno : -EPROTO;
	if (sp.offset < (__u64)sp.ring * sr->stride ||
	    sp.offset - (__u64)sp.ring * sr->stride + sp.len > sr->ring_bytes)
		return -EPROTO;
	v->data = base + (sp.offset - (__u64)sp.ring * sr->stride);
	v->len = sp.len;
	v->events = sp.events;
	v->ring = sp.ring;
	v->closed = !!(sp.flags & MAGNET_SPAN_CLOSED);
	return 1;
}

int magnet_span_reader_put(struct magnet_span_reader *sr)
{
	if (!sr->held)
		return 0;
	sr->held = false;
	return ioctl(sr->fd, MAGNET_IOC_PUT_SPAN) < 0 ? -errno : 0;
}

void magnet_span_reader_close(struct magnet_span_reader *sr)
{
	unsigned int i;

	if (!sr)
		return;
	for (i = 0; i < sr->nr_rings; i++)
		if (sr->maps[i] != MAP_FAILED)
			munmap(sr->maps[i], sr->ring_bytes);
	free(sr->maps);
	free(sr->meta);
	free(sr);
}
