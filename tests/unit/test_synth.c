// SPDX-License-Identifier: GPL-2.0
/*
 * The synthesizers' statistics (kmod/synth_core.h, the header the kernel
 * builds, and libmagnet's magnet_synth_moments()): exact integer moments,
 * their merge, the 128-by-64 division, the floor mean and variance, the
 * flags, against an exact 128-bit reference, a naive two-pass double
 * reference and Welford's online algorithm, including large values where
 * a single-pass sum of squares in double loses every digit.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <magnet/libmagnet.h>

#include "../../kmod/synth_core.h"

typedef unsigned __int128 u128;

static u64 rng_state = 0x9e3779b97f4a7c15ull;

static u64 rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

struct refs {
	double two_pass_mean, two_pass_var;
	double welford_mean, welford_var;
	double naive_var;		/* single pass, E[x^2] - E[x]^2 */
};

static void references(const u64 *x, size_t n, struct refs *r)
{
	double sum = 0, sq = 0, mean, m2 = 0, d;
	long double wm = 0, wm2 = 0, wd;
	size_t i;

	for (i = 0; i < n; i++) {
		sum += (double)x[i];
		sq += (double)x[i] * (double)x[i];
	}
	mean = sum / n;
	for (i = 0; i < n; i++) {
		d = (double)x[i] - mean;
		m2 += d * d;
	}
	r->two_pass_mean = mean;
	r->two_pass_var = m2 / n;
	/* Welford in long double: double accumulates ~1e-7 at 1e12 */
	for (i = 0; i < n; i++) {
		wd = (long double)x[i] - wm;
		wm += wd / (long double)(i + 1);
		wm2 += wd * ((long double)x[i] - wm);
	}
	r->welford_mean = (double)wm;
	r->welford_var = (double)(wm2 / n);
	r->naive_var = sq / n - (sum / n) * (sum / n);
}

static void fill(struct magnet_moments *m, const u64 *x, size_t n)
{
	size_t i;

	magnet_moments_reset(m);
	for (i = 0; i < n; i++)
		magnet_moments_add(m, x[i]);
}

static bool close_rel(double a, double b, double rel)
{
	double scale = fmax(fabs(a), fabs(b));

	return fabs(a - b) <= rel * (scale > 1 ? scale : 1);
}

/* Exact floors from the definitions when n * S2 fits 128 bits. */
static void exact_floor(const u64 *x, size_t n, u64 *mean, u128 *var)
{
	u128 s1 = 0, s2 = 0, num;
	size_t i;

	for (i = 0; i < n; i++) {
		s1 += x[i];
		s2 += (u128)x[i] * x[i];
	}
	*mean = (u64)(s1 / n);
	num = (u128)n * s2 - s1 * s1;	/* n^2 * variance */
	*var = num / ((u128)n * n);
}

static void test_moments_basic(void **state)
{
	u64 x[] = { 5, 1, 9, 3, 3 };
	struct magnet_moments m;
	u64 mean, var;
	u32 flags;

	(void)state;
	fill(&m, x, 5);
	assert_int_equal(m.count, 5);
	assert_int_equal(m.min, 1);
	assert_int_equal(m.max, 9);
	assert_int_equal(m.sum_lo, 21);
	assert_int_equal(m.sum_hi, 0);
	assert_int_equal(m.sq_lo, 25 + 1 + 81 + 9 + 9);
	flags = magnet_moments_derive(&m, &mean, &var, NULL, NULL);
	assert_int_equal(flags, 0);
	assert_int_equal(mean, 4);	/* 4.2 */
	/* population variance: 125/5 - 4.2^2 = 25 - 17.64 = 7.36 */
	assert_int_equal(var, 7);

	magnet_moments_reset(&m);
	flags = magnet_moments_derive(&m, &mean, &var, NULL, NULL);
	assert_int_equal(flags, 0);
	assert_int_equal(mean, 0);
	assert_int_equal(var, 0);

	/* one sample: variance 0 */
	magnet_moments_add(&m, 123456789);
	magnet_moments_derive(&m, &mean, &var, NULL, NULL);
	assert_int_equal(mean, 123456789);
	assert_int_equal(var, 0);
}

