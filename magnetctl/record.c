// SPDX-License-Identifier: GPL-2.0-only
/*
 * magnetctl record STREAM -o FILE [--duration SECONDS] [--watermark BYTES]
 *                  [--timeout MS] [--min-events N]
 *
 * Copies a stream file to FILE byte for byte (the trace format is the
 * stream format) until SIGINT/SIGTERM, the duration or the stream's end,
 * then flushes pending LOST records and drains what is left.  Reads are
 * asynchronous (libaio, RECORD_DEPTH in flight) under the file's read rule
 * (docs/IOCTL.md); at a stop the reads in flight are cancelled and what
 * they took is kept, then non-blocking reads under the rule (0, 0, 0)
 * drain the rest.
 *
 * Without --watermark/--timeout/--min-events the rule batches: a quarter
 * of one CPU's ring, at most RECORD_WM_MAX, or RECORD_TIMEOUT_MS, whichever
 * comes first.  The kernel's default rule (a read completes as soon as one
 * record is there) wakes the recorder for nearly every event under load,
 * and those wake-ups, not the records, are what the traced traffic pays.
 * A quarter, not a half: with two sub-buffers a half-ring watermark leaves
 * the writer one sub-buffer of slack while the woken recorder gets to run,
 * and a UDP flood into 2 x 128 KiB lost 6.6 % of its events that way on
 * 6.12 (0.3 % at a quarter; docs/benchmarks.md, read-rule table).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "magnetctl.h"
#include "output.h"

#define RECORD_BUF_SIZE	(1u << 20)
#define RECORD_DEPTH	4
#define RECORD_WM_MAX	(256u << 10)
#define RECORD_TIMEOUT_MS 200

static volatile sig_atomic_t record_stop;

struct recorder {
	const char *out_path;
	int in, out;
	void *buf;
	struct magnet_aio_reader *ar;
	uint32_t watermark, timeout_ms, min_events;
	bool rule_given;		/* any of the three options */
	struct magnet_decoder *dec;
	bool bad_data;			/* decoder complained once */
	unsigned long long bytes, records, lost;
};

static void on_signal(int sig)
{
	(void)sig;
	record_stop = 1;
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);	/* no SA_RESTART: poll/read see EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * @name's file in a magnetfs mount at MAGNETFS_DEFAULT_DIR, if there is one:
 * that mount works where debugfs is off or locked down (no ioctl there).
 */
static bool magnetfs_path(const char *name, char *path, size_t len)
{
	struct statfs sfs;
	struct stat st;

	if (statfs(MAGNETFS_DEFAULT_DIR, &sfs) || sfs.f_type != MAGNETFS_MAGIC)
		return false;
	snprintf(path, len, "%s/%s", MAGNETFS_DEFAULT_DIR, name);
	return !stat(path, &st) && S_ISREG(st.st_mode);
}

/*
 * Resolve STREAM: a path if it contains '/', else ask the kernel, and take
 * the file in /sys/kernel/magnet if magnetfs is mounted there, else the
 * path the kernel reports (debugfs).  @ring gets one CPU's ring size
 * when STREAM is a name (0 for a path: unknown).
 */
static int resolve_stream(const char *stream, char *path, size_t len,
			  uint64_t *ring)
{
	struct magnet_stream_info s;
	struct magnet_ctl *h;
	char what[96];
	int ret;

	*ring = 0;
	if (strchr(stream, '/')) {
		snprintf(path, len, "%s", stream);
		return 0;
	}
	ret = mc_ctl_open(&h);
	if (ret)
		return ret;
	ret = magnet_stream_get(h, stream, &s);
	if (ret) {
		snprintf(what, sizeof(what), "record %s", stream);
		/* No such stream: its file is missing too. */
		ret = ret == -ENOENT ? (mc_ctl_error(h, ret, what), MC_EXIT_NOTLOADED) :
				       mc_ctl_error(h, ret, what);
	} else if (magnetfs_path(stream, path, len)) {
		ret = 0;
	} else if (!s.path[0]) {
		mc_error("record %s: the kernel gave no stream path", stream);
		ret = MC_EXIT_KERNEL;
	} else {
		snprintf(path, len, "%s", s.path);
	}
	magnet_ctl_close(h);
	if (!ret)	/* resolved by name: the geometry is known */
		*ring = (uint64_t)s.subbuf_size * s.subbuf_count;
	return ret;
}

