// SPDX-License-Identifier: GPL-2.0
/*
 * magnetfs stream files: /sys/kernel/debug/magnet/<stream>, and the same
 * files in magnetfs mounts (fs.c; mount -t magnetfs none /sys/kernel/magnet).
 *
 * read() returns whole records only.  The first read of every open file
 * starts with a SYSINFO record and EVENTDEF records naming every
 * registered event ID; when probes register or unregister later, fresh
 * EVENTDEFs come before the next ring data.  Then read() drains the
 * per-CPU rings.  Each open file has a read rule (watermark, minimum event
 * count, timeout; docs/IOCTL.md): read() waits until the rule is met, the
 * timeout expires (then it returns what there is, or ETIMEDOUT) or the
 * stream is deleted, and returns 0 (end of file) once the stream was
 * deleted and everything recorded has been read.  poll() and SIGIO
 * (fasync) report readiness by the same rule; read_iter() queues
 * libaio's reads on the file and completes them from a work item;
 * io_uring's block by the rule in io_uring's own worker.
 *
 * Sub-buffer consumers (MAGNET_IOC_GET_SPAN/PUT_SPAN and mmap()) take the
 * records in place: the file maps each ring read-only, holds the readable
 * part of one ring's oldest sub-buffer, copies it wherever it wants
 * (write(2) to a trace file) and puts it back; nothing is copied into a
 * read buffer and no record is looked at.
 *
 * Notification: a reader that waits, polls, has SIGIO on or AIO pending
 * sets its notify bits under s->lock and s->waiting; magnetfs_arm_wake()
 * then arms every ring's wake-up at its next sub-buffer switch (an
 * irq_work, see ring_switch()) and the stream's read timer, which
 * evaluates the rules every MAGNET_READ_TIMER_MS while a reader is armed;
 * magnetfs_notify() evaluates every armed reader's rule and wakes,
 * signals or schedules only those whose rule is met.  Nothing here runs
 * inside magnet_add(), and magnet_add() looks at no reader.
 *
 * Overwrite streams (flight recorders) are read only while a snapshot
 * freezes them (magnet_stream_snapshot()): then read() never waits, it
 * returns the frozen records and 0 at their end; while the writers run,
 * read() fails with EBUSY and poll() reports nothing until the freeze.
 * Read rules do not apply to them.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>
#include <linux/utsname.h>
#include <linux/timekeeping.h>
#include <linux/cpumask.h>
#include <linux/uio.h>
#include <linux/aio.h>
#include <linux/workqueue.h>
#include <linux/sched/mm.h>
#include <linux/kthread.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/capability.h>
#include <linux/vmalloc.h>
#include "../kmod/internal.h"
#include "../kmod/compat.h"
#include "magnetfs.h"

/*
 * How often the rules of armed readers are evaluated, besides the
 * sub-buffer switches: the latency of a read rule that is met inside one
 * sub-buffer (a small watermark, the default rule).
 */
#define MAGNET_READ_TIMER_MS	10

#define SYSINFO_SIZE	ALIGN(MAGNET_REC_HDR_SIZE + sizeof(struct magnet_sysinfo), 8)
#define EVENTDEF_SIZE	ALIGN(MAGNET_REC_HDR_SIZE + sizeof(struct magnet_eventdef), 8)

struct magnet_reader {
	struct magnet_stream *s;
	char *meta;			/* SYSINFO and EVENTDEF records */
	size_t meta_len;
	size_t meta_off;
	unsigned long catalog_gen;
	unsigned int next_cpu;		/* round-robin over rings */

	/* the read rule (ioctls) */
	u64 watermark;			/* bytes */
	u64 min_events;
	s64 timeout_ms;			/* 0: none */

	struct list_head node;		/* s->files (readers only), s->lock */
	unsigned int notify;		/* RD_NOTIFY_*, s->lock */
	struct fasync_struct *fasync;
	struct list_head aio;		/* pending struct magnet_aio, s->lock */
	struct delayed_work aio_work;

	struct magnet_ring *held;	/* a span is held in it; read_lock */
	bool need_sysinfo;		/* nothing read yet: SYSINFO first */
};

#define RD_NOTIFY_WAIT	0x1	/* a task sleeps in read() or poll() */
#define RD_NOTIFY_ASYNC	0x2	/* SIGIO when the rule is met */
#define RD_NOTIFY_AIO	0x4	/* run aio_work when the rule is met */

/* One asynchronous read in flight (libaio or io_uring). */
struct magnet_aio {
	struct list_head node;		/* rd->aio, s->lock */
	struct kiocb *iocb;
	char __user *ubuf;
	size_t len;
	struct mm_struct *mm;		/* the submitter's, mmgrab()ed */
	unsigned long deadline;		/* jiffies; valid if @timed */
	bool timed;
	bool cancelled;			/* io_cancel() or process exit */
};

static void magnetfs_aio_work(struct work_struct *work);
static void magnetfs_arm_wake(struct magnet_stream *s);

static void *meta_rec(char *p, u16 size, u16 event, u64 abstract_id, u64 now)
{
	memset(p, 0, size);
	magnet_rec_fill_hdr(p, size, event, abstract_id, now);
	return p + MAGNET_REC_HDR_SIZE;
}

