/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A set of rings: what one stream writes into, in one of its buffer modes
 * (docs/DESIGN.md): one ring per possible CPU (the default) or one ring
 * for all CPUs (MAGNET_STREAM_F_GLOBAL), each discarding when full (the
 * default) or overwriting its oldest sub-buffer (MAGNET_STREAM_F_OVERWRITE,
 * a flight recorder, read while @frozen).
 *
 * The ring library (ring.h for one ring, this file for the set) knows
 * nothing of streams, files or the instrumentation database: its owner
 * gives it a wake-up callback (an irq_work function, run when a ring
 * closes a sub-buffer while the owner armed it, see ring.h) and freezes
 * it for snapshots.  magnet_rings_write() is the one writer routine of
 * every mode.
 */
#ifndef _MAGNET_RINGS_H
#define _MAGNET_RINGS_H

#include <linux/types.h>
#include <linux/percpu.h>
#include <linux/cpumask.h>
#include <linux/spinlock.h>
#include <linux/atomic.h>
#include <linux/sched/clock.h>
#include <linux/timekeeping.h>
#include <linux/hardirq.h>
#include <linux/string.h>
#include <linux/align.h>
#include "ring.h"

struct magnet_rings {
	u32 size;			/* bytes per sub-buffer */
	u32 count;			/* sub-buffers per ring */
	u32 mode;			/* MAGNET_STREAM_F_*, fixed */
	u32 clock;			/* enum magnet_clock, fixed */
	struct magnet_ring __percpu *pcpu;	/* per-CPU mode */
	struct magnet_ring *global;	/* global mode: the one ring */
	raw_spinlock_t glock;		/* its writers, irqs off */
	atomic64_t gnmi_lost;		/* lost without glock (NMI, nested) */
	u64 gnmi_seen;			/* of those, in the ring's counters */
	bool frozen;			/* overwrite: a reader is in the rings */
};

/*
 * Allocate the rings (GFP_KERNEL); each ring's irq_work runs @wake with
 * ring->priv = @priv.  0 or -ENOMEM; on failure nothing is left to free.
 */
int magnet_rings_init(struct magnet_rings *rs, u32 size, u32 count, u32 mode,
		      u32 clock, void (*wake)(struct irq_work *), void *priv);
/* Wait for pending wake-ups and free the rings. */
void magnet_rings_free(struct magnet_rings *rs);

/*
 * The write section: at most one open per CPU.  A writer runs with
 * interrupts off, so on its CPU only an NMI, or a probe inside the write
 * itself (a run-time kprobe on a kernel function the write calls:
 * raw_spin_unlock(), irq_work_queue()), can start another write before
 * the first ends.  That one must not touch the rings: it would spin on
 * the global ring's lock its own CPU holds, or write into a per-CPU ring
 * between a reserve and its commit.  Every writer and flush of the rings
 * opens the section with magnet_rings_enter() (true: this CPU may write)
 * and closes it with magnet_rings_leave() whatever that said; a nested
 * writer counts its event with magnet_rings_lost_nested(), as
 * magnet_rings_add_lost() counts its losses, without the section.
 * this_cpu_inc_return() is one instruction on x86: an NMI between its
 * read and its write cannot happen.
 */
DECLARE_PER_CPU(unsigned int, magnet_rings_writing);

static __always_inline bool magnet_rings_enter(void)
{
	return this_cpu_inc_return(magnet_rings_writing) == 1;
}

static __always_inline void magnet_rings_leave(void)
{
	this_cpu_dec(magnet_rings_writing);
}

/*
 * One event for @rs lost by a writer that may not write (a nested one),
 * without touching the rings' counters: the next writer folds it in.
 */
static __always_inline void magnet_rings_lost_nested(struct magnet_rings *rs)
{
	if (rs->global)
		atomic64_inc(&rs->gnmi_lost);
	else
		local64_inc(&this_cpu_ptr(rs->pcpu)->nmi_lost);
}

/* A reading of the rings' clock (enum magnet_clock), any context. */
static __always_inline u64 magnet_rings_clock(const struct magnet_rings *rs)
{
	if (rs->clock == MAGNET_CLOCK_LOCAL)
		return local_clock();
	return ktime_get_mono_fast_ns();
}

/*
 * Write one record into @r's reserved space, or count it lost: the tail
 * of magnet_rings_write() in every mode.  Interrupts off, on r's CPU or
 * under the global ring's lock.
 */
