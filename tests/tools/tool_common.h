/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers shared by the MAGNET test traffic tools.
 *
 * Every tool prints machine-readable "key=value" lines on stdout (flushed
 * at once, so a test script can wait for them) and diagnostics on stderr.
 */
#ifndef MAGNET_TOOL_COMMON_H
#define MAGNET_TOOL_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static const char *prog_name = "tool";

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;
	int err = errno;

	fprintf(stderr, "%s: ", prog_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (fmt[0] && fmt[strlen(fmt) - 1] == ':')
		fprintf(stderr, " %s", strerror(err));
	fputc('\n', stderr);
	exit(2);
}

/* Parse a non-negative integer argument or die. */
static unsigned long long parse_num(const char *what, const char *s,
				    unsigned long long max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-' || v > max)
		die("bad %s '%s' (0..%llu)", what, s, max);
	return v;
}

/* CPU time of the calling thread, ns (softirq work it ran included). */
static inline uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* IPv4 address and port into @sa, or die. */
static void parse_addr(struct sockaddr_in *sa, const char *host, const char *port)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)parse_num("port", port, 65535));
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		die("bad IPv4 address '%s'", host);
}

/* The socket's inode number: what MAGNET records as abstract_id. */
static unsigned long long sock_ino(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		die("fstat:");
	return (unsigned long long)st.st_ino;
}

static void print_ids(int fd)
{
	printf("pid=%d ino=%llu\n", (int)getpid(), sock_ino(fd));
	fflush(stdout);
}

/*
 * Each send's own times (-T FILE of tcp_sender and udp_flood):
 * CLOCK_MONOTONIC, the clock of MAGNET's records (docs/FORMAT.md), read
 * right before and right after the call, kept in memory and written at the
 * end as one line per call: "BEFORE_NS AFTER_NS RESULT" (bytes or -errno).
 */
struct send_times {
	FILE *f;
	uint64_t (*t)[3];
	size_t n, cap;
};

static void send_times_open(struct send_times *st, const char *path)
{
	memset(st, 0, sizeof(*st));
	st->f = fopen(path, "w");
	if (!st->f)
		die("%s:", path);
}

/* Room for one more entry, taken outside the timed interval. */
static void send_times_reserve(struct send_times *st)
{
	if (!st->f || st->n < st->cap)
		return;
	st->cap = st->cap ? 2 * st->cap : 1024;
	st->t = realloc(st->t, st->cap * sizeof(*st->t));
	if (!st->t)
		die("realloc:");
}

static void send_times_add(struct send_times *st, uint64_t before,
			   uint64_t after, long long ret)
{
	if (!st->f)
		return;
	st->t[st->n][0] = before;
	st->t[st->n][1] = after;
	st->t[st->n][2] = (uint64_t)ret;
	st->n++;
}

static void send_times_close(struct send_times *st)
{
	if (!st->f)
		return;
	for (size_t i = 0; i < st->n; i++)
		fprintf(st->f, "%llu %llu %lld\n", (unsigned long long)st->t[i][0],
			(unsigned long long)st->t[i][1], (long long)st->t[i][2]);
	if (fclose(st->f))
		die("send times:");
	free(st->t);
}

#endif /* MAGNET_TOOL_COMMON_H */
