// SPDX-License-Identifier: GPL-2.0
/*
 * readpath: the magnetfs read path in a real kernel, one subtest per run,
 * as a third-party client would use it (raw syscalls, libaio, liburing).
 *
 *   readpath SUBTEST STREAM_FILE
 *
 * Events come from UDP datagrams this program sends to 127.0.0.1:9: the
 * test enables the udp_send probe (one 48-byte record per datagram) into
 * the stream and nothing else.  Subtests: watermark timeout timeout-empty
 * min-events nonblock poll epoll sigio aio aio-timeout aio-cancel
 * aio-hang aio-eof uring uring-hang uring-hang-async uring-eof badinput
 * held-span aio-cancel-race aio-cancel-timed sigio-eagain.  Each prints key=value measurements,
 * "ok" or "FAIL: why" and exits 0 (pass), 1 (fail) or 2 (broken setup).
 * Timing assertions are generous lower bounds (a read did wait), never
 * performance assertions.
 */
#include "tool_common.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <libaio.h>
#include <liburing.h>

#include "../../include/uapi/magnet.h"

#define REC	48			/* udp_send record: header + net payload */
#define BUF	(64 * 1024)

static const char *path;
static int fd;
static char buf[BUF];
static int failed;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void fail(const char *fmt, ...)
{
	va_list ap;

	printf("FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failed = 1;
}

/* Probe events in @n bytes of whole records. */
static unsigned long events_in(const char *p, size_t n)
{
	unsigned long ev = 0;
	size_t off = 0;

	while (off + MAGNET_REC_HDR_SIZE <= n) {
		const struct magnet_rec_hdr *h = (const void *)(p + off);

		if (h->size < MAGNET_REC_HDR_SIZE)
			break;
		if (h->event >= MAGNET_EVENT_FIRST_PROBE)
			ev++;
		off += h->size;
	}
	return ev;
}

/* Send @n datagrams, @gap_ms apart, after @delay_ms, from a child. */
static pid_t gen(int n, int gap_ms, int delay_ms)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(9) };
	pid_t pid = fork();
	int s, i;

	if (pid < 0)
		die("fork:");
	if (pid)
		return pid;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0)
		die("socket:");
	usleep(delay_ms * 1000);
	for (i = 0; i < n; i++) {
		if (i && gap_ms)
			usleep(gap_ms * 1000);
		sendto(s, "x", 1, 0, (struct sockaddr *)&sa, sizeof(sa));
	}
	_exit(0);
}

static void gen_wait(pid_t pid)
{
	waitpid(pid, NULL, 0);
}

static void set_u64(unsigned long req, unsigned long long v)
{
	__u64 x = v;

	if (ioctl(fd, req, &x))
		die("ioctl %#lx %llu:", req, v);
}

static void rule(unsigned long long wm, long long tmo, unsigned long long min)
{
	set_u64(MAGNET_IOC_SET_WATERMARK, wm);
	set_u64(MAGNET_IOC_SET_TIMEOUT, (unsigned long long)tmo);
	set_u64(MAGNET_IOC_SET_MIN_EVENTS, min);
}

