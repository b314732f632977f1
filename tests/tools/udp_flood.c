// SPDX-License-Identifier: GPL-2.0
/*
 * udp_flood: send datagrams as fast as possible, bounded.
 *
 *   udp_flood [-t SECONDS] [-i USEC] [-T FILE] HOST PORT COUNT SIZE
 *
 * Sends COUNT datagrams of SIZE bytes (connected UDP socket) to HOST:PORT,
 * back to back (or one every -i microseconds), stopping early after -t
 * seconds (default 10).  Prints "pid=<pid> ino=<socket inode>" before the
 * first send and "sent=<datagrams> bytes=<bytes> errors=<failed sends>
 * elapsed_ms=<ms> cpu_ns=<the sending thread's CPU time>" at the end.  Failed sends (ENOBUFS, ECONNREFUSED from
 * an ICMP error) are counted, not fatal.  -T FILE: each send's own
 * CLOCK_MONOTONIC times right before and after the call and its result,
 * one line "BEFORE_NS AFTER_NS RESULT" per call (tool_common.h), written
 * at the end.  Exit 0 if COUNT were sent.
 */
#include "tool_common.h"

static void usage(void)
{
	fprintf(stderr, "usage: udp_flood [-t SECONDS] [-i USEC] [-T FILE] HOST PORT COUNT SIZE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long long timeout_s = 10, interval_us = 0, count, size;
	unsigned long long sent = 0, bytes = 0, errors = 0;
	struct sockaddr_in sa;
	struct send_times st = { 0 };
	uint64_t t0, c0, deadline;
	int fd, opt;
	char *buf;

	prog_name = "udp_flood";
	while ((opt = getopt(argc, argv, "t:i:T:h")) != -1) {
		switch (opt) {
		case 'T': send_times_open(&st, optarg); break;
		case 't': timeout_s = parse_num("timeout", optarg, 86400); break;
		case 'i': interval_us = parse_num("interval", optarg, 10000000); break;
		default: usage();
		}
	}
	if (argc - optind != 4)
		usage();
	parse_addr(&sa, argv[optind], argv[optind + 1]);
	count = parse_num("count", argv[optind + 2], 1000000000);
	size = parse_num("size", argv[optind + 3], 65507);

	buf = calloc(1, size ? size : 1);
	if (!buf)
		die("malloc:");
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		die("socket:");
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("connect:");
	print_ids(fd);

	t0 = now_ns();
	c0 = thread_cpu_ns();
	deadline = t0 + timeout_s * 1000000000ull;
	while (sent < count) {
		uint64_t before, after;
		ssize_t r;

		send_times_reserve(&st);
		before = now_ns();
		r = send(fd, buf, size, 0);
		after = now_ns();
		send_times_add(&st, before, after, r < 0 ? -errno : r);

		if (r < 0) {
			if (errno != ENOBUFS && errno != ECONNREFUSED && errno != EAGAIN &&
			    errno != EINTR)
				die("send:");
			errors++;
		} else {
			sent++;
			bytes += r;
		}
		if (((sent + errors) & 63) == 0 && now_ns() > deadline) {
			fprintf(stderr, "udp_flood: time limit %llu s reached\n", timeout_s);
			break;
		}
		if (errors > count + 1000) {
			fprintf(stderr, "udp_flood: too many send errors\n");
			break;
		}
		if (interval_us)
			usleep(interval_us);
	}
	close(fd);
	send_times_close(&st);
	printf("sent=%llu bytes=%llu errors=%llu elapsed_ms=%llu cpu_ns=%llu\n", sent, bytes,
	       errors, (unsigned long long)((now_ns() - t0) / 1000000),
	       (unsigned long long)(thread_cpu_ns() - c0));
	return sent == count ? 0 : 1;
}
