// SPDX-License-Identifier: GPL-2.0
/*
 * A set of rings in one buffer mode: see rings.h.
 *
 * magnet_rings_write() (rings.h, inline in its caller) is every mode's
 * writer, inside this CPU's write section (magnet_rings_enter()).  The
 * default, per-CPU discard, touches only this CPU's ring with interrupts
 * off: no lock, no atomic instruction.  A global ring's writers serialize
 * on @glock and take their timestamp under it (in NMI only a trylock:
 * busy counts the event lost), so the ring is in global time order.  An
 * overwrite ring's writers only count their events while the owner has
 * @frozen them for a reader.  Like ring.c, the write path is notrace and
 * NOKPROBE_SYMBOL.
 */
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/hardirq.h>
#include <linux/irq_work.h>
#include <linux/kprobes.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include "rings.h"

DEFINE_PER_CPU(unsigned int, magnet_rings_writing);

static int rings_init_one(struct magnet_rings *rs, struct magnet_ring *r,
			  int cpu, void (*wake)(struct irq_work *), void *priv)
{
	int err = magnet_ring_init(r, cpu, rs->size, rs->count);

	magnet_clock_init(&r->clk);
	r->overwrite = !!(rs->mode & MAGNET_STREAM_F_OVERWRITE);
	r->priv = priv;
	init_irq_work(&r->wake, wake);
	return err;
}

void magnet_rings_free(struct magnet_rings *rs)
{
	struct magnet_ring *r;
	int cpu;

	if (rs->global || rs->pcpu) {
		magnet_rings_for_each(rs, cpu, r) {
			irq_work_sync(&r->wake);
			magnet_ring_free(r);
		}
	}
	kfree(rs->global);
	free_percpu(rs->pcpu);
	rs->global = NULL;
	rs->pcpu = NULL;
}

int magnet_rings_init(struct magnet_rings *rs, u32 size, u32 count, u32 mode,
		      u32 clock, void (*wake)(struct irq_work *), void *priv)
{
	int cpu, err = 0;

	memset(rs, 0, sizeof(*rs));
	rs->size = size;
	rs->count = count;
	rs->mode = mode;
	rs->clock = clock;
	raw_spin_lock_init(&rs->glock);
	atomic64_set(&rs->gnmi_lost, 0);
	if (mode & MAGNET_STREAM_F_GLOBAL) {
		/* kzalloc: a failed init leaves nothing to free but itself */
		rs->global = kzalloc(sizeof(*rs->global), GFP_KERNEL);
		if (rs->global)
			err = rings_init_one(rs, rs->global, -1, wake, priv);
	} else {
		rs->pcpu = alloc_percpu(struct magnet_ring);
		for_each_possible_cpu(cpu) {
			if (!rs->pcpu || err)
				break;
			err = rings_init_one(rs, per_cpu_ptr(rs->pcpu, cpu), cpu,
					     wake, priv);
		}
	}
	if (!rs->global && !rs->pcpu)
		err = -ENOMEM;
	if (err)
		magnet_rings_free(rs);
	return err;
}

/* Global ring, glock held: fold what NMIs and nested writers could not write. */
static notrace void rings_global_sync_nmi(struct magnet_rings *rs)
{
	u64 n = atomic64_read(&rs->gnmi_lost);

	if (unlikely(n != rs->gnmi_seen)) {
		rs->global->produced += n - rs->gnmi_seen;
		rs->global->lost += n - rs->gnmi_seen;
		rs->global->lost_pending += n - rs->gnmi_seen;
		WRITE_ONCE(rs->gnmi_seen, n);
	}
}
NOKPROBE_SYMBOL(rings_global_sync_nmi);

/*
 * magnet_rings_write()'s global mode (rings.h has the per-CPU one, inline
 * in the caller): the writers serialize on @glock and take their
 * timestamp under it, so the ring is in global time order.
 */
