// SPDX-License-Identifier: GPL-2.0
/*
 * uffd_read FILE: a read() of FILE that stops inside the kernel's copy to
 * user space, for as long as the test wants.
 *
 * The buffer is an anonymous mapping registered with userfaultfd (missing
 * pages): the kernel's copy_to_user() into it faults, and the fault waits
 * until this program resolves it.  A stream file's read copies with the
 * stream's read_lock held, so while the copy waits, so does everything
 * else that takes that lock (a snapshot's FREEZE, tests/vm/t_bufmode.sh).
 *
 * Prints "faulted" once the read is stopped in its copy, then waits for a
 * line on standard input (or end of file), resolves the fault with a zero
 * page, and prints "read N" (or "read -1 errno E") when the read returns.
 * Exit status 0 when the read returned, 1 on any error, 2 on a usage error.
 * Needs userfaultfd for kernel faults: root, or vm.unprivileged_userfaultfd.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static int fd;
static char *buf;
static size_t len;

static void die(const char *what)
{
	fprintf(stderr, "uffd_read: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *reader(void *arg)
{
	ssize_t n = read(fd, buf, len);

	(void)arg;
	if (n < 0)
		printf("read -1 errno %d\n", errno);
	else
		printf("read %zd\n", n);
	fflush(stdout);
	return NULL;
}

int main(int argc, char **argv)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct uffdio_zeropage zp;
	struct uffd_msg msg;
	struct pollfd p;
	pthread_t t;
	char line[64];
	long uffd;

	if (argc != 2) {
		fprintf(stderr, "usage: uffd_read FILE\n");
		return 2;
	}
	len = (size_t)sysconf(_SC_PAGESIZE) * 16;
	fd = open(argv[1], O_RDONLY);
	if (fd < 0)
		die(argv[1]);
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		die("mmap");
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0)
		die("userfaultfd");
	if (ioctl(uffd, UFFDIO_API, &api))
		die("UFFDIO_API");
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)buf;
	reg.range.len = len;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		die("UFFDIO_REGISTER");
	if (pthread_create(&t, NULL, reader, NULL))
		die("pthread_create");

	p.fd = uffd;
	p.events = POLLIN;
	if (poll(&p, 1, 30000) != 1) {
		fprintf(stderr, "uffd_read: the read did not fault in 30 s\n");
		return 1;
	}
	if (read(uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT)
		die("reading the fault");
	printf("faulted\n");
	fflush(stdout);

	if (!fgets(line, sizeof(line), stdin) && ferror(stdin))
		die("stdin");
	/* every page of the buffer: the copy may go on past the first */
	memset(&zp, 0, sizeof(zp));
	zp.range.start = (uintptr_t)buf;
	zp.range.len = len;
	if (ioctl(uffd, UFFDIO_ZEROPAGE, &zp) && errno != EEXIST)
		die("UFFDIO_ZEROPAGE");
	pthread_join(t, NULL);
	return 0;
}