static void set_nonblock(int on)
{
	int fl = fcntl(fd, F_GETFL);

	fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

/* Take SYSINFO, EVENTDEFs and anything left over: the stream is empty. */
static void drain(void)
{
	rule(0, 0, 0);
	set_nonblock(1);
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	set_nonblock(0);
}

static void t_watermark(void)
{
	pid_t g;
	double t;
	ssize_t n;

	rule(10 * REC, 0, 0);
	g = gen(20, 30, 0);
	t = now_ms();
	n = read(fd, buf, sizeof(buf));
	t = now_ms() - t;
	gen_wait(g);
	printf("bytes=%zd events=%lu waited_ms=%.0f\n", n, n > 0 ? events_in(buf, n) : 0, t);
	if (n < 10 * REC)
		fail("read returned %zd (%s), watermark %d", n, n < 0 ? strerror(errno) : "", 10 * REC);
	else if (t < 150)
		fail("read did not wait for the watermark (%.0f ms)", t);
}

static void t_timeout(void)
{
	pid_t g;
	double t;
	ssize_t n;

	rule(32 * 1024, 500, 0);
	g = gen(3, 20, 0);
	t = now_ms();
	n = read(fd, buf, sizeof(buf));
	t = now_ms() - t;
	gen_wait(g);
	printf("bytes=%zd events=%lu waited_ms=%.0f\n", n, n > 0 ? events_in(buf, n) : 0, t);
	if (n <= 0 || n >= 32 * 1024 || n % 8)
		fail("read returned %zd (%s)", n, n < 0 ? strerror(errno) : "");
	else if (t < 400)
		fail("released after %.0f ms, timeout 500", t);
	else if (t > 10000)
		fail("released only after %.0f ms, timeout 500", t);
}

static void t_timeout_empty(void)
{
	double t;
	ssize_t n;

	rule(32 * 1024, 300, 0);
	t = now_ms();
	n = read(fd, buf, sizeof(buf));
	t = now_ms() - t;
	printf("ret=%zd errno=%d waited_ms=%.0f\n", n, n < 0 ? errno : 0, t);
	if (n != -1 || errno != ETIMEDOUT)
		fail("want ETIMEDOUT, got %zd (%s)", n, strerror(errno));
	else if (t < 250)
		fail("returned after %.0f ms, timeout 300", t);
}

static void t_min_events(void)
{
	unsigned long ev;
	pid_t g;
	double t;
	ssize_t n;

	rule(0, 0, 8);
	g = gen(16, 30, 0);
	t = now_ms();
	n = read(fd, buf, sizeof(buf));
	t = now_ms() - t;
	gen_wait(g);
	ev = n > 0 ? events_in(buf, n) : 0;
	printf("bytes=%zd events=%lu waited_ms=%.0f\n", n, ev, t);
	if (ev < 8)
		fail("%lu events, minimum 8", ev);
	else if (t < 100)
		fail("did not wait for 8 events (%.0f ms)", t);
}

static void t_nonblock(void)
{
	ssize_t n;

	set_nonblock(1);
	n = read(fd, buf, sizeof(buf));
	if (n != -1 || errno != EAGAIN)
		fail("empty stream: want EAGAIN, got %zd (%s)", n, strerror(errno));
	rule(10 * REC, 1000, 0);
	gen_wait(gen(2, 0, 0));
	usleep(200000);
	n = read(fd, buf, sizeof(buf));
	if (n != -1 || errno != EAGAIN)
		fail("2 events, watermark 10: want EAGAIN, got %zd (%s)", n, strerror(errno));
	gen_wait(gen(10, 0, 0));
	usleep(200000);
	n = read(fd, buf, sizeof(buf));
	printf("bytes=%zd\n", n);
	if (n < 10 * REC)
		fail("12 events, watermark 10: got %zd (%s)", n, n < 0 ? strerror(errno) : "");
	set_nonblock(0);
}

static void t_poll(int use_epoll)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct epoll_event ev = { .events = EPOLLIN }, got;
	int ep = -1, r;
	pid_t g;
	double t;

	if (use_epoll) {
		ep = epoll_create1(0);
		if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
			die("epoll:");
	}
	rule(10 * REC, 0, 0);
	gen_wait(gen(2, 0, 0));
	r = use_epoll ? epoll_wait(ep, &got, 1, 300) : poll(&p, 1, 300);
	if (r != 0)
		fail("2 events, watermark 10: readable (%d)", r);
	g = gen(12, 10, 0);
	t = now_ms();
	r = use_epoll ? epoll_wait(ep, &got, 1, 5000) : poll(&p, 1, 5000);
	t = now_ms() - t;
	gen_wait(g);
	printf("ready=%d waited_ms=%.0f\n", r, t);
	if (r != 1 || !(use_epoll ? got.events & EPOLLIN : p.revents & POLLIN))
		fail("not readable after 14 events (%d)", r);
	else if (read(fd, buf, sizeof(buf)) < 10 * REC)
		fail("readable but the read returned less than the watermark");
	if (ep >= 0)
		close(ep);
}

