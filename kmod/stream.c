// SPDX-License-Identifier: GPL-2.0
/*
 * Streams: a named set of per-CPU rings (or one global ring) that probes
 * write into and one magnetfs file reads from.
 */
#include <linux/slab.h>
#include <linux/percpu.h>
#include <linux/cpumask.h>
#include <linux/smp.h>
#include <linux/timekeeping.h>
#include <linux/string.h>
#include <linux/rcupdate.h>
#include <linux/hardirq.h>
#include <linux/irq_work.h>
#include <linux/kprobes.h>
#include "internal.h"
#include "compat.h"

/* A ring closed a sub-buffer while a reader was armed (ring_switch()). */
static void magnet_stream_wake(struct irq_work *work)
{
	struct magnet_ring *r = container_of(work, struct magnet_ring, wake);
	struct magnet_stream *s = r->priv;

	/* wakes, signals or completes only the readers whose rule is met */
	if (READ_ONCE(s->waiting))
		magnetfs_notify(s);
}

/*
 * The read timer: while a reader is armed, its rule is evaluated every
 * MAGNET_READ_TIMER_MS (magnetfs_notify() re-arms the timer), which
 * catches what grows below a sub-buffer switch.
 */
static void magnet_stream_read_timer(struct timer_list *t)
{
	struct magnet_stream *s = from_timer(s, t, read_timer);

	if (READ_ONCE(s->waiting))
		magnetfs_notify(s);
}

static void magnet_stream_free_rings(struct magnet_stream *s)
{
	struct magnet_ring *r;
	int cpu;

	if (s->gring || s->rings) {
		magnet_stream_for_each_ring(s, cpu, r) {
			irq_work_sync(&r->wake);
			magnet_ring_free(r);
		}
	}
	kfree(s->gring);
	free_percpu(s->rings);
}

static int magnet_stream_init_ring(struct magnet_stream *s,
				   struct magnet_ring *r, int cpu)
{
	int err = magnet_ring_init(r, cpu, s->subbuf_size, s->subbuf_count);

	r->overwrite = !!(s->mode & MAGNET_STREAM_F_OVERWRITE);
	r->priv = s;
	init_irq_work(&r->wake, magnet_stream_wake);
	return err;
}

struct magnet_stream *magnet_stream_alloc(const char *name, u32 size,
					  u32 count, u32 mode)
{
	struct magnet_stream *s;
	int cpu, err = 0;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return ERR_PTR(-ENOMEM);
	strscpy(s->name, name, sizeof(s->name));
	kref_init(&s->ref);
	INIT_LIST_HEAD(&s->node);
	mutex_init(&s->read_lock);
	init_waitqueue_head(&s->wq);
	timer_setup(&s->read_timer, magnet_stream_read_timer, 0);
	spin_lock_init(&s->lock);
	INIT_LIST_HEAD(&s->files);
	s->subbuf_size = size;
	s->subbuf_count = count;
	s->mode = mode;
	raw_spin_lock_init(&s->glock);
	atomic64_set(&s->gnmi_lost, 0);
	if (mode & MAGNET_STREAM_F_GLOBAL) {
		/* kzalloc: a failed init leaves nothing to free but itself */
		s->gring = kzalloc(sizeof(*s->gring), GFP_KERNEL);
		if (s->gring)
			err = magnet_stream_init_ring(s, s->gring, -1);
	} else {
		s->rings = alloc_percpu(struct magnet_ring);
		for_each_possible_cpu(cpu) {
			if (!s->rings || err)
				break;
			err = magnet_stream_init_ring(s,
					per_cpu_ptr(s->rings, cpu), cpu);
		}
	}
	if (!s->gring && !s->rings)
		err = -ENOMEM;
	if (err) {
		magnet_stream_free_rings(s);
		kfree(s);
		return ERR_PTR(err);
	}
	return s;
}

void magnet_stream_get(struct magnet_stream *s)
{
	kref_get(&s->ref);
}

static void magnet_stream_release(struct kref *ref)
{
	struct magnet_stream *s = container_of(ref, struct magnet_stream, ref);

	/* no reader is left to arm it again */
	del_timer_sync(&s->read_timer);
	magnet_stream_free_rings(s);
	kfree(s);
}

void magnet_stream_put(struct magnet_stream *s)
{
	kref_put(&s->ref, magnet_stream_release);
}

void magnet_stream_stats(struct magnet_stream *s,
			 struct magnet_stream_stats *st)
{
	struct magnet_ring *r;
	int cpu;