static void fill_sysinfo(struct magnet_stream *s, char *p, u64 now)
{
	struct magnet_sysinfo *si = meta_rec(p, SYSINFO_SIZE,
					     MAGNET_EVENT_SYSINFO, 0, now);

	si->endian = MAGNET_ENDIAN_MAGIC;
	si->format_major = MAGNET_FORMAT_MAJOR;
	si->format_minor = MAGNET_FORMAT_MINOR;
	si->abi_version = MAGNET_ABI_VERSION;
	si->clock_id = s->rings.clock;
	si->clock_hz = NSEC_PER_SEC;
	si->wall_ns_at_zero = ktime_get_real_ns() -
			      magnet_rings_clock(&s->rings);
	si->nr_cpus = nr_cpu_ids;
	si->ptr_size = sizeof(void *);
	si->page_size = PAGE_SIZE;
	si->subbuf_size = s->rings.size;
	si->subbuf_count = s->rings.count;
	si->flags = s->rings.mode;
	strscpy(si->stream, s->name, sizeof(si->stream));
	strscpy(si->release, utsname()->release, sizeof(si->release));
}

/* Build SYSINFO (if @sysinfo) and the catalog of event IDs; db.lock held. */
static int reader_build_meta(struct magnet_reader *rd, bool sysinfo)
{
	size_t len = (sysinfo ? SYSINFO_SIZE : 0) +
		     (size_t)magnet_db.nr_points * EVENTDEF_SIZE;
	u64 now = magnet_rings_clock(&rd->s->rings);
	struct magnet_point *pt;
	char *buf, *p;

	buf = kvmalloc(len ?: 1, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	p = buf;
	if (sysinfo) {
		fill_sysinfo(rd->s, p, now);
		p += SYSINFO_SIZE;
	}
	list_for_each_entry(pt, &magnet_db.points, node) {
		struct magnet_eventdef *ed = meta_rec(p, EVENTDEF_SIZE,
						      MAGNET_EVENT_EVENTDEF,
						      pt->id, now);

		ed->id = pt->id;
		ed->layer = pt->desc->layer;
		ed->payload = pt->desc->payload;
		strscpy(ed->name, pt->desc->name, sizeof(ed->name));
		p += EVENTDEF_SIZE;
	}
	kvfree(rd->meta);
	rd->meta = buf;
	rd->meta_len = len;
	rd->meta_off = 0;
	rd->catalog_gen = magnet_db.catalog_gen;
	return 0;
}

/*
 * Orders open() against a deletion: the deletion clears i_private under
 * it (magnetfs_forget_inode()) before the database drops its reference,
 * so a stream found here is alive for the magnet_stream_get().  Not
 * db.lock: debugfs holds the file's active reference while ->open runs,
 * and a deletion waits for that reference in debugfs_remove() with
 * db.lock held (the open-vs-delete deadlock).
 */
static DEFINE_SPINLOCK(magnetfs_open_lock);

void magnetfs_forget_inode(struct inode *inode)
{
	spin_lock(&magnetfs_open_lock);
	inode->i_private = NULL;
	spin_unlock(&magnetfs_open_lock);
}

/*
 * A file opened for reading joins s->files, the list every notification
 * walks with interrupts off.  A write-only one (an app-write stream's
 * writers, any user) has no read rule and never joins it: however many
 * files a user opens to write, the walks cost what the readers make them
 * (root's, a monitoring group's).  Charged to the opener's memory cgroup.
 */
static int magnetfs_open(struct inode *inode, struct file *f)
{
	bool reader = f->f_mode & FMODE_READ;
	struct magnet_reader *rd;
	struct magnet_stream *s;

	rd = kzalloc(sizeof(*rd), GFP_KERNEL_ACCOUNT);
	if (!rd)
		return -ENOMEM;
	spin_lock(&magnetfs_open_lock);
	s = inode->i_private;
	if (s && !READ_ONCE(s->dead))
		magnet_stream_get(s);
	else
		s = NULL;
	spin_unlock(&magnetfs_open_lock);
	if (!s) {
		kfree(rd);
		return -ENOENT;
	}
	rd->s = s;
	/* SYSINFO and the catalog are built by the first read (db.lock) */
	rd->need_sysinfo = true;
	INIT_LIST_HEAD(&rd->node);
	INIT_LIST_HEAD(&rd->aio);
	INIT_DELAYED_WORK(&rd->aio_work, magnetfs_aio_work);
	spin_lock_irq(&s->lock);
	/* a kernel reader (kreader.c) has the stream to itself */
	if (s->kreader) {
		spin_unlock_irq(&s->lock);
		magnet_stream_put(s);
		kfree(rd);
		return -EBUSY;
	}
	atomic_inc(&s->readers);
	if (reader)
		list_add_tail(&rd->node, &s->files);
	spin_unlock_irq(&s->lock);
	f->private_data = rd;
	return stream_open(inode, f);
}

static int magnetfs_release(struct inode *inode, struct file *f)
{
	struct magnet_reader *rd = f->private_data;
	struct magnet_stream *s = rd->s;

	/* a span this file did not put back stays in the ring, unread */
	if (rd->held) {
		mutex_lock(&s->read_lock);
		magnet_ring_unhold(rd->held);
		mutex_unlock(&s->read_lock);
	}
	/* AIO requests hold the file: none is pending any more */
	spin_lock_irq(&s->lock);
	list_del_init(&rd->node);
	magnetfs_arm_wake(s);
	spin_unlock_irq(&s->lock);
	cancel_delayed_work_sync(&rd->aio_work);
	atomic_dec(&rd->s->readers);
	magnet_stream_put(rd->s);
	kvfree(rd->meta);
	kfree(rd);
	return 0;
}

/* Copy whole pending SYSINFO/EVENTDEF records; refresh a stale catalog. */
static ssize_t reader_copy_meta(struct magnet_reader *rd, char __user *ubuf,
				size_t len, u32 *need)
{
	size_t n = 0, off = rd->meta_off;

	if (rd->need_sysinfo || (off == rd->meta_len &&
	    READ_ONCE(magnet_db.catalog_gen) != rd->catalog_gen)) {
		int err;

		mutex_lock(&magnet_db.lock);
		err = reader_build_meta(rd, rd->need_sysinfo);
		mutex_unlock(&magnet_db.lock);
		if (err)
			return err;
		rd->need_sysinfo = false;
		off = 0;
	}
	while (off + n < rd->meta_len) {
		const struct magnet_rec_hdr *h = (void *)(rd->meta + off + n);

		if (n + h->size > len) {
			*need = h->size;
			break;
		}
		n += h->size;
	}
	if (n && copy_to_user(ubuf, rd->meta + off, n))
		return -EFAULT;
	rd->meta_off = off + n;
	return n;
}

/*
 * Read one ring; a deleted stream's ring (no writer left: @dead was read
 * after the last writer), once drained, then also gives the LOST record
 * it still owes (magnet_ring_settle_lost(), as for spans).
 */
static ssize_t reader_drain_ring(struct magnet_ring *r, bool dead, u64 now,
				 char __user *ubuf, size_t len, u32 *need)
{
	ssize_t got = magnet_ring_read(r, ubuf, len, need), tail;

	if (got < 0 || !dead || *need || r->held)
		return got;
	magnet_ring_settle_lost(r, now);
	tail = magnet_ring_read(r, ubuf + got, len - got, need);
	if (tail < 0)
		return got ? got : tail;
	return got + tail;
}

static ssize_t reader_drain(struct magnet_reader *rd, char __user *ubuf,
			    size_t len, u32 *need)
{
	unsigned int i, n = nr_cpu_ids;
	bool dead = READ_ONCE(rd->s->dead);
	u64 now = magnet_rings_clock(&rd->s->rings);
	size_t done = 0;

	/* dead: every writer's stores to the rings are visible from here on */
	smp_rmb();
	/* one ring in global order */
	if (rd->s->rings.global)
		return reader_drain_ring(rd->s->rings.global, dead, now, ubuf,
					 len, need);
	for (i = 0; i < n && !*need; i++) {
		unsigned int cpu = (rd->next_cpu + i) % n;
		ssize_t got;

		if (!cpu_possible(cpu))
			continue;
		got = reader_drain_ring(per_cpu_ptr(rd->s->rings.pcpu, cpu), dead,
					now, ubuf + done, len - done, need);
		if (got < 0)
			return done ? done : got;
		done += got;
	}
	rd->next_cpu = (rd->next_cpu + 1) % n;
	return done;
}

/* ------------------------------------------------------------------ */
/* The read rule                                                        */
/* ------------------------------------------------------------------ */

/* Metadata the next read would return first (SYSINFO, EVENTDEF). */
static bool reader_meta_pending(struct magnet_reader *rd)
{
	return rd->need_sysinfo || rd->meta_off < rd->meta_len ||
	       READ_ONCE(magnet_db.catalog_gen) != rd->catalog_gen;
}

/* An overwrite stream whose writers run: no reader may copy (EBUSY). */
static bool reader_refused(struct magnet_stream *s)
{
	return (s->rings.mode & MAGNET_STREAM_F_OVERWRITE) &&
	       !READ_ONCE(s->rings.frozen) && !READ_ONCE(s->dead);
}

static bool rule_met(struct magnet_reader *rd, u64 bytes, u64 events)
{
	return bytes && bytes >= READ_ONCE(rd->watermark) &&
	       events >= READ_ONCE(rd->min_events);
}

/*
 * Would a read complete now?  With the default rule (no watermark, no
 * minimum count) pending metadata alone is enough, as before the rule
 * existed; otherwise metadata only comes along with the data.
 */
static bool reader_ready(struct magnet_reader *rd)
{
	u64 bytes, events;

	/* frozen or deleted: a read returns at once; running: wait */
	if (rd->s->rings.mode & MAGNET_STREAM_F_OVERWRITE)
		return !reader_refused(rd->s);
	if (!READ_ONCE(rd->watermark) && !READ_ONCE(rd->min_events) &&
	    reader_meta_pending(rd))
		return true;
	bytes = magnet_stream_avail(rd->s, &events);
	return rule_met(rd, bytes, events);
}

/*
 * s->lock held.  Recompute s->waiting from the armed readers, and with it
 * the rings' wake-ups at their next sub-buffer switch and the read timer.
 * Between switches the timer evaluates the rules: a wake-up may come up
 * to MAGNET_READ_TIMER_MS after a rule is met inside one sub-buffer,
 * never earlier than the rule allows, and the writers pay nothing for it.
 */
static void magnetfs_arm_wake(struct magnet_stream *s)
{
	struct magnet_reader *rd;
	struct magnet_ring *r;
	bool armed = false;
	int cpu;

	list_for_each_entry(rd, &s->files, node)
		armed |= !!rd->notify;
	/* a running flight recorder cannot be read: nothing until the freeze */
	if (reader_refused(s))
		armed = false;
	magnet_stream_for_each_ring(s, cpu, r)
		if (READ_ONCE(r->wake_armed) != armed)
			WRITE_ONCE(r->wake_armed, armed);
	WRITE_ONCE(s->waiting, armed);
	if (armed && !timer_pending(&s->read_timer))
		mod_timer(&s->read_timer,
			  jiffies + msecs_to_jiffies(MAGNET_READ_TIMER_MS));
}

/* Ask to be notified (woken, signalled, AIO work run) when the rule is met. */
static void reader_arm(struct magnet_reader *rd, unsigned int bits)
{
	struct magnet_stream *s = rd->s;
	unsigned long flags;

	spin_lock_irqsave(&s->lock, flags);
	rd->notify |= bits;
	magnetfs_arm_wake(s);
	spin_unlock_irqrestore(&s->lock, flags);
}

/*
 * From the rings' irq_work (any CPU, hard interrupt context; on PREEMPT_RT
 * the irq_work thread), the read timer (softirq; on RT its thread), a
 * deletion and the ioctls: wake, signal and schedule the readers whose
 * rule is met (all of them once the stream is dead).  Takes s->lock, a
 * sleeping lock on RT: never make the irq_work IRQ_WORK_HARD_IRQ nor call
 * this from the write path (docs/DESIGN.md, PREEMPT_RT).
 */
void magnetfs_notify(struct magnet_stream *s)
{
	bool dead = READ_ONCE(s->dead), wake = false;
	/* a frozen overwrite stream is readable by everyone */
	bool all = dead || READ_ONCE(s->rings.frozen);
	struct magnet_reader *rd;
	unsigned long flags;
	u64 bytes, events;

	spin_lock_irqsave(&s->lock, flags);
	bytes = magnet_stream_avail(s, &events);
	list_for_each_entry(rd, &s->files, node) {
		if (!rd->notify)
			continue;
		/* a running flight recorder: only its freeze wakes readers */
		if (!all && (reader_refused(s) || !rule_met(rd, bytes, events)))
			continue;
		if (rd->notify & RD_NOTIFY_WAIT)
			wake = true;
		if (rd->notify & RD_NOTIFY_ASYNC)
			kill_fasync(&rd->fasync, SIGIO, POLL_IN);
		if (rd->notify & RD_NOTIFY_AIO)
			mod_delayed_work(system_wq, &rd->aio_work, 0);
		rd->notify = 0;
	}
	magnetfs_arm_wake(s);
	spin_unlock_irqrestore(&s->lock, flags);
	if (wake)
		wake_up_interruptible_all(&s->wq);
}

/* ------------------------------------------------------------------ */
/* Reading                                                             */
/* ------------------------------------------------------------------ */

/*
 * Copy what there is: pending metadata, then whole records from the
 * rings.  Returns bytes, -EFAULT, -ENOMEM, -ERESTARTSYS; *@need as in
 * magnet_ring_read().
 */
static ssize_t reader_fill(struct magnet_reader *rd, char __user *ubuf,
			   size_t len, u32 *need)
{
	struct magnet_stream *s = rd->s;
	ssize_t done = 0, n;

	*need = 0;
	if (mutex_lock_interruptible(&s->read_lock))
		return -ERESTARTSYS;
	/* under read_lock: a freeze is complete, no resume until we leave */
	if (reader_refused(s)) {
		mutex_unlock(&s->read_lock);
		return -EBUSY;
	}
	/* deleted: the last writer left before @dead was set */
	smp_rmb();
	n = reader_copy_meta(rd, ubuf, len, need);
	if (n >= 0) {
		done = n;
		if (!*need)
			n = reader_drain(rd, ubuf + done, len - done, need);
	}
	if (n < 0)
		done = done ?: n;
	else
		done += n;
	mutex_unlock(&s->read_lock);
	return done;
}

/*
 * Sleep until the rule is met, the stream dies, a signal comes or *@tmo
 * jiffies pass (*@tmo is left with what remains, 0 when it expired).
 */
static int reader_wait(struct magnet_reader *rd, long *tmo)
{
	struct magnet_stream *s = rd->s;
	DEFINE_WAIT(wait);
	int err = 0;

	for (;;) {
		prepare_to_wait(&s->wq, &wait, TASK_INTERRUPTIBLE);
		reader_arm(rd, RD_NOTIFY_WAIT);
		if (READ_ONCE(s->dead) || reader_ready(rd))
			break;
		if (signal_pending(current)) {
			err = -ERESTARTSYS;
			break;
		}
		if (!*tmo)
			break;
		*tmo = schedule_timeout(*tmo);
	}
	finish_wait(&s->wq, &wait);
	return err;
}

/*
 * After a read that returned data or found nothing (EAGAIN), a GET_SPAN
 * that found nothing, a PUT_SPAN: SIGIO again at the next time the rule
 * is met.  Arming starts the read timer: a rule met meanwhile is
 * signalled within MAGNET_READ_TIMER_MS.
 */
static void reader_rearm_async(struct magnet_reader *rd)
{
	if (READ_ONCE(rd->fasync))
		reader_arm(rd, RD_NOTIFY_ASYNC);
}

/* Read by the rule; @expired: the caller's timeout already ran out. */
static ssize_t reader_read(struct magnet_reader *rd, char __user *ubuf,
			   size_t len, bool nonblock, bool expired)
{
	struct magnet_stream *s = rd->s;
	s64 ms = READ_ONCE(rd->timeout_ms);
	long tmo = ms ? (long)msecs_to_jiffies(ms) : MAX_SCHEDULE_TIMEOUT;
	ssize_t n;
	u32 need;

	/* an overwrite stream: what is frozen, then 0; never waits */
	if (s->rings.mode & MAGNET_STREAM_F_OVERWRITE) {
		n = reader_fill(rd, ubuf, len, &need);
		return n == 0 && need ? -EINVAL : n;
	}
	for (;;) {
		bool dead = READ_ONCE(s->dead);

		/* dead before the copy: 0 below means all was read */
		smp_rmb();
		if (dead || expired || reader_ready(rd)) {
			n = reader_fill(rd, ubuf, len, &need);
			if (n > 0) {
				reader_rearm_async(rd);
				return n;
			}
			if (n < 0)
				return n;
			/* the buffer cannot hold even the next record */
			if (need)
				return -EINVAL;
			if (dead)
				return 0;
			if (expired)
				return -ETIMEDOUT;
			/*
			 * another reader of the stream took the data: wait
			 * again, but never spin unkillably should readiness
			 * and the read ever disagree
			 */
			if (!nonblock && signal_pending(current))
				return -ERESTARTSYS;
			cond_resched();
		}
		if (nonblock) {
			/* nothing for this file: SIGIO when the rule is next met */
			reader_rearm_async(rd);
			return -EAGAIN;
		}
		n = reader_wait(rd, &tmo);
		if (n)
			return n;
		if (!tmo)
			expired = true;
	}
}

static ssize_t magnetfs_read(struct file *f, char __user *ubuf, size_t len,
			     loff_t *ppos)
{
	return reader_read(f->private_data, ubuf, len,
			   f->f_flags & O_NONBLOCK, false);
}

/* ------------------------------------------------------------------ */
/* Asynchronous reads                                                  */
/* ------------------------------------------------------------------ */

static void magnet_aio_free(struct magnet_aio *io)
{
	mmdrop(io->mm);
	kfree(io);
}

/* Read for @io in the submitter's address space (a work item). */
static long magnet_aio_read(struct magnet_reader *rd, struct magnet_aio *io,
			    bool expired)
{
	long ret;

	/* the owner is gone (exit): nobody to copy to */
	if (!mmget_not_zero(io->mm))
		return -ECANCELED;
	kthread_use_mm(io->mm);
	ret = reader_read(rd, io->ubuf, io->len, true, expired);
	kthread_unuse_mm(io->mm);
	/* never the last __mmput() here: it waits for AIO (exit_aio) */
	mmput_async(io->mm);
	/* the rule was met, another reader took the data: wait on */
	return ret == -EAGAIN ? -EIOCBQUEUED : ret;
}

/*
 * Complete what can be completed, in submission order: cancelled requests
 * at once, the oldest one when the rule is met, its timeout expired or
 * the stream is dead.  Then arm for the rest and sleep until the nearest
 * deadline.  Completion (ki_complete) never runs under s->lock: aio
 * calls magnetfs_aio_cancel() under its own lock.
 */
static void magnetfs_aio_work(struct work_struct *work)
{
	struct magnet_reader *rd = container_of(to_delayed_work(work),
						struct magnet_reader, aio_work);
	struct magnet_stream *s = rd->s;
	struct magnet_aio *io, *tmp;
	LIST_HEAD(done);
	long ret;

	for (;;) {
		bool expired;

		spin_lock_irq(&s->lock);
		list_for_each_entry_safe(io, tmp, &rd->aio, node)
			if (io->cancelled)
				list_move_tail(&io->node, &done);
		spin_unlock_irq(&s->lock);
		list_for_each_entry_safe(io, tmp, &done, node) {
			list_del(&io->node);
			io->iocb->ki_complete(io->iocb, -ECANCELED);
			magnet_aio_free(io);
		}

		spin_lock_irq(&s->lock);
		io = list_first_entry_or_null(&rd->aio, struct magnet_aio, node);
		if (!io) {
			spin_unlock_irq(&s->lock);
			return;
		}
		expired = io->timed && time_after_eq(jiffies, io->deadline);
		spin_unlock_irq(&s->lock);

		if (!expired && !READ_ONCE(s->dead) && !reader_ready(rd)) {
			reader_arm(rd, RD_NOTIFY_AIO);
			/* met between the test and arming? */
			if (reader_ready(rd))
				continue;
			/*
			 * queue, never mod: a cancel, a submission or a met
			 * rule may have queued this work to run at once since
			 * it started; that run must not wait for the deadline
			 */
			if (io->timed)
				queue_delayed_work(system_wq, &rd->aio_work,
						   max_t(long, io->deadline - jiffies, 1));
			return;
		}
		/* only this work takes requests off the list but cancel marks them */
		ret = magnet_aio_read(rd, io, expired);
		if (ret == -EIOCBQUEUED) {
			/* another reader took the data: wait on, at most a tick */
			reader_arm(rd, RD_NOTIFY_AIO);
			queue_delayed_work(system_wq, &rd->aio_work, 1);
			return;
		}
		spin_lock_irq(&s->lock);
		list_del(&io->node);
		spin_unlock_irq(&s->lock);
		io->iocb->ki_complete(io->iocb, ret);
		magnet_aio_free(io);
	}
}

/*
 * io_cancel() and process exit, under the aio context's lock, which keeps
 * the request (@iocb->private) alive: its completion takes the request
 * off the context's list under that lock before the work frees it.  The
 * request may not be on rd->aio yet (the cancel came between
 * kiocb_set_cancel_fn() and the queueing): marked, the work completes it
 * as soon as it is, so no cancel that io_cancel() reports is lost.
 */
static int magnetfs_aio_cancel(struct kiocb *iocb)
{
	struct magnet_reader *rd = iocb->ki_filp->private_data;
	struct magnet_aio *io = iocb->private;
	struct magnet_stream *s = rd->s;
	unsigned long flags;

	spin_lock_irqsave(&s->lock, flags);
	io->cancelled = true;
	spin_unlock_irqrestore(&s->lock, flags);
	mod_delayed_work(system_wq, &rd->aio_work, 0);
	return 0;
}

static ssize_t magnetfs_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct magnet_reader *rd = iocb->ki_filp->private_data;
	struct magnet_stream *s = rd->s;
	struct magnet_aio *io;
	char __user *ubuf;
	size_t len;
	ssize_t n;
	s64 ms;

	/* whole records into one user buffer (readv: the first one) */
	ubuf = magnet_iter_ubuf(to, &len);
	if (!ubuf)
		return -EINVAL;
	/*
	 * Only libaio's reads are queued: they have a cancel callback
	 * (io_cancel(), process exit).  io_uring has none for a queued
	 * read: its exiting task would wait for it for good, pinning the
	 * stream and the module.  io_uring runs a read the file cannot do
	 * without blocking in a worker of its own, which it cancels with a
	 * signal: there the read blocks by the rule like read(2), and the
	 * signal ends the wait.
	 */
	if (is_sync_kiocb(iocb) || (iocb->ki_flags & IOCB_NOWAIT) ||
	    !(iocb->ki_flags & IOCB_AIO_RW) ||
	    (s->rings.mode & MAGNET_STREAM_F_OVERWRITE)) {
		n = reader_read(rd, ubuf, len,
				(iocb->ki_filp->f_flags & O_NONBLOCK) ||
				(iocb->ki_flags & IOCB_NOWAIT), false);
		if (n > 0)
			iov_iter_advance(to, n);
		return n;
	}

	io = kzalloc(sizeof(*io), GFP_KERNEL);
	if (!io)
		return -ENOMEM;
	io->iocb = iocb;
	io->ubuf = ubuf;
	io->len = len;
	io->mm = current->mm;
	mmgrab(io->mm);
	ms = READ_ONCE(rd->timeout_ms);
	if (ms) {
		io->timed = true;
		io->deadline = jiffies + msecs_to_jiffies(ms);
	}
	/* before queueing: a cancel may come at once, and finds @io here */
	iocb->private = io;
	kiocb_set_cancel_fn(iocb, magnetfs_aio_cancel);
	spin_lock_irq(&s->lock);
	list_add_tail(&io->node, &rd->aio);
	spin_unlock_irq(&s->lock);
	mod_delayed_work(system_wq, &rd->aio_work, 0);
	return -EIOCBQUEUED;
}