static double cpu_ms(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

#define HOLD_S	6

/*
 * Another file holds a span of the only ring with data: read() skips a
 * held ring, so that data must not make this file's rule met.  poll()
 * says not readable, a read with a 1 s timeout sleeps and times out
 * (it once spun in the kernel, unkillable, until the span was put back),
 * and once the span is put the stream reads as usual.
 */
static void t_held_span(void)
{
	static char meta[64 * 1024];
	struct pollfd p = { .fd = fd, .events = POLLIN };
	unsigned long long held = 0;
	double t, c;
	int pfd[2], pr, i;
	cpu_set_t one;
	char line[64];
	ssize_t n;
	pid_t h;

	/* every event of this test in CPU 0's ring */
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		die("sched_setaffinity:");
	gen_wait(gen(5, 0, 0));
	if (pipe(pfd))
		die("pipe:");
	h = fork();
	if (h < 0)
		die("fork:");
	if (!h) {
		struct magnet_span sp;
		int hfd = open(path, O_RDONLY);

		if (hfd < 0)
			_exit(2);
		/* its pending metadata first, then the span */
		for (i = 0; i < 4; i++) {
			memset(&sp, 0, sizeof(sp));
			sp.flags = MAGNET_SPAN_PARTIAL;
			sp.meta_buf = (uintptr_t)meta;
			sp.meta_len = sizeof(meta);
			if (ioctl(hfd, MAGNET_IOC_GET_SPAN, &sp)) {
				dprintf(pfd[1], "get: %s\n", strerror(errno));
				_exit(2);
			}
			if (sp.len)
				break;
		}
		dprintf(pfd[1], "%llu\n", (unsigned long long)sp.events);
		sleep(HOLD_S);
		ioctl(hfd, MAGNET_IOC_PUT_SPAN);
		_exit(0);
	}
	close(pfd[1]);
	n = read(pfd[0], line, sizeof(line) - 1);
	line[n > 0 ? n : 0] = 0;
	if (sscanf(line, "%llu", &held) != 1)
		die("the holder: %s", line);
	rule(0, 1000, 0);
	pr = poll(&p, 1, 500);
	c = cpu_ms();
	t = now_ms();
	n = read(fd, buf, sizeof(buf));
	t = now_ms() - t;
	c = cpu_ms() - c;
	printf("held_events=%llu poll=%d ret=%zd errno=%d waited_ms=%.0f cpu_ms=%.0f\n",
	       held, pr, n, n < 0 ? errno : 0, t, c);
	if (held != 5)
		fail("the other file holds %llu events, want the 5 sent", held);
	if (pr != 0)
		fail("poll says readable (%d) while all there is lies in a span another file holds", pr);
	if (n != -1 || errno != ETIMEDOUT)
		fail("want ETIMEDOUT while the span is held, got %zd (%s)", n, n < 0 ? strerror(errno) : "data");
	else if (t > (HOLD_S - 2) * 1000)
		fail("the read took %.0f ms: it waited for the span's put, not its 1000 ms timeout", t);
	if (c > t / 2)
		fail("the read spun: %.0f ms of CPU in %.0f ms", c, t);
	waitpid(h, NULL, 0);
	/* put back: consumed by the holder; new events read as usual */
	gen_wait(gen(3, 0, 0));
	n = read(fd, buf, sizeof(buf));
	printf("after_put: ret=%zd events=%lu\n", n, n > 0 ? events_in(buf, n) : 0);
	if (n <= 0 || events_in(buf, n) != 3)
		fail("after the put: want the 3 new events, got %zd bytes", n);
}

static void t_sigio(void)
{
	int sig = SIGRTMIN + 1;
	struct timespec ts = { 0, 300000000 };
	siginfo_t si;
	sigset_t set;
	pid_t g;
	int r;

	sigemptyset(&set);
	sigaddset(&set, sig);
	sigaddset(&set, SIGIO);
	sigprocmask(SIG_BLOCK, &set, NULL);
	rule(10 * REC, 0, 0);
	if (fcntl(fd, F_SETOWN, getpid()) || fcntl(fd, F_SETSIG, sig) ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC))
		die("fcntl:");
	gen_wait(gen(2, 0, 0));
	r = sigtimedwait(&set, &si, &ts);
	if (r >= 0)
		fail("signal %d with 2 events, watermark 10", r);
	g = gen(12, 10, 0);
	ts.tv_sec = 5;
	ts.tv_nsec = 0;
	r = sigtimedwait(&set, &si, &ts);
	gen_wait(g);
	printf("signal=%d si_fd=%d fd=%d si_band=%#lx\n", r, r > 0 ? si.si_fd : -1, fd,
	       r > 0 ? (long)si.si_band : 0L);
	if (r != sig)
		fail("want signal %d, got %d (%s)", sig, r, r < 0 ? strerror(errno) : "");
	else if (si.si_fd != fd || !(si.si_band & POLLIN))
		fail("si_fd %d (fd %d), si_band %#lx", si.si_fd, fd, (long)si.si_band);
	if (read(fd, buf, sizeof(buf)) < 10 * REC)
		fail("signalled but the read returned less than the watermark");
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_ASYNC);
}

#define NR_AIO	8
static char abuf[NR_AIO][BUF];

static io_context_t aio_ctx(void)
{
	io_context_t ctx = 0;
	int r = io_setup(64, &ctx);

	if (r)
		die("io_setup: %s", strerror(-r));
	return ctx;
}

static int aio_submit_reads(io_context_t ctx, struct iocb *cb, int n)
{
	struct iocb *cbs[NR_AIO * 2];
	int i;

	for (i = 0; i < n; i++) {
		io_prep_pread(&cb[i], fd, abuf[i % NR_AIO], BUF, 0);
		cbs[i] = &cb[i];
	}
	return io_submit(ctx, n, cbs);
}

