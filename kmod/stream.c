// SPDX-License-Identifier: GPL-2.0
/*
 * Streams: a named set of rings (ring/rings.h: per-CPU or global, discard
 * or overwrite) that probes write into and magnetfs files read from; the
 * stream adds the name, the references, the readers' wake-up policy (the
 * rings' irq_work and the read timer) and snapshots.
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

struct magnet_stream *magnet_stream_alloc(const char *name, u32 size,
					  u32 count, u32 mode, u32 clock)
{
	struct magnet_stream *s;
	int err;

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
	err = magnet_rings_init(&s->rings, size, count, mode, clock,
				magnet_stream_wake, s);
	if (err) {
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
	magnet_rings_free(&s->rings);
	kfree(s);
}

void magnet_stream_put(struct magnet_stream *s)
{
	kref_put(&s->ref, magnet_stream_release);
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

	if (!(s->rings.mode & MAGNET_STREAM_F_OVERWRITE)) {
		magnet_set_err(extack, NULL,
			       "stream '%s' is not in overwrite mode: only overwrite streams (flight recorders) take snapshots; read it instead",
			       s->name);
		return -EINVAL;
	}
	if (mutex_lock_interruptible(&s->read_lock))
		return -EINTR;
	if (op == MAGNET_SNAPSHOT_FREEZE) {
		if (s->rings.frozen) {
			magnet_set_err(extack, NULL,
				       "stream '%s' is frozen already (a snapshot is being taken; resume it first)",
				       s->name);
			err = -EBUSY;
		} else {
			WRITE_ONCE(s->rings.frozen, true);
			/* every writer in a ring now has left it */
			synchronize_rcu();
		}
	} else {
		if (!s->rings.frozen) {
			magnet_set_err(extack, NULL,
				       "stream '%s' is not frozen: nothing to resume",
				       s->name);
			err = -EINVAL;
		} else if (magnet_rings_held(&s->rings)) {
			/* the writers would overwrite what is being copied */
			magnet_set_err(extack, NULL,
				       "stream '%s': a reader holds a sub-buffer (MAGNET_IOC_GET_SPAN); resume after it puts it back",
				       s->name);
			err = -EBUSY;
		} else {
			WRITE_ONCE(s->rings.frozen, false);
		}
	}
	mutex_unlock(&s->read_lock);
	/* frozen: every waiting reader may read (data or the end of it) */
	if (!err)
		magnetfs_notify(s);
	return err;
}

u64 magnet_point_hits(struct magnet_point *pt)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *per_cpu_ptr(pt->hits, cpu);
	return sum;
}
