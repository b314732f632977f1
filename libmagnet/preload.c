// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libmagnet_preload.so: records an unmodified program's socket calls into
 * a MAGNET stream as application events (MAGNET_EVENT_APP).
 *
 *	MAGNET_STREAM=app LD_PRELOAD=libmagnet_preload.so ./program
 *
 * send, sendto, sendmsg, write, writev, recv, recvfrom, recvmsg, read,
 * readv (and the _FORTIFY_SOURCE variants of the receive calls) are
 * wrapped; only calls on sockets are recorded (fstat() S_ISSOCK, cached
 * per descriptor and forgotten on close/dup2/dup3).  Each call's entry and
 * exit times (CLOCK_MONOTONIC, the kernel records' clock), return value
 * and byte count go into a per-thread batch, written to the stream file
 * with one write(2) when the batch is full, when its oldest record is
 * older than MAGNET_FLUSH_MS (checked at the next recorded call), at
 * thread exit, before fork() and at process exit.  The record's abstract
 * ID is the socket's inode number, the key the kernel's network probes
 * use.  See docs/INTERPOSER.md.
 *
 * Environment:
 *	MAGNET_STREAM	 stream name (/sys/kernel/magnet/NAME, else
 *			 /sys/kernel/debug/magnet/NAME) or a path with '/'
 *	MAGNET_BATCH	 records per batch, 1..819 (default 128)
 *	MAGNET_FLUSH_MS	 age of the oldest record that forces a flush at the
 *			 next call, 0..60000 (default 200; 0: only when full)
 *	MAGNET_PRELOAD_STATS=1  print the counters at exit (stderr)
 *
 * Safe to use from signal handlers and threads: buffers come from mmap()
 * and are claimed with atomics, never with locks or malloc(); a call made
 * while this thread is inside the interposer (a signal handler) passes
 * through unrecorded and is counted as skipped.  If the stream cannot be
 * opened the program runs unmodified, after one warning on stderr.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <uapi/magnet.h>

#define API __attribute__((visibility("default")))
#define TLS __thread __attribute__((tls_model("initial-exec")))

#define BATCH_MAX	(MAGNET_APP_WRITE_MAX / MAGNET_APP_REC_SIZE)
#define FD_CACHE	65536
#define FD_NOT_SOCK	UINT64_MAX

struct app_rec {
	struct magnet_rec_hdr hdr;
	struct magnet_app_payload p;
};
_Static_assert(sizeof(struct app_rec) == MAGNET_APP_REC_SIZE, "record size");

/* One thread's batch.  @busy: 1 while its thread (or the exit flush) uses it. */
struct tbuf {
	struct tbuf *next;		/* all buffers ever made */
	atomic_int owned;		/* a live thread has it */
	atomic_int busy;
	unsigned int n;
	uint64_t oldest;		/* entry_ns of recs[0] */
	struct app_rec recs[BATCH_MAX];
};

static ssize_t (*real_send)(int, const void *, size_t, int);
static ssize_t (*real_sendto)(int, const void *, size_t, int,
			      const struct sockaddr *, socklen_t);
static ssize_t (*real_sendmsg)(int, const struct msghdr *, int);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_recv)(int, void *, size_t, int);
static ssize_t (*real_recvfrom)(int, void *, size_t, int, struct sockaddr *,
				socklen_t *);
static ssize_t (*real_recvmsg)(int, struct msghdr *, int);
static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_readv)(int, const struct iovec *, int);
static ssize_t (*real_read_chk)(int, void *, size_t, size_t);
static ssize_t (*real_recv_chk)(int, void *, size_t, size_t, int);
static ssize_t (*real_recvfrom_chk)(int, void *, size_t, size_t, int,
				    struct sockaddr *, socklen_t *);
static int (*real_close)(int);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);