static void t_aio(void)
{
	struct timespec zero = { 0, 0 }, ts = { 15, 0 };
	struct io_event ev[NR_AIO];
	struct iocb cb[NR_AIO];
	io_context_t ctx = aio_ctx();
	long total = 0;
	int r, i, got = 0;
	double t;
	pid_t g;

	rule(10 * REC, 0, 0);
	t = now_ms();
	r = aio_submit_reads(ctx, cb, NR_AIO);
	t = now_ms() - t;
	printf("submitted=%d submit_ms=%.1f\n", r, t);
	if (r != NR_AIO)
		fail("io_submit: %d", r);
	r = io_getevents(ctx, 0, NR_AIO, ev, &zero);
	if (r != 0)
		fail("%d reads complete before any event", r);
	g = gen(200, 5, 0);
	t = now_ms();
	while (got < NR_AIO) {
		r = io_getevents(ctx, 1, NR_AIO - got, ev, &ts);
		if (r <= 0)
			break;
		for (i = 0; i < r; i++) {
			long res = (long)ev[i].res;

			if (res < 10 * REC)
				fail("read %d completed with %ld", got + i, res);
			else
				total += res;
		}
		got += r;
	}
	t = now_ms() - t;
	gen_wait(g);
	printf("completed=%d bytes=%ld ms=%.0f\n", got, total, t);
	if (got != NR_AIO)
		fail("%d of %d reads completed", got, NR_AIO);
	io_destroy(ctx);
}

static void t_aio_timeout(void)
{
	struct timespec ts = { 10, 0 };
	io_context_t ctx = aio_ctx();
	struct io_event ev;
	struct iocb cb;
	double t = now_ms();
	int r;

	rule(32 * 1024, 300, 0);
	if (aio_submit_reads(ctx, &cb, 1) != 1)
		fail("io_submit");
	r = io_getevents(ctx, 1, 1, &ev, &ts);
	t = now_ms() - t;
	printf("events=%d res=%ld ms=%.0f\n", r, r == 1 ? (long)ev.res : 0, t);
	if (r != 1 || (long)ev.res != -ETIMEDOUT)
		fail("want one completion with -ETIMEDOUT");
	else if (t < 250)
		fail("completed after %.0f ms, timeout 300", t);
	io_destroy(ctx);
}

static void t_aio_cancel(void)
{
	struct timespec ts = { 5, 0 };
	io_context_t ctx = aio_ctx();
	struct io_event ev[2], cev;
	struct iocb cb[2];
	int r1, r2, n;

	rule(32 * 1024, 0, 0);
	if (aio_submit_reads(ctx, cb, 2) != 2)
		fail("io_submit");
	r1 = io_cancel(ctx, &cb[1], &cev);
	r2 = io_cancel(ctx, &cb[0], &cev);
	n = io_getevents(ctx, 2, 2, ev, &ts);
	printf("cancel=%d,%d events=%d res=%ld,%ld\n", r1, r2, n,
	       n > 0 ? (long)ev[0].res : 0, n > 1 ? (long)ev[1].res : 0);
	if ((r1 && r1 != -EINPROGRESS) || (r2 && r2 != -EINPROGRESS))
		fail("io_cancel: %d %d", r1, r2);
	if (n != 2 || (long)ev[0].res != -ECANCELED || (long)ev[1].res != -ECANCELED)
		fail("want two completions with -ECANCELED");
	io_destroy(ctx);
}

/*
 * io_cancel() racing with io_submit(): a thread cancels the one read in
 * flight over and over while the main thread submits it again each time
 * it completes.  A cancel that lands between the request's cancel
 * callback being set and its queueing once found nothing to mark and was
 * lost: io_cancel() said EINPROGRESS, the read never completed, and the
 * process's exit would wait for it for good.  Every read must complete
 * with ECANCELED within 5 s.
 */
static io_context_t race_ctx;
static struct iocb race_cb;
static volatile int race_stop;
static unsigned long race_started;

static void *race_canceller(void *arg)
{
	struct io_event ev;

	(void)arg;
	while (!race_stop)
		if (io_cancel(race_ctx, &race_cb, &ev) == -EINPROGRESS)
			race_started++;
	return NULL;
}

static void t_aio_cancel_race(void)
{
	struct timespec ts = { 5, 0 };
	struct iocb *p = &race_cb;
	unsigned long i, bad = 0;
	struct io_event ev;
	double t0 = now_ms();
	pthread_t th;
	int n = 1;

	race_ctx = aio_ctx();
	rule(32 * 1024, 0, 0);
	if (pthread_create(&th, NULL, race_canceller, NULL))
		die("pthread_create");
	for (i = 0; i < 20000 && now_ms() - t0 < 15000; i++) {
		io_prep_pread(&race_cb, fd, abuf[0], BUF, 0);
		if (io_submit(race_ctx, 1, &p) != 1) {
			fail("io_submit %lu", i);
			break;
		}
		n = io_getevents(race_ctx, 1, 1, &ev, &ts);
		if (n != 1) {
			fail("read %lu: no completion 5 s after its cancel (a lost cancel)", i);
			break;
		}
		if ((long)ev.res != -ECANCELED)
			bad++;
	}
	race_stop = 1;
	pthread_join(th, NULL);
	printf("reads=%lu cancels_started=%lu not_ecanceled=%lu\n", i, race_started, bad);
	if (bad)
		fail("%lu reads completed otherwise than with ECANCELED", bad);
	if (n != 1) {
		/* complete the lost read with data, or the exit waits for it */
		rule(0, 0, 0);
		gen_wait(gen(1, 0, 0));
		io_getevents(race_ctx, 1, 1, &ev, &ts);
	}
	io_destroy(race_ctx);
}

