// SPDX-License-Identifier: GPL-2.0-only
/*
 * magnetctl record STREAM -o FILE [--duration SECONDS] [--watermark BYTES]
 *                  [--timeout MS | --switch-timer MS] [--min-events N]
 *
 * Moves the stream's records to FILE as they are (the trace format is the
 * stream format) until SIGINT/SIGTERM, the duration or the stream's end,
 * then flushes pending LOST records and drains what is left.  The records
 * are taken in place, a sub-buffer (or the readable part of one) at a
 * time: the rings are mapped read-only and each span goes from the
 * mapping to FILE with one write(2) (libmagnet's span reader,
 * docs/IOCTL.md "Spans").  Nothing is copied into a read buffer, no
 * record is decoded, and no kernel worker copies on the recorder's
 * behalf; the counts in the summary come from the spans and the
 * stream's counters.
 *
 * The recorder sleeps in poll() under the file's read rule (docs/IOCTL.md)
 * and takes everything there is when it wakes: the rule is met, or its
 * timeout passed (then whatever there is, as a read would return it: the
 * sub-buffers being written up to what is committed).  Without
 * --watermark/--timeout/--min-events the rule batches: a quarter of one
 * CPU's ring, at most RECORD_WM_MAX, or RECORD_TIMEOUT_MS, whichever comes
 * first.  The kernel's default rule (the first record) wakes the recorder
 * for nearly every event under load, and those wake-ups, not the records,
 * are what the traced traffic pays.  A quarter, not a half: with two
 * sub-buffers a half-ring watermark leaves the writer one sub-buffer of
 * slack while the woken recorder gets to run, and a UDP flood into
 * 2 x 128 KiB lost 6.6 % of its events that way on 6.12 (0.3 % at a
 * quarter; docs/benchmarks.md, read-rule table).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "magnetctl.h"
#include "output.h"

#define RECORD_WM_MAX	(256u << 10)
#define RECORD_TIMEOUT_MS 200

static volatile sig_atomic_t record_stop;

struct recorder {
	const char *in_path, *out_path;
	int in, out;
	struct magnet_span_reader *sr;
	uint32_t watermark, timeout_ms, min_events;
	uint32_t switch_ms;		/* --switch-timer, 0: not given */
	bool rule_given;		/* any of the three options */
	unsigned long long bytes, events;
	unsigned long long lost0, lost;	/* the stream's count at start, since */
	unsigned long long unreported;	/* lost with no LOST record in FILE */
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
 * @name's file in the magnetfs mount at MAGNETFS_DEFAULT_DIR, mounted now
 * if it is not (mc_magnetfs_mount()): that mount works where debugfs is off
 * or locked down (no ioctl there).  0, or mc_magnetfs_mount()'s -errno, or
 * -ENOENT when the mount has no such file.
 */
static int magnetfs_path(const char *name, char *path, size_t len)
{
	struct stat st;
	int err;

	err = mc_magnetfs_mount();
	if (err)
		return err;
	snprintf(path, len, "%s/%s", MAGNETFS_DEFAULT_DIR, name);
	return !stat(path, &st) && S_ISREG(st.st_mode) ? 0 : -ENOENT;
}

/*
 * Resolve STREAM: a path if it contains '/', else ask the kernel, and take
 * the file in /sys/kernel/magnet (magnetfs, mounted there now if it is
 * not), else the path the kernel reports (debugfs).  A caller who may not
 * mount magnetfs may not read debugfs either: that fails here, saying how
 * to mount it.  @ring gets one CPU's ring size when STREAM is a name (0
 * for a path: unknown).
 */
