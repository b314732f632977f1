// SPDX-License-Identifier: GPL-2.0-only
/*
 * magnetctl export [--listen ADDR:PORT] [--max-keys N] [--corr-stream STREAM]:
 * a Prometheus exporter (docs/PROMETHEUS.md).  One thread, one poll loop:
 *   - the listening socket: a client's request is read (8 KiB at most, 2 s
 *     at most), GET /metrics answered with metrics.c's exposition, made
 *     from netlink requests at that moment; anything else gets 404 or 405;
 *   - with --corr-stream, that stream's file: its CORR records are folded
 *     into per-step latency histograms as they arrive (export is then
 *     that stream's reader).
 * MAGNET need not be loaded: a scrape then says magnet_up 0.  SIGINT or
 * SIGTERM ends it.
 */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "magnetctl.h"
#include "metrics.h"

#define EXPORT_DEFAULT_LISTEN	"127.0.0.1:9743"
#define REQ_MAX			8192
#define CORR_BUF		(256 << 10)

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* "ADDR:PORT" or "[ADDR6]:PORT" -> a listening socket, or -1 (message printed). */
static int listen_on(const char *spec, int *code)
{
	char host[256];
	const char *colon = strrchr(spec, ':');
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE };
	struct addrinfo *res, *ai;
	size_t hl;
	int fd = -1, one = 1, err;

	*code = MC_EXIT_USAGE;
	if (!colon || colon == spec || !colon[1]) {
		mc_error("export: --listen '%s': expected ADDR:PORT", spec);
		return -1;
	}
	hl = colon - spec;
	if (spec[0] == '[' && hl >= 2 && spec[hl - 1] == ']') {
		spec++;
		hl -= 2;
	}
	if (hl >= sizeof(host)) {
		mc_error("export: --listen '%s': address too long", spec);
		return -1;
	}
	memcpy(host, spec, hl);
	host[hl] = '\0';
	err = getaddrinfo(host, colon + 1, &hints, &res);
	if (err) {
		mc_error("export: --listen %s:%s: %s", host, colon + 1,
			 gai_strerror(err));
		return -1;
	}
	*code = MC_EXIT_FILE;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, 16))
			break;
		err = errno;
		close(fd);
		fd = -1;
		errno = err;
	}
	if (fd < 0)
		mc_error("export: --listen %s:%s: %s", host, colon + 1,
			 strerror(errno));
	freeaddrinfo(res);
	return fd;
}

static void send_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= w;
	}
}

static void respond(int fd, const char *status, const char *type,
		    const char *body, size_t len)
{
	char head[256];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %s\r\nContent-Type: %s\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n",
			 status, type, len);

	send_all(fd, head, n);
	send_all(fd, body, len);
}

struct exporter {
	struct mc_metrics_opts opts;
	struct mc_corr_hists *hists;
	struct magnet_decoder *dec;
	const char *corr_stream;
	int corr_fd;
	unsigned char *buf;
};

static void serve(struct exporter *ex, int cfd)
{
	struct timeval tv = { .tv_sec = 2 };
	char req[REQ_MAX + 1], *body = NULL;
	size_t got = 0, blen = 0;
	struct magnet_ctl *h = NULL;
	struct timespec t0, t1;
	ssize_t r;
	FILE *o;

	/* 2 s for the whole request, however slowly it trickles in */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (got < REQ_MAX) {
		r = recv(cfd, req + got, REQ_MAX - got, 0);
		if (r <= 0)
			break;
		got += r;
		req[got] = '\0';
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			break;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (t1.tv_sec - t0.tv_sec > 2)
			break;
	}
	req[got] = '\0';
	if (strncmp(req, "GET ", 4) && strncmp(req, "HEAD ", 5)) {
		respond(cfd, "405 Method Not Allowed", "text/plain", "GET only\n", 9);
		return;
	}
	if (strncmp(strchr(req, ' ') + 1, "/metrics", 8) ||
	    !strchr(" ?", strchr(req, ' ')[9])) {
		respond(cfd, "404 Not Found", "text/plain", "see /metrics\n", 13);
		return;
	}
	o = open_memstream(&body, &blen);
	if (!o) {
		respond(cfd, "500 Internal Server Error", "text/plain", "no memory\n", 10);
		return;
	}
	if (magnet_ctl_open(&h))
		h = NULL;
	mc_metrics_write(h, o, &ex->opts);
	if (h)
		magnet_ctl_close(h);
	fclose(o);
	respond(cfd, "200 OK", "text/plain; version=0.0.4; charset=utf-8", body,
		req[0] == 'H' ? 0 : blen);
	free(body);
}

