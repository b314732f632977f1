// SPDX-License-Identifier: GPL-2.0
/*
 * The miss-count arithmetic the kernel builds (include/magnet/missed.h):
 * a kretprobe's 32-bit nmissed folded into a running total across its
 * wrap at 2^32, a count that steps back (nmissed++ racing on two CPUs)
 * neither counted twice nor as 2^64 misses, and both together as the core
 * reports a hook's misses (kmod/db.c: fold in ->missed(), then the news).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "../../include/magnet/missed.h"

/* A kretprobe's count and the probe's state, as probes/net.c keeps them */
struct hook {
	int nmissed;			/* the kernel's int */
	unsigned long total;
	unsigned int seen;
	unsigned long reported;		/* the core's missed_seen */
};

/* The core's report: ->missed() folds, then only growth is news */
static unsigned long report(struct hook *h)
{
	magnet_missed_fold32(&h->total, &h->seen, (unsigned int)h->nmissed);
	return magnet_missed_news(h->total, &h->reported);
}

static void fold_counts_growth(void **state)
{
	struct hook h = { 0 };

	(void)state;
	assert_int_equal(report(&h), 0);
	h.nmissed = 40;
	assert_int_equal(report(&h), 40);
	assert_int_equal(report(&h), 0);	/* nothing new */
	h.nmissed = 60;
	assert_int_equal(report(&h), 20);
	assert_int_equal(h.total, 60);
}

/* INT_MAX and past it: the int goes negative, the total on growing */
static void fold_past_int_max(void **state)
{
	struct hook h = { 0 };

	(void)state;
	h.nmissed = INT32_MAX - 5;
	assert_int_equal(report(&h), INT32_MAX - 5);
	h.nmissed = (int)((unsigned int)INT32_MAX + 10);	/* negative */
	assert_true(h.nmissed < 0);
	assert_int_equal(report(&h), 15);
	assert_int_equal(h.total, (unsigned long)INT32_MAX + 10);
}

/*
 * The wrap at 2^32: reported in reads at most 2^31 apart (the core reads
 * once a second), 2^32 + 100 misses are reported as such, not as a total
 * that steps back by 2^32 and then stays silent for 2^32 more misses.
 */
static void fold_across_wrap(void **state)
{
	struct hook h = { 0 };
	unsigned long sum = 0;
	unsigned long long n = 0;
	const unsigned long long step = 1ull << 30;

	(void)state;
	while (n < (1ull << 32) + 100) {
		n += n + step <= (1ull << 32) + 100 ? step : 100;
		h.nmissed = (int)(unsigned int)n;
		sum += report(&h);
	}
	assert_int_equal((unsigned int)h.nmissed, 100);
	assert_true(sum == (1ul << 32) + 100);
	assert_true(h.total == (1ul << 32) + 100);
	/* and on after the wrap */
	h.nmissed = 150;
	assert_int_equal(report(&h), 50);
}

/*
 * nmissed++ on two CPUs: one reads 7, the other counts to 9, the first
 * stores 8.  The step back is no news and no 2^32 (nor 2^64) misses; the
 * misses after it are reported once the count passes 9 again.
 */
static void step_back_is_no_news(void **state)
{
	struct hook h = { 0 };

	(void)state;
	h.nmissed = 9;
	assert_int_equal(report(&h), 9);
	h.nmissed = 8;
	assert_int_equal(report(&h), 0);
	assert_int_equal(h.total, 9);
	h.nmissed = 9;
	assert_int_equal(report(&h), 0);
	h.nmissed = 12;
	assert_int_equal(report(&h), 3);
	assert_int_equal(h.total, 12);
}

/* The core's side alone: a 64-bit total that steps back (a kprobe's) */
static void news_step_back(void **state)
{
	unsigned long reported = 0;

	(void)state;
	assert_int_equal(magnet_missed_news(1000, &reported), 1000);
	assert_int_equal(magnet_missed_news(998, &reported), 0);
	assert_int_equal(reported, 1000);
	assert_int_equal(magnet_missed_news(1001, &reported), 1);
	/* a probe whose count restarts at each arming, from 0 */
	reported = 1001;
	assert_int_equal(magnet_missed_news(0, &reported), 0);
	assert_int_equal(reported, 1001);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fold_counts_growth),
		cmocka_unit_test(fold_past_int_max),
		cmocka_unit_test(fold_across_wrap),
		cmocka_unit_test(step_back_is_no_news),
		cmocka_unit_test(news_step_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
