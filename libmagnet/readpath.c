// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The read path of stream files (docs/IOCTL.md, docs/LIBMAGNET.md): the
 * read rule (watermark, timeout, minimum count), non-blocking reads,
 * SIGIO, an asynchronous reader on libaio, one on io_uring, and a reader
 * that merges the per-CPU record sequences into timestamp order.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <libaio.h>
#ifdef LIBMAGNET_HAVE_LIBURING
#include <liburing.h>
#endif

#include "internal.h"

static int ioc_set(int fd, unsigned long req, __u64 v)
{
	return ioctl(fd, req, &v) < 0 ? -errno : 0;
}

static int ioc_get(int fd, unsigned long req, __u64 *v)
{
	return ioctl(fd, req, v) < 0 ? -errno : 0;
}

int magnet_stream_set_watermark(int fd, __u64 bytes)
{
	return ioc_set(fd, MAGNET_IOC_SET_WATERMARK, bytes);
}

int magnet_stream_get_watermark(int fd, __u64 *bytes)
{
	return ioc_get(fd, MAGNET_IOC_GET_WATERMARK, bytes);
}

int magnet_stream_set_timeout(int fd, __s64 ms)
{
	return ioc_set(fd, MAGNET_IOC_SET_TIMEOUT, (__u64)ms);
}

int magnet_stream_get_timeout(int fd, __s64 *ms)
{
	__u64 v;
	int err = ioc_get(fd, MAGNET_IOC_GET_TIMEOUT, &v);

	if (!err)
		*ms = (__s64)v;
	return err;
}

int magnet_stream_set_min_events(int fd, __u64 n)
{
	return ioc_set(fd, MAGNET_IOC_SET_MIN_EVENTS, n);
}

int magnet_stream_get_min_events(int fd, __u64 *n)
{
	return ioc_get(fd, MAGNET_IOC_GET_MIN_EVENTS, n);
}

ssize_t magnet_stream_read_nonblock(int fd, void *buf, size_t len)
{
	int fl = fcntl(fd, F_GETFL);
	ssize_t n;
	int err;

	if (fl < 0)
		return -errno;
	if (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	n = read(fd, buf, len);
	err = errno;
	if (!(fl & O_NONBLOCK))
		fcntl(fd, F_SETFL, fl);
	return n < 0 ? -err : n;
}

int magnet_stream_sigio(int fd, int sig)
{
	int fl;

	if (fcntl(fd, F_SETOWN, getpid()) < 0 ||
	    fcntl(fd, F_SETSIG, sig) < 0)
		return -errno;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_ASYNC) < 0)
		return -errno;
	return 0;
}

/* ------------------------------------------------------------------ */
/* libaio                                                              */
/* ------------------------------------------------------------------ */

struct magnet_aio_reader {
	int fd;
	unsigned int depth;
	size_t buf_size;
	io_context_t ctx;
	struct iocb *cbs;
	char *bufs;
	unsigned int inflight;
	int last;			/* iocb whose buffer the caller holds, -1 */
	bool eof;			/* a read returned 0: resubmit nothing */
	struct io_event *ev;		/* completed, not handed out yet */
	unsigned int nev, pos;
};

static int aio_submit_one(struct magnet_aio_reader *ar, unsigned int i)
{
	struct iocb *cb = &ar->cbs[i];
	int ret;

	io_prep_pread(cb, ar->fd, ar->bufs + (size_t)i * ar->buf_size,
		      ar->buf_size, 0);
	cb->data = (void *)(unsigned long)i;
	ret = io_submit(ar->ctx, 1, &cb);
	if (ret != 1)
		return ret < 0 ? ret : -EIO;
	ar->inflight++;
	return 0;
}

int magnet_aio_reader_open(int fd, unsigned int depth, size_t buf_size,
			   struct magnet_aio_reader **out)
{
	struct magnet_aio_reader *ar;
	unsigned int i;
	int ret;

	if (!depth || depth > 256 || buf_size < MAGNET_REC_MAX)
		return -EINVAL;
	ar = calloc(1, sizeof(*ar));
	if (!ar)
		return -ENOMEM;
	ar->fd = fd;
	ar->depth = depth;
	ar->buf_size = buf_size;
	ar->last = -1;
	ar->cbs = calloc(depth, sizeof(*ar->cbs));
	ar->ev = calloc(depth, sizeof(*ar->ev));
	ar->bufs = malloc((size_t)depth * buf_size);
	if (!ar->cbs || !ar->ev || !ar->bufs) {
		ret = -ENOMEM;
		goto err;
	}
	ret = io_setup(depth, &ar->ctx);
	if (ret)
		goto err;
	for (i = 0; i < depth; i++) {
		ret = aio_submit_one(ar, i);
		if (ret) {
			magnet_aio_reader_close(ar);
			return ret;
		}
	}
	*out = ar;
	return 0;
err:
	free(ar->cbs);
	free(ar->ev);
	free(ar->bufs);
	free(ar);
	return ret;
}

