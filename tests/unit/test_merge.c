// SPDX-License-Identifier: GPL-2.0-only
/* libmagnet merge reader: per-CPU record sequences into timestamp order. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <magnet/libmagnet.h>

#define RSZ 40

/* A buffer of @n records (cpu[i], ts[i]) of 40 bytes, event 16 + i. */
static size_t mk(char *buf, int n, const unsigned int *cpu, const __u64 *ts)
{
	int i;

	memset(buf, 0, (size_t)n * RSZ);
	for (i = 0; i < n; i++) {
		struct magnet_rec_hdr *h = (void *)(buf + i * RSZ);

		h->size = RSZ;
		h->event = MAGNET_EVENT_FIRST_PROBE;
		h->cpu = cpu[i];
		h->timestamp = ts[i];
		h->abstract_id = i;
	}
	return (size_t)n * RSZ;
}

/* Drain into @out (timestamps); returns how many. */
static int drain(struct magnet_merge *m, bool flush, __u64 *out, int max)
{
	const struct magnet_rec_hdr *h;
	int n = 0;

	while (n < max && magnet_merge_next(m, flush, &h) == 1)
		out[n++] = h->timestamp;
	return n;
}

static void merges_two_cpus(void **state)
{
	unsigned int cpu[] = { 0, 0, 0, 1, 1, 1 };
	__u64 ts[] = { 10, 30, 50, 20, 40, 60 }, out[8];
	__u64 want[] = { 10, 20, 30, 40, 50, 60 };
	struct magnet_merge *m = magnet_merge_new(1000, 0);
	char buf[6 * RSZ];
	int n;

	(void)state;
	assert_int_equal(magnet_merge_push(m, buf, mk(buf, 6, cpu, ts)), 0);
	/* 10..50 are safe (both CPUs have a record waiting); 60 waits */
	n = drain(m, false, out, 8);
	assert_int_equal(n, 5);
	n += drain(m, true, out + n, 8 - n);
	assert_int_equal(n, 6);
	assert_memory_equal(out, want, sizeof(want));
	assert_int_equal(magnet_merge_late(m), 0);
	magnet_merge_free(m);
}

static void holds_back_within_window(void **state)
{
	unsigned int c0[] = { 0, 0 }, c1[] = { 1 };
	__u64 t0[] = { 100, 200 }, t1[] = { 150 }, out[4];
	struct magnet_merge *m = magnet_merge_new(1000, 0);
	char buf[2 * RSZ];

	(void)state;
	/* without SYSINFO, only the CPUs seen so far are waited for */
	assert_int_equal(magnet_merge_push(m, buf, mk(buf, 1, c1, t1)), 0);
	assert_int_equal(drain(m, false, out, 4), 1);
	magnet_merge_free(m);

	m = magnet_merge_new(1000, 0);
	assert_int_equal(magnet_merge_push(m, buf, mk(buf, 2, c0, t0)), 0);
	assert_int_equal(magnet_merge_push(m, buf, mk(buf, 1, c1, t1)), 0);
	assert_int_equal(drain(m, false, out, 4), 2);	/* 100, 150; 200 waits for CPU 1 */
	assert_int_equal(out[0], 100);
	assert_int_equal(out[1], 150);
	assert_int_equal(drain(m, true, out, 4), 1);
	assert_int_equal(out[0], 200);
	magnet_merge_free(m);
}

static void window_bounds_lookahead(void **state)
{
	unsigned int c[] = { 1, 0, 0, 0 };
	__u64 t[] = { 5, 10, 500, 2000 }, out[8];
	struct magnet_merge *m = magnet_merge_new(1000, 0);
	char buf[4 * RSZ];
	int n;

	(void)state;
	assert_int_equal(magnet_merge_push(m, buf, mk(buf, 4, c, t)), 0);
	/* CPU 1 is empty after 5: 10 and 500 go once 2000 is pushed (window 1000) */
	n = drain(m, false, out, 8);
	assert_int_equal(n, 3);
	assert_int_equal(out[0], 5);
	assert_int_equal(out[1], 10);
	assert_int_equal(out[2], 500);
	/* a late CPU 1 record older than what went out is counted */
	{
		unsigned int c1[] = { 1 };
		__u64 t1[] = { 400 };

		assert_int_equal(magnet_merge_push(m, buf, mk(buf, 1, c1, t1)), 0);
	}
	n = drain(m, true, out, 8);
	assert_int_equal(n, 2);
	assert_int_equal(magnet_merge_late(m), 1);
	magnet_merge_free(m);
}