/* ------------------------------------------------------------------ */
/* Spans: sub-buffers without a copy                                   */
/* ------------------------------------------------------------------ */

/* Bytes between two rings in the mapping (MAGNET_RING_STRIDE). */
static unsigned long stream_stride(struct magnet_stream *s)
{
	return PAGE_ALIGN((unsigned long)s->rings.size * s->rings.count);
}

/* The ring at mapping index @i, or NULL. */
static struct magnet_ring *stream_ring_at(struct magnet_stream *s,
					  unsigned long i)
{
	if (s->rings.global)
		return i == 0 ? s->rings.global : NULL;
	if (i >= nr_cpu_ids || !cpu_possible(i))
		return NULL;
	return per_cpu_ptr(s->rings.pcpu, i);
}

/*
 * One ring per mapping, read-only: offset R * stride, at most one
 * stride long.  The mapping holds the file, the file the stream and its
 * rings: they outlive it.
 */
static int magnetfs_mmap(struct file *f, struct vm_area_struct *vma)
{
	struct magnet_stream *s = ((struct magnet_reader *)f->private_data)->s;
	unsigned long stride = stream_stride(s);
	unsigned long off = vma->vm_pgoff << PAGE_SHIFT;
	struct magnet_ring *r;

	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	if (off % stride || vma->vm_end - vma->vm_start > stride)
		return -EINVAL;
	r = stream_ring_at(s, off / stride);
	if (!r)
		return -EINVAL;
	magnet_vma_set_ro(vma);
	return remap_vmalloc_range(vma, r->data, 0);
}

