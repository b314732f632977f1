// SPDX-License-Identifier: GPL-2.0
/*
 * udp_sink: count received datagrams, bounded in time.
 *
 *   udp_sink [-b ADDR] [-t SECONDS] [-q IDLE_MS] [-r RCVBUF] PORT [EXPECT]
 *
 * Binds ADDR:PORT (default 0.0.0.0), prints "ready port=<port>" and
 * "pid=<pid> ino=<socket inode>", then counts datagrams until EXPECT have
 * arrived, or -t seconds (default 30) have passed, or, once the first
 * datagram arrived, nothing came for -q ms (default 2000).  Prints
 * "datagrams=<n> bytes=<b> cpu_ns=<the receiving thread's CPU time>".  Exit 0 (1 if EXPECT was given and not met).
 */
#include "tool_common.h"
#include <poll.h>

static void usage(void)
{
	fprintf(stderr, "usage: udp_sink [-b ADDR] [-t SECONDS] [-q IDLE_MS] [-r RCVBUF] PORT [EXPECT]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long long timeout_s = 30, idle_ms = 2000, expect = 0, rcvbuf = 4 << 20;
	unsigned long long n = 0, bytes = 0;
	const char *bind_addr = "0.0.0.0";
	struct sockaddr_in sa;
	uint64_t deadline, c0, last = 0;
	static char buf[65536];
	int fd, opt, rb;

	prog_name = "udp_sink";
	while ((opt = getopt(argc, argv, "b:t:q:r:h")) != -1) {
		switch (opt) {
		case 'b': bind_addr = optarg; break;
		case 't': timeout_s = parse_num("timeout", optarg, 86400); break;
		case 'q': idle_ms = parse_num("idle", optarg, 3600000); break;
		case 'r': rcvbuf = parse_num("rcvbuf", optarg, 1 << 30); break;
		default: usage();
		}
	}
	if (argc - optind < 1 || argc - optind > 2)
		usage();
	parse_addr(&sa, bind_addr, argv[optind]);
	if (argc - optind == 2)
		expect = parse_num("expect", argv[optind + 1], 1000000000);

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		die("socket:");
	rb = (int)rcvbuf;
	/* SO_RCVBUFFORCE needs CAP_NET_ADMIN; fall back to the capped one. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rb, sizeof(rb)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rb, sizeof(rb));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("bind:");
	printf("ready port=%s\n", argv[optind]);
	print_ids(fd);

	c0 = thread_cpu_ns();
	deadline = now_ns() + timeout_s * 1000000000ull;
	while (!expect || n < expect) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = now_ns();
		ssize_t r;

		if (now > deadline)
			break;
		if (n && now - last > idle_ms * 1000000ull)
			break;
		if (poll(&p, 1, 100) <= 0)
			continue;
		r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			die("recv:");
		}
		n++;
		bytes += r;
		last = now_ns();
	}
	close(fd);
	printf("datagrams=%llu bytes=%llu cpu_ns=%llu\n", n, bytes,
	       (unsigned long long)(thread_cpu_ns() - c0));
	return (expect && n < expect) ? 1 : 0;
}
