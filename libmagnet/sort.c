// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Sorted traces: whole trace files read into memory, every record decoded
 * once, then handed out in magnet_rec_time() order.  A full sort, not a
 * window: an application's batch reaches its stream up to MAGNET_FLUSH_MS
 * after the kernel's records of the same calls, and a second file (an
 * application stream beside a kernel stream) can lag by anything; a file
 * already on disk costs nothing to read whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

struct sorted_rec {
	struct magnet_rec rec;
	__u64 key;
	unsigned int file;
	size_t seq;			/* position in its file */
	bool meta;			/* SYSINFO / EVENTDEF: first */
};

struct magnet_sorted {
	unsigned char **bufs;		/* file contents; payloads point in */
	unsigned int nr_bufs;
	struct sorted_rec *v;
	size_t n, cap, next;
	int err;			/* -EBADMSG of a corrupt file, at the end */
	bool err_given;
	char errmsg[MAGNET_ERRMSG_LEN + 256];
};

static int read_all(const char *path, unsigned char **out, size_t *len)
{
	size_t cap = 1 << 20, n = 0;
	unsigned char *buf, *nb;
	ssize_t r;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		if (n == cap) {
			nb = realloc(buf, cap * 2);
			if (!nb) {
				err = -ENOMEM;
				goto fail;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			goto fail;
		}
		if (!r)
			break;
		n += r;
	}
	close(fd);
	*out = buf;
	*len = n;
	return 0;
fail:
	close(fd);
	free(buf);
	return err;
}

static int push(struct magnet_sorted *st, const struct magnet_rec *r,
		unsigned int file, size_t seq)
{
	struct sorted_rec *e;

	if (st->n == st->cap) {
		size_t nc = st->cap ? st->cap * 2 : 4096;
		struct sorted_rec *nv = realloc(st->v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		st->v = nv;
		st->cap = nc;
	}
	e = &st->v[st->n++];
	e->rec = *r;
	e->key = magnet_rec_time(r);
	e->file = file;
	e->seq = seq;
	e->meta = r->kind == MAGNET_REC_SYSINFO ||
		  r->kind == MAGNET_REC_EVENTDEF;
	return 0;
}

/* Decode file @i; a corrupt file keeps what came before the bad record. */
static int load(struct magnet_sorted *st, const char *path, unsigned int i)
{
	struct magnet_decoder dec = { 0 };
	struct magnet_rec r;
	size_t len, off = 0, seq = 0;
	int ret;

	ret = read_all(path, &st->bufs[i], &len);
	if (ret) {
		snprintf(st->errmsg, sizeof(st->errmsg), "%s: %s", path,
			 strerror(-ret));
		return ret;
	}
	st->nr_bufs = i + 1;
	if (!len) {
		if (!st->err) {
			st->err = -ENODATA;
			snprintf(st->errmsg, sizeof(st->errmsg),
				 "%s: empty file, not a MAGNET trace", path);
		}
		return 0;
	}
	while ((ret = magnet_rec_next(&dec, st->bufs[i], len, &off, &r)) > 0) {
		ret = push(st, &r, i, seq++);
		if (ret)
			return ret;
	}
	if (ret < 0 && !st->err) {
		st->err = ret;
		snprintf(st->errmsg, sizeof(st->errmsg), "%s: %s", path,
			 dec.errmsg);
	}
	return 0;
}

static int cmp(const void *a, const void *b)
{
	const struct sorted_rec *x = a, *y = b;

	if (x->meta != y->meta)
		return x->meta ? -1 : 1;
	if (!x->meta && x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int magnet_sorted_open(const char *const *paths, unsigned int nr,
		       struct magnet_sorted **out)
{
	struct magnet_sorted *st;
	unsigned int i;
	int ret;

	if (!paths || !nr || !out)
		return -EINVAL;
	for (i = 0; i < nr; i++)
		if (!paths[i])
			return -EINVAL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->bufs = calloc(nr, sizeof(*st->bufs));
	if (!st->bufs) {
		free(st);
		return -ENOMEM;
	}
	for (i = 0; i < nr; i++) {
		ret = load(st, paths[i], i);
		if (ret) {
			magnet_sorted_close(st);
			return ret;
		}
	}
	if (st->n)
		qsort(st->v, st->n, sizeof(*st->v), cmp);
	*out = st;
	return 0;
}

int magnet_sorted_next(struct magnet_sorted *st, const struct magnet_rec **out)
{
	if (st->next < st->n) {
		*out = &st->v[st->next++].rec;
		return 1;
	}
	if (st->err && !st->err_given) {
		st->err_given = true;
		return st->err;
	}
	return 0;
}

const char *magnet_sorted_errmsg(const struct magnet_sorted *st)
{
	return st->errmsg;
}

void magnet_sorted_close(struct magnet_sorted *st)
{
	unsigned int i;

	if (!st)
		return;
	for (i = 0; i < st->nr_bufs; i++)
		free(st->bufs[i]);
	free(st->bufs);
	free(st->v);
	free(st);
}
