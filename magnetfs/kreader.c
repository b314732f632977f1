// SPDX-License-Identifier: GPL-2.0
/*
 * In-kernel stream readers: see kreader.h.  The per-CPU rings are read in
 * place with magnet_ring_peek()/magnet_ring_consume() under the stream's
 * read mutex, the same lock and the same consumer state as file readers.
 */
#include <linux/cpumask.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include "../kmod/internal.h"
#include "kreader.h"

int magnet_kreader_open(struct magnet_kreader *kr, struct magnet_stream *s)
{
	int err = 0;

	memset(kr, 0, sizeof(*kr));
	/* s->lock orders us against magnetfs_open()'s check */
	spin_lock_irq(&s->lock);
	if (s->kreader || atomic_read(&s->readers))
		err = -EBUSY;
	else
		s->kreader = true;
	spin_unlock_irq(&s->lock);
	if (err)
		return err;
	magnet_stream_get(s);
	kr->s = s;
	return 0;
}

void magnet_kreader_close(struct magnet_kreader *kr)
{
	struct magnet_stream *s = kr->s;

	if (!s)
		return;
	spin_lock_irq(&s->lock);
	s->kreader = false;
	spin_unlock_irq(&s->lock);
	magnet_stream_put(s);
	kr->s = NULL;
}

unsigned int magnet_kreader_drain(struct magnet_kreader *kr, u64 horizon,
				  unsigned int max, magnet_krec_fn fn,
				  void *arg)
{
	struct magnet_stream *s = kr->s;
	unsigned int n = 0;

	/*
	 * A lockdep subclass of its own: magnetk drains under db.lock
	 * (magnet_corrs_tick()) while file readers take db.lock under their
	 * stream's read_lock (reader_copy_meta()).  Not a cycle: a stream has
	 * a kernel reader or open files, never both (magnet_kreader_open(),
	 * magnetfs_open()), so the two never hold the same read_lock.
	 */
	mutex_lock_nested(&s->read_lock, MAGNET_READ_LOCK_KREADER);
	while (n < max) {
		const struct magnet_rec_hdr *best = NULL, *h;
		struct magnet_ring *br = NULL;
		bool more;
		int cpu;

		for_each_possible_cpu(cpu) {
			struct magnet_ring *r = per_cpu_ptr(s->rings.pcpu, cpu);

			h = magnet_ring_peek(r);
			if (h && h->timestamp <= horizon &&
			    (!best || h->timestamp < best->timestamp)) {
				best = h;
				br = r;
			}
		}
		if (!best)
			break;
		if (best->timestamp < kr->last_ts)
			kr->st.late++;
		else
			kr->last_ts = best->timestamp;
		kr->st.records++;
		kr->st.bytes += best->size;
		if (magnet_rec_is_event(best->event))
			kr->st.events++;
		else if (best->event == MAGNET_EVENT_LOST)
			kr->st.lost += ((const struct magnet_lost *)(best + 1))->count;
		more = fn(arg, best);
		magnet_ring_consume(br, best);
		n++;
		if (!more)
			break;
	}
	mutex_unlock(&s->read_lock);
	return n;
}