static atomic_int stream_fd = -1;	/* -1: not recording */
static unsigned int batch = 128;
static uint64_t flush_ns = 200000000ull;
static bool print_stats;
static _Atomic(struct tbuf *) all_bufs;
static _Atomic uint64_t fd_cache[FD_CACHE];	/* 0 unknown, ino, FD_NOT_SOCK */
static pthread_key_t tkey;
static bool have_tkey;

/* counters, reported at exit */
static atomic_ullong n_events;		/* calls recorded */
static atomic_ullong n_batches;		/* batches handed to the kernel */
static atomic_ullong n_writes;		/* write(2) calls on the stream */
static atomic_ullong n_undelivered;	/* records a write could not deliver */
static atomic_ullong n_skipped;		/* calls made inside the interposer */
static atomic_int last_err;

static TLS struct tbuf *my_buf;
static TLS int in_hook;

static void resolve(void)
{
#define R(name) do { if (!real_##name) \
	*(void **)&real_##name = dlsym(RTLD_NEXT, #name); } while (0)
	R(send); R(sendto); R(sendmsg); R(write); R(writev);
	R(recv); R(recvfrom); R(recvmsg); R(read); R(readv);
	R(close); R(dup2); R(dup3);
#undef R
	if (!real_read_chk)
		*(void **)&real_read_chk = dlsym(RTLD_NEXT, "__read_chk");
	if (!real_recv_chk)
		*(void **)&real_recv_chk = dlsym(RTLD_NEXT, "__recv_chk");
	if (!real_recvfrom_chk)
		*(void **)&real_recvfrom_chk = dlsym(RTLD_NEXT, "__recvfrom_chk");
}

#define NEED(name) do { if (__builtin_expect(!real_##name, 0)) resolve(); } while (0)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Print with write(2) only: usable at exit and after fork. */
__attribute__((format(printf, 1, 2)))
static void say(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 1)
		n = sizeof(line) - 1;
	NEED(write);
	if (n > 0 && real_write(2, line, n) < 0)
		return;
}

/* ---- which descriptors are sockets ----------------------------------- */

/* The socket's inode number (its abstract ID), 0 if @fd is no socket. */
static uint64_t sock_ino(int fd)
{
	uint64_t v = 0;
	struct stat st;

	if (fd < 0)
		return 0;
	if (fd < FD_CACHE) {
		v = atomic_load_explicit(&fd_cache[fd], memory_order_relaxed);
		if (v)
			return v == FD_NOT_SOCK ? 0 : v;
	}
	if (fd == atomic_load_explicit(&stream_fd, memory_order_relaxed))
		return 0;
	if (fstat(fd, &st) < 0)
		return 0;	/* EBADF: the call will fail, nothing to cache */
	v = S_ISSOCK(st.st_mode) && st.st_ino ? (uint64_t)st.st_ino : FD_NOT_SOCK;
	if (fd < FD_CACHE)
		atomic_store_explicit(&fd_cache[fd], v, memory_order_relaxed);
	return v == FD_NOT_SOCK ? 0 : v;
}

static void fd_forget(int fd)
{
	if (fd >= 0 && fd < FD_CACHE)
		atomic_store_explicit(&fd_cache[fd], 0, memory_order_relaxed);
	if (fd >= 0 && fd == atomic_load(&stream_fd)) {
		/* the program closes our descriptor: stop writing to it */
		atomic_store(&stream_fd, -1);
		atomic_store(&last_err, EBADF);
	}
}

/* ---- per-thread batches ------------------------------------------------ */

static void tbuf_flush(struct tbuf *b)
{
	size_t len = (size_t)b->n * sizeof(struct app_rec);
	const char *p = (const char *)b->recs;
	int fd = atomic_load(&stream_fd);
	ssize_t w;

	if (!b->n)
		return;
	atomic_fetch_add(&n_batches, 1);
	while (fd >= 0 && len) {
		w = real_write(fd, p, len);
		atomic_fetch_add(&n_writes, 1);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			atomic_store(&last_err, w < 0 ? errno : EIO);
			break;
		}
		p += w;
		len -= w;
	}
	if (len)
		atomic_fetch_add(&n_undelivered, len / sizeof(struct app_rec));
	b->n = 0;
}

