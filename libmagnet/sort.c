// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Sorted traces: whole trace files read into memory, every record decoded
 * once to check it and find its time, then handed out in magnet_rec_time()
 * order, decoded again with the event definitions its file had for it.  A full sort, not a
 * window: an application's batch reaches its stream up to MAGNET_FLUSH_MS
 * after the kernel's records of the same calls, and a second file (an
 * application stream beside a kernel stream) can lag by anything; a file
 * already on disk costs nothing to read whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/*
 * One record, 32 bytes: where it is and how to order it.  It is decoded
 * again when handed out, with the event definition that was current for
 * it in its file (@def), so memory stays near the files' own size.
 */
struct sorted_rec {
	const unsigned char *raw;
	__u64 key;
	__u32 seq;			/* position in its file */
	__s32 def;			/* index in the file's defs, -1: none */
	__u16 file;
	bool meta;			/* SYSINFO / EVENTDEF: first */
};

struct sorted_file {
	unsigned char *buf;		/* contents; payloads point in */
	bool swapped;
	struct magnet_evinfo *defs;	/* every definition seen, in order */
	size_t nr_defs, cap_defs;
};

struct magnet_sorted {
	struct sorted_file *files;
	unsigned int nr_files;
	struct sorted_rec *v;
	size_t n, cap, next;
	struct magnet_decoder dec;	/* re-decodes the record handed out */
	struct magnet_rec out;
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

static int push(struct magnet_sorted *st, const unsigned char *raw,
		const struct magnet_rec *r, unsigned int file, size_t seq,
		__s32 def)
{
	struct sorted_rec *e;

	if (seq > UINT32_MAX || file > UINT16_MAX)
		return -E2BIG;
	if (st->n == st->cap) {
		size_t nc = st->cap ? st->cap * 2 : 4096;
		struct sorted_rec *nv = realloc(st->v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		st->v = nv;
		st->cap = nc;
	}
	e = &st->v[st->n++];
	e->raw = raw;
	e->key = magnet_rec_time(r);
	e->file = file;
	e->seq = seq;
	e->def = def;
	e->meta = r->kind == MAGNET_REC_SYSINFO ||
		  r->kind == MAGNET_REC_EVENTDEF;
	return 0;
}

/* Remember the definition of event @id the file now has. */
static int def_push(struct sorted_file *f, const struct magnet_evinfo *ev)
{
	if (f->nr_defs == f->cap_defs) {
		size_t nc = f->cap_defs ? f->cap_defs * 2 : 64;
		struct magnet_evinfo *nd = realloc(f->defs, nc * sizeof(*nd));

		if (!nd)
			return -ENOMEM;
		f->defs = nd;
		f->cap_defs = nc;
	}
	f->defs[f->nr_defs++] = *ev;
	return 0;
}

/* Decode file @i; a corrupt file keeps what came before the bad record. */
static int load(struct magnet_sorted *st, const char *path, unsigned int i)
{
	struct sorted_file *f = &st->files[i];
	struct magnet_decoder *dec;
	struct magnet_rec r;
	size_t len = 0, off = 0, seq = 0;
	__s32 *cur;
	int ret;

	ret = read_all(path, &f->buf, &len);
	if (ret) {
		snprintf(st->errmsg, sizeof(st->errmsg), "%s: %s", path,
			 strerror(-ret));
		return ret;
	}
	st->nr_files = i + 1;
	if (!len) {
		if (!st->err) {
			st->err = -ENODATA;
			snprintf(st->errmsg, sizeof(st->errmsg),
				 "%s: empty file, not a MAGNET trace", path);
		}
		return 0;
	}
	dec = calloc(1, sizeof(*dec));
	cur = malloc((MAGNET_EVENT_MAX + 1) * sizeof(*cur));
	if (!dec || !cur) {
		ret = -ENOMEM;
		goto out;
	}
	memset(cur, 0xff, (MAGNET_EVENT_MAX + 1) * sizeof(*cur));
	for (;;) {
		size_t at = off;

		ret = magnet_rec_next(dec, f->buf, len, &off, &r);
		if (ret <= 0)
			break;
		if (r.kind == MAGNET_REC_EVENTDEF) {
			ret = def_push(f, &dec->ev[r.u.eventdef.id]);
			if (ret)
				goto out;
			cur[r.u.eventdef.id] = f->nr_defs - 1;
		}
		ret = push(st, f->buf + at, &r, i, seq++, cur[r.hdr.event]);
		if (ret)
			goto out;
	}
	f->swapped = dec->swapped;
	if (ret < 0 && !st->err) {
		st->err = ret;
		snprintf(st->errmsg, sizeof(st->errmsg), "%s: %s", path,
			 dec->errmsg);
	}
	ret = 0;
out:
	free(cur);
	free(dec);
	return ret;
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
	if (nr > UINT16_MAX) {
		free(st);
		return -E2BIG;
	}
	st->files = calloc(nr, sizeof(*st->files));
	if (!st->files) {
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
	const struct sorted_rec *e;
	const struct sorted_file *f;
	__u16 id, size;
	size_t off = 0;
	int ret;

	if (st->next >= st->n) {
		if (st->err && !st->err_given) {
			st->err_given = true;
			return st->err;
		}
		return 0;
	}
	e = &st->v[st->next++];
	f = &st->files[e->file];
	/* the record decoded at load time: decode it again in its context */
	memcpy(&size, e->raw, sizeof(size));
	memcpy(&id, e->raw + 2, sizeof(id));
	if (f->swapped) {
		size = (__u16)(size << 8 | size >> 8);
		id = (__u16)(id << 8 | id >> 8);
	}
	st->dec.started = true;
	st->dec.swapped = f->swapped;
	st->dec.base = 0;
	if (id <= MAGNET_EVENT_MAX) {
		if (e->def >= 0)
			st->dec.ev[id] = f->defs[e->def];
		else
			memset(&st->dec.ev[id], 0, sizeof(st->dec.ev[id]));
	}
	ret = magnet_rec_next(&st->dec, e->raw, size, &off, &st->out);
	if (ret != 1)
		return ret < 0 ? ret : -EBADMSG;	/* cannot happen: checked */
	*out = &st->out;
	return 1;
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
	for (i = 0; i < st->nr_files; i++) {
		free(st->files[i].buf);
		free(st->files[i].defs);
	}
	free(st->files);
	free(st->v);
	free(st);
}

/*
 * The decoder of the record magnet_sorted_next() handed out last (its
 * file's byte order and event definitions), for magnet_rec_corr_step()
 * and the other functions that take one.
 */
const struct magnet_decoder *magnet_sorted_decoder(const struct magnet_sorted *st)
{
	return st ? &st->dec : NULL;
}