/*
 * A deleted stream's ring has no writer left: the LOST record it could
 * not write for want of room goes in now that the reader made room.
 */
static void reader_settle_dead(struct magnet_stream *s)
{
	struct magnet_ring *r;
	int cpu;

	magnet_stream_for_each_ring(s, cpu, r)
		if (!r->held)
			magnet_ring_settle_lost(r,
						magnet_rings_clock(&s->rings));
}

/*
 * read_lock held: hold a span of the next ring that has one, closed
 * sub-buffers of every ring before any partial one, round-robin.
 */
static int reader_hold(struct magnet_reader *rd, bool partial,
		       struct magnet_span *sp)
{
	struct magnet_stream *s = rd->s;
	unsigned int n = s->rings.global ? 1 : nr_cpu_ids, i, pass;
	struct magnet_ring_span rs;

	for (pass = 0; pass < (partial ? 2 : 1); pass++) {
		for (i = 0; i < n; i++) {
			unsigned int idx = (rd->next_cpu + i) % n;
			struct magnet_ring *r = stream_ring_at(s, idx);

			if (!r || magnet_ring_hold(r, pass, &rs))
				continue;
			rd->held = r;
			rd->next_cpu = (idx + 1) % n;
			sp->ring = idx;
			sp->offset = (u64)idx * stream_stride(s) + rs.off;
			sp->len = rs.len;
			sp->events = rs.events;
			sp->flags |= rs.closed ? MAGNET_SPAN_CLOSED : 0;
			return 0;
		}
	}
	return -EAGAIN;
}