	memset(st, 0, sizeof(*st));
	magnet_stream_for_each_ring(s, cpu, r) {
		u64 nmi = local64_read(&r->nmi_lost) - READ_ONCE(r->nmi_seen);

		if (s->gring)
			nmi = atomic64_read(&s->gnmi_lost) -
			      READ_ONCE(s->gnmi_seen);

		st->produced += READ_ONCE(r->produced) + nmi;
		st->written += READ_ONCE(r->written);
		st->lost += READ_ONCE(r->lost) + nmi;
		st->read += READ_ONCE(r->read);
		st->bytes += READ_ONCE(r->bytes);
		st->switches += READ_ONCE(r->switches);
		st->fill += magnet_ring_fill(r);
		st->overwritten += READ_ONCE(r->overwritten);
		st->overwritten_bytes += READ_ONCE(r->overwritten_bytes);
		st->frozen_lost += READ_ONCE(r->frozen_lost);
		st->lost_pending += READ_ONCE(r->lost_pending) + nmi;
	}
}

static void magnet_stream_flush_cpu(void *arg)
{
	struct magnet_stream *s = arg;

	/*
	 * IPI: interrupts are off, we are the ring's only writer.  A frozen
	 * ring is being read: its losses wait for the resume.
	 */
	if (!READ_ONCE(s->frozen))
		magnet_ring_flush_lost(this_cpu_ptr(s->rings),
				       ktime_get_mono_fast_ns());
}

/* Global ring, glock held: fold what NMIs could not write. */
notrace void magnet_gring_sync_nmi(struct magnet_stream *s)
{
	u64 n = atomic64_read(&s->gnmi_lost);

	if (unlikely(n != s->gnmi_seen)) {
		s->gring->produced += n - s->gnmi_seen;
		s->gring->lost += n - s->gnmi_seen;
		s->gring->lost_pending += n - s->gnmi_seen;
		WRITE_ONCE(s->gnmi_seen, n);
	}
}
NOKPROBE_SYMBOL(magnet_gring_sync_nmi);

/* Global ring, glock held: a timestamp not before the last one in it. */
notrace u64 magnet_gring_now(struct magnet_stream *s)
{
	u64 now = ktime_get_mono_fast_ns();

	/* the fast clock may step back a little across a timekeeping update */
	if (unlikely(now < s->glast_ts))
		now = s->glast_ts;
	s->glast_ts = now;
	return now;
}
NOKPROBE_SYMBOL(magnet_gring_now);

/*
 * The buffer modes (docs/DESIGN.md): a global ring, whose writers
 * serialize on s->glock with interrupts off and take their timestamp
 * under it (in NMI only a trylock: busy counts the event lost), and
 * overwrite rings, whose writers only count events while a snapshot
 * freezes the stream.  Kept out of magnet_write() (kmod/add.c) so that
 * the default per-CPU discard path stays as it was.  Interrupts are off
 * (the caller's irq-off section).
 */
notrace bool magnet_write_mode(struct magnet_stream *s, u16 event,
			       u64 abstract_id, const void *payload, u16 len,
			       u64 now, const u32 *who)
{
	u32 size = ALIGN(MAGNET_REC_HDR_SIZE + len, MAGNET_REC_ALIGN);
	struct magnet_ring *r = s->gring;
	void *rec = NULL;

	if (r) {
		if (unlikely(in_nmi())) {
			/* the lock holder may be the code this NMI interrupted */
			if (!raw_spin_trylock(&s->glock)) {
				atomic64_inc(&s->gnmi_lost);
				return false;
			}
		} else {
			raw_spin_lock(&s->glock);
		}
		magnet_gring_sync_nmi(s);
		/*
		 * The global order is the ring's: its timestamps are read
		 * under the lock, so they may be a little later than the
		 * @now synthesizers and correlators saw for the same event.
		 */
		now = magnet_gring_now(s);
	} else {
		if (unlikely(in_nmi())) {
			local64_inc(&this_cpu_ptr(s->rings)->nmi_lost);
			return false;
		}
		r = this_cpu_ptr(s->rings);
		magnet_ring_sync_nmi(r);
	}
	r->produced++;
	/* frozen: a reader is in the rings (see magnet_stream_snapshot()) */
	if (unlikely(READ_ONCE(s->frozen)))
		r->frozen_lost++;
	else if (likely(len <= MAGNET_PAYLOAD_MAX))
		rec = magnet_ring_reserve(r, size, now);
	if (unlikely(!rec)) {
		magnet_ring_drop(r);
	} else {
		magnet_rec_fill_hdr(rec, size, event, abstract_id, now);
		if (who) {
			((struct magnet_rec_hdr *)rec)->pid = who[0];
			((struct magnet_rec_hdr *)rec)->tgid = who[1];
		}
		memcpy(rec + MAGNET_REC_HDR_SIZE, payload, len);
		memset(rec + MAGNET_REC_HDR_SIZE + len, 0,
		       size - MAGNET_REC_HDR_SIZE - len);
		magnet_ring_commit(r, size);
		r->written++;
	}
	if (s->gring)
		raw_spin_unlock(&s->glock);
	return rec != NULL;
}
NOKPROBE_SYMBOL(magnet_write_mode);