/*
 * A read with a long timeout (60 s) on an idle stream below its
 * watermark, cancelled while the file's AIO work item runs: it has just
 * queued the read and is about to sleep until the read's deadline.  The
 * work once re-timed the cancel's immediate run to that deadline, so the
 * cancelled read completed only after its 60 s, and the process's exit
 * (exit_aio() waits uninterruptibly for its reads) stayed in D state as
 * long.  Children pinned to CPU 0 submit a read each time round; a thread
 * on CPU 1 cancels it after a delay swept over the work's run.  Every
 * read must complete with ECANCELED within 1 s; a child whose read did
 * not exits at once with it in flight, and must be gone within 3 s.
 */
#define TC_TIMEOUT_MS	60000
#define TC_CHILDREN	10
#define TC_ROUNDS	150

static volatile int tc_go, tc_stop;
static volatile unsigned int tc_delay_us;

static void pin_cpu(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	sched_setaffinity(0, sizeof(one), &one);
}

static void *tc_canceller(void *arg)
{
	struct io_event ev;
	double t;

	(void)arg;
	pin_cpu(1);
	while (!tc_stop) {
		if (!tc_go)
			continue;
		t = now_ms() + tc_delay_us / 1e3;
		while (now_ms() < t)
			;
		/* before the submission is through: EINVAL, try again */
		t = now_ms() + 200;
		while (io_cancel(race_ctx, &race_cb, &ev) != -EINPROGRESS &&
		       now_ms() < t)
			;
		tc_go = 0;
	}
	return NULL;
}

/* One child: its reads, cancelled; exit 0 all in time, 3 one was not. */
static int tc_child(unsigned int seed)
{
	struct timespec ts = { 1, 0 };
	struct iocb *p = &race_cb;
	struct io_event ev;
	double t0 = now_ms();
	unsigned long i;
	pthread_t th;

	pin_cpu(0);
	race_ctx = aio_ctx();
	if (pthread_create(&th, NULL, tc_canceller, NULL))
		return 2;
	for (i = 0; i < TC_ROUNDS && now_ms() - t0 < 3000; i++) {
		io_prep_pread(&race_cb, fd, abuf[0], BUF, 0);
		tc_delay_us = (seed * 131 + i * 17) % 400;
		tc_go = 1;
		if (io_submit(race_ctx, 1, &p) != 1)
			return 2;
		if (io_getevents(race_ctx, 1, 1, &ev, &ts) != 1) {
			printf("read %lu (cancel %u us after submitting): %s\n",
			       i, tc_delay_us, "not complete 1 s after its cancel");
			/* exit with it in flight: exit_aio() waits for it */
			_exit(3);
		}
		while (tc_go)
			;
		if ((long)ev.res != -ECANCELED) {
			printf("read %lu: res %ld, want ECANCELED\n", i, (long)ev.res);
			_exit(1);
		}
	}
	tc_stop = 1;
	pthread_join(th, NULL);
	printf("child %u: %lu reads, all ECANCELED\n", seed, i);
	_exit(0);
}

static void t_aio_cancel_timed(void)
{
	unsigned int c;
	double t0 = now_ms(), t, worst = 0;
	int status = 0;
	pid_t pid, r;

	rule(32 * 1024, TC_TIMEOUT_MS, 0);
	for (c = 0; c < TC_CHILDREN && now_ms() - t0 < 30000; c++) {
		pid = fork();
		if (pid < 0)
			die("fork:");
		if (!pid)
			_exit(tc_child(c));
		t = now_ms();
		/* its 3 s of reads, 1 s for the last one, 3 s for the exit */
		while ((r = waitpid(pid, &status, WNOHANG)) == 0 &&
		       now_ms() - t < 7000)
			usleep(1000);
		t = now_ms() - t;
		if (r == 0) {
			double te = now_ms();

			/* still there: the exit waits for a cancelled read */
			fail("child %u not gone %.0f ms after it started", c, t);
			rule(0, 0, 0);
			gen_wait(gen(1, 0, 0));
			waitpid(pid, &status, 0);
			printf("child %u gone %.0f ms after the data came\n", c, now_ms() - te);
			rule(32 * 1024, TC_TIMEOUT_MS, 0);
			break;
		}
		if (t > worst)
			worst = t;
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			fail("child %u: %s %d after %.0f ms", c,
			     WIFEXITED(status) ? "exit" : "signal",
			     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), t);
			break;
		}
	}
	printf("children=%u slowest_child_ms=%.0f elapsed_ms=%.0f\n",
	       c, worst, now_ms() - t0);
}

