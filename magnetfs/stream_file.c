// SPDX-License-Identifier: GPL-2.0
/*
 * magnetfs stream files: /sys/kernel/debug/magnet/<stream>.
 *
 * read() returns whole records only.  The first read of every open file
 * starts with a SYSINFO record and EVENTDEF records naming every
 * registered event ID; when probes register or unregister later, fresh
 * EVENTDEFs come before the next ring data.  Then read() drains the
 * per-CPU rings.  It blocks until at least one record is there (or fails
 * with EAGAIN under O_NONBLOCK), and returns 0 (end of file) once the
 * stream was deleted and everything recorded has been read.
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
#include "../kmod/internal.h"

#define SYSINFO_SIZE	ALIGN(MAGNET_REC_HDR_SIZE + sizeof(struct magnet_sysinfo), 8)
#define EVENTDEF_SIZE	ALIGN(MAGNET_REC_HDR_SIZE + sizeof(struct magnet_eventdef), 8)

struct magnet_reader {
	struct magnet_stream *s;
	char *meta;			/* SYSINFO and EVENTDEF records */
	size_t meta_len;
	size_t meta_off;
	unsigned long catalog_gen;
	unsigned int next_cpu;		/* round-robin over rings */
};

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
	si->clock_id = MAGNET_CLOCK_MONOTONIC;
	si->clock_hz = NSEC_PER_SEC;
	si->wall_ns_at_zero = ktime_get_real_ns() - ktime_get_mono_fast_ns();
	si->nr_cpus = nr_cpu_ids;
	si->ptr_size = sizeof(void *);
	si->page_size = PAGE_SIZE;
	si->subbuf_size = s->subbuf_size;
	si->subbuf_count = s->subbuf_count;
	strscpy(si->stream, s->name, sizeof(si->stream));
	strscpy(si->release, utsname()->release, sizeof(si->release));
}