static void tbuf_release(void *arg)
{
	struct tbuf *b = arg;
	int saved = errno;

	/* thread exit: deliver what it recorded, give the buffer back */
	atomic_store(&b->busy, 1);
	tbuf_flush(b);
	atomic_store(&b->busy, 0);
	atomic_store(&b->owned, 0);
	errno = saved;
}

static struct tbuf *tbuf_get(void)
{
	struct tbuf *b = my_buf;
	int zero;

	if (b)
		return b;
	for (b = atomic_load(&all_bufs); b; b = b->next) {
		zero = 0;
		if (atomic_compare_exchange_strong(&b->owned, &zero, 1))
			break;
	}
	if (!b) {
		b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b == MAP_FAILED)
			return NULL;
		atomic_store(&b->owned, 1);
		b->next = atomic_load(&all_bufs);
		while (!atomic_compare_exchange_weak(&all_bufs, &b->next, b))
			;
	}
	my_buf = b;
	if (have_tkey)
		pthread_setspecific(tkey, b);
	return b;
}

/* ---- recording ------------------------------------------------------------ */

struct call {
	uint64_t ino;
	uint64_t entry;
};

/* Before the real call: is it one to record?  Takes the entry time. */
static inline bool hook_begin(int fd, struct call *c)
{
	if (atomic_load_explicit(&stream_fd, memory_order_relaxed) < 0)
		return false;
	if (in_hook) {
		atomic_fetch_add(&n_skipped, 1);
		return false;
	}
	in_hook = 1;
	c->ino = sock_ino(fd);
	in_hook = 0;
	if (!c->ino)
		return false;
	c->entry = now_ns();
	return true;
}

/* After it: append the record, flush when full or old; errno kept. */
static void hook_end(const struct call *c, unsigned int call, int fd,
		     uint64_t req, ssize_t ret, int flags)
{
	int saved = errno;
	uint64_t exit_ns = now_ns();
	struct app_rec *r;
	struct tbuf *b;

	if (in_hook) {
		atomic_fetch_add(&n_skipped, 1);
		return;
	}
	in_hook = 1;
	b = tbuf_get();
	if (!b) {
		atomic_fetch_add(&n_undelivered, 1);
		goto out;
	}
	atomic_store(&b->busy, 1);
	if (!b->n)
		b->oldest = c->entry;
	r = &b->recs[b->n++];
	memset(r, 0, sizeof(*r));
	r->hdr.size = sizeof(*r);
	r->hdr.event = MAGNET_EVENT_APP;
	r->hdr.abstract_id = c->ino;
	r->p.entry_ns = c->entry;
	r->p.exit_ns = exit_ns;
	r->p.ret = ret < 0 ? -(int64_t)saved : (int64_t)ret;
	r->p.req = req;
	r->p.fd = fd;
	r->p.call = call;
	r->p.flags = call <= MAGNET_APP_WRITEV ? MAGNET_APP_F_TX : MAGNET_APP_F_RX;
	r->p.msg_flags = (uint32_t)flags;
	atomic_fetch_add(&n_events, 1);
	if (b->n >= batch || (flush_ns && exit_ns - b->oldest >= flush_ns))
		tbuf_flush(b);
	atomic_store(&b->busy, 0);
out:
	in_hook = 0;
	errno = saved;
}

static uint64_t iov_bytes(const struct iovec *iov, int n)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; iov && i < n; i++)
		sum += iov[i].iov_len;
	return sum;
}

/* ---- the wrapped calls ---------------------------------------------------- */

#define WRAP(callid, fd, req, flags, expr) do {				\
	struct call c;							\
	ssize_t ret;							\
	if (!hook_begin(fd, &c))					\
		return expr;						\
	ret = expr;							\
	hook_end(&c, callid, fd, req, ret, flags);			\
	return ret;							\
} while (0)

API ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	NEED(send);
	WRAP(MAGNET_APP_SEND, fd, len, flags, real_send(fd, buf, len, flags));
}

