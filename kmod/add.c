// SPDX-License-Identifier: GPL-2.0
/*
 * The fast path: magnet_add() from any context.
 *
 * One irq-off section per event covers the clock read, the filters,
 * synthesizers and every ring the event goes to; it makes each per-CPU
 * ring single-writer without a lock.  NMIs cannot be excluded that way,
 * nor probes on the kernel functions a write calls (raw_spin_unlock(),
 * irq_work_queue()): the per-CPU write section (ring/rings.h) counts an
 * event that begins inside another's write on the same CPU as lost.
 * Nothing here looks at readers: the ring queues a deferred wake-up
 * (an irq_work) when it closes a sub-buffer and a reader waits, and a
 * timer of the stream does the rest (magnetfs/stream_file.c), so a probe
 * inside the scheduler cannot deadlock on a wait-queue lock and an event
 * pays for no barrier.  Everything here is notrace and NOKPROBE_SYMBOL:
 * no probe may land between a reserve and its commit.
 */
#include <linux/kprobes.h>
#include <linux/percpu.h>
#include <linux/hardirq.h>
#include <linux/timekeeping.h>
#include <linux/string.h>
#include "internal.h"
#include "sock_user.h"

/*
 * Write one record into @s (ring/rings.h: the one writer of every buffer
 * mode, inline); false when dropped.  Interrupts are off (the caller's one
 * irq-off section).  @who, when set, is the pid and tgid the record names
 * instead of the current task's (core records written by magnetk about
 * some other task).
 */
static __always_inline bool __magnet_write(struct magnet_stream *s, u16 event,
					   u64 abstract_id,
					   const void *payload, u16 len,
					   u64 now, const u32 *who)
{
	return magnet_rings_write(&s->rings, event, abstract_id, payload, len,
				  now, who);
}

/*
 * Write one event of @pt into this CPU's ring of @s, interrupts off.
 * @now (CLOCK_MONOTONIC, or 0: not read) was read in the same irq-off
 * section on this CPU, so the ring's timestamps never go back.
 */
notrace void magnet_write(struct magnet_point *pt, struct magnet_stream *s,
			  u64 abstract_id, const void *payload, u16 len,
			  u64 now, const struct magnet_who *w)
{
	__magnet_write(s, pt->id, abstract_id, payload, len, now,
		       magnet_who_ids(w));
}
NOKPROBE_SYMBOL(magnet_write);

/*
 * A core record (SYNTH, CORR, APP) written from process context, about
 * the task @pid / @tgid (0: none); same accounting as an event.  The
 * ring's write path is inline here too: notrace and NOKPROBE_SYMBOL.
 */
notrace bool magnet_write_core(struct magnet_stream *s, u16 event,
			       u64 abstract_id, u32 pid, u32 tgid,
			       const void *payload, u16 len)
{
	const u32 who[2] = { pid, tgid };
	unsigned long flags;
	bool ok = false;

	local_irq_save(flags);
	if (likely(magnet_rings_enter()))
		ok = __magnet_write(s, event, abstract_id, payload, len, 0, who);
	else
		magnet_rings_lost_nested(&s->rings);
	magnet_rings_leave();
	local_irq_restore(flags);
	return ok;
}
NOKPROBE_SYMBOL(magnet_write_core);

/*
 * An event that began while another was being written on this CPU (an
 * NMI during a write, or a probe on a kernel function the write calls:
 * ring/rings.h, "the write section"): counted lost in the point's stream
 * and in each correlator tap's, missed by each synthesizer it would have
 * been fed to (those of @owner's socket among them), nothing else touched.
 */
static __always_inline void magnet_add_nested(struct magnet_point *pt,
					      struct magnet_stream *s,
					      const struct sock *owner)
{
	struct magnet_taps *t = rcu_dereference_sched(pt->taps);
	unsigned int i;

	if (s) {
		this_cpu_inc(*pt->hits);
		magnet_rings_lost_nested(&s->rings);
	}
	if (unlikely(t))
		for (i = 0; i < t->n; i++)
			magnet_rings_lost_nested(&t->s[i]->rings);
	if (unlikely(magnet_point_synth(pt)))
		magnet_synth_missed_one(pt, owner);
}