static ssize_t aio_take(struct magnet_aio_reader *ar, const void **data)
{
	struct io_event *e = &ar->ev[ar->pos++];
	unsigned int i = (unsigned int)(unsigned long)e->data;
	long res = (long)e->res;

	ar->inflight--;
	ar->last = (int)i;
	*data = ar->bufs + (size_t)i * ar->buf_size;
	return res;
}

ssize_t magnet_aio_reader_next(struct magnet_aio_reader *ar, int timeout_ms,
			       const void **data)
{
	struct timespec ts, *tp = NULL;
	ssize_t res;
	int n, ret;

	/* the buffer handed out last time goes back to the kernel */
	if (ar->last >= 0) {
		if (!ar->eof) {
			ret = aio_submit_one(ar, (unsigned int)ar->last);
			if (ret) {
				ar->last = -1;
				return ret;
			}
		}
		ar->last = -1;
	}
	if (timeout_ms >= 0) {
		ts.tv_sec = timeout_ms / 1000;
		ts.tv_nsec = (timeout_ms % 1000) * 1000000L;
		tp = &ts;
	}
	/*
	 * The end of the stream: the first read that returns 0 stops the
	 * resubmissions, and 0 goes to the caller only once nothing is in
	 * flight, so data a later-completing read took is never dropped.
	 */
	for (;;) {
		if (ar->pos < ar->nev) {
			res = aio_take(ar, data);
			if (res != 0)
				return res;
			ar->eof = true;
			ar->last = -1;
			continue;
		}
		if (ar->eof && !ar->inflight)
			return 0;
		n = io_getevents(ar->ctx, 1, ar->inflight, ar->ev, tp);
		if (n < 0)
			return n;
		if (n == 0)
			return -EAGAIN;
		ar->nev = (unsigned int)n;
		ar->pos = 0;
	}
}

ssize_t magnet_aio_reader_cancel(struct magnet_aio_reader *ar,
				 const void **data)
{
	struct timespec ts = { 5, 0 };
	struct io_event e;
	unsigned int i;
	int n;

	if (ar->last >= 0)
		ar->last = -1;	/* not resubmitted: the caller is done with it */
	if (ar->pos < ar->nev)
		return aio_take(ar, data);
	if (!ar->inflight)
		return 0;
	/* ask once for all; completions (data or -ECANCELED) come as events */
	for (i = 0; i < ar->depth; i++)
		io_cancel(ar->ctx, &ar->cbs[i], &e);
	n = io_getevents(ar->ctx, 1, ar->inflight, ar->ev, &ts);
	if (n <= 0)
		return n < 0 ? n : -ETIMEDOUT;
	ar->nev = (unsigned int)n;
	ar->pos = 0;
	return aio_take(ar, data);
}

void magnet_aio_reader_close(struct magnet_aio_reader *ar)
{
	if (!ar)
		return;
	io_destroy(ar->ctx);	/* cancels and waits for what is in flight */
	free(ar->cbs);
	free(ar->ev);
	free(ar->bufs);
	free(ar);
}

/* ------------------------------------------------------------------ */
/* io_uring                                                            */
/* ------------------------------------------------------------------ */

#ifdef LIBMAGNET_HAVE_LIBURING
struct magnet_uring_reader {
	int fd;
	unsigned int depth;
	size_t buf_size;
	struct io_uring ring;
	char *bufs;
	int last;
	unsigned int inflight;
	bool eof;			/* a read returned 0: resubmit nothing */
};

static int uring_submit_one(struct magnet_uring_reader *ur, unsigned int i)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ur->ring);
	int ret;

	if (!sqe)
		return -EBUSY;
	io_uring_prep_read(sqe, ur->fd, ur->bufs + (size_t)i * ur->buf_size,
			   ur->buf_size, (__u64)-1);
	/*
	 * io_uring may run reads of one file concurrently in its workers;
	 * each takes whole records, but their completions can then arrive
	 * out of stream order (seen on 6.12).  A drained read starts only
	 * when every earlier one has completed: the buffers wait in the ring,
	 * the stream order is kept.
	 */
	io_uring_sqe_set_flags(sqe, IOSQE_IO_DRAIN);
	io_uring_sqe_set_data64(sqe, i);
	ret = io_uring_submit(&ur->ring);
	if (ret != 1)
		return ret < 0 ? ret : -EIO;
	ur->inflight++;
	return 0;
}