/* Build SYSINFO (if @sysinfo) and the catalog of event IDs; db.lock held. */
static int reader_build_meta(struct magnet_reader *rd, bool sysinfo)
{
	size_t len = (sysinfo ? SYSINFO_SIZE : 0) +
		     (size_t)magnet_db.nr_points * EVENTDEF_SIZE;
	u64 now = ktime_get_mono_fast_ns();
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

static int magnetfs_open(struct inode *inode, struct file *f)
{
	struct magnet_reader *rd;
	struct magnet_stream *s;
	int err;

	rd = kzalloc(sizeof(*rd), GFP_KERNEL);
	if (!rd)
		return -ENOMEM;
	mutex_lock(&magnet_db.lock);
	s = inode->i_private;
	if (!s || s->dead) {
		mutex_unlock(&magnet_db.lock);
		kfree(rd);
		return -ENOENT;
	}
	rd->s = s;
	err = reader_build_meta(rd, true);
	if (err) {
		mutex_unlock(&magnet_db.lock);
		kfree(rd);
		return err;
	}
	magnet_stream_get(s);
	atomic_inc(&s->readers);
	mutex_unlock(&magnet_db.lock);
	f->private_data = rd;
	return stream_open(inode, f);
}

static int magnetfs_release(struct inode *inode, struct file *f)
{
	struct magnet_reader *rd = f->private_data;

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

	if (off == rd->meta_len &&
	    READ_ONCE(magnet_db.catalog_gen) != rd->catalog_gen) {
		int err;

		mutex_lock(&magnet_db.lock);
		err = reader_build_meta(rd, false);
		mutex_unlock(&magnet_db.lock);
		if (err)
			return err;
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

static ssize_t reader_drain(struct magnet_reader *rd, char __user *ubuf,
			    size_t len, u32 *need)
{
	unsigned int i, n = nr_cpu_ids;
	size_t done = 0;

	for (i = 0; i < n && !*need; i++) {
		unsigned int cpu = (rd->next_cpu + i) % n;
		ssize_t got;

		if (!cpu_possible(cpu))
			continue;
		got = magnet_ring_read(per_cpu_ptr(rd->s->rings, cpu),
				       ubuf + done, len - done, need);
		if (got < 0)
			return done ? done : got;
		done += got;
	}
	rd->next_cpu = (rd->next_cpu + 1) % n;
	return done;
}

static int magnet_stream_wait(struct magnet_stream *s)
{
	DEFINE_WAIT(wait);
	int err = 0;

	for (;;) {
		prepare_to_wait(&s->wq, &wait, TASK_INTERRUPTIBLE);
		WRITE_ONCE(s->waiting, 1);
		/* pairs with smp_mb() in magnet_kick_reader() */
		smp_mb();
		if (magnet_stream_has_data(s) || READ_ONCE(s->dead))
			break;
		if (signal_pending(current)) {
			err = -ERESTARTSYS;
			break;
		}
		schedule();
	}
	finish_wait(&s->wq, &wait);
	return err;
}

static ssize_t magnetfs_read(struct file *f, char __user *ubuf, size_t len,
			     loff_t *ppos)
{
	struct magnet_reader *rd = f->private_data;
	struct magnet_stream *s = rd->s;
	ssize_t done = 0, n;
	u32 need = 0;

	if (mutex_lock_interruptible(&s->read_lock))
		return -ERESTARTSYS;
	for (;;) {
		bool dead = READ_ONCE(s->dead);

		/* pairs with smp_mb() in magnet_db_stream_kill(): data before dead */
		smp_rmb();
		n = reader_copy_meta(rd, ubuf, len, &need);
		if (n >= 0) {
			done = n;
			if (!need)
				n = reader_drain(rd, ubuf + done, len - done,
						 &need);
		}
		if (n < 0) {
			done = done ?: n;
			break;
		}
		done += n;
		if (done || need || dead)
			break;
		if (f->f_flags & O_NONBLOCK) {
			done = -EAGAIN;
			break;
		}
		mutex_unlock(&s->read_lock);
		n = magnet_stream_wait(s);
		if (n)
			return n;
		if (mutex_lock_interruptible(&s->read_lock))
			return -ERESTARTSYS;
	}
	mutex_unlock(&s->read_lock);
	/* the buffer cannot hold even the next record */
	if (!done && need)
		return -EINVAL;
	return done;
}

static __poll_t magnetfs_poll(struct file *f, struct poll_table_struct *pt)
{
	struct magnet_reader *rd = f->private_data;
	struct magnet_stream *s = rd->s;
	__poll_t mask = 0;

	poll_wait(f, &s->wq, pt);
	WRITE_ONCE(s->waiting, 1);
	/* pairs with smp_mb() in magnet_kick_reader() */
	smp_mb();
	if (rd->meta_off < rd->meta_len || magnet_stream_has_data(s))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (READ_ONCE(s->dead))
		mask |= EPOLLHUP;
	return mask;
}

static long magnetfs_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct magnet_reader *rd = f->private_data;
	struct magnet_stream_stats st;

	switch (cmd) {
	case MAGNET_IOC_GET_STATS:
		magnet_stream_stats(rd->s, &st);
		if (copy_to_user((void __user *)arg, &st, sizeof(st)))
			return -EFAULT;
		return 0;
	case MAGNET_IOC_FLUSH:
		magnet_stream_flush(rd->s);
		return 0;
	default:
		return -ENOTTY;
	}
}

static const struct file_operations magnetfs_stream_fops = {
	.owner		= THIS_MODULE,
	.open		= magnetfs_open,
	.release	= magnetfs_release,
	.read		= magnetfs_read,
	.poll		= magnetfs_poll,
	.unlocked_ioctl	= magnetfs_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

int magnetfs_add_stream(struct magnet_stream *s)
{
	struct dentry *d;

	d = debugfs_create_file_unsafe(s->name, 0400, magnet_db.dir, s,
				       &magnetfs_stream_fops);
	if (IS_ERR(d))
		return PTR_ERR(d);
	s->dentry = d;
	return 0;
}

/* db.lock held: no open can find the stream once i_private is cleared. */
void magnetfs_remove_stream(struct magnet_stream *s)
{
	d_inode(s->dentry)->i_private = NULL;
	debugfs_remove(s->dentry);
	s->dentry = NULL;
}

int magnetfs_stream_path(struct magnet_stream *s, char *buf, size_t len)
{
	return snprintf(buf, len, "/sys/kernel/debug/magnet/%s", s->name);
}

int magnetfs_init(void)
{
	struct dentry *d = debugfs_create_dir("magnet", NULL);

	if (IS_ERR(d))
		return PTR_ERR(d);
	magnet_db.dir = d;
	return 0;
}

void magnetfs_exit(void)
{
	debugfs_remove(magnet_db.dir);
}
