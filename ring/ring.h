/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One sub-buffered ring, the unit of MAGNET's ring library (ring/; a set
 * of rings in a buffer mode: rings.h).
 *
 * Each CPU owns one ring of @count sub-buffers of @size bytes.  Only that
 * CPU writes it, with interrupts disabled, so reserve/write/commit need no
 * lock and no atomic instruction.  A reader on any CPU consumes whole
 * records under the stream's read mutex.
 *
 * Sub-buffers are addressed by sequence numbers that only grow: the writer
 * fills sub-buffer @wseq (slot wseq % count), the reader drains @rseq.
 * The writer moves to the next sub-buffer only when the reader has left
 * it (wseq + 1 - rseq < count); otherwise the event is dropped (discard
 * mode) and counted.  Dropped events are reported by a LOST record written
 * in front of the next event that fits, so the loss shows up at its
 * chronological place.
 *
 * Overwrite mode (@overwrite, a flight recorder): when the next slot
 * still holds the reader's oldest sub-buffer, the writer takes it anyway:
 * it advances @rseq itself and counts what the reader had not read of it
 * (events from the sub-buffer's @events, bytes from its @end) as
 * overwritten.  That is only safe while no reader copies: the stream
 * (its owner, through rings.h's @frozen) lets readers in only while the
 * writers are frozen.
 *
 * A stream may also use one ring for all CPUs (global mode): then the
 * writers serialize on the stream's spinlock, which makes them one writer
 * as far as this file is concerned.
 *
 * Publication: the writer's offset in the current sub-buffer, @woff, is
 * its committed length, stored with release semantics after each record;
 * closing a sub-buffer stores its final length (@end), resets @woff and
 * advances @wseq with release.  The reader loads @wseq with
 * acquire: sub-buffers before it are closed and stable; the current one
 * is readable up to the acquired @woff if @wseq, read again after it, has
 * not moved (else to its @end).  So an event touches the ring's own
 * fields and the record's memory, no per-sub-buffer descriptor.  The
 * reader releases a sub-buffer by advancing @rseq with release, after its
 * copy.
 */
#ifndef _MAGNET_RING_H
#define _MAGNET_RING_H

#include <linux/types.h>
#include <linux/irq_work.h>
#include <asm/local64.h>
#ifdef __KERNEL__
#include <linux/compiler.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <asm/barrier.h>
#endif
#include "../include/uapi/magnet.h"
#include "clock.h"

struct magnet_subbuf {
	unsigned long end;	/* final length once closed */
	u64 events;		/* probe events in it once closed (writer) */
};

struct magnet_ring {
	char *data;			/* count * size bytes, vmalloc */
	struct magnet_subbuf *sb;
	u32 size;
	u32 count;
	int cpu;			/* -1: the global ring */
	bool overwrite;			/* full: reuse the oldest sub-buffer */
	void *priv;			/* the owner (a stream) */

	/* writer side: owning CPU, interrupts off */
	unsigned long wseq;		/* published with release */
	unsigned long woff;		/* committed in wseq; release */
	char *wbuf;			/* sub-buffer wseq's memory */
	u64 lost_pending;		/* dropped, not yet in a LOST record */
	u64 nmi_seen;
	local64_t nmi_lost;		/* drops in NMI context */
	u64 wevents;			/* @written when sub-buffer wseq opened */
	u64 last_ts;			/* latest timestamp written */
	struct magnet_ring_clock clk;	/* CLOCK_MONOTONIC from the TSC */

	/* reader side: stream read mutex */
	unsigned long rseq;		/* published with release */
	unsigned long roff;
	u64 revents;			/* probe events read of sub-buffer rseq */

	/* counters; written by one side each, read racily for stats */
	u64 produced;			/* events offered (probe events) */
	u64 written;			/* probe events in the ring */
	u64 lost;			/* probe events dropped */
	u64 bytes;			/* bytes written (all records) */
	u64 switches;			/* sub-buffer switches */
	u64 read;			/* probe events delivered (reader) */
	u64 bytes_read;			/* bytes delivered (reader) */
	u64 overwritten;		/* probe events overwritten unread */
	u64 overwritten_bytes;		/* their bytes, all records */
	u64 frozen_lost;		/* refused while frozen (in @lost) */

	/*
	 * Wake-up policy: the writer looks at @wake_armed only when it
	 * closes a sub-buffer, and then queues @wake (deferred: an
	 * irq_work, never a wake-up from the tracing path).  The owner arms
	 * it while a reader waits and catches the rest with a timer of its
	 * own (magnetfs_notify()).
	 */
	bool wake_armed;
	struct irq_work wake;

	/*
	 * a sub-buffer consumer holds [roff, held_end) of rseq: read
	 * mutex; @held is also read without it (magnet_rings_avail())
	 */
	bool held;
	unsigned long held_end;
	u64 held_events;
};

int magnet_ring_init(struct magnet_ring *r, int cpu, u32 size, u32 count);
void magnet_ring_free(struct magnet_ring *r);

/*
 * Writer side; interrupts must be off and the caller on r->cpu.
 *
 * The fast path (room in the current sub-buffer, no loss to report) is
 * inline, as lttng-modules' lib_ring_buffer_reserve() is: a few loads
 * and stores in the caller, no call and no division per event; the rest
 * (a LOST record, the sub-buffer switch) is out of line.  Being inline
 * in notrace, NOKPROBE_SYMBOL callers, none of it is a function a
 * probe can land in.
 */
void *__magnet_ring_reserve(struct magnet_ring *r, u32 len, u64 now);

/*
 * Space for @len bytes (a multiple of 8) or NULL when full.  Pending
 * losses are turned into a LOST record first.
 */
static __always_inline void *magnet_ring_reserve(struct magnet_ring *r,
						 u32 len, u64 now)
{
	if (likely(!r->lost_pending && r->woff + len <= r->size))
		return r->wbuf + r->woff;
	return __magnet_ring_reserve(r, len, now);
}

static __always_inline void magnet_ring_commit(struct magnet_ring *r, u32 len)
{
	r->bytes += len;
	/* record bytes before the length that publishes them */
	smp_store_release(&r->woff, r->woff + len);
}

/*
 * The timestamp of the next record, from a reading @now of the ring's
 * clock: never before the last one, so the ring stays in time order
 * whatever the reading's error (clock.h: an extrapolated reading may run
 * a little ahead of the kernel's clock, read directly by the slow paths).
 */
static __always_inline u64 magnet_ring_stamp(struct magnet_ring *r, u64 now)
{
	if (unlikely(now < r->last_ts))
		now = r->last_ts;
	r->last_ts = now;
	return now;
}

/* Account an event dropped before reaching the ring. */
static inline void magnet_ring_drop(struct magnet_ring *r)
{
	r->lost++;
	r->lost_pending++;
}

void __magnet_ring_sync_nmi(struct magnet_ring *r);
/* Fold drops counted in NMI context into lost/lost_pending. */
static __always_inline void magnet_ring_sync_nmi(struct magnet_ring *r)
{
	if (unlikely(local64_read(&r->nmi_lost) != r->nmi_seen))
		__magnet_ring_sync_nmi(r);
}
/* Write the pending LOST record now if there is room (flush). */
void magnet_ring_flush_lost(struct magnet_ring *r, u64 now);

/* Reader side: stream read mutex held. */
bool magnet_ring_has_data(struct magnet_ring *r);
/*
 * Copy whole records to @ubuf (at most @len bytes).  Returns bytes
 * copied, 0 when none fits or nothing is there, -EFAULT.  *@need is set
 * to the size of the next record when it does not fit in @len.
 */
ssize_t magnet_ring_read(struct magnet_ring *r, char __user *ubuf, size_t len,
			 u32 *need);
/*
 * In-kernel readers (the owner's, e.g. a correlator's), same lock: the next whole
 * record, read in place (NULL when none), valid until it is consumed;
 * magnet_ring_consume() releases it and counts it as read, as
 * magnet_ring_read() does.
 */
const struct magnet_rec_hdr *magnet_ring_peek(struct magnet_ring *r);
void magnet_ring_consume(struct magnet_ring *r,
			 const struct magnet_rec_hdr *h);
/*
 * Sub-buffer consumers (no copy: the reader maps the ring's memory),
 * same lock: hold the readable part of the
 * reader's sub-buffer, whole records from the reader's offset to its end
 * (a closed sub-buffer) or to its committed length (the one being
 * written, only if @partial), then consume it with magnet_ring_put() or
 * give it back unread with magnet_ring_unhold().  While held, the span is
 * the reader's: a discard-mode writer never enters the reader's
 * sub-buffer, and an overwrite ring is only read while its writers are
 * frozen.  magnet_ring_read() and magnet_ring_peek() skip a held ring.
 */
struct magnet_ring_span {
	unsigned long off;		/* from r->data */
	unsigned long len;		/* bytes of whole records */
	u64 events;			/* events among them */
	bool closed;			/* the whole rest of a closed sub-buffer */
};

/* 0 and @sp filled; -EAGAIN nothing (to hold); -EBUSY held already */
int magnet_ring_hold(struct magnet_ring *r, bool partial,
		     struct magnet_ring_span *sp);
void magnet_ring_put(struct magnet_ring *r);
void magnet_ring_unhold(struct magnet_ring *r);
/* The ring's memory, as user space maps it (vmalloc_user). */
static inline unsigned long magnet_ring_bytes(const struct magnet_ring *r)
{
	return (unsigned long)r->size * r->count;
}

/* Bytes written and not yet read (nor overwritten). */
u64 magnet_ring_fill(struct magnet_ring *r);

/*
 * Records that count as events (produced/written/read): probe events, the
 * core's derived records and application events written by user space.
 */
static inline bool magnet_rec_is_event(u16 event)
{
	return event >= MAGNET_EVENT_FIRST_PROBE ||
	       event == MAGNET_EVENT_SYNTH || event == MAGNET_EVENT_CORR ||
	       event == MAGNET_EVENT_APP;
}

/*
 * Fill a record header; @rec points at reserved ring space.  A record
 * written in interrupt context names no task.
 */
static __always_inline void magnet_rec_fill_hdr(void *rec, u16 size, u16 event,
						u64 abstract_id, u64 ts)
{
	struct magnet_rec_hdr *h = rec;

	h->size = size;
	h->event = event;
	h->cpu = raw_smp_processor_id();
	h->abstract_id = abstract_id;
	h->timestamp = ts;
	if (in_task()) {
		h->pid = current->pid;
		h->tgid = current->tgid;
	} else {
		h->pid = 0;
		h->tgid = 0;
	}
}
/*
 * a deleted stream's ring, reader side, once everything else was taken:
 * write its owed LOST record
 */
void magnet_ring_settle_lost(struct magnet_ring *r, u64 now);

#endif /* _MAGNET_RING_H */