int magnet_uring_reader_open(int fd, unsigned int depth, size_t buf_size,
			     struct magnet_uring_reader **out)
{
	struct magnet_uring_reader *ur;
	unsigned int i;
	int ret;

	if (!depth || depth > 256 || buf_size < MAGNET_REC_HDR_SIZE)
		return -EINVAL;
	ur = calloc(1, sizeof(*ur));
	if (!ur)
		return -ENOMEM;
	ur->fd = fd;
	ur->depth = depth;
	ur->buf_size = buf_size;
	ur->last = -1;
	ur->bufs = malloc((size_t)depth * buf_size);
	if (!ur->bufs) {
		free(ur);
		return -ENOMEM;
	}
	ret = io_uring_queue_init(depth, &ur->ring, 0);
	if (ret) {
		free(ur->bufs);
		free(ur);
		return ret;
	}
	for (i = 0; i < depth; i++) {
		ret = uring_submit_one(ur, i);
		if (ret) {
			magnet_uring_reader_close(ur);
			return ret;
		}
	}
	*out = ur;
	return 0;
}

ssize_t magnet_uring_reader_next(struct magnet_uring_reader *ur,
				 int timeout_ms, const void **data)
{
	struct __kernel_timespec ts;
	struct io_uring_cqe *cqe;
	unsigned int i;
	int ret;

	if (ur->last >= 0) {
		ret = ur->eof ? 0 : uring_submit_one(ur, (unsigned int)ur->last);
		ur->last = -1;
		if (ret)
			return ret;
	}
	/* the end of the stream: as for libaio above */
	for (;;) {
		if (ur->eof && !ur->inflight)
			return 0;
		if (timeout_ms >= 0) {
			ts.tv_sec = timeout_ms / 1000;
			ts.tv_nsec = (timeout_ms % 1000) * 1000000L;
			ret = io_uring_wait_cqe_timeout(&ur->ring, &cqe, &ts);
		} else {
			ret = io_uring_wait_cqe(&ur->ring, &cqe);
		}
		if (ret == -ETIME)
			return -EAGAIN;
		if (ret)
			return ret;
		i = (unsigned int)io_uring_cqe_get_data64(cqe);
		ret = cqe->res;
		io_uring_cqe_seen(&ur->ring, cqe);
		ur->inflight--;
		if (ret == 0) {
			ur->eof = true;
			continue;
		}
		ur->last = (int)i;
		*data = ur->bufs + (size_t)i * ur->buf_size;
		return ret;
	}
}

void magnet_uring_reader_close(struct magnet_uring_reader *ur)
{
	if (!ur)
		return;
	io_uring_queue_exit(&ur->ring);
	free(ur->bufs);
	free(ur);
}
#else
int magnet_uring_reader_open(int fd, unsigned int depth, size_t buf_size,
			     struct magnet_uring_reader **out)
{
	(void)fd; (void)depth; (void)buf_size; (void)out;
	return -EOPNOTSUPP;
}

ssize_t magnet_uring_reader_next(struct magnet_uring_reader *ur,
				 int timeout_ms, const void **data)
{
	(void)ur; (void)timeout_ms; (void)data;
	return -EOPNOTSUPP;
}

void magnet_uring_reader_close(struct magnet_uring_reader *ur)
{
	(void)ur;
}
#endif

/* ------------------------------------------------------------------ */
/* Merging per-CPU data into timestamp order                           */
/* ------------------------------------------------------------------ */

struct merge_q {
	void **rec;			/* FIFO of record copies */
	size_t head, n, cap;
};

struct magnet_merge {
	__u64 window_ns;
	size_t max_records;
	struct merge_q *q;		/* per CPU */
	unsigned int nr_q;
	unsigned int nr_cpus;		/* from SYSINFO: CPUs to wait for */
	size_t buffered;
	__u64 newest;			/* largest timestamp pushed */
	__u64 last_out;			/* timestamp of the last record out */
	bool any_out;
	unsigned long long late;	/* records out of timestamp order */
	void **meta;			/* SYSINFO/EVENTDEF, passed through */
	size_t meta_head, meta_n, meta_cap;
	void *out;			/* the record handed out, freed next call */
};

struct magnet_merge *magnet_merge_new(__u64 window_ns, size_t max_records)
{
	struct magnet_merge *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->window_ns = window_ns;
	m->max_records = max_records ? max_records : 65536;
	return m;
}

static int fifo_push(void ***arr, size_t *head, size_t *n, size_t *cap, void *p)
{
	if (*head + *n == *cap) {
		if (*head) {
			memmove(*arr, *arr + *head, *n * sizeof(void *));
			*head = 0;
		} else {
			size_t nc = *cap ? *cap * 2 : 64;
			void **na = realloc(*arr, nc * sizeof(void *));

			if (!na)
				return -ENOMEM;
			*arr = na;
			*cap = nc;
		}
	}
	(*arr)[*head + (*n)++] = p;
	return 0;
}