API ssize_t sendto(int fd, const void *buf, size_t len, int flags,
		   const struct sockaddr *to, socklen_t tolen)
{
	NEED(sendto);
	WRAP(MAGNET_APP_SENDTO, fd, len, flags,
	     real_sendto(fd, buf, len, flags, to, tolen));
}

API ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	NEED(sendmsg);
	WRAP(MAGNET_APP_SENDMSG, fd, msg ? iov_bytes(msg->msg_iov, msg->msg_iovlen) : 0,
	     flags, real_sendmsg(fd, msg, flags));
}

API ssize_t write(int fd, const void *buf, size_t len)
{
	NEED(write);
	WRAP(MAGNET_APP_WRITE, fd, len, 0, real_write(fd, buf, len));
}

API ssize_t writev(int fd, const struct iovec *iov, int n)
{
	NEED(writev);
	WRAP(MAGNET_APP_WRITEV, fd, iov_bytes(iov, n), 0, real_writev(fd, iov, n));
}

API ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	NEED(recv);
	WRAP(MAGNET_APP_RECV, fd, len, flags, real_recv(fd, buf, len, flags));
}

API ssize_t recvfrom(int fd, void *buf, size_t len, int flags,
		     struct sockaddr *from, socklen_t *fromlen)
{
	NEED(recvfrom);
	WRAP(MAGNET_APP_RECVFROM, fd, len, flags,
	     real_recvfrom(fd, buf, len, flags, from, fromlen));
}

API ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	NEED(recvmsg);
	WRAP(MAGNET_APP_RECVMSG, fd, msg ? iov_bytes(msg->msg_iov, msg->msg_iovlen) : 0,
	     flags, real_recvmsg(fd, msg, flags));
}

API ssize_t read(int fd, void *buf, size_t len)
{
	NEED(read);
	WRAP(MAGNET_APP_READ, fd, len, 0, real_read(fd, buf, len));
}

API ssize_t readv(int fd, const struct iovec *iov, int n)
{
	NEED(readv);
	WRAP(MAGNET_APP_READV, fd, iov_bytes(iov, n), 0, real_readv(fd, iov, n));
}

/* _FORTIFY_SOURCE builds call these instead of read/recv/recvfrom. */
API ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	NEED(read_chk);
	WRAP(MAGNET_APP_READ, fd, len, 0, real_read_chk(fd, buf, len, buflen));
}

API ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags)
{
	NEED(recv_chk);
	WRAP(MAGNET_APP_RECV, fd, len, flags,
	     real_recv_chk(fd, buf, len, buflen, flags));
}

API ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen,
			   int flags, struct sockaddr *from, socklen_t *fromlen)
{
	NEED(recvfrom_chk);
	WRAP(MAGNET_APP_RECVFROM, fd, len, flags,
	     real_recvfrom_chk(fd, buf, len, buflen, flags, from, fromlen));
}

API int close(int fd)
{
	NEED(close);
	fd_forget(fd);
	return real_close(fd);
}

API int dup2(int oldfd, int newfd)
{
	NEED(dup2);
	if (oldfd != newfd)
		fd_forget(newfd);
	return real_dup2(oldfd, newfd);
}

API int dup3(int oldfd, int newfd, int flags)
{
	NEED(dup3);
	fd_forget(newfd);
	return real_dup3(oldfd, newfd, flags);
}

/* ---- set-up, fork, exit ----------------------------------------------------- */

static void flush_all(bool others)
{
	struct tbuf *b;
	int zero;

	in_hook = 1;
	if (my_buf) {
		atomic_store(&my_buf->busy, 1);
		tbuf_flush(my_buf);
		atomic_store(&my_buf->busy, 0);
	}
	for (b = atomic_load(&all_bufs); others && b; b = b->next) {
		zero = 0;
		if (b == my_buf || !b->n)
			continue;
		/* a thread still running: take its batch unless it is busy */
		if (!atomic_compare_exchange_strong(&b->busy, &zero, 1)) {
			atomic_fetch_add(&n_undelivered, b->n);
			continue;
		}
		tbuf_flush(b);
		atomic_store(&b->busy, 0);
	}
	in_hook = 0;
}

