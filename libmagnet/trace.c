// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Trace files: iterate over the records of a file (or pipe) written by
 * "magnetctl record", reading it through a buffer that always holds at
 * least one maximal record unless the file ends first.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define TRACE_BUF_SIZE	(1u << 20)

struct magnet_trace {
	int fd;
	bool eof;
	bool any;			/* at least one byte in the file */
	unsigned char *buf;
	size_t len;			/* valid bytes in buf */
	size_t pos;			/* next record in buf */
	unsigned long long buf_off;	/* file offset of buf[0] */
	struct magnet_decoder dec;
	char errmsg[MAGNET_ERRMSG_LEN];
};

int magnet_trace_open(const char *path, struct magnet_trace **out)
{
	struct magnet_trace *t;
	int err;

	if (!path || !out)
		return -EINVAL;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->buf = malloc(TRACE_BUF_SIZE);
	if (!t->buf) {
		free(t);
		return -ENOMEM;
	}
	t->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (t->fd < 0) {
		err = -errno;
		free(t->buf);
		free(t);
		return err;
	}
	*out = t;
	return 0;
}

void magnet_trace_close(struct magnet_trace *t)
{
	if (!t)
		return;
	close(t->fd);
	free(t->buf);
	free(t);
}

const char *magnet_trace_errmsg(const struct magnet_trace *t)
{
	return t->errmsg;
}

unsigned long long magnet_trace_offset(const struct magnet_trace *t)
{
	return t->buf_off + t->pos;
}

/* Move the unread tail to the front and read until the buffer is full. */
static int trace_fill(struct magnet_trace *t)
{
	ssize_t n;

	memmove(t->buf, t->buf + t->pos, t->len - t->pos);
	t->buf_off += t->pos;
	t->len -= t->pos;
	t->pos = 0;
	while (!t->eof && t->len < TRACE_BUF_SIZE) {
		n = read(t->fd, t->buf + t->len, TRACE_BUF_SIZE - t->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;

			snprintf(t->errmsg, sizeof(t->errmsg),
				 "offset %llu: read error: %s",
				 t->buf_off + t->len, strerror(err));
			return -err;
		}
		if (n == 0)
			t->eof = true;
		t->len += n;
		if (n)
			t->any = true;
	}
	return 0;
}

int magnet_trace_next(struct magnet_trace *t, struct magnet_rec *out)
{
	int ret;

	if (!t->eof && t->len - t->pos < MAGNET_REC_MAX) {
		ret = trace_fill(t);
		if (ret)
			return ret;
	}
	if (!t->any) {
		snprintf(t->errmsg, sizeof(t->errmsg),
			 "empty file, not a MAGNET trace");
		return -ENODATA;
	}
	t->dec.base = t->buf_off;
	ret = magnet_rec_next(&t->dec, t->buf, t->len, &t->pos, out);
	if (ret < 0)
		snprintf(t->errmsg, sizeof(t->errmsg), "%s", t->dec.errmsg);
	return ret;
}

const struct magnet_decoder *magnet_trace_decoder(const struct magnet_trace *t)
{
	return &t->dec;
}
