// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Per-socket statistics for the socket's owner (docs/SOCKSTAT.md): the
 * sockstat file of magnetfs (or debugfs), one per process for watches and
 * queries, one more per subscription.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "magnet/libmagnet.h"

static pthread_mutex_t sock_lock = PTHREAD_MUTEX_INITIALIZER;
static int sock_fd = -1;	/* the process's sockstat file */

/* $MAGNET_SOCKSTAT, else magnetfs, else debugfs. */
static int sock_open_file(void)
{
	static const char *const paths[] = {
		MAGNETFS_DEFAULT_DIR "/" MAGNET_SOCKSTAT_NAME,
		"/sys/kernel/debug/magnet/" MAGNET_SOCKSTAT_NAME,
	};
	const char *env = getenv("MAGNET_SOCKSTAT");
	int fd, err = -ENOENT;
	size_t i;

	if (env && *env) {
		fd = open(env, O_RDONLY | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		fd = open(paths[i], O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			return fd;
		/* the first path's error unless a later one says more */
		if (err == -ENOENT)
			err = -errno;
	}
	return err;
}

/* The process's file, opened on first use when @create. */
static int sock_file(bool create)
{
	int fd;

	pthread_mutex_lock(&sock_lock);
	if (sock_fd < 0 && create) {
		fd = sock_open_file();
		if (fd >= 0)
			sock_fd = fd;
		pthread_mutex_unlock(&sock_lock);
		return fd;
	}
	fd = sock_fd < 0 ? -ENOENT : sock_fd;
	pthread_mutex_unlock(&sock_lock);
	return fd;
}

static int sock_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

int magnet_sock_watch(int fd)
{
	__s32 sfd = fd;
	int f;

	if (fd < 0)
		return -EBADF;
	f = sock_file(true);
	if (f < 0)
		return f;
	return sock_ioctl(f, MAGNET_IOC_SOCK_WATCH, &sfd);
}

int magnet_sock_unwatch(int fd)
{
	__s32 sfd = fd;
	int f;

	if (fd < 0)
		return -EBADF;
	f = sock_file(false);
	if (f < 0)
		return f;
	return sock_ioctl(f, MAGNET_IOC_SOCK_UNWATCH, &sfd);
}

/*
 * What the kernel returned is a summary of version 1 or later, at least
 * MAGNET_SOCK_STATS_SIZE_V1 bytes: an older module fills less than this
 * header knows (@size, @version say so; the rest stays zero).
 */
static int sock_check(const struct magnet_sock_stats *st, size_t len)
{
	if (len < MAGNET_SOCK_STATS_SIZE_V1 || st->size < MAGNET_SOCK_STATS_SIZE_V1 ||
	    st->size > len)
		return -EBADMSG;
	if (st->version < 1)
		return -EPROTO;
	return 0;
}

int magnet_sock_stats(int fd, struct magnet_sock_stats *st)
{
	int f, err;

	if (!st)
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	f = sock_file(false);
	if (f < 0)
		return f;		/* -ENOENT: nothing watched */
	memset(st, 0, sizeof(*st));
	st->fd = fd;
	err = sock_ioctl(f, MAGNET_IOC_SOCK_STATS, st);
	return err ?: sock_check(st, sizeof(*st));
}

int magnet_sock_stats_by_id(__u64 id, struct magnet_sock_stats *st)
{
	int f, err;

	if (!st)
		return -EINVAL;
	f = sock_file(true);
	if (f < 0)
		return f;
	memset(st, 0, sizeof(*st));
	st->fd = -1;
	st->abstract_id = id;
	err = sock_ioctl(f, MAGNET_IOC_SOCK_STATS_BY_ID, st);
	return err ?: sock_check(st, sizeof(*st));
}

int magnet_sock_subscribe(int fd, unsigned int period_ms)
{
	struct magnet_sock_sub sub = { .fd = fd, .period_ms = period_ms };
	__s32 sfd = fd;
	int f, err;

	if (fd < 0)
		return -EBADF;
	if (period_ms < MAGNET_SOCK_PERIOD_MIN_MS ||
	    period_ms > MAGNET_SOCK_PERIOD_MAX_MS)
		return -ERANGE;
	f = sock_open_file();
	if (f < 0)
		return f;
	err = sock_ioctl(f, MAGNET_IOC_SOCK_WATCH, &sfd);
	if (!err)
		err = sock_ioctl(f, MAGNET_IOC_SOCK_SUBSCRIBE, &sub);
	if (err) {
		close(f);
		return err;
	}
	return f;
}

int magnet_sock_read(int subfd, struct magnet_sock_stats *st)
{
	ssize_t n;

	if (!st)
		return -EINVAL;
	if (subfd < 0)
		return -EBADF;
	memset(st, 0, sizeof(*st));
	do {
		n = read(subfd, st, sizeof(*st));
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ENODATA;	/* the subscription ended */
	return sock_check(st, (size_t)n);
}