/* Write every CPU's pending LOST record so that readers see all losses. */
void magnet_stream_flush(struct magnet_stream *s)
{
	unsigned long flags;

	if (!s->gring) {
		on_each_cpu(magnet_stream_flush_cpu, s, 1);
		return;
	}
	raw_spin_lock_irqsave(&s->glock, flags);
	magnet_gring_sync_nmi(s);
	if (!READ_ONCE(s->frozen))
		magnet_ring_flush_lost(s->gring, magnet_gring_now(s));
	raw_spin_unlock_irqrestore(&s->glock, flags);
}

/* A sub-buffer consumer holds part of a ring; read_lock held. */
static bool magnet_stream_held(struct magnet_stream *s)
{
	struct magnet_ring *r;
	int cpu;

	magnet_stream_for_each_ring(s, cpu, r)
		if (r->held)
			return true;
	return false;
}

bool magnet_stream_has_data(struct magnet_stream *s)
{
	struct magnet_ring *r;
	int cpu;

	magnet_stream_for_each_ring(s, cpu, r)
		if (magnet_ring_has_data(r))
			return true;
	return false;
}

/*
 * Overwrite streams: freeze the writers so that a reader can drain the
 * rings (the newest data), or let them go on.  Freezing waits until no
 * writer is inside a ring: they run with interrupts off, so after
 * synchronize_rcu() every writer sees @frozen and only counts its event.
 * @read_lock orders this against readers: a reader copies only under it
 * and only while frozen, so writers and readers never meet in a ring.
 * Not under db.lock (readers take db.lock under read_lock).
 */
int magnet_stream_snapshot(struct magnet_stream *s, u32 op,
			   struct netlink_ext_ack *extack)
{
	int err = 0;

	if (!(s->mode & MAGNET_STREAM_F_OVERWRITE)) {
		magnet_set_err(extack, NULL,
			       "stream '%s' is not in overwrite mode: only overwrite streams (flight recorders) take snapshots; read it instead",
			       s->name);
		return -EINVAL;
	}
	if (mutex_lock_interruptible(&s->read_lock))
		return -EINTR;
	if (op == MAGNET_SNAPSHOT_FREEZE) {
		if (s->frozen) {
			magnet_set_err(extack, NULL,
				       "stream '%s' is frozen already (a snapshot is being taken; resume it first)",
				       s->name);
			err = -EBUSY;
		} else {
			WRITE_ONCE(s->frozen, true);
			/* every writer in a ring now has left it */
			synchronize_rcu();
		}
	} else {
		if (!s->frozen) {
			magnet_set_err(extack, NULL,
				       "stream '%s' is not frozen: nothing to resume",
				       s->name);
			err = -EINVAL;
		} else if (magnet_stream_held(s)) {
			/* the writers would overwrite what is being copied */
			magnet_set_err(extack, NULL,
				       "stream '%s': a reader holds a sub-buffer (MAGNET_IOC_GET_SPAN); resume after it puts it back",
				       s->name);
			err = -EBUSY;
		} else {
			WRITE_ONCE(s->frozen, false);
		}
	}
	mutex_unlock(&s->read_lock);
	/* frozen: every waiting reader may read (data or the end of it) */
	if (!err)
		magnetfs_notify(s);
	return err;
}

/*
 * Bytes (all records) and probe events written and not yet read, from the
 * per-ring counters: cheap, and racy by at most the records being
 * committed on other CPUs right now.
 */
u64 magnet_stream_avail(struct magnet_stream *s, u64 *events)
{
	u64 bytes = 0, ev = 0;
	struct magnet_ring *r;
	int cpu;

	magnet_stream_for_each_ring(s, cpu, r) {
		u64 w = READ_ONCE(r->written);
		u64 rd = READ_ONCE(r->read) + READ_ONCE(r->overwritten);

		bytes += magnet_ring_fill(r);
		ev += w > rd ? w - rd : 0;
	}
	*events = ev;
	return bytes;
}

u64 magnet_point_hits(struct magnet_point *pt)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *per_cpu_ptr(pt->hits, cpu);
	return sum;
}