static long reader_get_span(struct magnet_reader *rd,
			    struct magnet_span __user *arg)
{
	struct magnet_stream *s = rd->s;
	struct magnet_span sp;
	bool partial, dead;
	ssize_t meta;
	u32 need = 0;
	long err;

	if (copy_from_user(&sp, arg, sizeof(sp)))
		return -EFAULT;
	if ((sp.flags & ~MAGNET_SPAN_PARTIAL) || sp.reserved)
		return -EINVAL;
	partial = sp.flags & MAGNET_SPAN_PARTIAL;
	if (mutex_lock_interruptible(&s->read_lock))
		return -EINTR;
	err = -EBUSY;
	if (rd->held || reader_refused(s))
		goto out;
	dead = READ_ONCE(s->dead);
	/* dead: every writer's stores to the rings are visible from here on */
	smp_rmb();
	meta = reader_copy_meta(rd, u64_to_user_ptr(sp.meta_buf), sp.meta_len,
				&need);
	err = meta;
	if (meta < 0)
		goto out;
	err = -ENOBUFS;
	if (need && !meta)
		goto out;
	sp.flags = 0;
	sp.meta_len = meta;
	sp.ring = 0;
	sp.offset = sp.len = sp.events = 0;
	/* metadata that did not all fit comes first, the span next time */
	err = 0;
	if (!need) {
		/* a deleted or frozen stream grows no more: take all there is */
		if (dead)
			reader_settle_dead(s);
		err = reader_hold(rd, partial || dead ||
				  (s->rings.mode & MAGNET_STREAM_F_OVERWRITE), &sp);
		/* the end: of a deleted stream, of a frozen recorder's data */
		if (err == -EAGAIN && meta)
			err = 0;
		else if (err == -EAGAIN &&
			 (dead || (s->rings.mode & MAGNET_STREAM_F_OVERWRITE)))
			err = -ENODATA;
	}
	if (!err && copy_to_user(arg, &sp, sizeof(sp))) {
		/* the metadata is gone with the copy: as with read(), EFAULT */
		if (rd->held) {
			magnet_ring_unhold(rd->held);
			rd->held = NULL;
		}
		err = -EFAULT;
	}
out:
	mutex_unlock(&s->read_lock);
	/*
	 * nothing for this file while its rule is not met (another file
	 * took the data): SIGIO when it is next met.  Not while it is met
	 * (a whole sub-buffer awaited): that is no new transition.
	 */
	if (err == -EAGAIN && !reader_ready(rd))
		reader_rearm_async(rd);
	return err;
}