static __always_inline bool magnet_rings_put(struct magnet_rings *rs,
					     struct magnet_ring *r, u16 event,
					     u64 abstract_id,
					     const void *payload, u16 len,
					     u64 now, const u32 *who)
{
	u32 size = ALIGN(MAGNET_REC_HDR_SIZE + len, MAGNET_REC_ALIGN);
	struct magnet_rec_hdr *h = NULL;

	r->produced++;
	/* frozen: a reader is in the rings (overwrite mode only) */
	if (unlikely(READ_ONCE(rs->frozen)))
		r->frozen_lost++;
	else if (likely(len <= MAGNET_PAYLOAD_MAX))
		h = magnet_ring_reserve(r, size, now);
	if (unlikely(!h)) {
		magnet_ring_drop(r);
		return false;
	}
	/*
	 * The padding (< 8 bytes, as size is the aligned length) is in the
	 * record's last 8-byte word: zero that word first, then the header
	 * and the payload overwrite their part of it.  One store, not a
	 * memset() call per event.
	 */
	*(u64 *)((char *)h + size - sizeof(u64)) = 0;
	magnet_rec_fill_hdr(h, size, event, abstract_id,
			    magnet_ring_stamp(r, now));
	if (who) {
		h->pid = who[0];
		h->tgid = who[1];
	}
	memcpy((char *)h + MAGNET_REC_HDR_SIZE, payload, len);
	magnet_ring_commit(r, size);
	r->written++;
	return true;
}

bool __magnet_rings_write_global(struct magnet_rings *rs, u16 event,
				 u64 abstract_id, const void *payload, u16 len,
				 const u32 *who);

/*
 * The one writer routine of every buffer mode, interrupts off, inside
 * this CPU's write section (magnet_rings_enter() said true); false when
 * the record was dropped (counted, reported by a LOST record).
 * @mono is CLOCK_MONOTONIC if the caller read it for this event (the
 * time its synthesizers and correlators saw, which a monotonic per-CPU
 * stream's record then carries too), 0 if not; a LOCAL stream reads its
 * own clock.  @who, when set, is the pid and tgid the record names
 * instead of the current task's.
 *
 * The default, per-CPU, is inline in the caller and touches only this
 * CPU's ring: no lock, no atomic instruction, no call but the clock's
 * (where @mono is not given) and the slow paths'.  The write section
 * makes it the ring's one writer in NMI context too (an NMI during a
 * write never gets here; nor does a kprobe hit through int3, which x86
 * runs as an NMI, inside one).  Like ring.h's, all of it is inline in
 * notrace, NOKPROBE_SYMBOL callers.
 */
static __always_inline bool magnet_rings_write(struct magnet_rings *rs,
					       u16 event, u64 abstract_id,
					       const void *payload, u16 len,
					       u64 mono, const u32 *who)
{
	struct magnet_ring *r;
	u64 now;

	if (unlikely(rs->global))
		return __magnet_rings_write_global(rs, event, abstract_id,
						   payload, len, who);
	r = this_cpu_ptr(rs->pcpu);
	magnet_ring_sync_nmi(r);
	/*
	 * interrupts are off: read on this CPU, and magnet_rings_put()
	 * stamps it no earlier than the ring's last record
	 */
	if (rs->clock == MAGNET_CLOCK_LOCAL)
		now = local_clock();
	else
		now = mono ?: magnet_clock_mono(&r->clk);
	return magnet_rings_put(rs, r, event, abstract_id, payload, len, now,
				who);
}

/*
 * Count @n events lost before they reached the rings (any context, a
 * write section open or not: folded in by the next writer).
 */
void magnet_rings_add_lost(struct magnet_rings *rs, u64 n);
/* Write every ring's pending LOST record (an IPI per CPU); may sleep. */
void magnet_rings_flush(struct magnet_rings *rs);
/* The counters summed over the rings (racy reads, for statistics). */
void magnet_rings_stats(struct magnet_rings *rs,
			struct magnet_stream_stats *st);
/* Bytes and events written and not yet read nor overwritten. */
u64 magnet_rings_avail(struct magnet_rings *rs, u64 *events);
/* Reader side (the owner's read lock): */
bool magnet_rings_has_data(struct magnet_rings *rs);
bool magnet_rings_held(struct magnet_rings *rs);

/* The ring of @cpu: the global one, or that CPU's. */
static inline struct magnet_ring *magnet_rings_ring(struct magnet_rings *rs,
						    int cpu)
{
	return rs->global ?: per_cpu_ptr(rs->pcpu, cpu);
}

static inline int magnet_rings_next(struct magnet_rings *rs, int cpu)
{
	return rs->global ? nr_cpu_ids : cpumask_next(cpu, cpu_possible_mask);
}

static inline unsigned int magnet_rings_nr(struct magnet_rings *rs)
{
	return rs->global ? 1 : num_possible_cpus();
}

#define magnet_rings_for_each(rs, cpu, r)				\
	for ((cpu) = cpumask_first(cpu_possible_mask);			\
	     (cpu) < nr_cpu_ids && ((r) = magnet_rings_ring(rs, cpu));	\
	     (cpu) = magnet_rings_next(rs, cpu))

#endif /* _MAGNET_RINGS_H */
