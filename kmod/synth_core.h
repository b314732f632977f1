/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pure statistics of the synthesizers, shared by the kernel (kmod/synth.c)
 * and the user-space unit tests (tests/unit/test_synth.c): exact integer
 * moments of a stream of u64 samples (count, 128-bit sum and sum of
 * squares, min, max), their exact merge, the period arithmetic and the
 * floor mean and population variance derived from them without floating
 * point and without a 128-by-128 division (docs/SYNTH.md).
 */
#ifndef _MAGNET_SYNTH_CORE_H
#define _MAGNET_SYNTH_CORE_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/math64.h>
#include <linux/string.h>
#else
#include <stdbool.h>
#include <string.h>
#include <stdint.h>
typedef uint32_t u32;
typedef uint64_t u64;
#endif

typedef unsigned __int128 msyn_u128;

#define MSYN_F_OVERFLOW	0x04	/* = MAGNET_SYNTH_F_OVERFLOW */
#define MSYN_F_VAR_SAT	0x08	/* = MAGNET_SYNTH_F_VAR_SAT */

struct magnet_moments {
	u64 count;
	u64 min;
	u64 max;
	u64 sum_lo, sum_hi;
	u64 sq_lo, sq_hi;
	u32 flags;		/* MSYN_F_OVERFLOW once a sum wrapped */
};

static inline msyn_u128 msyn_get(u64 lo, u64 hi)
{
	return ((msyn_u128)hi << 64) | lo;
}

static inline void msyn_put(msyn_u128 v, u64 *lo, u64 *hi)
{
	*lo = (u64)v;
	*hi = (u64)(v >> 64);
}

static inline void magnet_moments_reset(struct magnet_moments *m)
{
	m->count = 0;
	m->min = ~0ull;
	m->max = 0;
	m->sum_lo = m->sum_hi = 0;
	m->sq_lo = m->sq_hi = 0;
	m->flags = 0;
}

/* One sample: a handful of instructions, no division. */
static inline void magnet_moments_add(struct magnet_moments *m, u64 x)
{
	msyn_u128 s = msyn_get(m->sum_lo, m->sum_hi);
	msyn_u128 q = msyn_get(m->sq_lo, m->sq_hi);
	msyn_u128 x2 = (msyn_u128)x * x;

	if (s + x < s || q + x2 < q)
		m->flags |= MSYN_F_OVERFLOW;
	msyn_put(s + x, &m->sum_lo, &m->sum_hi);
	msyn_put(q + x2, &m->sq_lo, &m->sq_hi);
	m->count++;
	if (x < m->min)
		m->min = x;
	if (x > m->max)
		m->max = x;
}

/* @a += @b, exactly (the moments of the union of both sample sets). */
static inline void magnet_moments_merge(struct magnet_moments *a,
					const struct magnet_moments *b)
{
	msyn_u128 s = msyn_get(a->sum_lo, a->sum_hi);
	msyn_u128 q = msyn_get(a->sq_lo, a->sq_hi);
	msyn_u128 bs = msyn_get(b->sum_lo, b->sum_hi);
	msyn_u128 bq = msyn_get(b->sq_lo, b->sq_hi);

	if (!b->count)
		return;
	if (s + bs < s || q + bq < q)
		a->flags |= MSYN_F_OVERFLOW;
	a->flags |= b->flags;
	msyn_put(s + bs, &a->sum_lo, &a->sum_hi);
	msyn_put(q + bq, &a->sq_lo, &a->sq_hi);
	a->count += b->count;
	if (b->min < a->min)
		a->min = b->min;
	if (b->max > a->max)
		a->max = b->max;
}

/*
 * 128-by-64 division, quotient 128 bits, remainder 64.  Schoolbook with
 * 64-bit digits: the high digit by a 64-bit division, the low one by a
 * 128-by-64 step whose quotient fits 64 bits (x86-64 divq, or a bit loop
 * elsewhere).  The kernel has no __udivti3.
 */
static inline u64 msyn_div_step_generic(u64 hi, u64 lo, u64 d, u64 *rem)
{
	/* hi < d: the quotient fits 64 bits */
	u64 q = 0;
	int i;

	for (i = 0; i < 64; i++) {
		u64 top = hi >> 63;

		hi = (hi << 1) | (lo >> 63);
		lo <<= 1;
		q <<= 1;
		if (top || hi >= d) {
			hi -= d;
			q |= 1;
		}
	}
	*rem = hi;
	return q;
}