static long reader_put_span(struct magnet_reader *rd)
{
	struct magnet_stream *s = rd->s;
	long err = 0;

	mutex_lock(&s->read_lock);
	if (rd->held) {
		magnet_ring_put(rd->held);
		rd->held = NULL;
	} else {
		err = -EINVAL;
	}
	mutex_unlock(&s->read_lock);
	if (!err)
		reader_rearm_async(rd);
	return err;
}

/* ------------------------------------------------------------------ */
/* poll, SIGIO, ioctl                                                  */
/* ------------------------------------------------------------------ */

static __poll_t magnetfs_poll(struct file *f, struct poll_table_struct *pt)
{
	struct magnet_reader *rd = f->private_data;
	struct magnet_stream *s = rd->s;
	__poll_t mask = 0;

	/* a writer: write() never blocks (a full ring drops, counted) */
	if (!(f->f_mode & FMODE_READ))
		return EPOLLOUT | EPOLLWRNORM;
	poll_wait(f, &s->wq, pt);
	reader_arm(rd, RD_NOTIFY_WAIT);
	if (READ_ONCE(s->dead))
		mask |= EPOLLIN | EPOLLRDNORM | EPOLLHUP;
	else if (reader_ready(rd))
		mask |= EPOLLIN | EPOLLRDNORM;
	return mask;
}

