// SPDX-License-Identifier: GPL-2.0
/*
 * stream_drain: read a MAGNET stream file to its end through one of
 * libmagnet's read paths and account for every record, as a benchmark
 * client (bench/guest.sh, drain part) and as a check of the readers
 * (tests/vm/t_readpath.sh).
 *
 *   stream_drain [-m read|aio|uring|span] [-d DEPTH] [-b BYTES] [-w BYTES] FILE
 *
 *   -m  read path: blocking read(2) (default), libmagnet's libaio reader,
 *       its io_uring reader, or its span reader (records in place from
 *       the mapped rings, waiting in poll(2); a span whose event count
 *       differs from its records' counts as bad)
 *   -d  reads in flight for aio/uring (default 4)
 *   -b  bytes per read (default 1 MiB)
 *   -w  read watermark set on the file (default: -b for uring, else 0)
 *
 * Reads until the stream ends (end of file after the stream is deleted
 * and drained), walks every record header (a record that does not fit
 * its read or has a size below the header is an error), and prints one
 * line of key=value pairs:
 *
 *   method= reads= bytes= records= events= lost_reported= bad= disorder=
 *   seconds= user_s= sys_s=
 *
 * events counts records other than SYSINFO, LOST and EVENTDEF;
 * lost_reported sums LOST records; disorder counts records (other than
 * SYSINFO and EVENTDEF) older than the one before them from the same CPU
 * (reads handed back out of stream order); seconds runs from the first data to
 * the end.  Exit status 0, 1 on a malformed stream or read error, 2 on
 * bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include <magnet/libmagnet.h>

#define MAX_CPUS 1024

struct tally {
	unsigned long long reads, bytes, records, events, lost, bad;
	unsigned long long disorder;	/* a CPU's timestamp went backwards */
	unsigned long long last_ts[MAX_CPUS];
};

static int account(struct tally *t, const unsigned char *p, size_t n)
{
	size_t off = 0;

	t->reads++;
	t->bytes += n;
	while (off < n) {
		struct magnet_rec_hdr h;

		if (n - off < sizeof(h)) {
			t->bad++;
			return -1;
		}
		memcpy(&h, p + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > n - off) {
			t->bad++;
			return -1;
		}
		if (h.event > MAGNET_EVENT_EVENTDEF && h.cpu < MAX_CPUS) {
			if (h.timestamp < t->last_ts[h.cpu])
				t->disorder++;
			t->last_ts[h.cpu] = h.timestamp;
		}
		if (h.event == MAGNET_EVENT_LOST &&
		    h.size >= sizeof(h) + sizeof(struct magnet_lost)) {
			struct magnet_lost l;

			memcpy(&l, p + off + sizeof(h), sizeof(l));
			t->lost += l.count;
		} else if (h.event > MAGNET_EVENT_EVENTDEF) {
			t->events++;
		}
		t->records++;
		off += h.size;
	}
	return 0;
}

/*
 * One span (or metadata) accounted and put back: 1; 0 at the end; -errno.
 * Waits in poll(2) when there is nothing.
 */
static ssize_t span_next(int fd, struct magnet_span_reader *sr,
			 struct tally *t)
{
	struct magnet_span_view v;
	unsigned long long before;
	int ret;