notrace bool __magnet_rings_write_global(struct magnet_rings *rs, u16 event,
					 u64 abstract_id, const void *payload,
					 u16 len, const u32 *who)
{
	struct magnet_ring *r = rs->global;
	u64 now = magnet_rings_clock(rs);
	bool ok;

	if (unlikely(in_nmi())) {
		/* the lock holder may be the code this NMI interrupted */
		if (!raw_spin_trylock(&rs->glock)) {
			atomic64_inc(&rs->gnmi_lost);
			return false;
		}
	} else {
		raw_spin_lock(&rs->glock);
	}
	rings_global_sync_nmi(rs);
	/*
	 * The global order is the ring's: a timestamp is the clock read
	 * just before the lock (outside it: the clock is a function outside
	 * MAGNET, and a run-time probe on it whose handler records into this
	 * stream would spin on the lock its own CPU holds), raised to the
	 * last one in the ring (magnet_ring_stamp(): the fast monotonic
	 * clock may step back a little across a timekeeping update, the
	 * local clock across CPUs, and a writer that read the clock before
	 * another took the lock is later in the ring).  So it may be a
	 * little later than the @mono synthesizers and correlators saw for
	 * the same event.
	 */
	ok = magnet_rings_put(rs, r, event, abstract_id, payload, len, now, who);
	raw_spin_unlock(&rs->glock);
	return ok;
}
NOKPROBE_SYMBOL(__magnet_rings_write_global);

notrace void magnet_rings_add_lost(struct magnet_rings *rs, u64 n)
{
	struct magnet_ring *r;
	unsigned long flags;

	/*
	 * Folded into the ring by its next writer (or flush), as a nested
	 * writer's: any context, inside another write on this CPU too.
	 */
	if (rs->global) {
		atomic64_add(n, &rs->gnmi_lost);
		return;
	}
	local_irq_save(flags);
	r = this_cpu_ptr(rs->pcpu);
	local64_add(n, &r->nmi_lost);
	local_irq_restore(flags);
}
NOKPROBE_SYMBOL(magnet_rings_add_lost);

static void rings_flush_cpu(void *arg)
{
	struct magnet_rings *rs = arg;

	/*
	 * IPI: interrupts are off; in the write section, we are the ring's
	 * only writer.  A frozen ring is being read: its losses wait for the
	 * resume.
	 */
	if (magnet_rings_enter() && !READ_ONCE(rs->frozen))
		magnet_ring_flush_lost(this_cpu_ptr(rs->pcpu),
				       magnet_rings_clock(rs));
	magnet_rings_leave();
}

void magnet_rings_flush(struct magnet_rings *rs)
{
	unsigned long flags;
	u64 now;

	if (!rs->global) {
		on_each_cpu(rings_flush_cpu, rs, 1);
		return;
	}
	local_irq_save(flags);
	if (magnet_rings_enter()) {
		now = magnet_rings_clock(rs);
		raw_spin_lock(&rs->glock);
		rings_global_sync_nmi(rs);
		if (!READ_ONCE(rs->frozen))
			magnet_ring_flush_lost(rs->global, now);
		raw_spin_unlock(&rs->glock);
	}
	magnet_rings_leave();
	local_irq_restore(flags);
}

void magnet_rings_stats(struct magnet_rings *rs,
			struct magnet_stream_stats *st)
{
	struct magnet_ring *r;
	int cpu;

	memset(st, 0, sizeof(*st));
	magnet_rings_for_each(rs, cpu, r) {
		u64 nmi = local64_read(&r->nmi_lost) - READ_ONCE(r->nmi_seen);

		if (rs->global)
			nmi = atomic64_read(&rs->gnmi_lost) -
			      READ_ONCE(rs->gnmi_seen);

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

/*
 * Bytes (all records) and probe events written and not yet read, from the
 * per-ring counters: cheap, and racy by at most the records being
 * committed on other CPUs right now.  A ring a span consumer holds
 * counts for nothing: read() skips it (magnet_ring_read()), so its data
 * must not make a rule met that no read can serve, or a blocked reader
 * would find the stream ready and its read empty again and again, a
 * spin in the kernel, until the span is put back.
 */
u64 magnet_rings_avail(struct magnet_rings *rs, u64 *events)
{
	u64 bytes = 0, ev = 0;
	struct magnet_ring *r;
	int cpu;

	magnet_rings_for_each(rs, cpu, r) {
		u64 w = READ_ONCE(r->written);
		u64 rd = READ_ONCE(r->read) + READ_ONCE(r->overwritten);

		if (READ_ONCE(r->held))
			continue;

		bytes += magnet_ring_fill(r);
		ev += w > rd ? w - rd : 0;
	}
	*events = ev;
	return bytes;
}

bool magnet_rings_has_data(struct magnet_rings *rs)
{
	struct magnet_ring *r;
	int cpu;

	magnet_rings_for_each(rs, cpu, r)
		if (magnet_ring_has_data(r))
			return true;
	return false;
}

bool magnet_rings_held(struct magnet_rings *rs)
{
	struct magnet_ring *r;
	int cpu;

	magnet_rings_for_each(rs, cpu, r)
		if (r->held)
			return true;
	return false;
}