static int magnetfs_fasync(int fd, struct file *f, int on)
{
	struct magnet_reader *rd = f->private_data;
	int ret = fasync_helper(fd, f, on, &rd->fasync);

	/* SIGIO says the read rule is met: nothing for a writer */
	if (ret < 0 || !on || !(f->f_mode & FMODE_READ))
		return ret;
	reader_arm(rd, RD_NOTIFY_ASYNC);
	/* readable already: say so now */
	if (reader_ready(rd) || READ_ONCE(rd->s->dead))
		magnetfs_notify(rd->s);
	return 0;
}

static int ioc_put(unsigned long arg, u64 v)
{
	return copy_to_user((void __user *)arg, &v, sizeof(v)) ? -EFAULT : 0;
}

static int ioc_get(unsigned long arg, u64 *v)
{
	return copy_from_user(v, (void __user *)arg, sizeof(*v)) ? -EFAULT : 0;
}

static long magnetfs_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct magnet_reader *rd = f->private_data;
	struct magnet_stream *s = rd->s;
	u64 ring = (u64)s->rings.size * s->rings.count;
	struct magnet_stream_stats st;
	size_t sz;
	u64 v;
	int err;

	/* any size from the first layout on: see MAGNET_IOC_GET_STATS */
	if (_IOC_TYPE(cmd) == MAGNET_IOC_MAGIC &&
	    _IOC_NR(cmd) == _IOC_NR(MAGNET_IOC_GET_STATS) &&
	    _IOC_DIR(cmd) == _IOC_READ &&
	    _IOC_SIZE(cmd) >= MAGNET_STREAM_STATS_SIZE_V1) {
		sz = _IOC_SIZE(cmd);
		magnet_stream_stats(rd->s, &st);
		if (copy_to_user((void __user *)arg, &st, min(sz, sizeof(st))))
			return -EFAULT;
		if (sz > sizeof(st) &&
		    clear_user((char __user *)arg + sizeof(st), sz - sizeof(st)))
			return -EFAULT;
		return 0;
	}
	/*
	 * What reads or costs every CPU an IPI needs a file open for
	 * reading: an app-write stream is writable by everyone.
	 */
	if ((cmd == MAGNET_IOC_FLUSH || cmd == MAGNET_IOC_GET_SPAN ||
	     cmd == MAGNET_IOC_PUT_SPAN) && !(f->f_mode & FMODE_READ))
		return -EBADF;
	switch (cmd) {
	case MAGNET_IOC_FLUSH:
		/*
		 * Under read_lock: once the stream is dead its readers write
		 * the rings' owed LOST records themselves (spans, under the
		 * same lock), and a flush must not write beside them.
		 */
		if (mutex_lock_interruptible(&s->read_lock))
			return -EINTR;
		if (!READ_ONCE(s->dead))
			magnet_stream_flush(s);
		mutex_unlock(&s->read_lock);
		return 0;
	case MAGNET_IOC_GET_SPAN:
		return reader_get_span(rd, (void __user *)arg);
	case MAGNET_IOC_PUT_SPAN:
		return reader_put_span(rd);
	case MAGNET_IOC_GET_WATERMARK:
		return ioc_put(arg, READ_ONCE(rd->watermark));
	case MAGNET_IOC_GET_TIMEOUT:
		return ioc_put(arg, READ_ONCE(rd->timeout_ms));
	case MAGNET_IOC_GET_MIN_EVENTS:
		return ioc_put(arg, READ_ONCE(rd->min_events));
	case MAGNET_IOC_SET_WATERMARK:
	case MAGNET_IOC_SET_TIMEOUT:
	case MAGNET_IOC_SET_MIN_EVENTS:
		err = ioc_get(arg, &v);
		if (err)
			return err;
		break;
	default:
		return -ENOTTY;
	}
	switch (cmd) {
	case MAGNET_IOC_SET_WATERMARK:
		/* more than one CPU's ring holds could never be met */
		if (v > ring)
			return -EINVAL;
		WRITE_ONCE(rd->watermark, v);
		break;
	case MAGNET_IOC_SET_TIMEOUT:
		if ((s64)v < 0 || (s64)v > MAGNET_TIMEOUT_MAX_MS)
			return -EINVAL;
		WRITE_ONCE(rd->timeout_ms, (s64)v);
		break;
	case MAGNET_IOC_SET_MIN_EVENTS:
		if (v > div64_u64(ring, MAGNET_REC_HDR_SIZE))
			return -EINVAL;
		WRITE_ONCE(rd->min_events, v);
		break;
	}
	/* a lower bar may be met already: re-evaluate the armed readers */
	magnetfs_notify(s);
	return 0;
}

