// SPDX-License-Identifier: GPL-2.0
/*
 * The fast path: magnet_add() from any context.
 *
 * Interrupts are disabled for the few dozen instructions between reserving
 * ring space and committing it, which makes the per-CPU ring single-writer
 * without a lock or an atomic operation.  NMIs cannot be excluded that
 * way, so an event in NMI context is only counted as lost.  Readers are
 * never woken from here: an irq_work does that after we return, so a
 * probe inside the scheduler cannot deadlock on a wait-queue lock.
 */
#include <linux/irq_work.h>
#include <linux/percpu.h>
#include <linux/hardirq.h>
#include <linux/timekeeping.h>
#include <linux/string.h>
#include "internal.h"

/* Write one event of @pt into this CPU's ring of @s. */
void magnet_write(struct magnet_point *pt, struct magnet_stream *s,
		  u64 abstract_id, const void *payload, u16 len)
{
	u32 size = ALIGN(MAGNET_REC_HDR_SIZE + len, MAGNET_REC_ALIGN);
	struct magnet_ring *r;
	unsigned long flags;
	u64 now;
	void *rec;

	if (unlikely(s->mode)) {
		magnet_write_mode(pt, s, abstract_id, payload, len);
		return;
	}
	if (unlikely(in_nmi())) {
		local64_inc(&this_cpu_ptr(s->rings)->nmi_lost);
		return;
	}

	local_irq_save(flags);
	r = this_cpu_ptr(s->rings);
	magnet_ring_sync_nmi(r);
	r->produced++;
	now = ktime_get_mono_fast_ns();
	rec = unlikely(len > MAGNET_PAYLOAD_MAX) ? NULL :
		magnet_ring_reserve(r, size, now);
	if (unlikely(!rec)) {
		magnet_ring_drop(r);
		local_irq_restore(flags);
		return;
	}
	magnet_rec_fill_hdr(rec, size, pt->id, abstract_id, now);
	memcpy(rec + MAGNET_REC_HDR_SIZE, payload, len);
	memset(rec + MAGNET_REC_HDR_SIZE + len, 0,
	       size - MAGNET_REC_HDR_SIZE - len);
	magnet_ring_commit(r, size);
	r->written++;
	local_irq_restore(flags);

	magnet_kick_reader(s, r);
}

/*
 * @s is the point's stream, its default route; filters (kmod/filter.c)
 * may drop, sample or redirect the event before anything is copied.
 */
void __magnet_add(struct magnet_point *pt, struct magnet_stream *s,
		  u64 abstract_id, const void *payload, u16 len)
{
	this_cpu_inc(*pt->hits);
	if (unlikely(READ_ONCE(magnet_filters_active)) &&
	    magnet_filter_add(pt, s, abstract_id, payload, len))
		return;
	magnet_write(pt, s, abstract_id, payload, len);
}
EXPORT_SYMBOL_GPL(__magnet_add);

void magnet_add_lost(struct magnet_point *pt, u64 n)
{
	struct magnet_stream *s;
	struct magnet_ring *r;
	unsigned long flags;

	if (!n)
		return;
	rcu_read_lock_sched();
	s = rcu_dereference_sched(pt->stream);
	if (s && s->gring) {
		/* folded into the ring by the next writer */
		atomic64_add(n, &s->gnmi_lost);
	} else if (s) {
		local_irq_save(flags);
		r = this_cpu_ptr(s->rings);
		r->produced += n;
		r->lost += n;
		r->lost_pending += n;
		local_irq_restore(flags);
	}
	rcu_read_unlock_sched();
}
EXPORT_SYMBOL_GPL(magnet_add_lost);