/* Random sets of several magnitudes: floors exact, doubles close. */
static void test_moments_exact_random(void **state)
{
	static u64 x[4000];
	static const int shifts[] = { 4, 16, 24, 32, 33 };
	unsigned int t, s;

	(void)state;
	for (s = 0; s < sizeof(shifts) / sizeof(shifts[0]); s++) {
		for (t = 0; t < 20; t++) {
			size_t n = 1 + rnd() % 4000, i;
			struct magnet_moments m;
			u64 mean, var, emean;
			u128 evar;
			double dm, dv;
			struct refs r;

			for (i = 0; i < n; i++)
				x[i] = rnd() >> (64 - shifts[s]);
			fill(&m, x, n);
			assert_int_equal(magnet_moments_derive(&m, &mean, &var,
							       NULL, NULL), 0);
			exact_floor(x, n, &emean, &evar);
			assert_int_equal(mean, emean);
			assert_true((u128)var == evar);
			references(x, n, &r);
			assert_int_equal(magnet_synth_moments(m.count, m.sum_lo,
							      m.sum_hi, m.sq_lo,
							      m.sq_hi, &dm, &dv),
					 0);
			assert_true(close_rel(dm, r.two_pass_mean, 1e-12));
			assert_true(close_rel(dv, r.two_pass_var, 1e-9));
			assert_true(close_rel(dv, r.welford_var, 1e-9));
		}
	}
}

/*
 * Large values with a small spread (timestamps-like: 1e12 + noise): the
 * single-pass double E[x^2] - E[x]^2 cancels catastrophically; the
 * integer moments and magnet_synth_moments() agree with two-pass and
 * Welford to 1e-9 and the integer floor is exact.
 */
static void test_large_values(void **state)
{
	enum { N = 10000 };
	static u64 x[N];
	struct magnet_moments m;
	u64 mean, var, emean;
	u128 evar;
	double dm, dv;
	struct refs r;
	size_t i;

	(void)state;
	for (i = 0; i < N; i++)
		x[i] = 1000000000000ull + rnd() % 1000;	/* var ~ 83333 */
	fill(&m, x, N);
	assert_int_equal(magnet_moments_derive(&m, &mean, &var, NULL, NULL), 0);
	exact_floor(x, N, &emean, &evar);
	assert_int_equal(mean, emean);
	assert_true((u128)var == evar);
	references(x, N, &r);
	magnet_synth_moments(m.count, m.sum_lo, m.sum_hi, m.sq_lo, m.sq_hi,
			     &dm, &dv);
	/* the exact variance, n^2 var / n^2 in 128 bits, as a reference */
	{
		u128 s1 = 0, s2 = 0;

		for (i = 0; i < N; i++) {
			s1 += x[i];
			s2 += (u128)x[i] * x[i];
		}
		assert_true(close_rel(dv, (double)((long double)((u128)N * s2 - s1 * s1) /
						   ((long double)N * N)), 1e-12));
	}
	assert_true(close_rel(dv, r.two_pass_var, 1e-9));
	assert_true(close_rel(dv, r.welford_var, 1e-9));
	assert_true(close_rel(dm, r.welford_mean, 1e-15));
	assert_true(fabs(dv - (double)var) < 1.0);
	/* the naive reference is far off: the test can tell */
	assert_false(close_rel(r.naive_var, r.two_pass_var, 1e-2));

	/* near 2^60: sums beyond 64 bits, squares near 2^126 */
	for (i = 0; i < 64; i++)
		x[i] = (1ull << 60) + rnd() % 1000000;
	fill(&m, x, 64);
	assert_true(m.sum_hi != 0);
	assert_int_equal(magnet_moments_derive(&m, &mean, &var, NULL, NULL), 0);
	references(x, 64, &r);
	magnet_synth_moments(m.count, m.sum_lo, m.sum_hi, m.sq_lo, m.sq_hi,
			     &dm, &dv);
	assert_true(close_rel(dv, r.welford_var, 1e-6));
	assert_true(fabs((double)var - dv) <= 1.0 + dv * 1e-12);
}

/* Merging partials (per-period or per-CPU) equals one pass. */
static void test_merge(void **state)
{
	static u64 x[3000];
	struct magnet_moments all, part, acc;
	size_t i, n = 3000, cut;

	(void)state;
	for (i = 0; i < n; i++)
		x[i] = rnd() >> 20;
	fill(&all, x, n);
	magnet_moments_reset(&acc);
	for (i = 0; i < n; i = cut) {
		cut = i + 1 + rnd() % 500;
		if (cut > n)
			cut = n;
		fill(&part, x + i, cut - i);
		magnet_moments_merge(&acc, &part);
	}
	magnet_moments_reset(&part);
	magnet_moments_merge(&acc, &part);	/* empty: no change */
	assert_int_equal(acc.count, all.count);
	assert_int_equal(acc.min, all.min);
	assert_int_equal(acc.max, all.max);
	assert_int_equal(acc.sum_lo, all.sum_lo);
	assert_int_equal(acc.sum_hi, all.sum_hi);
	assert_int_equal(acc.sq_lo, all.sq_lo);
	assert_int_equal(acc.sq_hi, all.sq_hi);
	assert_int_equal(acc.flags, all.flags);
}

