// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Stream files (magnetfs): open, read whole records, poll, ioctls. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "internal.h"

int magnet_stream_open(const char *path, bool nonblock)
{
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | (nonblock ? O_NONBLOCK : 0));
	return fd < 0 ? -errno : fd;
}

int magnet_stream_set_nonblock(int fd, bool nonblock)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -errno;
	fl = nonblock ? fl | O_NONBLOCK : fl & ~O_NONBLOCK;
	return fcntl(fd, F_SETFL, fl) < 0 ? -errno : 0;
}

ssize_t magnet_stream_read(int fd, void *buf, size_t len)
{
	ssize_t n = read(fd, buf, len);

	return n < 0 ? -errno : n;
}

int magnet_stream_wait(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int n = poll(&pfd, 1, timeout_ms);

	return n < 0 ? -errno : n;
}

int magnet_stream_fd_flush(int fd)
{
	return ioctl(fd, MAGNET_IOC_FLUSH) < 0 ? -errno : 0;
}

int magnet_stream_fd_stats(int fd, struct magnet_stream_stats *st)
{
	/* the first layout: never more than an old binary's struct holds */
	return ioctl(fd, MAGNET_IOC_GET_STATS_V1, st) < 0 ? -errno : 0;
}

int magnet_stream_fd_stats2(int fd, struct magnet_stream_stats *st, size_t sz)
{
	if (sz < MAGNET_STREAM_STATS_SIZE_V1 || sz > sizeof(*st))
		return -EINVAL;
	return ioctl(fd, _IOC(_IOC_READ, MAGNET_IOC_MAGIC,
			      _IOC_NR(MAGNET_IOC_GET_STATS), sz), st) < 0 ?
		-errno : 0;
}