static int write_all(struct recorder *r, const void *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(r->out, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			mc_error("record: write %s: %s", r->out_path, strerror(errno));
			return MC_EXIT_FILE;
		}
		p = (const char *)p + w;
		n -= w;
	}
	return 0;
}

/* Count records and losses in what was read (read returns whole records). */
static void account(struct recorder *r, const void *buf, size_t n)
{
	struct magnet_rec rec;
	size_t off = 0;
	int ret = 0;

	r->bytes += n;
	while (!r->bad_data &&
	       (ret = magnet_rec_next(r->dec, buf, n, &off, &rec)) > 0) {
		r->records++;
		if (rec.kind == MAGNET_REC_LOST)
			r->lost += rec.u.lost.count;
	}
	if (!r->bad_data && ret < 0) {
		fprintf(stderr, "magnetctl: record: warning: stream data: %s (still copied; counts stop here)\n",
			magnet_decoder_errmsg(r->dec));
		r->bad_data = true;
	}
}

/* One read: 1 data, 0 EOF, -errno; *exit_code set on fatal errors. */
static int read_once(struct recorder *r, int *exit_code)
{
	ssize_t n = magnet_stream_read(r->in, r->buf, RECORD_BUF_SIZE);

	*exit_code = 0;
	if (n == -EAGAIN || n == -EINTR)
		return (int)n;
	if (n < 0) {
		mc_error("record: read stream: %s", strerror((int)-n));
		*exit_code = MC_EXIT_FILE;
		return (int)n;
	}
	if (n == 0)
		return 0;
	*exit_code = write_all(r, r->buf, n);
	if (!*exit_code)
		account(r, r->buf, n);
	return 1;
}

/* Keep what an asynchronous read returned; 0 or an exit code. */
static int keep(struct recorder *r, const void *data, size_t n)
{
	int code = write_all(r, data, n);

	if (!code)
		account(r, data, n);
	return code;
}

/* Main loop; returns 0 (stopped), 1 (stream ended) or an exit code. */
static int record_loop(struct recorder *r, double duration)
{
	double end = duration > 0 ? now_s() + duration : 0;
	const void *data;
	int timeout, code;
	ssize_t n;

	while (!record_stop) {
		timeout = -1;
		if (end) {
			double left = end - now_s();

			if (left <= 0)
				break;
			timeout = (int)(left * 1000) + 1;
		}
		n = magnet_aio_reader_next(r->ar, timeout, &data);
		if (n == -EINTR || n == -EAGAIN || n == -ETIMEDOUT)
			continue;
		if (n < 0) {
			mc_error("record: read stream: %s", strerror((int)-n));
			return MC_EXIT_FILE;
		}
		if (n == 0)
			return 1;
		code = keep(r, data, n);
		if (code)
			return code;
	}
	return 0;
}

/* Cancel the reads in flight; keep what they took before the cancel. */
static int record_cancel(struct recorder *r)
{
	const void *data;
	int code = 0;
	ssize_t n;

	while ((n = magnet_aio_reader_cancel(r->ar, &data)) != 0) {
		if (n > 0 && !code)
			code = keep(r, data, n);
		else if (n < 0 && n != -ECANCELED && n != -EINTR &&
			 n != -ETIMEDOUT && n != -EAGAIN)
			break;
	}
	magnet_aio_reader_close(r->ar);
	r->ar = NULL;
	return code;
}

/* Bytes of ring records (not SYSINFO/EVENTDEF) in whole records @buf. */
static size_t ring_bytes(const void *buf, size_t n)
{
	const struct magnet_rec_hdr *h;
	size_t off = 0, ring = 0;

	while (off + sizeof(*h) <= n) {
		h = (const void *)((const char *)buf + off);
		if (h->size < sizeof(*h) || off + h->size > n)
			break;
		if (h->event != MAGNET_EVENT_SYSINFO &&
		    h->event != MAGNET_EVENT_EVENTDEF)
			ring += h->size;
		off += h->size;
	}
	return ring;
}

/*
 * After a stop: write pending LOST records, then read what was in the
 * rings at that moment, and no more: a probe that keeps firing (the
 * recorder's own writes trigger scheduler and file events) must not keep
 * the recorder alive.  A full ring has no room for its LOST record at the
 * flush; it is written once the drain has made room, so flush and drain
 * again while the file has fewer losses than the stream counts (a few
 * rounds at most).
 */
