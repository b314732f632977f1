// SPDX-License-Identifier: GPL-2.0
/*
 * write(2) on a stream file: application events (MAGNET_EVENT_APP) from
 * user space, e.g. the interposer libmagnet_preload.so (docs/INTERPOSER.md,
 * docs/IOCTL.md).
 *
 * A write carries a batch of whole records of MAGNET_APP_REC_SIZE bytes.
 * The whole batch is copied and checked before anything is written: one
 * bad record refuses the batch with EINVAL and nothing of it reaches the
 * rings (counted in app_rejected).  The kernel fills cpu, pid, tgid and the
 * header timestamp itself (the caller must leave them 0), so a writer can
 * neither forge who wrote nor break the per-CPU time order of a ring; the
 * call's own times travel in the payload.  Each record then goes into the
 * writer's CPU's ring like a probe event: produced, written, or dropped and
 * counted as lost (a LOST record marks the place) when the ring is full.
 * Readers are notified once per batch, from the writer's task context.
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/timekeeping.h>
#include <linux/debugfs.h>
#include "../kmod/internal.h"
#include "magnetfs.h"

/* Slack for exit_ns against the kernel's clock read at the write. */
#define APP_CLOCK_SLACK_NS	(10 * NSEC_PER_MSEC)

static_assert(sizeof(struct magnet_app_payload) == 48);
static_assert(MAGNET_APP_REC_SIZE ==
	      MAGNET_REC_HDR_SIZE + sizeof(struct magnet_app_payload));

static u16 app_call_dir(u16 call)
{
	return call <= MAGNET_APP_WRITEV ? MAGNET_APP_F_TX : MAGNET_APP_F_RX;
}

static bool app_rec_valid(const struct magnet_rec_hdr *h, u64 now)
{
	const struct magnet_app_payload *p = (const void *)(h + 1);

	if (h->size != MAGNET_APP_REC_SIZE || h->event != MAGNET_EVENT_APP ||
	    h->cpu || h->timestamp || h->pid || h->tgid)
		return false;
	if (p->call >= __MAGNET_APP_CALL_MAX ||
	    p->flags != app_call_dir(p->call) || p->reserved)
		return false;
	return p->entry_ns <= p->exit_ns &&
	       p->exit_ns <= now + APP_CLOCK_SLACK_NS;
}

/* One record into this CPU's ring; false when dropped (ring full). */
/*
 * One APP record into @s, the writer's CPU's ring (or the stream's global
 * ring, or its flight recorder: magnet_write_core() honours the buffer
 * mode), stamped now and naming the writing task.
 */
static bool app_rec_write(struct magnet_stream *s,
			  const struct magnet_rec_hdr *h)
{
	return magnet_write_core(s, MAGNET_EVENT_APP, h->abstract_id,
				 current->pid, current->tgid, h + 1,
				 sizeof(struct magnet_app_payload));
}

ssize_t magnetfs_stream_write(struct magnet_stream *s, const char __user *ubuf,
			      size_t len)
{
	size_t off;
	char *buf;
	u64 now;

	if (!len)
		return 0;
	if (READ_ONCE(s->dead))
		return -ENOENT;
	/* APP times are CLOCK_MONOTONIC: they would not sort among LOCAL */
	if (s->rings.clock != MAGNET_CLOCK_MONOTONIC) {
		atomic64_inc(&s->app_rejected);
		return -EOPNOTSUPP;
	}
	if (len > MAGNET_APP_WRITE_MAX || len % MAGNET_APP_REC_SIZE) {
		atomic64_inc(&s->app_rejected);
		return -EINVAL;
	}
	buf = kvmalloc(len, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	if (copy_from_user(buf, ubuf, len)) {
		kvfree(buf);
		atomic64_inc(&s->app_rejected);
		return -EFAULT;
	}
	now = ktime_get_mono_fast_ns();
	for (off = 0; off < len; off += MAGNET_APP_REC_SIZE) {
		if (!app_rec_valid((const void *)(buf + off), now)) {
			kvfree(buf);
			atomic64_inc(&s->app_rejected);
			return -EINVAL;
		}
	}
	/* deletion waits for this section before its last flush (db.c) */
	rcu_read_lock();
	if (READ_ONCE(s->closing)) {
		rcu_read_unlock();
		kvfree(buf);
		return -ENOENT;
	}
	for (off = 0; off < len; off += MAGNET_APP_REC_SIZE)
		app_rec_write(s, (const void *)(buf + off));
	rcu_read_unlock();
	atomic64_add(len / MAGNET_APP_REC_SIZE, &s->app_events);
	kvfree(buf);
	/* task context: evaluate the readers' rules directly, once */
	smp_mb();
	if (READ_ONCE(s->waiting))
		magnetfs_notify(s);
	return len;
}

/*
 * STREAM_NEW with MAGNET_A_STREAM_APP_WRITE: every user may write
 * application events into @s.  Its files become writable by all (mode
 * | 0222) and the magnetfs root searchable by all.  db.lock held.
 */
void magnetfs_stream_allow_app_write(struct magnet_stream *s)
{
	lockdep_assert_held(&magnet_db.lock);
	s->app_write = true;
	if (s->dentry)
		d_inode(s->dentry)->i_mode |= 0222;
	magnetfs_fs_stream_mode(s);
}
