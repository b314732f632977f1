// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_sink: accept one TCP connection and read it until EOF.
 *
 *   tcp_sink [-b ADDR] [-t SECONDS] PORT
 *
 * Listens on ADDR:PORT (default 0.0.0.0), prints "ready port=<port>" once
 * listening, "pid=<pid> ino=<inode of the accepted socket>" after accept,
 * and "bytes=<total>" at EOF.  Gives up after -t seconds (default 60)
 * with exit 1.  Exit 0 on a clean EOF.
 */
#include "tool_common.h"
#include <poll.h>

static void usage(void)
{
	fprintf(stderr, "usage: tcp_sink [-b ADDR] [-t SECONDS] PORT\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long long timeout_s = 60, total = 0;
	const char *bind_addr = "0.0.0.0";
	struct sockaddr_in sa;
	uint64_t deadline;
	int lfd, fd, opt, one = 1;
	static char buf[65536];

	prog_name = "tcp_sink";
	while ((opt = getopt(argc, argv, "b:t:h")) != -1) {
		switch (opt) {
		case 'b': bind_addr = optarg; break;
		case 't': timeout_s = parse_num("timeout", optarg, 86400); break;
		default: usage();
		}
	}
	if (argc - optind != 1)
		usage();
	parse_addr(&sa, bind_addr, argv[optind]);
	deadline = now_ns() + timeout_s * 1000000000ull;

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0)
		die("socket:");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("bind:");
	if (listen(lfd, 1) < 0)
		die("listen:");
	printf("ready port=%s\n", argv[optind]);
	fflush(stdout);

	for (;;) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };

		if (now_ns() > deadline) {
			fprintf(stderr, "tcp_sink: no connection within %llu s\n", timeout_s);
			return 1;
		}
		if (poll(&p, 1, 200) > 0)
			break;
	}
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept:");
	close(lfd);
	print_ids(fd);

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (now_ns() > deadline) {
			printf("bytes=%llu\n", total);
			fprintf(stderr, "tcp_sink: no EOF within %llu s\n", timeout_s);
			return 1;
		}
		if (poll(&p, 1, 200) <= 0)
			continue;
		r = read(fd, buf, sizeof(buf));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			die("read:");
		}
		if (r == 0)
			break;
		total += r;
	}
	close(fd);
	printf("bytes=%llu\n", total);
	return 0;
}
