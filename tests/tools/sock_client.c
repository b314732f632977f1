// SPDX-License-Identifier: GPL-2.0
/*
 * sock_client: libmagnet's per-socket statistics as an application uses
 * them (tests/vm/t_sockstat.sh).  Output: "key=value" lines.
 *
 *   sock_client send [-s SIZE] [-i GAP_US] [-n NOTSOCK_FILE] [-I ID]
 *                    [-U UNIX_PATH] [-S PERIOD_MS -T SECONDS] HOST PORT COUNT
 *	connect, watch, COUNT writes of SIZE bytes GAP_US apart, wait
 *	0.5 s, print the figures (st_*), then in the same process: watch a
 *	non-socket (-n: notsock=), read a socket by abstract ID (-I: byid=),
 *	receive a socket over SCM_RIGHTS from UNIX_PATH and read its
 *	figures (-U: scm_*), and subscribe with PERIOD_MS for SECONDS while
 *	sending one write per period (-S/-T: sub_n=, sub_seq_first/last=,
 *	sub_bad=).
 *   sock_client recv [-E EAGAINS] [-t SECONDS] PORT COUNT
 *	bind a UDP socket to PORT, watch it, try EAGAINS non-blocking reads
 *	(each fails with EAGAIN: nothing sent yet), print "ready", then read
 *	COUNT datagrams (or until SECONDS pass without one), wait 0.3 s and
 *	print what it read (got=, bytes=, eagain=) and the figures (st_*).
 *   sock_client hold HOST PORT UNIX_PATH
 *	connect (ino=), watch, send 10 writes, then hand the socket to
 *	whoever connects to UNIX_PATH (SCM_RIGHTS), until killed.
 *   sock_client byid ID
 *	the figures of a watched socket by abstract ID (root).
 *   sock_client watchrm HOST PORT
 *	connect, watch, print "watching", sleep until killed.
 */
#include <poll.h>
#include <fcntl.h>
#include <sys/un.h>
#include <netinet/tcp.h>
#include <magnet/libmagnet.h>
#include "tool_common.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void print_stats(const char *p, const struct magnet_sock_stats *st)
{
#define P(f) printf("%s%s=%llu\n", p, #f, (unsigned long long)st->f)
	P(abstract_id); P(flags); P(start_ns); P(now_ns); P(seq);
	P(sock_calls); P(sock_bytes); P(dev_frames); P(dev_bytes);
	P(ival_count); P(ival_mean); P(ival_var); P(ival_min); P(ival_max);
	P(missed); P(unsent); P(unacked); P(srtt_us); P(rttvar_us);
	P(snd_cwnd); P(mss); P(total_retrans); P(tcp_state);
	P(wmem_queued); P(sndbuf); P(sub_dropped);
	P(chains); P(chains_partial); P(size); P(version);
	P(sock_errors); P(rx_sock_calls); P(rx_sock_bytes); P(rx_sock_errors);
	P(rx_dev_frames); P(rx_dev_bytes); P(rx_chains); P(rx_chains_partial);
#undef P
	for (int i = 0; i < MAGNET_SOCK_LAYERS; i++)
		printf("%slayer_mean%d=%llu\n%slayer_last%d=%llu\n", p, i,
		       (unsigned long long)st->layer_mean[i], p, i,
		       (unsigned long long)st->layer_last[i]);
	for (int i = 0; i < MAGNET_SOCK_RX_LAYERS; i++)
		printf("%srx_layer_mean%d=%llu\n%srx_layer_last%d=%llu\n", p, i,
		       (unsigned long long)st->rx_layer_mean[i], p, i,
		       (unsigned long long)st->rx_layer_last[i]);
	fflush(stdout);
}

static int tcp_connect(const char *host, const char *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		die("socket:");
	a.sin_port = htons(parse_num("port", port, 65535));
	if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
		die("bad address '%s'", host);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
		die("connect:");
	return fd;
}

static uint64_t ino_of(int fd)
{
	struct stat sb;

	if (fstat(fd, &sb))
		die("fstat:");
	return sb.st_ino;
}

static void send_n(int fd, size_t size, unsigned long n, unsigned long gap)
{
	static char buf[1 << 20];
	unsigned long i;
	size_t off;
	ssize_t r;

	for (i = 0; i < n; i++) {
		for (off = 0; off < size; off += r) {
			r = write(fd, buf + off, size - off);
			if (r < 0)
				die("write:");
		}
		if (gap)
			usleep(gap);
	}
}

