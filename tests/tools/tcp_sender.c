// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_sender: the FTP-like workload of the MAGNET papers.
 *
 *   tcp_sender [-n] [-s SIZE] [-i MS] [-w SECONDS] [-T FILE] HOST PORT COUNT
 *
 * Connects to HOST:PORT (retrying for up to -w seconds, default 5, while
 * the peer is not listening yet), prints "pid=<pid> ino=<socket inode>",
 * then writes SIZE bytes (default 10240) COUNT times, one write() every
 * MS milliseconds (default 20; 0 = back to back) on an absolute schedule.
 * -n sets TCP_NODELAY.  Each write() is a single call for the whole
 * buffer, so the socket layer sees COUNT sends of SIZE bytes.  -T FILE:
 * each write()'s own CLOCK_MONOTONIC times right before and after the
 * call and its result, one line "BEFORE_NS AFTER_NS RESULT" per call
 * (tool_common.h), written at the end.
 * At the end it half-closes, waits (bounded) for the peer to close, and
 * prints "sent=<bytes> writes=<n> elapsed_ms=<ms> retrans_bytes=<n>" (the
 * socket's tcpi_bytes_retrans: data the kernel sent twice, e.g. a tail
 * loss probe when the host is slow).  Exit 0 on success.
 */
#include "tool_common.h"
#include <linux/tcp.h>		/* struct tcp_info with tcpi_bytes_retrans */
#include <poll.h>

static void usage(void)
{
	fprintf(stderr, "usage: tcp_sender [-n] [-s SIZE] [-i MS] [-w SECONDS] [-T FILE] HOST PORT COUNT\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long long size = 10240, interval_ms = 20, wait_s = 5, count;
	unsigned long long sent = 0, writes = 0, retrans = 0;
	struct send_times st = { 0 };
	struct sockaddr_in sa;
	struct timespec next;
	uint64_t t0, deadline;
	int nodelay = 0, fd, opt;
	char *buf;

	prog_name = "tcp_sender";
	while ((opt = getopt(argc, argv, "ns:i:w:T:h")) != -1) {
		switch (opt) {
		case 'T': send_times_open(&st, optarg); break;
		case 'n': nodelay = 1; break;
		case 's': size = parse_num("size", optarg, 1 << 20); break;
		case 'i': interval_ms = parse_num("interval", optarg, 60000); break;
		case 'w': wait_s = parse_num("wait", optarg, 600); break;
		default: usage();
		}
	}
	if (argc - optind != 3)
		usage();
	parse_addr(&sa, argv[optind], argv[optind + 1]);
	count = parse_num("count", argv[optind + 2], 100000000);
	if (size == 0)
		die("size must be > 0");

	buf = malloc(size);
	if (!buf)
		die("malloc:");
	for (unsigned long long i = 0; i < size; i++)
		buf[i] = (char)('a' + i % 26);

	deadline = now_ns() + wait_s * 1000000000ull;
	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			die("socket:");
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		if ((errno != ECONNREFUSED && errno != ENETUNREACH) || now_ns() > deadline)
			die("connect %s:%s:", argv[optind], argv[optind + 1]);
		close(fd);
		usleep(50000);
	}
	if (nodelay && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof(nodelay)) < 0)
		die("TCP_NODELAY:");
	print_ids(fd);

	t0 = now_ns();
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (unsigned long long n = 0; n < count; n++) {
		uint64_t before, after;
		ssize_t r;

		if (n && interval_ms) {
			next.tv_nsec += interval_ms * 1000000ull;
			while (next.tv_nsec >= 1000000000L) {
				next.tv_nsec -= 1000000000L;
				next.tv_sec++;
			}
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
				;
		}
		send_times_reserve(&st);
		before = now_ns();
		r = write(fd, buf, size);
		after = now_ns();
		send_times_add(&st, before, after, r < 0 ? -errno : r);
		if (r < 0) {
			if (errno == EINTR) {
				n--;
				continue;
			}
			die("write:");
		}
		writes++;
		sent += r;
		if ((unsigned long long)r != size) {
			/* Not expected on a blocking socket; finish the buffer. */
			fprintf(stderr, "tcp_sender: short write %zd of %llu\n", r, size);
			for (size_t off = r; off < size; off += r) {
				send_times_reserve(&st);
				before = now_ns();
				r = write(fd, buf + off, size - off);
				after = now_ns();
				send_times_add(&st, before, after, r < 0 ? -errno : r);
				if (r <= 0)
					die("write:");
				writes++;
				sent += r;
			}
		}
	}

	/* Half-close and wait (up to 10 s) until the sink has read everything. */
	if (shutdown(fd, SHUT_WR) < 0)
		die("shutdown:");
	deadline = now_ns() + 10000000000ull;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char tmp[4096];
		ssize_t r;

		if (poll(&p, 1, 200) > 0) {
			r = read(fd, tmp, sizeof(tmp));
			if (r <= 0)
				break;
		}
		if (now_ns() > deadline) {
			fprintf(stderr, "tcp_sender: peer did not close within 10 s\n");
			break;
		}
	}
	{
		struct tcp_info ti;
		socklen_t tl = sizeof(ti);

		memset(&ti, 0, sizeof(ti));
		if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) < 0)
			die("TCP_INFO:");
		retrans = ti.tcpi_bytes_retrans;
	}
	close(fd);
	send_times_close(&st);
	printf("sent=%llu writes=%llu elapsed_ms=%llu retrans_bytes=%llu\n", sent,
	       writes, (unsigned long long)((now_ns() - t0) / 1000000),
	       (unsigned long long)retrans);
	return 0;
}