#define RECORD_DRAIN_ROUNDS 4

/* Read what the rings held at the last flush; 0 or an exit code. */
static int drain_once(struct recorder *r, unsigned long long left)
{
	size_t before;
	int ret, code;

	do {
		before = r->bytes;
		ret = read_once(r, &code);
		if (code)
			return code;
		if (ret > 0) {
			size_t got = ring_bytes(r->buf, r->bytes - before);

			left = got >= left ? 0 : left - got;
		}
	} while ((ret > 0 && left) || ret == -EINTR);
	return 0;
}

static int record_drain(struct recorder *r)
{
	struct magnet_stream_stats st;
	int round, code, err;
	bool have_st;

	code = record_cancel(r);
	if (code)
		return code;
	/* everything, below any watermark: a non-blocking read obeys the rule */
	err = magnet_stream_set_watermark(r->in, 0);
	if (!err)
		err = magnet_stream_set_min_events(r->in, 0);
	if (err)
		fprintf(stderr, "magnetctl: record: warning: read rule for the drain: %s\n",
			strerror(-err));
	magnet_stream_set_nonblock(r->in, true);
	for (round = 0; round < RECORD_DRAIN_ROUNDS; round++) {
		err = magnet_stream_fd_flush(r->in);
		if (err)
			fprintf(stderr, "magnetctl: record: warning: flush: %s\n",
				strerror(-err));
		have_st = !magnet_stream_fd_stats(r->in, &st);
		code = drain_once(r, have_st ? st.fill : ~0ULL);
		if (code)
			return code;
		if (!have_st || r->lost >= st.lost)
			break;
	}
	return 0;
}

static int record_finish(struct recorder *r)
{
	int ret = 0;

	if (fsync(r->out) && errno != EINVAL && errno != EROFS) {
		mc_error("record: fsync %s: %s", r->out_path, strerror(errno));
		ret = MC_EXIT_FILE;
	}
	if (close(r->out) && !ret) {
		mc_error("record: close %s: %s", r->out_path, strerror(errno));
		ret = MC_EXIT_FILE;
	}
	return ret;
}

static void print_summary(const struct recorder *r)
{
	if (out_json()) {
		out_open_object(NULL);
		out_string("file", NULL, r->out_path);
		out_uint("bytes", NULL, r->bytes);
		out_uint("records", NULL, r->records);
		out_uint("lost", NULL, r->lost);
		out_uint("watermark", NULL, r->watermark);
		out_uint("timeout_ms", NULL, r->timeout_ms);
		out_uint("min_events", NULL, r->min_events);
		out_close_object();
		return;
	}
	fprintf(stderr, "magnetctl: recorded %llu bytes, %llu records, %llu lost events to %s\n",
		r->bytes, r->records, r->lost, r->out_path);
}

static int parse_record_args(int argc, char **argv, const char **stream,
			     const char **out, double *duration,
			     struct recorder *r)
{
	int i;

	*stream = *out = NULL;
	*duration = 0;
	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (++i >= argc)
				return mc_usage_error("record: '%s' needs a FILE", a);
			*out = argv[i];
		} else if (!strcmp(a, "--duration") || !strcmp(a, "-d")) {
			if (++i >= argc)
				return mc_usage_error("record: '%s' needs SECONDS", a);
			if (mc_parse_seconds(argv[i], duration))
				return mc_usage_error("record: bad duration '%s' (seconds > 0)",
						      argv[i]);
		} else if (!strcmp(a, "--watermark")) {
			if (++i >= argc)
				return mc_usage_error("record: '%s' needs BYTES", a);
			/* 0: a read completes at the first record */
			if (strcmp(argv[i], "0") &&
			    mc_parse_size(argv[i], &r->watermark))
				return mc_usage_error("record: bad watermark '%s' (BYTES, K/M/G suffixes, or 0)",
						      argv[i]);
			r->rule_given = true;
		} else if (!strcmp(a, "--timeout")) {
			if (++i >= argc || mc_parse_u32(argv[i], &r->timeout_ms))
				return mc_usage_error("record: '%s' needs MS", a);
			r->rule_given = true;
		} else if (!strcmp(a, "--min-events")) {
			if (++i >= argc || mc_parse_u32(argv[i], &r->min_events))
				return mc_usage_error("record: '%s' needs N", a);
			r->rule_given = true;
		} else if (a[0] == '-' && a[1]) {
			return mc_usage_error("record: unknown option '%s'", a);
		} else if (!*stream) {
			*stream = a;
		} else {
			return mc_usage_error("record: unexpected argument '%s'", a);
		}
	}
	if (!*stream)
		return mc_usage_error("record: missing STREAM");
	if (!*out)
		return mc_usage_error("record: missing '-o FILE'");
	return 0;
}

