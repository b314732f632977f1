/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Arithmetic on hooks' miss counts (struct magnet_point_ops.missed),
 * shared by the core (kmod/db.c), the probes (kmod/kprobe_dyn.c,
 * probes/net.c) and the user-space unit test (tests/unit/test_missed.c).
 * No locking: each count has one reader at a time (db.lock).
 *
 * Two faults of kprobes' own counts are absorbed here:
 *  - they count with a plain nmissed++ from every CPU at once, so an
 *    increment can be lost and a later reader see the count step back;
 *  - a kretprobe's nmissed is an int, which wraps at 2^32.
 */
#ifndef _MAGNET_MISSED_H
#define _MAGNET_MISSED_H

#ifdef __KERNEL__
#include <linux/types.h>
#endif

/*
 * Adds to *@total the growth of a 32-bit miss count (a kretprobe's
 * nmissed) since *@seen, its value at the last call, so that the total
 * goes on growing when the count wraps.  A count behind *@seen is no
 * growth yet.  Call at least once per 2^31 misses: the core reads
 * ->missed() at least once a second while the point has consumers.
 */
static inline void magnet_missed_fold32(unsigned long *total,
					unsigned int *seen, unsigned int now)
{
	if ((int)(now - *seen) <= 0)
		return;
	*total += now - *seen;
	*seen = now;
}

/*
 * The misses to report when a hook's running total reads @now and
 * *@reported were reported before: only a count ahead of the last one
 * reported is news; one behind it waits until the count passes it again,
 * so no miss is reported twice and none as 2^64 lost.
 */
static inline unsigned long magnet_missed_news(unsigned long now,
					       unsigned long *reported)
{
	unsigned long n = now - *reported;

	if ((long)n <= 0)
		return 0;
	*reported = now;
	return n;
}

#endif /* _MAGNET_MISSED_H */
