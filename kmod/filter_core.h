/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pure logic of the filters, shared by the kernel (kmod/filter.c) and the
 * user-space unit tests (tests/unit/test_filter.c): key matching,
 * precedence between overlapping filters and the two samplers.  No
 * locking, no allocation, nothing kernel-specific.
 */
#ifndef _MAGNET_FILTER_CORE_H
#define _MAGNET_FILTER_CORE_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/math64.h>
#include <linux/bitops.h>
#include <linux/cgroup.h>
#else
#include <stdbool.h>
#include <stdint.h>
typedef uint32_t u32;
typedef int32_t s32;
typedef uint64_t u64;
#endif

/* Which keys a filter specifies; the others are wildcards. */
enum {
	MAGNET_FK_EVENT		= 1 << 0,
	MAGNET_FK_CPU		= 1 << 1,
	MAGNET_FK_AID		= 1 << 2,
	MAGNET_FK_PID		= 1 << 3,
	MAGNET_FK_TGID		= 1 << 4,
	MAGNET_FK_CGROUP	= 1 << 5,
};

/*
 * A filter's key (with @mask) or an event's key (all fields set).
 * @cgroup: a filter's cgroup v2 ID, whose whole subtree it matches, at
 * depth @cg_level (the root is 0); an event's own cgroup's ID, found
 * with its ancestors through @cgrp in the kernel (RCU), @cg_ids in the
 * unit tests (the IDs from the root down, @cg_level + 1 of them).
 */
struct magnet_fkey {
	u32 mask;
	u32 event;
	u32 cpu;
	u32 pid;
	u32 tgid;
	u32 cg_level;
	u64 abstract_id;
	u64 cgroup;
#ifdef __KERNEL__
	struct cgroup *cgrp;
#else
	const u64 *cg_ids;
#endif
};

/*
 * Is the event's cgroup the filter's cgroup or below it?  O(1): the
 * ancestor at the filter's depth, as the kernel's cgroup_is_descendant()
 * and BPF's ancestor checks find it.
 */
static inline bool magnet_fkey_cgroup_in(const struct magnet_fkey *f,
					 const struct magnet_fkey *ev)
{
#ifdef __KERNEL__
#ifdef CONFIG_CGROUPS
	const struct cgroup *c = ev->cgrp;

	return c && f->cg_level <= (u32)c->level &&
	       cgroup_id(c->ancestors[f->cg_level]) == f->cgroup;
#else
	return false;
#endif
#else
	return ev->cg_ids && f->cg_level <= ev->cg_level &&
	       ev->cg_ids[f->cg_level] == f->cgroup;
#endif
}

static inline bool magnet_fkey_match(const struct magnet_fkey *f,
				     const struct magnet_fkey *ev)
{
	u32 m = f->mask;

	return (!(m & MAGNET_FK_EVENT) || f->event == ev->event) &&
	       (!(m & MAGNET_FK_CPU) || f->cpu == ev->cpu) &&
	       (!(m & MAGNET_FK_AID) || f->abstract_id == ev->abstract_id) &&
	       (!(m & MAGNET_FK_PID) || f->pid == ev->pid) &&
	       (!(m & MAGNET_FK_TGID) || f->tgid == ev->tgid) &&
	       (!(m & MAGNET_FK_CGROUP) || magnet_fkey_cgroup_in(f, ev));
}

/* Specificity: the number of keys given. */
static inline unsigned int magnet_fkey_spec(u32 mask)
{
#ifdef __KERNEL__
	return hweight32(mask);
#else
	return (unsigned int)__builtin_popcount(mask);
#endif
}

/*
 * Precedence: does filter a (specificity, priority, creation sequence)
 * act before filter b when both match?  More specific first, then higher
 * priority, then the older one.  A strict total order: chains are kept
 * sorted by it and the first match of a chain is its best.
 */
static inline bool magnet_filter_before(unsigned int a_spec, s32 a_prio,
					u32 a_seq, unsigned int b_spec,
					s32 b_prio, u32 b_seq)
{
	if (a_spec != b_spec)
		return a_spec > b_spec;
	if (a_prio != b_prio)
		return a_prio > b_prio;
	return a_seq < b_seq;
}

/*
 * Count sampling: the @n-th match (1-based, from one shared counter)
 * passes when n % every == 1 (every 1: all).  Of N matches exactly
 * ceil(N / every) pass.
 */
static inline bool magnet_sample_count_ok(u64 n, u32 every)
{
	u32 rem;

	if (every <= 1)
		return true;
#ifdef __KERNEL__
	div_u64_rem(n - 1, every, &rem);
#else
	rem = (u32)((n - 1) % every);
#endif
	return rem == 0;
}

/*
 * Time sampling: an event at @now passes when now >= @next, the earliest
 * time the filter accepts again; it then moves @next to now + @period
 * (with a compare-and-exchange, so that of concurrent events only one
 * passes).  Hence at most one event per period.
 */
static inline bool magnet_sample_time_ok(u64 now, u64 next)
{
	return now >= next;
}

static inline u64 magnet_sample_time_next(u64 now, u64 period)
{
	return now + period;
}

#endif /* _MAGNET_FILTER_CORE_H */