/*
 * SIGIO after a read that found nothing.  File A (O_ASYNC, F_SETSIG,
 * non-blocking, watermark 10 records) is signalled; another file B takes
 * the data first, so A's read says EAGAIN; the next time A's rule is met
 * A must be signalled again (within 2 s).  The same with GET_SPAN.  Such
 * a read once re-armed nothing: A never had a signal again.
 */
static void t_sigio_eagain(void)
{
	static char meta[64 * 1024];
	struct timespec zero = { 0, 0 }, ts = { 2, 0 };
	int sig = SIGRTMIN + 1, fb, r, step;
	struct magnet_span sp;
	siginfo_t si;
	sigset_t set;
	ssize_t n;
	double t;

	fb = open(path, O_RDONLY | O_NONBLOCK);
	if (fb < 0)
		die("open %s:", path);
	while (read(fb, buf, sizeof(buf)) > 0)
		;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigaddset(&set, SIGIO);
	sigprocmask(SIG_BLOCK, &set, NULL);
	rule(10 * REC, 0, 0);
	set_nonblock(1);
	if (fcntl(fd, F_SETOWN, getpid()) || fcntl(fd, F_SETSIG, sig) ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC))
		die("fcntl:");
	while (sigtimedwait(&set, &si, &zero) >= 0)
		;
	for (step = 0; step < 3; step++) {
		gen_wait(gen(12, 0, 0));
		t = now_ms();
		r = sigtimedwait(&set, &si, &ts);
		t = now_ms() - t;
		printf("step %d: signal=%d ms=%.0f\n", step, r, t);
		if (r != sig) {
			fail("step %d: no signal %d within 2 s of 12 events (watermark 10)%s",
			     step, sig, step ? " after a call that found nothing" : "");
			break;
		}
		if (step == 2)
			break;
		/* B takes it all; A finds nothing */
		while (read(fb, buf, sizeof(buf)) > 0)
			;
		if (step == 0) {
			n = read(fd, buf, sizeof(buf));
			printf("step 0: A's read ret=%zd errno=%d\n", n, n < 0 ? errno : 0);
			if (n != -1 || errno != EAGAIN)
				fail("A's read after B took the data: want EAGAIN, got %zd", n);
			continue;
		}
		memset(&sp, 0, sizeof(sp));
		sp.flags = MAGNET_SPAN_PARTIAL;
		sp.meta_buf = (uintptr_t)meta;
		sp.meta_len = sizeof(meta);
		r = ioctl(fd, MAGNET_IOC_GET_SPAN, &sp);
		printf("step 1: A's GET_SPAN ret=%d errno=%d\n", r, r ? errno : 0);
		if (r != -1 || errno != EAGAIN)
			fail("A's GET_SPAN after B took the data: want EAGAIN, got %d", r);
	}
	/* the data is A's to read */
	n = read(fd, buf, sizeof(buf));
	if (!failed && n < 10 * REC)
		fail("signalled, but A's read returned %zd", n);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_ASYNC);
	set_nonblock(0);
	close(fb);
}

/* Reads in flight, then wait to be killed (the test kills us). */
static void t_aio_hang(void)
{
	static struct iocb cb[NR_AIO * 2];
	io_context_t ctx = aio_ctx();
	int r;

	rule(32 * 1024, 0, 0);
	r = aio_submit_reads(ctx, cb, NR_AIO * 2);
	printf("submitted=%d\n", r);
	fflush(stdout);
	for (;;)
		pause();
}

/*
 * How long the -eof subtests wait for their reads.  The deletion that
 * completes them comes from the caller some time after "submitted=": how
 * long depends on the machine (a debug kernel under TCG on a busy host
 * took over 30 s to start the other readers of races.sh), so the callers
 * bound the wait after the deletion themselves (bg_wait) and this only
 * keeps a forgotten reader from waiting forever.
 */
#define EOF_WAIT_S	600

/* Reads in flight while the stream is deleted: all complete. */
static void t_aio_eof(void)
{
	struct timespec ts = { EOF_WAIT_S, 0 };
	struct io_event ev[4];
	struct iocb cb[4];
	io_context_t ctx = aio_ctx();
	int r, got = 0, i;

	rule(32 * 1024, 0, 0);
	r = aio_submit_reads(ctx, cb, 4);
	printf("submitted=%d\n", r);
	fflush(stdout);
	while (got < 4) {
		r = io_getevents(ctx, 1, 4 - got, ev, &ts);
		if (r <= 0)
			break;
		for (i = 0; i < r; i++)
			printf("res=%ld\n", (long)ev[i].res);
		got += r;
	}
	printf("completed=%d\n", got);
	if (got != 4)
		fail("%d of 4 reads completed after the deletion", got);
	io_destroy(ctx);
}

/*
 * io_uring reads in flight, then the process waits to be killed; @flags
 * IOSQE_ASYNC makes io_uring run them in its worker threads, without a
 * non-blocking attempt first.
 */
