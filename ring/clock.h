/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The writer's CLOCK_MONOTONIC, extrapolated from the TSC.
 *
 * ktime_get_mono_fast_ns() is the NMI-safe CLOCK_MONOTONIC the rings
 * record by default; each read is a seqcount, the timekeeper's data and
 * an indirect call into the clocksource: three pages outside MAGNET
 * that a real flow has made cold by the next event (in the 6.12 guest
 * 62 ns in a loop, ~146 ns per event in a UDP flood, a quarter of the
 * write path: docs/benchmarks.md).  Where the kernel trusts the TSC,
 * each per-CPU ring instead keeps an anchor, a TSC reading and
 * CLOCK_MONOTONIC read together, and extrapolates from it with the
 * kernel's calibrated TSC frequency:
 *
 *	ns = anchor_ns + ((tsc - anchor_tsc) * mult) >> MAGNET_CLOCK_SHIFT
 *
 * a TSC read and a multiply on the ring's own cache line.  An anchor
 * serves MAGNET_CLOCK_SPAN_US of TSC; the first read after that takes a
 * new one: ktime_get_mono_fast_ns() between two TSC readings, paired with
 * their middle, and only if they are at most MAGNET_CLOCK_GAP_NS apart
 * (else an NMI, an SMI or the hypervisor stopped the CPU between them;
 * the event takes the kernel's reading and the next one tries again).  A
 * timestamp is therefore CLOCK_MONOTONIC to within half that gap (the
 * anchor's own uncertainty, tens of ns on hardware) plus the clock's
 * frequency error over one span: NTP's correction of CLOCK_MONOTONIC
 * (typically a few ppm, at most 500: 128 ns over 256 us) and the kHz
 * rounding of tsc_khz (< 1 ppm); each ring clamps its timestamps so
 * that they never go back (magnet_ring_stamp()).
 *
 * "Trusts the TSC": x86, tsc_khz known and above 250 MHz, and not
 * marked unstable (unsynchronized across CPUs, stopped in idle, or a
 * frequency change on a TSC without constant rate all mark it so),
 * checked again at every anchor: a ring whose TSC the kernel gave up
 * on reads ktime_get_mono_fast_ns() per event from then on, as every
 * ring does where the TSC is not trusted from the start.
 *
 * The extrapolation itself (magnet_clock_extrapolate()) is plain
 * arithmetic, built in user space for the unit tests.
 */
#ifndef _MAGNET_RING_CLOCK_H
#define _MAGNET_RING_CLOCK_H

#include <linux/types.h>

#define MAGNET_CLOCK_SHIFT	30
#define MAGNET_CLOCK_SPAN_US	256
#define MAGNET_CLOCK_GAP_NS	1000

struct magnet_ring_clock {
	u64 tsc;		/* anchor: a TSC reading */
	u64 ns;			/* CLOCK_MONOTONIC at @tsc */
	u64 span;		/* TSC cycles an anchor serves; 0: no TSC */
	u32 mult;		/* ns per cycle << MAGNET_CLOCK_SHIFT */
	u32 gap;		/* TSC cycles an anchor's readings may span */
};

/*
 * CLOCK_MONOTONIC at @tsc from the anchor, or 0 when the anchor does not
 * serve @tsc (older than its span, before it, or no TSC: span 0).
 */
static inline u64 magnet_clock_extrapolate(const struct magnet_ring_clock *c,
					   u64 tsc)
{
	u64 d = tsc - c->tsc;

	if (d >= c->span)
		return 0;
	/* d * mult / 2^30 < 256 us in ns: the product stays below 2^48 */
	return c->ns + ((d * c->mult) >> MAGNET_CLOCK_SHIFT);
}

/*
 * The anchor's parameters for a TSC of @khz kHz: false (span 0, the
 * kernel's clock on every read) if it is not known or too slow for
 * @mult to fit.
 */
static inline bool magnet_clock_setup(struct magnet_ring_clock *c, u32 khz)
{
	c->tsc = 0;
	c->ns = 0;
	c->span = 0;
	c->mult = 0;
	c->gap = 0;
	if (khz <= 250000)
		return false;
	c->mult = (u32)((1000000ull << MAGNET_CLOCK_SHIFT) / khz);
	c->span = (u64)khz * MAGNET_CLOCK_SPAN_US / 1000;
	c->gap = (u32)((u64)khz * MAGNET_CLOCK_GAP_NS / 1000000);
	/* the first read takes an anchor: 0 - 0 = 0 < span would not */
	c->tsc = -c->span;
	return true;
}

#if defined(__KERNEL__) && defined(CONFIG_X86)
#include <asm/msr.h>
#include <linux/timekeeping.h>

/* Take a new anchor if it can (ring/clock.c); CLOCK_MONOTONIC now. */
u64 __magnet_clock_anchor(struct magnet_ring_clock *c);
/* The parameters of this machine's TSC, or span 0 (ring/clock.c). */
void magnet_clock_init(struct magnet_ring_clock *c);

/* CLOCK_MONOTONIC now, any context; on this CPU's ring, irqs off. */
static __always_inline u64 magnet_clock_mono(struct magnet_ring_clock *c)
{
	u64 ns;

	if (likely(c->span)) {
		ns = magnet_clock_extrapolate(c, rdtsc_ordered());
		if (likely(ns))
			return ns;
		return __magnet_clock_anchor(c);
	}
	return ktime_get_mono_fast_ns();
}
#elif defined(__KERNEL__)
#include <linux/timekeeping.h>

static inline void magnet_clock_init(struct magnet_ring_clock *c)
{
	magnet_clock_setup(c, 0);
}

static __always_inline u64 magnet_clock_mono(struct magnet_ring_clock *c)
{
	return ktime_get_mono_fast_ns();
}
#endif

#endif /* _MAGNET_RING_CLOCK_H */