static int record_open(struct recorder *r, const char *path)
{
	int err;

	r->in = magnet_stream_open(path, false);
	if (r->in < 0) {
		mc_error("record: open stream %s: %s", path, strerror(-r->in));
		return r->in == -ENOENT ? MC_EXIT_NOTLOADED : MC_EXIT_FILE;
	}
	r->out = open(r->out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (r->out < 0) {
		mc_error("record: open %s: %s", r->out_path, strerror(errno));
		close(r->in);
		return MC_EXIT_FILE;
	}
	r->buf = malloc(RECORD_BUF_SIZE);
	r->dec = magnet_decoder_new();
	if (!r->buf || !r->dec) {
		mc_error("record: out of memory");
		return MC_EXIT_FILE;
	}
	err = magnet_stream_set_watermark(r->in, r->watermark);
	if (!err)
		err = magnet_stream_set_timeout(r->in, r->timeout_ms);
	if (!err)
		err = magnet_stream_set_min_events(r->in, r->min_events);
	if (err) {
		mc_error("record: read rule (watermark %u, timeout %u ms, min-events %u): %s",
			 r->watermark, r->timeout_ms, r->min_events, strerror(-err));
		return MC_EXIT_USAGE;
	}
	err = magnet_aio_reader_open(r->in, RECORD_DEPTH, RECORD_BUF_SIZE, &r->ar);
	if (err) {
		mc_error("record: asynchronous reads: %s", strerror(-err));
		return MC_EXIT_FILE;
	}
	return 0;
}

static int record_run(struct recorder *r, double duration)
{
	int ret = record_loop(r, duration);

	if (ret == 0) {
		ret = record_drain(r);
	} else {
		if (ret == 1)
			ret = 0;	/* stream deleted: nothing left to flush */
		magnet_aio_reader_close(r->ar);
		r->ar = NULL;
	}
	close(r->in);
	if (record_finish(r) && !ret)
		ret = MC_EXIT_FILE;
	return ret;
}

int do_record(int argc, char **argv)
{
	struct recorder r = { .in = -1, .out = -1 };
	const char *stream;
	char path[256];
	double duration;
	uint64_t ring;
	int ret;

	if (argc > 0 && !strcmp(argv[0], "help")) {
		printf("Usage: magnetctl record STREAM -o FILE [--duration SECONDS] [--watermark BYTES]\n"
		       "                        [--timeout MS] [--min-events N]\n");
		return MC_EXIT_OK;
	}
	/*
	 * First of all: a stop asked for while the stream is resolved must
	 * count (a background job of a shell starts with SIGINT ignored).
	 */
	record_stop = 0;
	install_signals();
	ret = parse_record_args(argc, argv, &stream, &r.out_path, &duration, &r);
	if (!ret)
		ret = resolve_stream(stream, path, sizeof(path), &ring);
	if (ret)
		return ret;
	if (!r.rule_given && ring) {
		r.watermark = ring / 4 < RECORD_WM_MAX ? ring / 4 : RECORD_WM_MAX;
		r.timeout_ms = RECORD_TIMEOUT_MS;
	}
	ret = record_open(&r, path);
	if (!ret) {
		if (!out_json())
			fprintf(stderr, "magnetctl: recording %s (watermark %u bytes, timeout %u ms, min-events %u)\n",
				path, r.watermark, r.timeout_ms, r.min_events);
		ret = record_run(&r, duration);
		print_summary(&r);
	} else if (r.out >= 0) {
		magnet_aio_reader_close(r.ar);
		close(r.in);
		close(r.out);
	}
	free(r.buf);
	magnet_decoder_free(r.dec);
	return ret;
}