static void uring_hang(unsigned int flags)
{
	static struct io_uring ring;
	struct io_uring_sqe *sqe;
	int r, i;

	r = io_uring_queue_init(8, &ring, 0);
	if (r)
		die("io_uring_queue_init: %s", strerror(-r));
	rule(32 * 1024, 0, 0);
	for (i = 0; i < 4; i++) {
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_read(sqe, fd, abuf[i], BUF, (__u64)-1);
		sqe->flags |= flags;
	}
	r = io_uring_submit(&ring);
	printf("submitted=%d\n", r);
	fflush(stdout);
	for (;;)
		pause();
}

static void t_uring_hang(void)
{
	uring_hang(0);
}

static void t_uring_hang_async(void)
{
	uring_hang(IOSQE_ASYNC);
}

/* io_uring reads in flight while the stream is deleted: all complete. */
static void t_uring_eof(void)
{
	struct __kernel_timespec ts = { EOF_WAIT_S, 0 };
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	int r, i, got = 0;

	r = io_uring_queue_init(8, &ring, 0);
	if (r)
		die("io_uring_queue_init: %s", strerror(-r));
	rule(32 * 1024, 0, 0);
	for (i = 0; i < 4; i++) {
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_read(sqe, fd, abuf[i], BUF, (__u64)-1);
	}
	r = io_uring_submit(&ring);
	printf("submitted=%d\n", r);
	fflush(stdout);
	while (got < 4) {
		r = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
		if (r)
			break;
		printf("res=%d\n", cqe->res);
		io_uring_cqe_seen(&ring, cqe);
		got++;
	}
	printf("completed=%d\n", got);
	if (got != 4)
		fail("%d of 4 io_uring reads completed after the deletion", got);
	io_uring_queue_exit(&ring);
}

static void t_uring(void)
{
	struct __kernel_timespec ts = { 5, 0 };
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	int r;
	pid_t g;
	double t;

	r = io_uring_queue_init(8, &ring, 0);
	if (r)
		die("io_uring_queue_init: %s", strerror(-r));
	/*
	 * io_uring retries short reads of regular files (debugfs files are)
	 * until the buffer is full: ask for exactly the watermark.
	 */
	rule(10 * REC, 0, 0);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read(sqe, fd, buf, 10 * REC, (__u64)-1);
	r = io_uring_submit(&ring);
	if (r != 1)
		fail("io_uring_submit: %d", r);
	usleep(200000);
	if (io_uring_peek_cqe(&ring, &cqe) == 0)
		fail("completed (%d) before any event", cqe->res);
	g = gen(12, 10, 0);
	t = now_ms();
	r = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
	t = now_ms() - t;
	gen_wait(g);
	printf("wait=%d res=%d ms=%.0f\n", r, r ? 0 : cqe->res, t);
	if (r) {
		struct magnet_stream_stats st = { 0 };

		ioctl(fd, MAGNET_IOC_GET_STATS, &st);
		fail("no completion: %s (stream: written %llu read %llu fill %llu)",
		     strerror(-r), (unsigned long long)st.written,
		     (unsigned long long)st.read, (unsigned long long)st.fill);
	} else if (cqe->res < 10 * REC) {
		fail("completed with %d", cqe->res);
	}
	if (!r)
		io_uring_cqe_seen(&ring, cqe);
	/* the rule met before the submission: completes at once */
	gen_wait(gen(12, 0, 0));
	usleep(100000);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read(sqe, fd, buf, 10 * REC, (__u64)-1);
	io_uring_submit(&ring);
	r = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
	printf("ready: wait=%d res=%d\n", r, r ? 0 : cqe->res);
	if (r || cqe->res < 10 * REC)
		fail("read with the rule met: %d %d", r, r ? 0 : cqe->res);
	io_uring_queue_exit(&ring);
}

