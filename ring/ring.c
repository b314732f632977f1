// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU sub-buffered rings: see ring.h for the protocol.
 *
 * This file uses only a handful of kernel primitives (vmalloc_user,
 * kcalloc, copy_to_user, smp_load_acquire, smp_store_release, current,
 * irq_work_queue) so that the unit tests can build it in user space
 * against small shims.
 *
 * The write path (reserve, commit, the sub-buffer switch, LOST records,
 * the header) runs inside probes: it is notrace and NOKPROBE_SYMBOL, so
 * that no ftrace callback or kprobe (MAGNET's own run-time kprobes
 * included) can land between a reserve and its commit and re-enter the
 * ring it is in the middle of.
 */
#include "ring.h"
#include "../include/uapi/magnet.h"

#ifdef __KERNEL__
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/uaccess.h>
#include <linux/sched.h>
#include <linux/preempt.h>
#include <linux/string.h>
#include <linux/kprobes.h>
#include <linux/irq_work.h>
#endif

#define LOST_REC_SIZE	(MAGNET_REC_HDR_SIZE + sizeof(struct magnet_lost))

int magnet_ring_init(struct magnet_ring *r, int cpu, u32 size, u32 count)
{
	memset(r, 0, sizeof(*r));
	r->cpu = cpu;
	r->size = size;
	r->count = count;
	r->sb = kcalloc(count, sizeof(*r->sb), GFP_KERNEL);
	/* zeroed, and mappable by user space (magnetfs_mmap()) */
	r->data = vmalloc_user((unsigned long)size * count);
	if (!r->sb || !r->data) {
		magnet_ring_free(r);
		return -ENOMEM;
	}
	r->wbuf = r->data;
	local64_set(&r->nmi_lost, 0);
	return 0;
}

void magnet_ring_free(struct magnet_ring *r)
{
	vfree(r->data);
	kfree(r->sb);
	r->data = NULL;
	r->sb = NULL;
}

static inline struct magnet_subbuf *ring_sb(struct magnet_ring *r,
					    unsigned long seq)
{
	return &r->sb[seq % r->count];
}

static inline char *ring_ptr(struct magnet_ring *r, unsigned long seq,
			     unsigned long off)
{
	return r->data + (seq % r->count) * (unsigned long)r->size + off;
}

/*
 * Overwrite mode, ring full: give up the reader's oldest sub-buffer
 * (closed: rseq < wseq as count >= 2) and count what was not read of it.
 * No reader copies meanwhile (writers run only while the stream is not
 * frozen, readers only while it is), so the reader's fields are ours.
 */
static notrace void ring_overwrite_oldest(struct magnet_ring *r)
{
	struct magnet_subbuf *old = ring_sb(r, r->rseq);

	r->overwritten += old->events - r->revents;
	r->overwritten_bytes += old->end - r->roff;
	r->roff = 0;
	r->revents = 0;
	/* release: pairs with the acquire of rseq in the next ring_switch() */
	smp_store_release(&r->rseq, r->rseq + 1);
}
NOKPROBE_SYMBOL(ring_overwrite_oldest);

/*
 * Close the current sub-buffer and open the next one, if the reader left
 * it (discard mode) or by taking the oldest (overwrite mode).
 */
static notrace bool ring_switch(struct magnet_ring *r)
{
	unsigned long next = r->wseq + 1;
	struct magnet_subbuf *sb;

	/* acquire: the reader's copy out of that slot is complete */
	if (next - smp_load_acquire(&r->rseq) >= r->count) {
		if (!r->overwrite)
			return false;
		ring_overwrite_oldest(r);
	}
	sb = ring_sb(r, r->wseq);
	WRITE_ONCE(sb->end, r->woff);
	/* probe events are counted after their commit: all before this one */
	sb->events = r->written - r->wevents;
	r->wevents = r->written;
	ring_sb(r, next)->end = 0;
	r->wbuf = ring_ptr(r, next, 0);
	r->switches++;
	/*
	 * The new sub-buffer's offset before its sequence: a reader that
	 * sees @wseq == next sees 0, never the closed one's length.  One
	 * that reads this 0 while it still sees the old @wseq takes it for
	 * the closed sub-buffer's length, too short, and reads the rest
	 * next time; one that reads a later offset (a commit, release,
	 * after the sequence) sees the new @wseq too (ring_limit()).
	 */
	WRITE_ONCE(r->woff, 0);
	/* orders the closed sub-buffer's end and the reset before it */
	smp_store_release(&r->wseq, next);
	/*
	 * A finished sub-buffer is the writer's one occasion to wake a
	 * reader: deferred to an irq_work, so that a probe in the scheduler
	 * never takes a wait-queue lock (kernel/relay.c explains the
	 * deadlock), and once per sub-buffer, not per event.
	 */
	if (unlikely(READ_ONCE(r->wake_armed)))
		irq_work_queue(&r->wake);
	return true;
}
NOKPROBE_SYMBOL(ring_switch);