static void test_div128(void **state)
{
	unsigned int i;

	(void)state;
	for (i = 0; i < 20000; i++) {
		u128 n = ((u128)rnd() << 64) | rnd();
		u64 d = rnd() >> (rnd() % 64), rem, rem2, q2;
		u128 q;

		if (!d)
			d = 1;
		if (i % 3 == 0)
			n >>= rnd() % 128;
		q = msyn_div128(n, d, &rem);
		assert_true(q == n / d);
		assert_int_equal(rem, (u64)(n % d));
		/* the portable step against the native one */
		{
			u64 hi = (u64)(n >> 64) % d, lo = (u64)n;

			q2 = msyn_div_step_generic(hi, lo, d, &rem2);
			assert_true(q2 == (u64)((((u128)hi << 64) | lo) / d));
			assert_int_equal(rem2, (u64)((((u128)hi << 64) | lo) % d));
		}
	}
}

static void test_flags(void **state)
{
	struct magnet_moments m;
	u64 mean, var;
	u32 flags;

	(void)state;
	/* variance of {0, 2^64-1} is about 2^126: saturated */
	magnet_moments_reset(&m);
	magnet_moments_add(&m, 0);
	magnet_moments_add(&m, ~0ull);
	flags = magnet_moments_derive(&m, &mean, &var, NULL, NULL);
	assert_int_equal(flags, MSYN_F_VAR_SAT);
	assert_true(var == ~0ull);
	assert_true(mean == (~0ull) / 2);
	/* squares of 2^64-1 wrap 2^128 at the second sample */
	magnet_moments_reset(&m);
	magnet_moments_add(&m, ~0ull);
	assert_int_equal(m.flags, 0);
	magnet_moments_add(&m, ~0ull);
	assert_int_equal(m.flags, MSYN_F_OVERFLOW);
	flags = magnet_moments_derive(&m, &mean, &var, NULL, NULL);
	assert_int_equal(flags, MSYN_F_OVERFLOW);
}

static void test_period_and_field(void **state)
{
	unsigned char p[16];
	u64 v8 = 0x1122334455667788ull;
	u32 v4 = 0xdeadbeef;
	uint16_t v2 = 0xbeef;

	(void)state;
	assert_int_equal(magnet_synth_period_of(1000, 1000, 100), 0);
	assert_int_equal(magnet_synth_period_of(1099, 1000, 100), 0);
	assert_int_equal(magnet_synth_period_of(1100, 1000, 100), 1);
	assert_int_equal(magnet_synth_period_of(999, 1000, 100), 0);
	assert_int_equal(magnet_synth_period_of(1000 + 100 * 12345 + 7, 1000,
						100), 12345);
	memset(p, 0, sizeof(p));
	memcpy(p + 1, &v8, 8);		/* unaligned */
	assert_true(magnet_synth_field(p, 1, 8) == v8);
	memcpy(p + 9, &v4, 4);
	assert_true(magnet_synth_field(p, 9, 4) == v4);
	memcpy(p + 13, &v2, 2);
	assert_true(magnet_synth_field(p, 13, 2) == v2);
	p[15] = 0xab;
	assert_true(magnet_synth_field(p, 15, 1) == 0xab);
}

static void test_moments_double_api(void **state)
{
	double m, v;

	(void)state;
	assert_int_equal(magnet_synth_moments(0, 0, 0, 0, 0, &m, &v), -EINVAL);
	/* {2, 4, 4, 4, 5, 5, 7, 9}: mean 5, variance 4 */
	assert_int_equal(magnet_synth_moments(8, 40, 0, 232, 0, &m, &v), 0);
	assert_true(m == 5.0);
	assert_true(v == 4.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_moments_basic),
		cmocka_unit_test(test_moments_exact_random),
		cmocka_unit_test(test_large_values),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_div128),
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_period_and_field),
		cmocka_unit_test(test_moments_double_api),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