static void t_badinput(void)
{
	struct magnet_sysinfo si;
	__u64 v, ring;
	__s64 neg = -1;

	/* SYSINFO: the ring geometry */
	rule(0, 0, 0);
	close(fd);
	fd = open(path, O_RDONLY);
	if (fd < 0 || read(fd, buf, sizeof(buf)) < MAGNET_REC_HDR_SIZE + (int)sizeof(si))
		die("open/read %s:", path);
	memcpy(&si, buf + MAGNET_REC_HDR_SIZE, sizeof(si));
	ring = (__u64)si.subbuf_size * si.subbuf_count;
	if (ioctl(fd, _IO(MAGNET_IOC_MAGIC, 0x1f)) != -1 || errno != ENOTTY)
		fail("unknown ioctl: want ENOTTY");
	v = ring + 1;
	if (ioctl(fd, MAGNET_IOC_SET_WATERMARK, &v) != -1 || errno != EINVAL)
		fail("watermark %llu > ring %llu: want EINVAL", (unsigned long long)v,
		     (unsigned long long)ring);
	v = ring;
	if (ioctl(fd, MAGNET_IOC_SET_WATERMARK, &v))
		fail("watermark = ring size refused");
	if (ioctl(fd, MAGNET_IOC_SET_TIMEOUT, &neg) != -1 || errno != EINVAL)
		fail("negative timeout: want EINVAL");
	v = ring;
	if (ioctl(fd, MAGNET_IOC_SET_MIN_EVENTS, &v) != -1 || errno != EINVAL)
		fail("min events %llu: want EINVAL", (unsigned long long)v);
	set_u64(MAGNET_IOC_SET_TIMEOUT, 1234);
	set_u64(MAGNET_IOC_SET_MIN_EVENTS, 7);
	v = 0;
	if (ioctl(fd, MAGNET_IOC_GET_WATERMARK, &v) || v != ring)
		fail("GET_WATERMARK %llu", (unsigned long long)v);
	if (ioctl(fd, MAGNET_IOC_GET_TIMEOUT, &v) || v != 1234)
		fail("GET_TIMEOUT %llu", (unsigned long long)v);
	if (ioctl(fd, MAGNET_IOC_GET_MIN_EVENTS, &v) || v != 7)
		fail("GET_MIN_EVENTS %llu", (unsigned long long)v);
	printf("ring=%llu\n", (unsigned long long)ring);
}

/* Sum of the "IWI" (irq_work interrupts) line of /proc/interrupts. */
static unsigned long long iwi(void)
{
	unsigned long long sum = 0, v;
	char line[4096], *p, *e;
	FILE *f = fopen("/proc/interrupts", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		p = line;
		while (*p == ' ')
			p++;
		if (strncmp(p, "IWI:", 4))
			continue;
		p += 4;
		for (;;) {
			v = strtoull(p, &e, 10);
			if (e == p)
				break;
			sum += v;
			p = e;
		}
	}
	fclose(f);
	return sum;
}

/*
 * Measurement only (no assertion on it): irq_work interrupts and reads for
 * 2000 events read with the default rule, then for 1000 events read with
 * a watermark of all 1000.
 */
static void t_kicks(void)
{
	unsigned long long i0, i1, i2;
	unsigned long ev = 0, reads = 0;
	ssize_t n;
	pid_t g;

	rule(0, 0, 0);
	i0 = iwi();
	g = gen(2000, 0, 0);
	while (ev < 2000) {
		n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		ev += events_in(buf, n);
		reads++;
	}
	gen_wait(g);
	i1 = iwi();
	printf("default_rule: reads=%lu irq_work=%llu\n", reads, i1 - i0);
	/* the buffer (64 KiB) holds 1365 records: a watermark of 1000 */
	rule(1000 * REC, 20000, 0);
	g = gen(1000, 0, 0);
	n = read(fd, buf, sizeof(buf));
	gen_wait(g);
	i2 = iwi();
	printf("watermark_%d: reads=1 bytes=%zd irq_work=%llu\n", 1000 * REC, n, i2 - i1);
	if (n < 1000 * REC)
		fail("watermark read returned %zd", n);
}

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	{ "watermark", t_watermark },
	{ "timeout", t_timeout },
	{ "timeout-empty", t_timeout_empty },
	{ "min-events", t_min_events },
	{ "nonblock", t_nonblock },
	{ "sigio", t_sigio },
	{ "sigio-eagain", t_sigio_eagain },
	{ "aio", t_aio },
	{ "aio-timeout", t_aio_timeout },
	{ "aio-cancel", t_aio_cancel },
	{ "aio-cancel-race", t_aio_cancel_race },
	{ "aio-cancel-timed", t_aio_cancel_timed },
	{ "aio-hang", t_aio_hang },
	{ "aio-eof", t_aio_eof },
	{ "uring", t_uring },
	{ "uring-hang", t_uring_hang },
	{ "uring-hang-async", t_uring_hang_async },
	{ "uring-eof", t_uring_eof },
	{ "badinput", t_badinput },
	{ "kicks", t_kicks },
	{ "held-span", t_held_span },
};

static void t_poll0(void) { t_poll(0); }
static void t_poll1(void) { t_poll(1); }

int main(int argc, char **argv)
{
	void (*fn)(void) = NULL;
	size_t i;

	prog_name = "readpath";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 3)
		die("usage: readpath SUBTEST STREAM_FILE");
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (!strcmp(argv[1], tests[i].name))
			fn = tests[i].fn;
	if (!strcmp(argv[1], "poll"))
		fn = t_poll0;
	if (!strcmp(argv[1], "epoll"))
		fn = t_poll1;
	if (!fn)
		die("unknown subtest '%s'", argv[1]);
	path = argv[2];
	fd = open(path, O_RDONLY);
	if (fd < 0)
		die("open %s:", path);
	drain();
	fn();
	printf("%s\n", failed ? "not ok" : "ok");
	return failed;
}