static const char *err_name(int e)
{
	switch (e) {
	case 0: return "0";
	case -EPERM: return "EPERM";
	case -ENOTSOCK: return "ENOTSOCK";
	case -EBADF: return "EBADF";
	case -ENOENT: return "ENOENT";
	default: return strerror(-e);
	}
}

/* Who and which socket (pid=, uid=, ino=), then watch it (watch=). */
static int watch_own(int fd)
{
	int r;

	printf("pid=%d\nuid=%d\nino=%llu\n", getpid(), getuid(),
	       (unsigned long long)ino_of(fd));
	r = magnet_sock_watch(fd);
	printf("watch=%s\n", err_name(r));
	return r;
}

/* The watched socket's figures now (stats=, then st_*). */
static int stats_own(int fd, struct magnet_sock_stats *st)
{
	int r = magnet_sock_stats(fd, st);

	printf("stats=%s\n", err_name(r));
	if (!r)
		print_stats("st_", st);
	return r;
}

static int recv_fd(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char c, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int s = socket(AF_UNIX, SOCK_STREAM, 0), fd;

	strncpy(a.sun_path, path, sizeof(a.sun_path) - 1);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)))
		die("connect %s:", path);
	if (recvmsg(s, &m, 0) <= 0)
		die("recvmsg:");
	cm = CMSG_FIRSTHDR(&m);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		die("no descriptor received");
	memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	close(s);
	return fd;
}

static void subscribe(int fd, unsigned int period, unsigned int secs)
{
	struct magnet_sock_stats st;
	uint64_t end, first = 0, last = 0, prev = 0;
	unsigned long n = 0, bad = 0;
	struct pollfd p;
	int sfd, r;

	sfd = magnet_sock_subscribe(fd, period);
	printf("sub=%s\n", err_name(sfd < 0 ? sfd : 0));
	if (sfd < 0)
		return;
	p.fd = sfd;
	p.events = POLLIN;
	end = mono_ns() + (uint64_t)secs * 1000000000ull;
	while (mono_ns() < end) {
		r = poll(&p, 1, 50);
		if (r < 0)
			die("poll:");
		if (!r)
			continue;
		r = magnet_sock_read(sfd, &st);
		if (r) {
			printf("sub_read=%s\n", err_name(r));
			bad++;
			break;
		}
		if (!n)
			first = st.seq;
		/* consecutive periods, figures growing */
		if (n && (st.seq != prev + 1 || st.sock_calls < last))
			bad++;
		prev = st.seq;
		last = st.sock_calls;
		n++;
		send_n(fd, 100, 1, 0);
	}
	close(sfd);
	printf("sub_n=%lu\nsub_seq_first=%llu\nsub_seq_last=%llu\nsub_bad=%lu\nsub_dropped=%llu\n",
	       n, (unsigned long long)first, (unsigned long long)prev, bad,
	       (unsigned long long)st.sub_dropped);
	fflush(stdout);
}

static int do_send(int argc, char **argv)
{
	unsigned long size = 1000, gap = 0, count, period = 0, secs = 0;
	const char *notsock = NULL, *upath = NULL;
	struct magnet_sock_stats st;
	uint64_t byid = 0;
	int opt, fd, r;

	while ((opt = getopt(argc, argv, "s:i:n:I:U:S:T:")) != -1) {
		switch (opt) {
		case 's': size = parse_num("size", optarg, 1 << 20); break;
		case 'i': gap = parse_num("gap", optarg, 10000000); break;
		case 'n': notsock = optarg; break;
		case 'I': byid = parse_num("id", optarg, ~0ull); break;
		case 'U': upath = optarg; break;
		case 'S': period = parse_num("period", optarg, 100000); break;
		case 'T': secs = parse_num("seconds", optarg, 600); break;
		default: return 1;
		}
	}
	if (argc - optind != 3)
		die("usage: send [opts] HOST PORT COUNT");
	count = parse_num("count", argv[optind + 2], 10000000);
	fd = tcp_connect(argv[optind], argv[optind + 1]);
	if (watch_own(fd))
		return 1;
	printf("t_watched=%llu\n", (unsigned long long)mono_ns());
	fflush(stdout);
	send_n(fd, size, count, gap);
	usleep(500000);
	if (stats_own(fd, &st))
		return 1;
	if (notsock) {
		int nfd = open(notsock, O_RDONLY);

		if (nfd < 0)
			die("open %s:", notsock);
		printf("notsock_watch=%s\n", err_name(magnet_sock_watch(nfd)));
		printf("notsock_stats=%s\n",
		       err_name(magnet_sock_stats(nfd, &st)));
		close(nfd);
		printf("closedfd_watch=%s\n", err_name(magnet_sock_watch(nfd)));
	}
	if (byid)
		printf("byid=%s\n", err_name(magnet_sock_stats_by_id(byid, &st)));
	if (upath) {
		int sfd = recv_fd(upath);

		printf("scm_ino=%llu\n", (unsigned long long)ino_of(sfd));
		printf("scm_watch=%s\n", err_name(magnet_sock_watch(sfd)));
		r = magnet_sock_stats(sfd, &st);
		printf("scm_stats=%s\n", err_name(r));
		if (!r)
			print_stats("scm_", &st);
		close(sfd);
	}
	if (period)
		subscribe(fd, period, secs);
	printf("done\n");
	fflush(stdout);
	close(fd);
	return 0;
}