static void before_fork(void)
{
	int saved = errno;

	/* the child must not write the parent's records again */
	if (my_buf && !in_hook) {
		in_hook = 1;
		atomic_store(&my_buf->busy, 1);
		tbuf_flush(my_buf);
		atomic_store(&my_buf->busy, 0);
		in_hook = 0;
	}
	errno = saved;
}

static void in_child(void)
{
	struct tbuf *b;

	for (b = atomic_load(&all_bufs); b; b = b->next) {
		b->n = 0;
		atomic_store(&b->busy, 0);
		if (b != my_buf)
			atomic_store(&b->owned, 0);	/* threads not forked */
	}
	atomic_store(&n_events, 0);
	atomic_store(&n_batches, 0);
	atomic_store(&n_writes, 0);
	atomic_store(&n_undelivered, 0);
	atomic_store(&n_skipped, 0);
}

static unsigned long env_num(const char *name, unsigned long def,
			     unsigned long lo, unsigned long hi)
{
	const char *v = getenv(name);
	unsigned long n;
	char *end;

	if (!v || !*v)
		return def;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || n < lo || n > hi) {
		say("magnet_preload: %s=%s: not a number in %lu..%lu, using %lu\n",
		    name, v, lo, hi, def);
		return def;
	}
	return n;
}

__attribute__((constructor))
static void preload_init(void)
{
	const char *name = getenv("MAGNET_STREAM");
	char path[512];
	int fd, hi;

	resolve();
	batch = env_num("MAGNET_BATCH", 128, 1, BATCH_MAX);
	flush_ns = env_num("MAGNET_FLUSH_MS", 200, 0, 60000) * 1000000ull;
	print_stats = getenv("MAGNET_PRELOAD_STATS") &&
		      !strcmp(getenv("MAGNET_PRELOAD_STATS"), "1");
	if (!name || !*name) {
		say("magnet_preload: MAGNET_STREAM is not set: not recording\n");
		return;
	}
	if (strchr(name, '/')) {
		snprintf(path, sizeof(path), "%s", name);
		fd = open(path, O_WRONLY | O_CLOEXEC);
	} else {
		snprintf(path, sizeof(path), MAGNETFS_DEFAULT_DIR "/%s", name);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT) {
			snprintf(path, sizeof(path), "/sys/kernel/debug/magnet/%s",
				 name);
			fd = open(path, O_WRONLY | O_CLOEXEC);
		}
	}
	if (fd < 0) {
		say("magnet_preload: cannot open stream '%s' (%s): %s; not recording\n",
		    name, path, strerror(errno));
		return;
	}
	/* out of the way of programs that expect low descriptor numbers */
	hi = fcntl(fd, F_DUPFD_CLOEXEC, 1000);
	if (hi >= 0) {
		real_close(fd);
		fd = hi;
	}
	have_tkey = pthread_key_create(&tkey, tbuf_release) == 0;
	pthread_atfork(before_fork, NULL, in_child);
	atomic_store(&stream_fd, fd);
}

__attribute__((destructor))
static void preload_fini(void)
{
	unsigned long long undelivered;
	int saved = errno, err;

	if (atomic_load(&stream_fd) < 0 && !atomic_load(&n_events))
		return;
	flush_all(true);
	undelivered = atomic_load(&n_undelivered);
	err = atomic_load(&last_err);
	if (print_stats || undelivered)
		say("magnet_preload: pid %d: events=%llu batches=%llu writes=%llu undelivered=%llu skipped=%llu%s%s\n",
		    (int)getpid(), atomic_load(&n_events), atomic_load(&n_batches),
		    atomic_load(&n_writes), undelivered, atomic_load(&n_skipped),
		    err ? " last_error=" : "", err ? strerror(err) : "");
	errno = saved;
}
