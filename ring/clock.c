// SPDX-License-Identifier: GPL-2.0
/*
 * CLOCK_MONOTONIC extrapolated from the TSC: the anchors (clock.h has the
 * scheme).  x86 only; elsewhere clock.h reads the kernel's clock.
 */
#include <linux/kprobes.h>
#include "clock.h"

#ifdef CONFIG_X86
#include <asm/tsc.h>

void magnet_clock_init(struct magnet_ring_clock *c)
{
	if (!boot_cpu_has(X86_FEATURE_TSC) || check_tsc_unstable() ||
	    !magnet_clock_setup(c, tsc_khz))
		magnet_clock_setup(c, 0);
}

/*
 * On the write path, interrupts off, before the ring is reserved: the
 * kernel's clock between two TSC readings, anchored at their middle, if
 * they are close enough (clock.h).  A TSC the kernel has marked unstable
 * since is given up for good.
 */
notrace u64 __magnet_clock_anchor(struct magnet_ring_clock *c)
{
	u64 t0, t1, ns;

	if (unlikely(check_tsc_unstable())) {
		c->span = 0;
		return ktime_get_mono_fast_ns();
	}
	t0 = rdtsc_ordered();
	ns = ktime_get_mono_fast_ns();
	t1 = rdtsc_ordered();
	/* stopped between the readings: no anchor, the next read tries again */
	if (unlikely(t1 - t0 > c->gap))
		return ns;
	c->tsc = t0 + (t1 - t0) / 2;
	c->ns = ns;
	return ns;
}
NOKPROBE_SYMBOL(__magnet_clock_anchor);
#endif