	while ((ret = magnet_span_reader_get(sr, true, &v)) == -EAGAIN)
		magnet_stream_wait(fd, -1);
	if (ret <= 0)
		return ret;
	if (v.meta_len && account(t, v.meta, v.meta_len))
		return -EPROTO;
	before = t->events;
	if (v.len && account(t, v.data, v.len))
		return -EPROTO;
	if (t->events - before != v.events)
		t->bad++;
	return v.len ? magnet_span_reader_put(sr) ?: 1 : 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(const struct timeval *tv)
{
	return tv->tv_sec + tv->tv_usec / 1e6;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: stream_drain [-m read|aio|uring|span] [-d DEPTH] [-b BYTES] [-w BYTES] FILE\n");
	exit(2);
}

static unsigned long num(const char *opt, const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || !v) {
		fprintf(stderr, "stream_drain: %s: bad number '%s'\n", opt, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	const char *method = "read";
	unsigned long depth = 4, bsize = 1 << 20, wm = 0;
	int have_wm = 0, opt, fd, err = 0;
	struct magnet_aio_reader *ar = NULL;
	struct magnet_uring_reader *ur = NULL;
	struct magnet_span_reader *sr = NULL;
	static struct tally t;
	double t0 = 0, t1;
	struct rusage ru0, ru1;
	char *buf = NULL;

	while ((opt = getopt(argc, argv, "m:d:b:w:")) != -1) {
		switch (opt) {
		case 'm': method = optarg; break;
		case 'd': depth = num("-d", optarg); break;
		case 'b': bsize = num("-b", optarg); break;
		case 'w': wm = strtoul(optarg, NULL, 0); have_wm = 1; break;
		default: usage();
		}
	}
	if (optind != argc - 1)
		usage();
	if (strcmp(method, "read") && strcmp(method, "aio") &&
	    strcmp(method, "uring") && strcmp(method, "span")) {
		fprintf(stderr, "stream_drain: -m: unknown read path '%s'\n",
			method);
		return 2;
	}
	if (!have_wm && !strcmp(method, "uring"))
		wm = bsize;	/* io_uring fills its buffer anyway */
	fd = magnet_stream_open(argv[optind], false);
	if (fd < 0) {
		fprintf(stderr, "stream_drain: %s: %s\n", argv[optind],
			strerror(-fd));
		return 1;
	}
	if (wm) {
		err = magnet_stream_set_watermark(fd, wm);
		if (err) {
			fprintf(stderr, "stream_drain: watermark %lu: %s\n",
				wm, strerror(-err));
			return 1;
		}
	}
	if (!strcmp(method, "aio"))
		err = magnet_aio_reader_open(fd, depth, bsize, &ar);
	else if (!strcmp(method, "uring"))
		err = magnet_uring_reader_open(fd, depth, bsize, &ur);
	else if (!strcmp(method, "span"))
		err = magnet_span_reader_open(fd, &sr);
	else if (!(buf = malloc(bsize)))
		err = -ENOMEM;
	if (err) {
		fprintf(stderr, "stream_drain: %s reader: %s\n", method,
			strerror(-err));
		return 1;
	}
	getrusage(RUSAGE_SELF, &ru0);
	for (;;) {
		const void *data = buf;
		ssize_t n;

		if (sr) {
			n = span_next(fd, sr, &t);
			if (n > 0 && !t0) {
				t0 = now_s();
				getrusage(RUSAGE_SELF, &ru0);
			}
			if (n > 0)
				continue;
		} else if (ar)
			n = magnet_aio_reader_next(ar, -1, &data);
		else if (ur)
			n = magnet_uring_reader_next(ur, -1, &data);
		else if ((n = read(fd, buf, bsize)) < 0)
			n = -errno;
		if (n == -EINTR || n == -ETIMEDOUT || n == -EAGAIN)
			continue;
		if (n < 0) {
			fprintf(stderr, "stream_drain: read: %s\n",
				strerror((int)-n));
			err = 1;
			break;
		}
		if (n == 0)
			break;
		if (!t0) {
			t0 = now_s();
			getrusage(RUSAGE_SELF, &ru0);
		}
		if (account(&t, data, (size_t)n)) {
			fprintf(stderr,
				"stream_drain: malformed record in read %llu\n",
				t.reads);
			err = 1;
			break;
		}
	}
	t1 = now_s();
	getrusage(RUSAGE_SELF, &ru1);
	if (ar)
		magnet_aio_reader_close(ar);
	magnet_uring_reader_close(ur);
	magnet_span_reader_close(sr);
	free(buf);
	close(fd);
	printf("method=%s reads=%llu bytes=%llu records=%llu events=%llu lost_reported=%llu bad=%llu disorder=%llu seconds=%.6f user_s=%.6f sys_s=%.6f\n",
	       method, t.reads, t.bytes, t.records, t.events, t.lost, t.bad,
	       t.disorder,
	       t0 ? t1 - t0 : 0.0,
	       cpu_s(&ru1.ru_utime) - cpu_s(&ru0.ru_utime),
	       cpu_s(&ru1.ru_stime) - cpu_s(&ru0.ru_stime));
	return err;
}