static notrace void *ring_space(struct magnet_ring *r, u32 len)
{
	if (r->woff + len > r->size) {
		if (len > r->size || !ring_switch(r))
			return NULL;
	}
	return r->wbuf + r->woff;
}
NOKPROBE_SYMBOL(ring_space);

static notrace void ring_write_lost(struct magnet_ring *r, void *rec, u64 now)
{
	struct magnet_lost *l = rec + MAGNET_REC_HDR_SIZE;

	magnet_rec_fill_hdr(rec, LOST_REC_SIZE, MAGNET_EVENT_LOST, 0,
			    magnet_ring_stamp(r, now));
	l->count = r->lost_pending;
	r->lost_pending = 0;
	magnet_ring_commit(r, LOST_REC_SIZE);
}
NOKPROBE_SYMBOL(ring_write_lost);

notrace void __magnet_ring_sync_nmi(struct magnet_ring *r)
{
	u64 n = local64_read(&r->nmi_lost);

	if (unlikely(n != r->nmi_seen)) {
		r->produced += n - r->nmi_seen;
		r->lost += n - r->nmi_seen;
		r->lost_pending += n - r->nmi_seen;
		r->nmi_seen = n;
	}
}
NOKPROBE_SYMBOL(__magnet_ring_sync_nmi);

/* The slow path of magnet_ring_reserve() (ring.h). */
notrace void *__magnet_ring_reserve(struct magnet_ring *r, u32 len, u64 now)
{
	void *p;

	if (unlikely(r->lost_pending)) {
		/*
		 * The LOST record goes first.  Where both fit in a
		 * sub-buffer, only together: a LOST record followed by no
		 * event would need another one at once.  A record too large
		 * to share a sub-buffer with it (up to MAGNET_REC_MAX in
		 * sub-buffers of that size) takes the next one: else no
		 * such record could ever be written again.
		 */
		u32 need = LOST_REC_SIZE + len;

		if (need > r->size)
			need = LOST_REC_SIZE;
		p = ring_space(r, need);
		if (!p)
			return NULL;
		ring_write_lost(r, p, now);
	}
	return ring_space(r, len);
}
NOKPROBE_SYMBOL(__magnet_ring_reserve);

notrace void magnet_ring_flush_lost(struct magnet_ring *r, u64 now)
{
	void *p;

	magnet_ring_sync_nmi(r);
	if (!r->lost_pending)
		return;
	p = ring_space(r, LOST_REC_SIZE);
	if (p)
		ring_write_lost(r, p, now);
}
NOKPROBE_SYMBOL(magnet_ring_flush_lost);

/*
 * A ring whose writers are gone (its stream deleted) may still owe a LOST
 * record: the flush at deletion finds no room in a full ring.  Once the
 * reader has taken everything else (read, or overwritten in a flight
 * recorder: then the next sub-buffer is free and nothing unread is
 * overwritten), write it into the room the reader made, as its writer
 * would have; named for the ring's CPU, for no task.  Reader side only,
 * under the owner's read lock, with no writer left.
 */
void magnet_ring_settle_lost(struct magnet_ring *r, u64 now)
{
	struct magnet_rec_hdr *h;

	magnet_ring_sync_nmi(r);
	if (!r->lost_pending || magnet_ring_fill(r))
		return;
	h = ring_space(r, LOST_REC_SIZE);
	if (!h)
		return;
	ring_write_lost(r, h, now);
	if (r->cpu >= 0)
		h->cpu = r->cpu;
	h->pid = 0;
	h->tgid = 0;
}

/*
 * Readable bytes of sub-buffer @seq (the reader's), @wseq being the
 * writer's sequence the caller loaded (acquire).
 */
static unsigned long ring_limit(struct magnet_ring *r, unsigned long seq,
				unsigned long wseq)
{
	unsigned long off;

	if (seq == wseq) {
		/* acquire: pairs with the release in magnet_ring_commit() */
		off = smp_load_acquire(&r->woff);
		/*
		 * Still sub-buffer @seq: @off is its committed length (or 0,
		 * reset by a switch under way: short, never too long).  A
		 * commit into a later sub-buffer is stored after the switch
		 * to it (release), so reading one shows @wseq moved: then
		 * @seq is closed, with its final length in @end.
		 */
		if (smp_load_acquire(&r->wseq) == seq)
			return off;
	}
	return READ_ONCE(ring_sb(r, seq)->end);
}

/* Move to the next sub-buffer if the current one is closed and drained. */
static bool ring_advance(struct magnet_ring *r, unsigned long wseq)
{
	if (r->rseq == wseq || r->roff < READ_ONCE(ring_sb(r, r->rseq)->end))
		return false;
	r->roff = 0;
	r->revents = 0;
	/* release: our copy is done before the writer may reuse the slot */
	smp_store_release(&r->rseq, r->rseq + 1);
	return true;
}