/*
 * Application events (stream_write.c); the VFS checked write permission.
 * A stream not opened to application writes (app-write) takes them only
 * from an opener with CAP_NET_ADMIN: the mount's mode= may make its file
 * group-writable, which grants reading, not writing into the trace.
 */
static ssize_t magnetfs_write(struct file *f, const char __user *ubuf,
			      size_t len, loff_t *ppos)
{
	struct magnet_stream *s = ((struct magnet_reader *)f->private_data)->s;

	if (!READ_ONCE(s->app_write) &&
	    !file_ns_capable(f, &init_user_ns, CAP_NET_ADMIN))
		return -EPERM;
	return magnetfs_stream_write(s, ubuf, len);
}

const struct file_operations magnetfs_stream_fops = {
	.owner		= THIS_MODULE,
	.open		= magnetfs_open,
	.release	= magnetfs_release,
	.read		= magnetfs_read,
	.read_iter	= magnetfs_read_iter,
	.write		= magnetfs_write,
	.poll		= magnetfs_poll,
	.fasync		= magnetfs_fasync,
	.mmap		= magnetfs_mmap,
	.unlocked_ioctl	= magnetfs_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

int magnetfs_add_stream(struct magnet_stream *s)
{
	struct dentry *d = NULL;
	int err;

	if (magnet_db.dir) {
		d = debugfs_create_file_unsafe(s->name, 0400, magnet_db.dir, s,
					       &magnetfs_stream_fops);
		if (IS_ERR(d))
			return PTR_ERR(d);
	}
	s->dentry = d;
	/* and in the magnetfs superblock, if mounted (fs.c) */
	err = magnetfs_fs_add_stream(s);
	if (err && d) {
		magnetfs_forget_inode(d_inode(d));
		debugfs_remove(d);
		s->dentry = NULL;
	}
	return err;
}

/*
 * db.lock held: no open can find the stream once i_private is cleared,
 * and no open waits for db.lock, so debugfs_remove() waits only for opens
 * that finish.
 */
void magnetfs_remove_stream(struct magnet_stream *s)
{
	if (s->dentry) {
		magnetfs_forget_inode(d_inode(s->dentry));
		debugfs_remove(s->dentry);
		s->dentry = NULL;
	}
	magnetfs_fs_remove_stream(s);
	/* everything is flushed: readers drain, SIGIO, AIO completes */
	WRITE_ONCE(s->dead, true);
	magnetfs_notify(s);
}

int magnetfs_stream_path(struct magnet_stream *s, char *buf, size_t len)
{
	/* without debugfs the file is only in magnetfs */
	if (!magnet_db.dir)
		return snprintf(buf, len, MAGNETFS_DEFAULT_DIR "/%s", s->name);
	return snprintf(buf, len, "/sys/kernel/debug/magnet/%s", s->name);
}

int magnetfs_init(void)
{
	struct dentry *d = debugfs_create_dir("magnet", NULL);
	int err;

	/* debugfs off (debugfs=off, !CONFIG_DEBUG_FS): magnetfs only */
	if (IS_ERR(d)) {
		pr_info("magnet: no debugfs (%ld): stream files only in magnetfs\n",
			PTR_ERR(d));
		d = NULL;
	}
	magnet_db.dir = d;
	err = magnetfs_fs_init();
	if (err)
		debugfs_remove(magnet_db.dir);
	return err;
}

void magnetfs_exit(void)
{
	magnetfs_fs_exit();
	debugfs_remove(magnet_db.dir);
}