static int resolve_stream(const char *stream, char *path, size_t len,
			  uint64_t *ring)
{
	struct magnet_stream_info s;
	struct magnet_ctl *h;
	char what[96];
	int ret, fs;

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
		ret = mc_ctl_error(h, ret, what);
	} else if (!(fs = magnetfs_path(stream, path, len))) {
		ret = 0;
	} else if (fs == -EPERM || fs == -EACCES || !s.path[0]) {
		mc_error("record %s: %s", stream, mc_magnetfs_hint(fs));
		ret = fs == -EPERM || fs == -EACCES ? MC_EXIT_PERM : MC_EXIT_KERNEL;
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

/*
 * Take spans and write them to FILE until nothing is left or @left bytes
 * of ring records were taken (what the rings held when the recorder woke
 * or stopped).  Returns 0 (no more for now), 1 (the stream ended) or an
 * exit code.
 */
static int take_spans(struct recorder *r, unsigned long long left)
{
	struct magnet_span_view v;
	int ret, code;

	/* at least once: metadata alone may be what made the file ready */
	do {
		ret = magnet_span_reader_get(r->sr, true, &v);
		if (ret == -EAGAIN)
			return 0;
		if (ret == -EBUSY) {
			mc_error("record: %s is a flight recorder (overwrite mode) whose writers run: take snapshots (magnetctl stream snapshot)",
				 r->in_path);
			return MC_EXIT_FILE;
		}
		if (ret < 0) {
			mc_error("record: read stream: %s", strerror(-ret));
			return MC_EXIT_FILE;
		}
		if (ret == 0)
			return 1;
		code = write_all(r, v.meta, v.meta_len);
		if (!code)
			code = write_all(r, v.data, v.len);
		if (code)
			return code;
		r->bytes += v.meta_len + v.len;
		r->events += v.events;
		left = v.len >= left ? 0 : left - v.len;
		if (v.len && (ret = magnet_span_reader_put(r->sr))) {
			mc_error("record: put span: %s", strerror(-ret));
			return MC_EXIT_FILE;
		}
	} while (left);
	return 0;
}

/* Main loop; returns 0 (stopped), 1 (stream ended) or an exit code. */
static int record_loop(struct recorder *r, double duration)
{
	double end = duration > 0 ? now_s() + duration : 0;
	struct magnet_stream_stats st;
	int timeout, ret;

	while (!record_stop) {
		timeout = r->timeout_ms ? (int)r->timeout_ms : -1;
		if (end) {
			double left = end - now_s();

			if (left <= 0)
				break;
			if (timeout < 0 || left * 1000 < timeout)
				timeout = (int)(left * 1000) + 1;
		}
		/*
		 * The rule met, its timeout, a stop or the end: take what is
		 * there now, and no more, or a flood would keep the recorder
		 * taking a record at a time from the sub-buffer being written.
		 */
		ret = magnet_stream_wait(r->in, timeout);
		if (ret < 0 && ret != -EINTR) {
			mc_error("record: poll stream: %s", strerror(-ret));
			return MC_EXIT_FILE;
		}
		if (record_stop)
			break;
		ret = take_spans(r, magnet_stream_fd_stats2(r->in, &st, sizeof(st)) ?
				    ~0ULL : st.fill);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * After a stop: write pending LOST records, then take what was in the
 * rings at that moment, and no more: a probe that keeps firing (the
 * recorder's own writes trigger scheduler and file events) must not keep
 * the recorder alive.  A full ring has no room for its LOST record at the
 * flush; it is written once the drain has made room, so flush and drain
 * again while the stream says losses are still unreported (a few rounds
 * at most).
 */
#define RECORD_DRAIN_ROUNDS 4

static int record_drain(struct recorder *r)
{
	struct magnet_stream_stats st;
	int round, code, err;
	bool have_st = false;

	for (round = 0; round < RECORD_DRAIN_ROUNDS; round++) {
		err = magnet_stream_fd_flush(r->in);
		if (err)
			fprintf(stderr, "magnetctl: record: warning: flush: %s\n",
				strerror(-err));
		have_st = !magnet_stream_fd_stats2(r->in, &st, sizeof(st));
		code = take_spans(r, have_st ? st.fill : ~0ULL);
		if (code)
			return code == 1 ? 0 : code;
		if (!have_st || !st.lost_pending)
			break;
	}
	if (have_st && !magnet_stream_fd_stats2(r->in, &st, sizeof(st))) {
		r->lost = st.lost - r->lost0;
		r->unreported = st.lost_pending;
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
	if (r->unreported)
		fprintf(stderr, "magnetctl: record: warning: %llu lost events have no LOST record in %s yet (their rings stayed full; magnetctl stream show counts them)\n",
			r->unreported, r->out_path);
	if (out_json()) {
		out_open_object(NULL);
		out_string("file", NULL, r->out_path);
		out_uint("bytes", NULL, r->bytes);
		out_uint("events", NULL, r->events);
		out_uint("lost", NULL, r->lost);
		out_uint("watermark", NULL, r->watermark);
		out_uint("timeout_ms", NULL, r->timeout_ms);
		out_uint("min_events", NULL, r->min_events);
		out_close_object();
		return;
	}
	fprintf(stderr, "magnetctl: recorded %llu bytes, %llu events, %llu lost events to %s\n",
		r->bytes, r->events, r->lost, r->out_path);
}

static int parse_record_args(int argc, char **argv, const char **stream,
			     const char **out, double *duration,
			     struct recorder *r)
{
	static const struct option opts[] = {
		{ "output",	  required_argument, NULL, 'o' },
		{ "duration",	  required_argument, NULL, 'd' },
		{ "watermark",	  required_argument, NULL, 'W' },
		{ "timeout",	  required_argument, NULL, 'T' },
		{ "switch-timer", required_argument, NULL, 'S' },
		{ "min-events",	  required_argument, NULL, 'M' },
		{ NULL, 0, NULL, 0 },
	};
	/* getopt_long over "record ARGS...": options anywhere, --opt=V too */
	char **gv = argv - 1;
	int c;

	*stream = *out = NULL;
	*duration = 0;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc + 1, gv, ":o:d:", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			*out = optarg;
			break;
		case 'd':
			if (mc_parse_seconds(optarg, duration))
				return mc_usage_error("record: bad duration '%s' (seconds > 0)",
						      optarg);
			break;
		case 'W':
			/* 0: a read completes at the first record */
			if (strcmp(optarg, "0") &&
			    mc_parse_size(optarg, &r->watermark))
				return mc_usage_error("record: bad watermark '%s' (BYTES, K/M/G suffixes, or 0)",
						      optarg);
			r->rule_given = true;
			break;
		case 'T':
			if (mc_parse_u32(optarg, &r->timeout_ms))
				return mc_usage_error("record: bad timeout '%s' (MS)", optarg);
			r->rule_given = true;
			break;
		case 'S':
			if (mc_parse_u32(optarg, &r->switch_ms) || !r->switch_ms)
				return mc_usage_error("record: bad switch timer '%s' (MS > 0)",
						      optarg);
			break;
		case 'M':
			if (mc_parse_u32(optarg, &r->min_events))
				return mc_usage_error("record: bad min-events '%s' (N)", optarg);
			r->rule_given = true;
			break;
		case ':':
			return mc_usage_error("record: '%s' needs a value", gv[optind - 1]);
		default:
			return mc_option_error("record", gv[optind - 1]);
		}
	}
	if (optind < argc + 1)
		*stream = gv[optind++];
	if (optind < argc + 1)
		return mc_usage_error("record: unexpected argument '%s'", gv[optind]);
	if (!*stream)
		return mc_usage_error("record: missing STREAM");
	if (r->switch_ms && r->timeout_ms)
		return mc_usage_error("record: --switch-timer is the rule's timeout: give one of --switch-timer and --timeout");
	if (!*out)
		return mc_usage_error("record: missing '-o FILE'");
	return 0;
}

/*
 * The kernel's lockdown mode ("integrity", "confidentiality") if it is
 * locked down, else NULL.  Lockdown refuses debugfs files that have an
 * ioctl or mmap (stream files do) to everyone, root included.
 */
static const char *lockdown_mode(char *buf, size_t len)
{
	char *a, *b;
	FILE *f;

	f = fopen("/sys/kernel/security/lockdown", "re");
	if (!f)
		return NULL;
	a = fgets(buf, len, f);
	fclose(f);
	if (!a || !(a = strchr(buf, '[')) || !(b = strchr(a, ']')))
		return NULL;
	*b = 0;
	return strcmp(a + 1, "none") ? a + 1 : NULL;
}

static int record_open(struct recorder *r, const char *path)
{
	struct magnet_stream_stats st;
	struct statfs sfs;
	const char *mode;
	char buf[128];
	int err;

	r->in_path = path;
	r->in = magnet_stream_open(path, false);
	if (r->in == -EPERM && !statfs(path, &sfs) && sfs.f_type == DEBUGFS_MAGIC &&
	    (mode = lockdown_mode(buf, sizeof(buf)))) {
		mc_error("record: open stream %s: %s: the kernel is locked down (%s), which refuses debugfs stream files; read the stream through magnetfs (mount -t magnetfs none %s)",
			 path, strerror(-r->in), mode, MAGNETFS_DEFAULT_DIR);
		return MC_EXIT_PERM;
	}
	if (r->in == -EACCES || r->in == -EPERM) {
		mc_error("record: open stream %s: %s: %s", path, strerror(-r->in),
			 mc_stream_perm_hint(path));
		return MC_EXIT_PERM;
	}
	if (r->in < 0) {
		mc_error("record: open stream %s: %s", path, strerror(-r->in));
		return r->in == -ENOENT ? MC_EXIT_NOENT : MC_EXIT_FILE;
	}
	r->out = open(r->out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (r->out < 0) {
		mc_error("record: open %s: %s", r->out_path, strerror(errno));
		close(r->in);
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
	err = magnet_span_reader_open(r->in, &r->sr);
	if (err) {
		mc_error("record: span reader: %s", strerror(-err));
		return MC_EXIT_FILE;
	}
	if (!magnet_stream_fd_stats2(r->in, &st, sizeof(st)))
		r->lost0 = st.lost;
	return 0;
}

static int record_run(struct recorder *r, double duration)
{
	struct magnet_stream_stats st;
	int ret = record_loop(r, duration);

	if (ret == 0) {
		ret = record_drain(r);
	} else if (ret == 1) {
		/* stream deleted: everything was taken, the LOST records too */
		ret = 0;
		if (!magnet_stream_fd_stats2(r->in, &st, sizeof(st))) {
			r->lost = st.lost - r->lost0;
			r->unreported = st.lost_pending;
		}
	}
	magnet_span_reader_close(r->sr);
	r->sr = NULL;
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
		       "                        [--timeout MS | --switch-timer MS] [--min-events N]\n");
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
	/* LTTng's name: partial sub-buffers reach FILE at least this often */
	if (r.switch_ms)
		r.timeout_ms = r.switch_ms;
	ret = record_open(&r, path);
	if (!ret) {
		if (!out_json())
			fprintf(stderr, "magnetctl: recording %s (watermark %u bytes, timeout %u ms, min-events %u)\n",
				path, r.watermark, r.timeout_ms, r.min_events);
		ret = record_run(&r, duration);
		print_summary(&r);
	} else if (r.out >= 0) {
		magnet_span_reader_close(r.sr);
		close(r.in);
		close(r.out);
	}
	return ret;
}