static inline u64 msyn_div_step(u64 hi, u64 lo, u64 d, u64 *rem)
{
#if defined(__x86_64__)
	u64 q, r;

	__asm__("divq %4" : "=a" (q), "=d" (r) : "a" (lo), "d" (hi), "rm" (d));
	*rem = r;
	return q;
#else
	return msyn_div_step_generic(hi, lo, d, rem);
#endif
}

static inline msyn_u128 msyn_div128(msyn_u128 n, u64 d, u64 *rem)
{
	u64 hi = (u64)(n >> 64), lo = (u64)n, qhi, qlo, r;

#ifdef __KERNEL__
	qhi = div64_u64_rem(hi, d, &r);
#else
	qhi = hi / d;
	r = hi % d;
#endif
	qlo = msyn_div_step(r, lo, d, rem);
	return ((msyn_u128)qhi << 64) | qlo;
}

/*
 * Floor of the mean and of the population variance M2 / n, exactly from
 * the integer moments.  With m = floor(S1 / n), r = S1 mod n:
 *   M2 = S2 - S1^2 / n = A - r^2 / n,  A = S2 - m^2 n - 2 m r  (integer),
 * every term below S2, so nothing wraps; with A = q n + a (a < n):
 *   M2 / n = q + (a n - r^2) / n^2, the fraction in (-1, 1), so
 *   floor(M2 / n) = q - (a n < r^2).
 * Returns MSYN_F_* bits (OVERFLOW: moments wrapped, values meaningless;
 * VAR_SAT: variance above 2^64 - 1, reported as 2^64 - 1).
 * @a_out / @r_out (may be NULL) give A and r for a floating-point
 * variance: (A - r^2 / n) / n.
 */
static inline u32 magnet_moments_derive(const struct magnet_moments *m,
					u64 *mean, u64 *var,
					msyn_u128 *a_out, u64 *r_out)
{
	msyn_u128 s1 = msyn_get(m->sum_lo, m->sum_hi);
	msyn_u128 s2 = msyn_get(m->sq_lo, m->sq_hi);
	msyn_u128 mm, a, q;
	u64 r, rem, mq;
	u32 flags = m->flags & MSYN_F_OVERFLOW;

	*mean = 0;
	*var = 0;
	if (a_out)
		*a_out = 0;
	if (r_out)
		*r_out = 0;
	if (!m->count || flags)
		return flags;
	mm = msyn_div128(s1, m->count, &r);
	mq = (u64)mm;		/* the mean is at most max: fits 64 bits */
	*mean = mq;
	a = s2 - (msyn_u128)mq * mq * m->count - (msyn_u128)2 * mq * r;
	q = msyn_div128(a, m->count, &rem);
	if ((msyn_u128)rem * m->count < (msyn_u128)r * r)
		q--;
	if (q >> 64) {
		*var = ~0ull;
		flags |= MSYN_F_VAR_SAT;
	} else {
		*var = (u64)q;
	}
	if (a_out)
		*a_out = a;
	if (r_out)
		*r_out = r;
	return flags;
}

/* Period arithmetic: period p covers [start + p P, start + (p + 1) P). */
static inline u64 magnet_synth_period_of(u64 ts, u64 start, u64 period)
{
	if (ts <= start)
		return 0;
#ifdef __KERNEL__
	return div64_u64(ts - start, period);
#else
	return (ts - start) / period;
#endif
}

/* An unsigned payload field of @width (1, 2, 4, 8) bytes, host order. */
static inline u64 magnet_synth_field(const void *payload, u32 off, u32 width)
{
	const unsigned char *p = (const unsigned char *)payload + off;
	unsigned char b1;
	unsigned short b2;
	u32 b4;
	u64 b8;

	switch (width) {
	case 1:
		memcpy(&b1, p, 1);
		return b1;
	case 2:
		memcpy(&b2, p, 2);
		return b2;
	case 4:
		memcpy(&b4, p, 4);
		return b4;
	default:
		memcpy(&b8, p, 8);
		return b8;
	}
}

#endif /* _MAGNET_SYNTH_CORE_H */
