// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * adaptive_sender: a TCP sender that adapts to what MAGNET's per-socket
 * statistics show (examples/README.md).
 *
 *   adaptive_sender [-t SECONDS] [-u TARGET_UNSENT] [-p PERIOD_MS] HOST PORT
 *
 * With MAGNET (libmagnet can watch the socket): before each write it
 * reads the socket's figures; while more than TARGET_UNSENT bytes
 * (default 64 KiB) are written but not yet sent it waits, and it sizes
 * each write to one congestion window (cwnd * mss), at most what brings
 * the unsent bytes to the target, 4 KiB .. 256 KiB.
 * A subscription prints one report line per period.  Without MAGNET
 * (no sockstat file, no probes) it falls back to fixed 64 KiB writes.
 * Runs unprivileged.  Output: "key=value" lines, the last ones a summary.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <magnet/libmagnet.h>

#define FIXED_WRITE	(64 * 1024)
#define MIN_WRITE	(4 * 1024)
#define MAX_WRITE	(256 * 1024)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int write_all(int fd, const char *buf, size_t len)
{
	size_t off = 0;
	ssize_t r;

	while (off < len) {
		r = write(fd, buf + off, len - off);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += r;
	}
	return 0;
}

/* Drain the subscription: one report line per period. */
static unsigned long report(int subfd)
{
	struct magnet_sock_stats st;
	struct pollfd p = { .fd = subfd, .events = POLLIN };
	unsigned long n = 0;

	while (poll(&p, 1, 0) > 0 && !magnet_sock_read(subfd, &st)) {
		printf("period=%llu sock_bytes=%llu dev_bytes=%llu unsent=%llu srtt_us=%u cwnd=%u ival_mean_ns=%llu\n",
		       (unsigned long long)st.seq,
		       (unsigned long long)st.sock_bytes,
		       (unsigned long long)st.dev_bytes,
		       (unsigned long long)st.unsent, st.srtt_us, st.snd_cwnd,
		       (unsigned long long)st.ival_mean);
		n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	unsigned long secs = 5, target = 64 * 1024, period = 500;
	unsigned long long writes = 0, bytes = 0, waits = 0, max_unsent = 0;
	unsigned long periods = 0;
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct magnet_sock_stats st;
	static char buf[MAX_WRITE];
	int fd, subfd = -1, err, opt;
	bool magnet;
	uint64_t end;

	while ((opt = getopt(argc, argv, "t:u:p:")) != -1) {
		switch (opt) {
		case 't': secs = strtoul(optarg, NULL, 0); break;
		case 'u': target = strtoul(optarg, NULL, 0); break;
		case 'p': period = strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: adaptive_sender [-t SECONDS] [-u TARGET_UNSENT] [-p PERIOD_MS] HOST PORT\n");
			return 2;
		}
	}
	if (argc - optind != 2 ||
	    inet_pton(AF_INET, argv[optind], &a.sin_addr) != 1) {
		fprintf(stderr, "usage: adaptive_sender [-t SECONDS] [-u TARGET_UNSENT] [-p PERIOD_MS] HOST PORT\n");
		return 2;
	}
	a.sin_port = htons(atoi(argv[optind + 1]));
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("adaptive_sender: connect");
		return 1;
	}

	err = magnet_sock_watch(fd);
	magnet = !err && !magnet_sock_stats(fd, &st);
	if (magnet) {
		subfd = magnet_sock_subscribe(fd, period);
		if (subfd < 0)
			fprintf(stderr, "adaptive_sender: no reports: %s\n",
				strerror(-subfd));
	} else {
		fprintf(stderr, "adaptive_sender: no MAGNET (%s): fixed %d-byte writes\n",
			strerror(err ? -err : EIO), FIXED_WRITE);
	}
	printf("mode=%s\n", magnet ? "magnet" : "fixed");

	end = now_ns() + secs * 1000000000ull;
	while (now_ns() < end) {
		size_t len = FIXED_WRITE;

		if (magnet) {
			if (magnet_sock_stats(fd, &st))
				break;
			if (st.unsent > max_unsent)
				max_unsent = st.unsent;
			if (st.unsent > target) {
				/* the data would wait in the kernel: wait here */
				waits++;
				usleep(1000);
				continue;
			}
			len = (size_t)st.snd_cwnd * (st.mss ? st.mss : 1448);
			/* no more than brings unsent to the target */
			if (len > target - st.unsent)
				len = target - st.unsent;
			if (len < MIN_WRITE)
				len = MIN_WRITE;
			if (len > MAX_WRITE)
				len = MAX_WRITE;
			if (subfd >= 0)
				periods += report(subfd);
		}
		if (write_all(fd, buf, len)) {
			perror("adaptive_sender: write");
			return 1;
		}
		writes++;
		bytes += len;
	}
	if (magnet && !magnet_sock_stats(fd, &st)) {
		if (subfd >= 0)
			periods += report(subfd);
		printf("srtt_us=%u\ncwnd=%u\nretrans=%u\nsock_calls=%llu\n",
		       st.srtt_us, st.snd_cwnd, st.total_retrans,
		       (unsigned long long)st.sock_calls);
	}
	printf("writes=%llu\nbytes=%llu\navg_write=%llu\nwaits=%llu\nmax_unsent=%llu\nperiods=%lu\n",
	       writes, bytes, writes ? bytes / writes : 0, waits, max_unsent,
	       periods);
	if (subfd >= 0)
		close(subfd);
	close(fd);
	return 0;
}
