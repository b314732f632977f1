// SPDX-License-Identifier: GPL-2.0
/*
 * proc_load: predictable process, memory and syscall activity for the
 * probe-library tests (t_sched.sh, t_mm.sh, t_kprobe.sh).
 *
 *   proc_load fork N [PATH]  fork N children one after another; each
 *                            exits with status 7 (or execs PATH); prints
 *                            pid= and children=PID,PID,...
 *   proc_load touch N        map N fresh anonymous pages and write one
 *                            byte to each (N user write faults); prints
 *                            pid= base= pages= page_size=
 *   proc_load kread N        map N fresh pages and read() N pages of
 *                            /dev/zero into them: the kernel's copy to
 *                            user space faults on each (kernel faults);
 *                            prints pid= base= pages= page_size=
 *   proc_load write N COUNT  write COUNT bytes to /dev/null N times;
 *                            prints pid= fd=
 * Output is key=value words on one line, as the other tools.
 */
#include <sys/mman.h>
#include <sys/wait.h>
#include <fcntl.h>

#include "tool_common.h"

static int do_fork(int n, const char *path)
{
	int i, st;
	pid_t c;

	printf("pid=%d children=", (int)getpid());
	for (i = 0; i < n; i++) {
		fflush(stdout);
		c = fork();
		if (c < 0)
			die("fork");
		if (c == 0) {
			if (path) {
				execl(path, path, (char *)NULL);
				_exit(127);
			}
			_exit(7);
		}
		printf("%s%d", i ? "," : "", (int)c);
		if (waitpid(c, &st, 0) != c)
			die("waitpid");
		if (!path && (!WIFEXITED(st) || WEXITSTATUS(st) != 7))
			die("child %d: status %#x", (int)c, st);
	}
	printf("\n");
	return 0;
}

static int do_touch(long n)
{
	long ps = sysconf(_SC_PAGESIZE), i;
	volatile char *p;

	p = mmap(NULL, n * ps, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	for (i = 0; i < n; i++)
		p[i * ps] = 1;
	printf("pid=%d base=%#lx pages=%ld page_size=%ld\n", (int)getpid(),
	       (unsigned long)p, n, ps);
	return 0;
}

static int do_kread(long n)
{
	long ps = sysconf(_SC_PAGESIZE);
	ssize_t got = 0, r;
	char *p;
	int fd;

	p = mmap(NULL, n * ps, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	fd = open("/dev/zero", O_RDONLY);
	if (fd < 0)
		die("/dev/zero");
	while (got < n * ps) {
		r = read(fd, p + got, n * ps - got);
		if (r <= 0)
			die("read");
		got += r;
	}
	printf("pid=%d base=%#lx pages=%ld page_size=%ld\n", (int)getpid(),
	       (unsigned long)p, n, ps);
	return 0;
}

static int do_write(int n, size_t count)
{
	static char buf[65536];
	int fd, i;

	if (count > sizeof(buf))
		die("count > %zu", sizeof(buf));
	fd = open("/dev/null", O_WRONLY);
	if (fd < 0)
		die("/dev/null");
	for (i = 0; i < n; i++)
		if (write(fd, buf, count) != (ssize_t)count)
			die("write");
	printf("pid=%d fd=%d\n", (int)getpid(), fd);
	return 0;
}

int main(int argc, char **argv)
{
	prog_name = "proc_load";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 3 && !strcmp(argv[1], "fork"))
		return do_fork(atoi(argv[2]), argc > 3 ? argv[3] : NULL);
	if (argc == 3 && !strcmp(argv[1], "touch"))
		return do_touch(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "kread"))
		return do_kread(atol(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "write"))
		return do_write(atoi(argv[2]), strtoul(argv[3], NULL, 0));
	fprintf(stderr, "usage: proc_load fork N [PATH] | touch N | kread N | write N COUNT\n");
	return 2;
}
