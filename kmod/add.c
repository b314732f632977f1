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

static __always_inline void magnet_kick_reader(struct magnet_stream *s,
					       struct magnet_ring *r)
{
	/* pairs with the barrier in reader_arm() (magnetfs/stream_file.c) */
	smp_mb();
	/*
	 * Only when some reader waits, and only when this ring grew by its
	 * share of what the nearest reader's rule still lacks: if the rule
	 * is met, at least one ring grew that much (magnetfs_set_kick()).
	 */
	if (unlikely(READ_ONCE(s->waiting)) &&
	    (r->bytes >= READ_ONCE(r->kick_bytes) ||
	     r->written >= READ_ONCE(r->kick_events)))
		irq_work_queue(&r->wake);
}

/*
 * Write one event of @pt into this CPU's ring of @s, stamped @now (taken
 * here, with interrupts off, when 0: the ring stays in time order).
 */
void magnet_write_at(struct magnet_point *pt, struct magnet_stream *s,
		     u64 abstract_id, const void *payload, u16 len, u64 now)
{
	u32 size = ALIGN(MAGNET_REC_HDR_SIZE + len, MAGNET_REC_ALIGN);
	struct magnet_ring *r;
	unsigned long flags;
	void *rec;

	if (unlikely(in_nmi())) {
		local64_inc(&this_cpu_ptr(s->rings)->nmi_lost);
		return;
	}

	local_irq_save(flags);
	r = this_cpu_ptr(s->rings);
	magnet_ring_sync_nmi(r);
	r->produced++;
	if (!now)
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
 * A core record (MAGNET_EVENT_CORR, ...) from process context (magnetk):
 * same accounting as an event; the header names the task it is about.
 */
void magnet_write_core(struct magnet_stream *s, u16 event, u64 abstract_id,
		       u32 pid, u32 tgid, const void *payload, u16 len)
{
	u32 size = ALIGN(MAGNET_REC_HDR_SIZE + len, MAGNET_REC_ALIGN);
	struct magnet_rec_hdr *h;
	struct magnet_ring *r;
	unsigned long flags;
	u64 now;

	local_irq_save(flags);
	r = this_cpu_ptr(s->rings);
	magnet_ring_sync_nmi(r);
	r->produced++;
	now = ktime_get_mono_fast_ns();
	h = unlikely(len > MAGNET_PAYLOAD_MAX) ? NULL :
		magnet_ring_reserve(r, size, now);
	if (unlikely(!h)) {
		magnet_ring_drop(r);
		local_irq_restore(flags);
		return;
	}
	magnet_rec_fill_hdr(h, size, event, abstract_id, now);
	h->pid = pid;
	h->tgid = tgid;
	memcpy((void *)h + MAGNET_REC_HDR_SIZE, payload, len);
	memset((void *)h + MAGNET_REC_HDR_SIZE + len, 0,
	       size - MAGNET_REC_HDR_SIZE - len);
	magnet_ring_commit(r, size);
	r->written++;
	local_irq_restore(flags);

	magnet_kick_reader(s, r);
}

/*
 * A tapped point: the user's route (@s, NULL when the point is not
 * enabled into a stream) and every in-kernel consumer get the event with
 * the same timestamp.  Interrupts stay off across all the writes, so each
 * ring still receives its records in time order.
 */
static void magnet_add_tapped(struct magnet_point *pt, struct magnet_stream *s,
			      struct magnet_taps *t, u64 abstract_id,
			      const void *payload, u16 len)
{
	unsigned long flags;
	unsigned int i;
	u64 now;

	if (unlikely(in_nmi())) {
		if (s)
			local64_inc(&this_cpu_ptr(s->rings)->nmi_lost);
		for (i = 0; i < t->n; i++)
			local64_inc(&this_cpu_ptr(t->s[i]->rings)->nmi_lost);
		return;
	}
	local_irq_save(flags);
	now = ktime_get_mono_fast_ns();
	if (s) {
		this_cpu_inc(*pt->hits);
		if (!(READ_ONCE(magnet_filters_active) &&
		      magnet_filter_add(pt, s, abstract_id, payload, len, now)))
			magnet_write_at(pt, s, abstract_id, payload, len, now);
	}
	for (i = 0; i < t->n; i++)
		magnet_write_at(pt, t->s[i], abstract_id, payload, len, now);
	local_irq_restore(flags);
}

/*
 * @s is the point's stream, its default route; filters (kmod/filter.c)
 * may drop, sample or redirect the event before anything is copied.
 */
void __magnet_add(struct magnet_point *pt, struct magnet_stream *s,
		  u64 abstract_id, const void *payload, u16 len)
{
	struct magnet_taps *t = rcu_dereference_sched(pt->taps);

	if (unlikely(t)) {
		magnet_add_tapped(pt, s, t, abstract_id, payload, len);
		return;
	}
	this_cpu_inc(*pt->hits);
	if (unlikely(READ_ONCE(magnet_filters_active)) &&
	    magnet_filter_add(pt, s, abstract_id, payload, len, 0))
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
	if (s) {
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