/*
 * @s is the point's stream, its default route (NULL when only in-kernel
 * consumers read the point); filters (kmod/filter.c) may drop, sample
 * or redirect the event before anything is copied.  CLOCK_MONOTONIC is
 * read once, with interrupts off, and only if something needs it: the
 * synthesizers (kmod/synth.c), the filters' time sampling and their
 * copies to several streams (read there, once a filter has matched and
 * not refused the event by key or count), the correlators' taps
 * (kmod/corr.c) and every monotonic stream's record of this event use
 * the same value, so a full trace, the SYNTH records and the correlations
 * agree exactly (unless a ring raises it to its last record's time:
 * magnet_ring_stamp()), and each ring still receives its records in
 * time order.  Otherwise a monotonic per-CPU ring reads its own clock,
 * extrapolated from the TSC where the kernel trusts it (ring/clock.h).
 * A stream on the local clock (MAGNET_CLOCK_LOCAL) reads that instead, so
 * the common case, one stream and nothing else, reads one clock.
 * @owner, the local socket the event is about (or NULL), gives the event
 * its cgroup for filters and synthesizers in interrupt context, and its
 * process there: the socket's last user in task context (sock_user.h),
 * which its record, filters and synthesizers then name.
 */
notrace void __magnet_add(struct magnet_point *pt, struct magnet_stream *s,
			  u64 abstract_id, const void *payload, u16 len,
			  const struct sock *owner)
{
	struct magnet_who w = { .owner = owner };
	struct magnet_taps *t;
	unsigned long flags;
	unsigned int i;
	u64 now = 0;

	local_irq_save(flags);
	if (unlikely(!magnet_rings_enter())) {
		magnet_add_nested(pt, s, owner);
		goto out;
	}
	if (owner && abstract_id) {
		if (in_task())
			magnet_sock_user_note(abstract_id);
		else if (!in_nmi())
			w.named = magnet_sock_user_find(abstract_id, w.who);
	}
	t = rcu_dereference_sched(pt->taps);
	/*
	 * CLOCK_MONOTONIC for the synthesizers and taps; the filters read it
	 * themselves, only where they need it (magnet_filter_add())
	 */
	if (unlikely(t || magnet_point_synth(pt)))
		now = ktime_get_mono_fast_ns();
	if (unlikely(magnet_point_synth(pt)))
		magnet_synth_feed(pt, abstract_id, payload, len, now, &w);
	if (likely(s)) {
		this_cpu_inc(*pt->hits);
		if (!unlikely(READ_ONCE(magnet_filters_active)) ||
		    !magnet_filter_add(pt, s, abstract_id, payload, len, &now,
				       &w))
			__magnet_write(s, pt->id, abstract_id, payload, len,
				       now, magnet_who_ids(&w));
	}
	/* in-kernel consumers get every event, whatever the filters say */
	if (unlikely(t))
		for (i = 0; i < t->n; i++)
			magnet_write(pt, t->s[i], abstract_id, payload, len,
				     now, &w);
out:
	magnet_rings_leave();
	local_irq_restore(flags);
}
EXPORT_SYMBOL_GPL(__magnet_add);
NOKPROBE_SYMBOL(__magnet_add);

notrace void magnet_add_lost(struct magnet_point *pt, u64 n)
{
	struct magnet_stream *s;
	struct magnet_taps *t;
	unsigned int i;

	if (!n)
		return;
	rcu_read_lock_sched_notrace();
	s = rcu_dereference_sched(pt->stream);
	if (s)
		magnet_rings_add_lost(&s->rings, n);
	t = rcu_dereference_sched(pt->taps);
	if (unlikely(t))
		for (i = 0; i < t->n; i++)
			magnet_rings_add_lost(&t->s[i]->rings, n);
	if (unlikely(magnet_point_synth(pt)))
		magnet_synth_missed(pt, n);
	rcu_read_unlock_sched_notrace();
}
EXPORT_SYMBOL_GPL(magnet_add_lost);
NOKPROBE_SYMBOL(magnet_add_lost);