int magnet_merge_push(struct magnet_merge *m, const void *buf, size_t len)
{
	size_t off = 0;

	while (off < len) {
		const struct magnet_rec_hdr *h = (const void *)((const char *)buf + off);
		struct merge_q *q;
		void *copy;
		int err;

		if (len - off < MAGNET_REC_HDR_SIZE || h->size < MAGNET_REC_HDR_SIZE ||
		    h->size % MAGNET_REC_ALIGN || h->size > len - off)
			return -EBADMSG;
		if (h->cpu >= 65536)
			return -EBADMSG;
		copy = malloc(h->size);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, h, h->size);
		off += h->size;
		if (h->event == MAGNET_EVENT_SYSINFO &&
		    h->size >= MAGNET_REC_HDR_SIZE + sizeof(struct magnet_sysinfo)) {
			const struct magnet_sysinfo *si = (const void *)(h + 1);

			if (si->endian == MAGNET_ENDIAN_MAGIC && si->nr_cpus <= 65536)
				m->nr_cpus = si->nr_cpus;
		}
		if (h->event == MAGNET_EVENT_SYSINFO || h->event == MAGNET_EVENT_EVENTDEF) {
			err = fifo_push(&m->meta, &m->meta_head, &m->meta_n,
					&m->meta_cap, copy);
			if (err) {
				free(copy);
				return err;
			}
			continue;
		}
		if (h->cpu >= m->nr_q) {
			unsigned int nr = h->cpu + 1;
			struct merge_q *nq = realloc(m->q, nr * sizeof(*nq));

			if (!nq) {
				free(copy);
				return -ENOMEM;
			}
			memset(nq + m->nr_q, 0, (nr - m->nr_q) * sizeof(*nq));
			m->q = nq;
			m->nr_q = nr;
		}
		q = &m->q[h->cpu];
		err = fifo_push(&q->rec, &q->head, &q->n, &q->cap, copy);
		if (err) {
			free(copy);
			return err;
		}
		m->buffered++;
		if (h->timestamp > m->newest)
			m->newest = h->timestamp;
	}
	return 0;
}

int magnet_merge_next(struct magnet_merge *m, bool flush,
		      const struct magnet_rec_hdr **rec)
{
	const struct magnet_rec_hdr *best = NULL;
	unsigned int i, bi = 0;
	bool all_heads = true;

	free(m->out);
	m->out = NULL;
	if (m->meta_n) {
		m->out = m->meta[m->meta_head++];
		m->meta_n--;
		*rec = m->out;
		return 1;
	}
	if (!m->buffered)
		return 0;
	/* an empty CPU (SYSINFO's, else one seen) may still send older records */
	if (m->nr_cpus > m->nr_q)
		all_heads = false;
	for (i = 0; i < m->nr_q; i++) {
		struct merge_q *q = &m->q[i];
		const struct magnet_rec_hdr *h;

		if (!q->cap && i >= m->nr_cpus)
			continue;	/* a CPU never seen, not announced */
		if (!q->n) {
			all_heads = false;
			continue;
		}
		h = q->rec[q->head];
		if (!best || h->timestamp < best->timestamp) {
			best = h;
			bi = i;
		}
	}
	/*
	 * Safe when every CPU (SYSINFO's nr_cpus, else those seen so far) has
	 * a record waiting: its next one cannot be older.  Else only once the
	 * lookahead is exhausted.
	 */
	if (!flush && !all_heads && m->buffered <= m->max_records &&
	    m->newest - best->timestamp < m->window_ns)
		return 0;
	m->q[bi].head++;
	m->q[bi].n--;
	if (!m->q[bi].n)
		m->q[bi].head = 0;
	m->buffered--;
	if (m->any_out && best->timestamp < m->last_out)
		m->late++;
	else
		m->last_out = best->timestamp;
	m->any_out = true;
	m->out = (void *)best;
	*rec = best;
	return 1;
}

unsigned long long magnet_merge_late(const struct magnet_merge *m)
{
	return m->late;
}

void magnet_merge_free(struct magnet_merge *m)
{
	unsigned int i;
	size_t j;

	if (!m)
		return;
	for (i = 0; i < m->nr_q; i++) {
		for (j = 0; j < m->q[i].n; j++)
			free(m->q[i].rec[m->q[i].head + j]);
		free(m->q[i].rec);
	}
	for (j = 0; j < m->meta_n; j++)
		free(m->meta[m->meta_head + j]);
	free(m->meta);
	free(m->q);
	free(m->out);
	free(m);
}