static void max_records_bounds_lookahead(void **state)
{
	unsigned int c[] = { 1, 0, 0, 0, 0 };
	__u64 t[] = { 1, 2, 3, 4, 5 }, out[8];
	struct magnet_merge *m = magnet_merge_new(UINT64_MAX, 2);
	char buf[5 * RSZ];

	(void)state;
	assert_int_equal(magnet_merge_push(m, buf, mk(buf, 5, c, t)), 0);
	/* held: 1 (safe), then 2 and 3 while more than 2 are held */
	assert_int_equal(drain(m, false, out, 8), 3);
	magnet_merge_free(m);
}

static void meta_passes_first_and_bad_input(void **state)
{
	const struct magnet_rec_hdr *h;
	unsigned int c[] = { 0, 0 };
	__u64 t[] = { 7, 8 };
	struct magnet_merge *m = magnet_merge_new(10, 0);
	char buf[2 * RSZ];

	(void)state;
	mk(buf, 2, c, t);
	((struct magnet_rec_hdr *)(buf + RSZ))->event = MAGNET_EVENT_EVENTDEF;
	assert_int_equal(magnet_merge_push(m, buf, 2 * RSZ), 0);
	assert_int_equal(magnet_merge_next(m, false, &h), 1);
	assert_int_equal(h->event, MAGNET_EVENT_EVENTDEF);
	assert_int_equal(magnet_merge_next(m, false, &h), 1);
	assert_int_equal(h->timestamp, 7);
	assert_int_equal(magnet_merge_next(m, true, &h), 0);
	/* truncated and misaligned records */
	assert_int_equal(magnet_merge_push(m, buf, RSZ - 8), -EBADMSG);
	((struct magnet_rec_hdr *)buf)->size = 36;
	assert_int_equal(magnet_merge_push(m, buf, 2 * RSZ), -EBADMSG);
	((struct magnet_rec_hdr *)buf)->size = 3 * RSZ;
	assert_int_equal(magnet_merge_push(m, buf, 2 * RSZ), -EBADMSG);
	magnet_merge_free(m);
}

static void many_cpus_random(void **state)
{
	enum { NCPU = 8, PER = 500 };
	static char buf[NCPU * PER * RSZ];
	unsigned int cpu[NCPU * PER];
	__u64 ts[NCPU * PER], last = 0, tcpu[NCPU] = { 0 };
	struct magnet_merge *m = magnet_merge_new(1000000, 0);
	const struct magnet_rec_hdr *h;
	int i, n = 0, pushed = 0;

	(void)state;
	/* SYSINFO announces the CPUs: none is taken for idle before it shows */
	{
		char si[MAGNET_REC_HDR_SIZE + sizeof(struct magnet_sysinfo)] = { 0 };
		struct magnet_rec_hdr *sh = (void *)si;
		struct magnet_sysinfo *sp = (void *)(si + MAGNET_REC_HDR_SIZE);

		sh->size = sizeof(si);
		sh->event = MAGNET_EVENT_SYSINFO;
		sp->endian = MAGNET_ENDIAN_MAGIC;
		sp->nr_cpus = NCPU;
		assert_int_equal(magnet_merge_push(m, si, sizeof(si)), 0);
		assert_int_equal(magnet_merge_next(m, false, &h), 1);
		assert_int_equal(h->event, MAGNET_EVENT_SYSINFO);
	}
	srand(42);
	/* chunks of one CPU at a time, as a reader draining rings would see */
	while (pushed < NCPU * PER) {
		int c = rand() % NCPU, k = 1 + rand() % 20, j = 0;

		for (i = 0; i < k && pushed + j < NCPU * PER; i++, j++) {
			tcpu[c] += 1 + rand() % 100;
			cpu[j] = (unsigned int)c;
			ts[j] = tcpu[c];
		}
		assert_int_equal(magnet_merge_push(m, buf, mk(buf, j, cpu, ts)), 0);
		pushed += j;
		while (magnet_merge_next(m, false, &h) == 1) {
			assert_true(h->timestamp >= last);
			last = h->timestamp;
			n++;
		}
	}
	while (magnet_merge_next(m, true, &h) == 1)
		n++;
	assert_int_equal(n, NCPU * PER);
	magnet_merge_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(merges_two_cpus),
		cmocka_unit_test(holds_back_within_window),
		cmocka_unit_test(window_bounds_lookahead),
		cmocka_unit_test(max_records_bounds_lookahead),
		cmocka_unit_test(meta_passes_first_and_bad_input),
		cmocka_unit_test(many_cpus_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
