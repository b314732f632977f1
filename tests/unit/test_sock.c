// SPDX-License-Identifier: GPL-2.0
/*
 * libmagnet's per-socket statistics (libmagnet/sock.c): the summary
 * layout, decoding of what a subscription descriptor returns (through a
 * pipe standing in for the kernel) and the argument and error paths that
 * need no kernel (a sockstat path that is missing or not a sockstat file).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <cmocka.h>
#include "magnet/libmagnet.h"

static void test_layout(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct magnet_sock_stats),
			 MAGNET_SOCK_STATS_SIZE_V2);
	/* version 1 is a prefix: an older module fills it */
	assert_int_equal(offsetof(struct magnet_sock_stats, sock_errors),
			 MAGNET_SOCK_STATS_SIZE_V1);
	assert_int_equal(offsetof(struct magnet_sock_stats, abstract_id), 16);
	assert_int_equal(offsetof(struct magnet_sock_stats, sock_calls), 48);
	assert_int_equal(offsetof(struct magnet_sock_stats, ival_count), 80);
	assert_int_equal(offsetof(struct magnet_sock_stats, unsent), 128);
	assert_int_equal(offsetof(struct magnet_sock_stats, srtt_us), 144);
	assert_int_equal(offsetof(struct magnet_sock_stats, sub_dropped), 176);
	assert_int_equal(offsetof(struct magnet_sock_stats, chains), 184);
	assert_int_equal(offsetof(struct magnet_sock_stats, layer_mean), 200);
	assert_int_equal(offsetof(struct magnet_sock_stats, layer_last), 224);
	assert_int_equal(offsetof(struct magnet_sock_stats, rx_sock_calls), 256);
	assert_int_equal(offsetof(struct magnet_sock_stats, rx_dev_frames), 280);
	assert_int_equal(offsetof(struct magnet_sock_stats, rx_chains), 296);
	assert_int_equal(offsetof(struct magnet_sock_stats, rx_layer_mean), 312);
	assert_int_equal(offsetof(struct magnet_sock_stats, rx_layer_last), 336);
	assert_int_equal(sizeof(struct magnet_sock_sub), 8);
}

static void fill(struct magnet_sock_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->version = MAGNET_SOCK_STATS_VERSION;
	st->fd = -1;
	st->flags = MAGNET_SOCK_F_TCP;
	st->abstract_id = 12345;
	st->seq = 7;
	st->sock_calls = 10;
	st->sock_bytes = 40960;
	st->ival_mean = 1000000;
	st->snd_cwnd = 10;
	st->sub_dropped = 2;
}

static int pipe_with(const void *buf, size_t len, int *wfd)
{
	int p[2];

	assert_int_equal(pipe(p), 0);
	if (len)
		assert_int_equal(write(p[1], buf, len), (ssize_t)len);
	if (wfd)
		*wfd = p[1];
	else
		close(p[1]);
	return p[0];
}

static void test_read_ok(void **state)
{
	struct magnet_sock_stats in, out;
	int fd;

	(void)state;
	fill(&in);
	fd = pipe_with(&in, sizeof(in), NULL);
	assert_int_equal(magnet_sock_read(fd, &out), 0);
	assert_memory_equal(&in, &out, sizeof(in));
	assert_int_equal(out.seq, 7);
	assert_int_equal(out.sock_bytes, 40960);
	/* the writer is gone and nothing is left: the subscription ended */
	assert_int_equal(magnet_sock_read(fd, &out), -ENODATA);
	close(fd);
}

static void test_read_two(void **state)
{
	struct magnet_sock_stats in[2], out;
	int fd;

	(void)state;
	fill(&in[0]);
	fill(&in[1]);
	in[1].seq = 8;
	fd = pipe_with(in, sizeof(in), NULL);
	assert_int_equal(magnet_sock_read(fd, &out), 0);
	assert_int_equal(out.seq, 7);
	assert_int_equal(magnet_sock_read(fd, &out), 0);
	assert_int_equal(out.seq, 8);
	close(fd);
}

static void test_read_short(void **state)
{
	struct magnet_sock_stats in, out;
	int fd;

	(void)state;
	fill(&in);
	fd = pipe_with(&in, 100, NULL);
	assert_int_equal(magnet_sock_read(fd, &out), -EBADMSG);
	close(fd);
}

static void test_read_bad_size_field(void **state)
{
	struct magnet_sock_stats in, out;
	int fd;

	(void)state;
	fill(&in);
	in.size = 64;
	fd = pipe_with(&in, sizeof(in), NULL);
	assert_int_equal(magnet_sock_read(fd, &out), -EBADMSG);
	close(fd);
}