static int do_recv(int argc, char **argv)
{
	unsigned long count, eagains = 0, secs = 10, got = 0, bytes = 0, eagain = 0;
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct timeval tv = { 0 };
	struct magnet_sock_stats st;
	char buf[65536];
	int opt, fd;
	ssize_t n;

	while ((opt = getopt(argc, argv, "E:t:")) != -1) {
		switch (opt) {
		case 'E': eagains = parse_num("eagains", optarg, 100000); break;
		case 't': secs = parse_num("seconds", optarg, 600); break;
		default: return 1;
		}
	}
	if (argc - optind != 2)
		die("usage: recv [-E EAGAINS] [-t SECONDS] PORT COUNT");
	a.sin_port = htons(parse_num("port", argv[optind], 65535));
	count = parse_num("count", argv[optind + 1], 10000000);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)))
		die("udp port %s:", argv[optind]);
	tv.tv_sec = secs;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		die("SO_RCVTIMEO:");
	if (watch_own(fd))
		return 1;
	for (unsigned long i = 0; i < eagains; i++)
		if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) < 0 && errno == EAGAIN)
			eagain++;
	printf("ready\n");
	fflush(stdout);
	while (got < count) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;		/* SECONDS without a datagram */
		got++;
		bytes += n;
	}
	usleep(300000);
	printf("got=%lu\nbytes=%lu\neagain=%lu\n", got, bytes, eagain);
	if (stats_own(fd, &st))
		return 1;
	printf("done\n");
	fflush(stdout);
	close(fd);
	return 0;
}

static int do_hold(int argc, char **argv)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char c = 'x', cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int fd, l, s;

	if (argc != 4)
		die("usage: hold HOST PORT UNIX_PATH");
	fd = tcp_connect(argv[1], argv[2]);
	printf("pid=%d\nuid=%d\nino=%llu\nwatch=%s\n", getpid(), getuid(),
	       (unsigned long long)ino_of(fd), err_name(magnet_sock_watch(fd)));
	send_n(fd, 1000, 10, 0);
	umask(0);
	unlink(argv[3]);
	strncpy(a.sun_path, argv[3], sizeof(a.sun_path) - 1);
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 4))
		die("unix %s:", argv[3]);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		s = accept(l, NULL, NULL);
		if (s < 0)
			die("accept:");
		memset(cbuf, 0, sizeof(cbuf));
		cm = CMSG_FIRSTHDR(&m);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
		if (sendmsg(s, &m, 0) < 0)
			die("sendmsg:");
		close(s);
	}
}

static int do_byid(int argc, char **argv)
{
	struct magnet_sock_stats st;
	int r;

	if (argc != 2)
		die("usage: byid ID");
	r = magnet_sock_stats_by_id(parse_num("id", argv[1], ~0ull), &st);
	printf("byid=%s\n", err_name(r));
	if (!r)
		print_stats("st_", &st);
	return r ? 1 : 0;
}

static int do_watchrm(int argc, char **argv)
{
	int fd;

	if (argc != 3)
		die("usage: watchrm HOST PORT");
	fd = tcp_connect(argv[1], argv[2]);
	printf("ino=%llu\nwatch=%s\nwatching\n", (unsigned long long)ino_of(fd),
	       err_name(magnet_sock_watch(fd)));
	fflush(stdout);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	prog_name = "sock_client";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		die("usage: sock_client send|recv|hold|byid|watchrm ...");
	if (!strcmp(argv[1], "send"))
		return do_send(argc - 1, argv + 1);
	if (!strcmp(argv[1], "hold"))
		return do_hold(argc - 1, argv + 1);
	if (!strcmp(argv[1], "recv"))
		return do_recv(argc - 1, argv + 1);
	if (!strcmp(argv[1], "byid"))
		return do_byid(argc - 1, argv + 1);
	if (!strcmp(argv[1], "watchrm"))
		return do_watchrm(argc - 1, argv + 1);
	die("unknown mode '%s'", argv[1]);
}