bool magnet_ring_has_data(struct magnet_ring *r)
{
	/* acquire: pairs with the release in ring_switch() */
	unsigned long wseq = smp_load_acquire(&r->wseq);

	if (r->rseq != wseq)
		return true;
	return ring_limit(r, r->rseq, wseq) > r->roff;
}

ssize_t magnet_ring_read(struct magnet_ring *r, char __user *ubuf, size_t len,
			 u32 *need)
{
	/* acquire: sub-buffers before wseq are closed, their end is final */
	unsigned long wseq = smp_load_acquire(&r->wseq);
	size_t done = 0;

	*need = 0;
	/* a sub-buffer consumer has the reader's place */
	if (r->held)
		return 0;
	do {
		unsigned long limit = ring_limit(r, r->rseq, wseq);
		unsigned long off = r->roff;
		const char *base = ring_ptr(r, r->rseq, 0);
		u64 events = 0;

		/* take whole records only */
		while (off < limit) {
			const struct magnet_rec_hdr *h = (const void *)(base + off);

			if (done + (off - r->roff) + h->size > len) {
				*need = h->size;
				break;
			}
			if (magnet_rec_is_event(h->event))
				events++;
			off += h->size;
		}
		if (off > r->roff) {
			if (copy_to_user(ubuf + done, base + r->roff,
					 off - r->roff))
				return done ? (ssize_t)done : -EFAULT;
			done += off - r->roff;
			r->bytes_read += off - r->roff;
			r->read += events;
			r->revents += events;
			r->roff = off;
		}
		if (*need)
			break;
	} while (ring_advance(r, wseq));
	return done;
}

const struct magnet_rec_hdr *magnet_ring_peek(struct magnet_ring *r)
{
	/* acquire: as in magnet_ring_read() */
	unsigned long wseq = smp_load_acquire(&r->wseq);

	if (r->held)
		return NULL;
	do {
		if (r->roff < ring_limit(r, r->rseq, wseq))
			return (const void *)ring_ptr(r, r->rseq, r->roff);
	} while (ring_advance(r, wseq));
	return NULL;
}

void magnet_ring_consume(struct magnet_ring *r,
			 const struct magnet_rec_hdr *h)
{
	/* acquire: a closed sub-buffer's end is final (ring_switch()) */
	unsigned long wseq = smp_load_acquire(&r->wseq);

	r->roff += h->size;
	r->bytes_read += h->size;
	if (magnet_rec_is_event(h->event))
		r->read++;
	/* a drained closed sub-buffer goes back to the writer at once */
	ring_advance(r, wseq);
}

/* Probe events among the whole records of [@from, @to) of sub-buffer @seq. */
static u64 ring_count_events(struct magnet_ring *r, unsigned long seq,
			     unsigned long from, unsigned long to)
{
	const char *base = ring_ptr(r, seq, 0);
	u64 events = 0;

	while (from < to) {
		const struct magnet_rec_hdr *h = (const void *)(base + from);

		if (magnet_rec_is_event(h->event))
			events++;
		from += h->size;
	}
	return events;
}

int magnet_ring_hold(struct magnet_ring *r, bool partial,
		     struct magnet_ring_span *sp)
{
	/* acquire: sub-buffers before wseq are closed, their end is final */
	unsigned long wseq = smp_load_acquire(&r->wseq);
	unsigned long limit;

	if (r->held)
		return -EBUSY;
	/* a closed sub-buffer read to its end: on to the next one */
	while (ring_advance(r, wseq))
		;
	limit = ring_limit(r, r->rseq, wseq);
	if (limit <= r->roff || (r->rseq == wseq && !partial))
		return -EAGAIN;
	sp->off = (r->rseq % r->count) * (unsigned long)r->size + r->roff;
	sp->len = limit - r->roff;
	sp->closed = r->rseq != wseq;
	/* a closed one counted its events at the switch */
	sp->events = sp->closed ? ring_sb(r, r->rseq)->events - r->revents :
		     ring_count_events(r, r->rseq, r->roff, limit);
	WRITE_ONCE(r->held, true);
	r->held_end = limit;
	r->held_events = sp->events;
	return 0;
}

void magnet_ring_put(struct magnet_ring *r)
{
	unsigned long wseq = smp_load_acquire(&r->wseq);

	if (!r->held)
		return;
	r->bytes_read += r->held_end - r->roff;
	r->read += r->held_events;
	r->revents += r->held_events;
	r->roff = r->held_end;
	WRITE_ONCE(r->held, false);
	/* release: a drained closed sub-buffer goes back to the writer */
	ring_advance(r, wseq);
}

void magnet_ring_unhold(struct magnet_ring *r)
{
	WRITE_ONCE(r->held, false);
}

u64 magnet_ring_fill(struct magnet_ring *r)
{
	u64 w = READ_ONCE(r->bytes);
	u64 rd = READ_ONCE(r->bytes_read) + READ_ONCE(r->overwritten_bytes);

	return w > rd ? w - rd : 0;
}