/* An older module's version-1 summary: accepted, the receive side zero. */
static void test_read_v1(void **state)
{
	struct magnet_sock_stats in, out;
	int fd;

	(void)state;
	fill(&in);
	in.size = MAGNET_SOCK_STATS_SIZE_V1;
	in.version = 1;
	in.rx_sock_calls = 99;	/* not sent: beyond the summary */
	fd = pipe_with(&in, MAGNET_SOCK_STATS_SIZE_V1, NULL);
	memset(&out, 0xff, sizeof(out));
	assert_int_equal(magnet_sock_read(fd, &out), 0);
	assert_int_equal(out.version, 1);
	assert_int_equal(out.sock_bytes, 40960);
	assert_int_equal(out.rx_sock_calls, 0);
	assert_int_equal(out.rx_layer_last[2], 0);
	close(fd);
}

/* A summary that claims more than was read is corrupt. */
static void test_read_size_beyond(void **state)
{
	struct magnet_sock_stats in, out;
	int fd;

	(void)state;
	fill(&in);
	fd = pipe_with(&in, MAGNET_SOCK_STATS_SIZE_V1, NULL);
	assert_int_equal(magnet_sock_read(fd, &out), -EBADMSG);
	close(fd);
}

static void test_read_bad_version(void **state)
{
	struct magnet_sock_stats in, out;
	int fd;

	(void)state;
	fill(&in);
	in.version = 0;
	fd = pipe_with(&in, sizeof(in), NULL);
	assert_int_equal(magnet_sock_read(fd, &out), -EPROTO);
	close(fd);
}

static void test_read_nonblock(void **state)
{
	struct magnet_sock_stats out;
	int fd, wfd;

	(void)state;
	fd = pipe_with(NULL, 0, &wfd);
	assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(magnet_sock_read(fd, &out), -EAGAIN);
	close(wfd);
	close(fd);
}

static void test_args(void **state)
{
	struct magnet_sock_stats st;

	(void)state;
	assert_int_equal(magnet_sock_read(-1, &st), -EBADF);
	assert_int_equal(magnet_sock_read(0, NULL), -EINVAL);
	assert_int_equal(magnet_sock_stats(3, NULL), -EINVAL);
	assert_int_equal(magnet_sock_stats(-1, &st), -EBADF);
	assert_int_equal(magnet_sock_stats_by_id(1, NULL), -EINVAL);
	assert_int_equal(magnet_sock_watch(-1), -EBADF);
	assert_int_equal(magnet_sock_unwatch(-1), -EBADF);
	assert_int_equal(magnet_sock_subscribe(-1, 100), -EBADF);
	assert_int_equal(magnet_sock_subscribe(0, MAGNET_SOCK_PERIOD_MIN_MS - 1),
			 -ERANGE);
	assert_int_equal(magnet_sock_subscribe(0, MAGNET_SOCK_PERIOD_MAX_MS + 1),
			 -ERANGE);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n++;
	closedir(d);
	return n;
}

/* No sockstat file: every call says so, nothing is left open. */
static void test_no_file(void **state)
{
	struct magnet_sock_stats st;
	int n = count_fds();

	(void)state;
	setenv("MAGNET_SOCKSTAT", "/nonexistent/sockstat", 1);
	/* nothing watched yet: stats needs no file to say so */
	assert_int_equal(magnet_sock_stats(0, &st), -ENOENT);
	assert_int_equal(magnet_sock_unwatch(0), -ENOENT);
	assert_int_equal(magnet_sock_watch(0), -ENOENT);
	assert_int_equal(magnet_sock_stats_by_id(5, &st), -ENOENT);
	assert_int_equal(magnet_sock_subscribe(0, 100), -ENOENT);
	assert_int_equal(count_fds(), n);
}

/*
 * A file that is not the sockstat file (/dev/null): the kernel's error
 * comes back as it is, and a failed subscription closes its descriptor.
 * Runs last: the process's file is then /dev/null for good.
 */
static void test_not_sockstat(void **state)
{
	struct magnet_sock_stats st;
	int n;

	(void)state;
	setenv("MAGNET_SOCKSTAT", "/dev/null", 1);
	n = count_fds();
	assert_int_equal(magnet_sock_subscribe(0, 100), -ENOTTY);
	assert_int_equal(count_fds(), n);
	assert_int_equal(magnet_sock_watch(0), -ENOTTY);
	/* the process's file stays open for later calls */
	assert_int_equal(count_fds(), n + 1);
	assert_int_equal(magnet_sock_stats(0, &st), -ENOTTY);
	assert_int_equal(magnet_sock_stats_by_id(5, &st), -ENOTTY);
	assert_int_equal(magnet_sock_unwatch(0), -ENOTTY);
	assert_int_equal(count_fds(), n + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_read_ok),
		cmocka_unit_test(test_read_two),
		cmocka_unit_test(test_read_short),
		cmocka_unit_test(test_read_bad_size_field),
		cmocka_unit_test(test_read_v1),
		cmocka_unit_test(test_read_size_beyond),
		cmocka_unit_test(test_read_bad_version),
		cmocka_unit_test(test_read_nonblock),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_no_file),
		cmocka_unit_test(test_not_sockstat),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
