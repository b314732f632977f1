// SPDX-License-Identifier: GPL-2.0
/*
 * Streams: a named set of per-CPU rings that probes write into and one
 * magnetfs file reads from.
 */
#include <linux/slab.h>
#include <linux/percpu.h>
#include <linux/cpumask.h>
#include <linux/smp.h>
#include <linux/timekeeping.h>
#include <linux/string.h>
#include "internal.h"

static void magnet_stream_wake(struct irq_work *work)
{
	struct magnet_ring *r = container_of(work, struct magnet_ring, wake);
	struct magnet_stream *s = r->priv;

	/* wakes, signals or completes only the readers whose rule is met */
	if (READ_ONCE(s->waiting))
		magnetfs_notify(s);
}

static void magnet_stream_free_rings(struct magnet_stream *s)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct magnet_ring *r = per_cpu_ptr(s->rings, cpu);

		irq_work_sync(&r->wake);
		magnet_ring_free(r);
	}
	free_percpu(s->rings);
}

struct magnet_stream *magnet_stream_alloc(const char *name, u32 size,
					  u32 count)
{
	struct magnet_stream *s;
	int cpu, err;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return ERR_PTR(-ENOMEM);
	strscpy(s->name, name, sizeof(s->name));
	kref_init(&s->ref);
	INIT_LIST_HEAD(&s->node);
	mutex_init(&s->read_lock);
	init_waitqueue_head(&s->wq);
	spin_lock_init(&s->lock);
	INIT_LIST_HEAD(&s->files);
	s->subbuf_size = size;
	s->subbuf_count = count;
	s->rings = alloc_percpu(struct magnet_ring);
	if (!s->rings) {
		kfree(s);
		return ERR_PTR(-ENOMEM);
	}
	for_each_possible_cpu(cpu) {
		struct magnet_ring *r = per_cpu_ptr(s->rings, cpu);

		err = magnet_ring_init(r, cpu, size, count);
		r->priv = s;
		init_irq_work(&r->wake, magnet_stream_wake);
		if (err) {
			magnet_stream_free_rings(s);
			kfree(s);
			return ERR_PTR(err);
		}
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
	int cpu;

	memset(st, 0, sizeof(*st));
	for_each_possible_cpu(cpu) {
		struct magnet_ring *r = per_cpu_ptr(s->rings, cpu);
		u64 nmi = local64_read(&r->nmi_lost) - READ_ONCE(r->nmi_seen);

		st->produced += READ_ONCE(r->produced) + nmi;
		st->written += READ_ONCE(r->written);
		st->lost += READ_ONCE(r->lost) + nmi;
		st->read += READ_ONCE(r->read);
		st->bytes += READ_ONCE(r->bytes);
		st->switches += READ_ONCE(r->switches);
		st->fill += magnet_ring_fill(r);
	}
}

static void magnet_stream_flush_cpu(void *arg)
{
	struct magnet_stream *s = arg;

	/* IPI: interrupts are off, we are the ring's only writer */
	magnet_ring_flush_lost(this_cpu_ptr(s->rings),
			       ktime_get_mono_fast_ns());
}

/* Write every CPU's pending LOST record so that readers see all losses. */
void magnet_stream_flush(struct magnet_stream *s)
{
	on_each_cpu(magnet_stream_flush_cpu, s, 1);
}

bool magnet_stream_has_data(struct magnet_stream *s)
{
	int cpu;

	for_each_possible_cpu(cpu)
		if (magnet_ring_has_data(per_cpu_ptr(s->rings, cpu)))
			return true;
	return false;
}

/*
 * Bytes (all records) and probe events written and not yet read, from the
 * per-ring counters: cheap, and racy by at most the records being
 * committed on other CPUs right now.
 */
u64 magnet_stream_avail(struct magnet_stream *s, u64 *events)
{
	u64 bytes = 0, ev = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		struct magnet_ring *r = per_cpu_ptr(s->rings, cpu);
		u64 w = READ_ONCE(r->written), rd = READ_ONCE(r->read);

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