/* Open --corr-stream's file if it is not open; 0 or an exit code. */
static int corr_open(struct exporter *ex, bool quiet)
{
	struct magnet_stream_info si;
	struct magnet_ctl *h;
	int ret;

	if (ex->corr_fd >= 0 || !ex->corr_stream)
		return 0;
	if (magnet_ctl_open(&h))
		return quiet ? 0 : mc_ctl_open(&h);
	ret = magnet_stream_get(h, ex->corr_stream, &si);
	magnet_ctl_close(h);
	if (ret) {
		if (!quiet)
			mc_error("export: --corr-stream %s: %s", ex->corr_stream,
				 strerror(-ret));
		return mc_errno_exit(ret);
	}
	ret = magnet_stream_open(si.path, true);
	if (ret == -EACCES || ret == -EPERM) {
		if (!quiet)
			mc_error("export: --corr-stream %s: %s: %s", si.path,
				 strerror(-ret), mc_stream_perm_hint(si.path));
		return MC_EXIT_PERM;
	}
	if (ret < 0) {
		if (!quiet)
			mc_error("export: %s: %s", si.path, strerror(-ret));
		return MC_EXIT_FILE;
	}
	ex->corr_fd = ret;
	magnet_decoder_reset(ex->dec);
	return 0;
}

/* Fold what the stream has; closes it at its end (stream deleted). */
static void corr_read(struct exporter *ex)
{
	struct magnet_rec rec;
	ssize_t n;
	size_t off;

	for (;;) {
		n = magnet_stream_read(ex->corr_fd, ex->buf, CORR_BUF);
		if (n == -EINTR)
			continue;
		if (n == -EAGAIN)
			return;
		if (n <= 0) {
			close(ex->corr_fd);
			ex->corr_fd = -1;
			return;
		}
		off = 0;
		while (magnet_rec_next(ex->dec, ex->buf, n, &off, &rec) == 1)
			mc_hist_fold(ex->hists, &rec);
	}
}

#define EXPORT_USAGE \
	"Usage: magnetctl export [--listen ADDR:PORT] [--max-keys N] [--corr-stream STREAM]\n"

int do_export(int argc, char **argv)
{
	const char *listen_spec = EXPORT_DEFAULT_LISTEN;
	struct exporter ex = { .corr_fd = -1 };
	struct sigaction sa = { .sa_handler = on_signal };
	uint32_t max_keys = 100;
	int lfd, code = MC_EXIT_OK;

	static const struct option opts[] = {
		{ "listen",	 required_argument, NULL, 'l' },
		{ "max-keys",	 required_argument, NULL, 'm' },
		{ "corr-stream", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	if (argc >= 1 && !strcmp(argv[0], "help")) {
		printf(EXPORT_USAGE);
		return MC_EXIT_OK;
	}
	/* getopt_long over "export ARGS...": options as --opt V or --opt=V */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc + 1, argv - 1, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			listen_spec = optarg;
			break;
		case 'm':
			if (mc_parse_u32(optarg, &max_keys))
				return mc_usage_error("export: --max-keys '%s': not a number",
						      optarg);
			break;
		case 'c':
			if (!mc_name_ok(optarg))
				return mc_usage_error("export: --corr-stream '%s': not a stream name",
						      optarg);
			ex.corr_stream = optarg;
			break;
		case ':':
			return mc_usage_error("export: %s needs a value", argv[optind - 2]);
		default:
			return mc_option_error("export", argv[optind - 2]);
		}
	}
	if (optind < argc + 1)
		return mc_usage_error("export: unexpected argument '%s'", argv[optind - 1]);
	ex.opts.max_keys = max_keys;
	if (ex.corr_stream) {
		ex.hists = calloc(1, sizeof(*ex.hists));
		ex.dec = magnet_decoder_new();
		ex.buf = malloc(CORR_BUF);
		if (!ex.hists || !ex.dec || !ex.buf) {
			mc_error("export: out of memory");
			code = MC_EXIT_FILE;
			goto out;
		}
		ex.hists->dec = ex.dec;
		ex.opts.hists = ex.hists;
		ex.opts.hist_stream = ex.corr_stream;
		code = corr_open(&ex, false);
		if (code)
			goto out;
	}
	lfd = listen_on(listen_spec, &code);
	if (lfd < 0)
		goto out;
	code = MC_EXIT_OK;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	printf("export: serving http://%s/metrics\n", listen_spec);
	fflush(stdout);
	while (!stop) {
		struct pollfd p[2] = {
			{ .fd = lfd, .events = POLLIN },
			{ .fd = ex.corr_fd, .events = POLLIN },
		};
		int n = poll(p, ex.corr_fd >= 0 ? 2 : 1, 1000);

		if (n < 0 && errno != EINTR) {
			mc_error("export: poll: %s", strerror(errno));
			code = MC_EXIT_FILE;
			break;
		}
		if (n > 0 && ex.corr_fd >= 0 && p[1].revents)
			corr_read(&ex);
		if (n > 0 && (p[0].revents & POLLIN)) {
			int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

			if (cfd >= 0) {
				if (ex.corr_stream)
					corr_open(&ex, true);
				serve(&ex, cfd);
				close(cfd);
			}
		}
	}
	close(lfd);
out:
	if (ex.corr_fd >= 0)
		close(ex.corr_fd);
	magnet_decoder_free(ex.dec);
	free(ex.hists);
	free(ex.buf);
	return code;
}
