// SPDX-License-Identifier: GPL-2.0
/*
 * The instrumentation database: registered points (with their event IDs)
 * and streams.  Every change runs in magnetk under db.lock; lookups from
 * netlink dumps and file opens take db.lock too.
 */
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/ctype.h>
#include <linux/mm.h>
#include "internal.h"
#include "sockstat.h"
#include "compat.h"

struct magnet_db magnet_db = {
	.lock = __MUTEX_INITIALIZER(magnet_db.lock),
	.points = LIST_HEAD_INIT(magnet_db.points),
	.streams = LIST_HEAD_INIT(magnet_db.streams),
};

static DEFINE_IDR(magnet_ids);

#define db_locked() lockdep_is_held(&magnet_db.lock)

/* Names: 1-31 chars of [A-Za-z0-9_.-], not starting with '.' or '-'. */
int magnet_name_valid(const char *name)
{
	size_t i, n = strnlen(name, MAGNET_NAME_MAX);

	if (n == 0 || n >= MAGNET_NAME_MAX || name[0] == '.' || name[0] == '-')
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum(name[i]) && !strchr("_.-", name[i]))
			return 0;
	return 1;
}

struct magnet_point *magnet_db_find_point(const char *name, u32 id)
{
	struct magnet_point *pt;

	lockdep_assert_held(&magnet_db.lock);
	list_for_each_entry(pt, &magnet_db.points, node)
		if (name ? !strcmp(pt->desc->name, name) : pt->id == id)
			return pt;
	return NULL;
}

struct magnet_stream *magnet_db_find_stream(const char *name)
{
	struct magnet_stream *s;

	lockdep_assert_held(&magnet_db.lock);
	list_for_each_entry(s, &magnet_db.streams, node)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}

/* ---- points ---------------------------------------------------------- */

struct reg_req {
	const struct magnet_point_desc *desc;
	struct module *owner;
	void *priv;
	struct magnet_point *pt;
};

static int do_register(void *arg)
{
	struct reg_req *req = arg;
	struct magnet_point *pt;
	int id;

	mutex_lock(&magnet_db.lock);
	if (magnet_db_find_point(req->desc->name, 0)) {
		mutex_unlock(&magnet_db.lock);
		return -EEXIST;
	}
	pt = kzalloc(sizeof(*pt), GFP_KERNEL);
	if (pt)
		pt->hits = alloc_percpu(u64);
	if (!pt || !pt->hits)
		goto nomem;
	/* cyclic: an ID is reused only long after it was unregistered */
	id = idr_alloc_cyclic(&magnet_ids, pt, MAGNET_EVENT_FIRST_PROBE,
			      MAGNET_EVENT_MAX + 1, GFP_KERNEL);
	if (id < 0) {
		free_percpu(pt->hits);
		kfree(pt);
		mutex_unlock(&magnet_db.lock);
		return id == -ENOSPC ? -ENOSPC : id;
	}
	pt->id = id;
	INIT_HLIST_HEAD(&pt->synths);
	pt->desc = req->desc;
	pt->owner = req->owner;
	pt->priv = req->priv;
	list_add_tail(&pt->node, &magnet_db.points);
	magnet_db.nr_points++;
	magnet_db.catalog_gen++;
	req->pt = pt;
	magnet_genl_notify_point(pt, true);
	mutex_unlock(&magnet_db.lock);
	return 0;
nomem:
	if (pt)
		free_percpu(pt->hits);
	kfree(pt);
	mutex_unlock(&magnet_db.lock);
	return -ENOMEM;
}

struct magnet_point *magnet_point_register(const struct magnet_point_desc *desc,
					   struct module *owner, void *priv)
{
	struct reg_req req = { .desc = desc, .owner = owner, .priv = priv };
	int err;

	if (!desc || !desc->name || !magnet_name_valid(desc->name) ||
	    !desc->ops || !desc->ops->enable || !desc->ops->disable ||
	    desc->layer >= __MAGNET_LAYER_MAX ||
	    desc->payload >= __MAGNET_PAYLOAD_MAX)
		return ERR_PTR(-EINVAL);
	err = magnetk_call(do_register, &req);
	if (err)
		return ERR_PTR(err);
	return req.pt;
}
EXPORT_SYMBOL_GPL(magnet_point_register);

/* Points attached whose hook counts its misses (ops->missed); db.lock */
static unsigned int db_nr_missed;

/*
 * What @pt's hook missed since the last report goes, as lost events, to
 * every consumer of the point (magnet_add_lost()); db.lock held.  A count
 * that steps back (kprobes' racing nmissed++) is no news until it passes
 * the last one reported again (magnet_missed_news(), missed.h).
 */
static void db_point_missed_sync(struct magnet_point *pt)
{
	unsigned long n;

	if (!pt->desc->ops->missed)
		return;
	n = magnet_missed_news(pt->desc->ops->missed(pt), &pt->missed_seen);
	if (n)
		magnet_add_lost(pt, n);
}

#define DB_MISSED_TICK	HZ

/*
 * magnetk's periodic work: a hook's misses reach the consumers within a
 * second, not only at disable, when a synthesizer about to go could no
 * longer count them; jiffies until it is due again.
 */
long magnet_db_missed_tick(void)
{
	static unsigned long next;
	struct magnet_point *pt;

	if (!READ_ONCE(db_nr_missed))
		return MAX_SCHEDULE_TIMEOUT;
	if (time_before(jiffies, next))
		return next - jiffies;
	mutex_lock(&magnet_db.lock);
	list_for_each_entry(pt, &magnet_db.points, node)
		if (pt->users)
			db_point_missed_sync(pt);
	mutex_unlock(&magnet_db.lock);
	next = jiffies + DB_MISSED_TICK;
	return DB_MISSED_TICK;
}

/*
 * A consumer of @pt is about to be linked (stream, tap, synthesizer): the
 * misses so far go to those already there, not to the newcomer, which
 * could not have seen those events.  db.lock held.
 */
void magnet_db_point_join(struct magnet_point *pt)
{
	lockdep_assert_held(&magnet_db.lock);
	if (pt->users)
		db_point_missed_sync(pt);
}

/*
 * Consumers of a point: its stream and each synthesizer reading it.  The
 * hook is attached while there is one (docs/SYNTH.md); db.lock held.
 */
int magnet_db_point_get(struct magnet_point *pt,
			struct netlink_ext_ack *extack)
{
	const char *hook = pt->desc->hook ?: "its hook";
	int err;

	lockdep_assert_held(&magnet_db.lock);
	if (!pt->users) {
		/* the count before the arming: its misses are all reported */
		if (pt->desc->ops->missed)
			pt->missed_seen = pt->desc->ops->missed(pt);
		err = pt->desc->ops->enable(pt);
		if (err == -EPERM)
			/* run-time kprobes: lockdown raised since their creation */
			magnet_set_err(extack, NULL,
				       "probe '%s': attaching %s is not permitted: the kernel is locked down (lockdown=confidentiality refuses kprobes)",
				       pt->desc->name, hook);
		else if (err)
			magnet_set_err(extack, NULL,
				       "probe '%s': attaching %s failed (%d)",
				       pt->desc->name, hook, err);
		if (err)
			return err;
		if (pt->desc->ops->missed) {
			unsigned long now = pt->desc->ops->missed(pt);

			/* a count that restarts at each arming: from there */
			if ((long)(now - pt->missed_seen) < 0)
				pt->missed_seen = now;
			WRITE_ONCE(db_nr_missed, db_nr_missed + 1);
		}
	}
	pt->users++;
	return 0;
}

/* When the last consumer goes, the hook is detached: no handler runs. */
void magnet_db_point_put(struct magnet_point *pt)
{
	lockdep_assert_held(&magnet_db.lock);
	if (WARN_ON_ONCE(!pt->users))
		return;
	/* the consumers still linked get what was missed until now */
	db_point_missed_sync(pt);
	if (--pt->users)
		return;
	pt->desc->ops->disable(pt);
	db_point_missed_sync(pt);	/* the misses up to the detach */
	if (pt->desc->ops->missed)
		WRITE_ONCE(db_nr_missed, db_nr_missed - 1);
}

/*
 * Detach @pt from its stream; db.lock held.  No handler writes into the
 * stream afterwards (synthesizers may keep the hook attached).
 */
void magnet_db_point_disable(struct magnet_point *pt)
{
	struct magnet_stream *s;

	s = rcu_dereference_protected(pt->stream, db_locked());
	if (!s)
		return;
	magnet_db_point_put(pt);
	RCU_INIT_POINTER(pt->stream, NULL);
	/* magnet_add() runs under rcu_read_lock_sched */
	synchronize_rcu();
	s->nr_probes--;
	magnet_stream_put(s);
}

int magnet_db_point_enable(struct magnet_point *pt, struct magnet_stream *s,
			   struct netlink_ext_ack *extack)
{
	struct magnet_stream *cur;
	int err;

	cur = rcu_dereference_protected(pt->stream, db_locked());
	if (cur == s)
		return 0;
	if (cur) {
		magnet_set_err(extack, NULL,
			       "probe '%s' is enabled into stream '%s'; disable it first",
			       pt->desc->name, cur->name);
		return -EBUSY;
	}
	magnet_db_point_join(pt);
	magnet_stream_get(s);
	rcu_assign_pointer(pt->stream, s);
	err = magnet_db_point_get(pt, extack);
	if (err) {
		RCU_INIT_POINTER(pt->stream, NULL);
		synchronize_rcu();
		magnet_stream_put(s);
		return err;
	}
	s->nr_probes++;
	return 0;
}

/* Replace @pt's taps by @old plus @add, or minus @del; db.lock held. */
static int point_taps_set(struct magnet_point *pt, struct magnet_stream *add,
			  struct magnet_stream *del)
{
	struct magnet_taps *old, *t = NULL;
	unsigned int i, n;

	old = rcu_dereference_protected(pt->taps, db_locked());
	n = (old ? old->n : 0) + (add ? 1 : 0) - (del ? 1 : 0);
	if (n) {
		/* removal must not fail: a few bytes, never more than before */
		t = kzalloc(struct_size(t, s, n),
			    del ? GFP_KERNEL | __GFP_NOFAIL : GFP_KERNEL);
		if (!t)
			return -ENOMEM;
		for (i = 0; old && i < old->n; i++)
			if (old->s[i] != del)
				t->s[t->n++] = old->s[i];
		if (add)
			t->s[t->n++] = add;
	}
	rcu_assign_pointer(pt->taps, t);
	/* magnet_add() runs under rcu_read_lock_sched: none sees @old after */
	synchronize_rcu();
	kfree(old);
	return 0;
}

/*
 * Feed @pt's events to @s too (an in-kernel consumer's stream, which the
 * caller keeps alive until magnet_db_point_untap()); the hook is attached
 * if the point was not enabled.  db.lock held.
 */
int magnet_db_point_tap(struct magnet_point *pt, struct magnet_stream *s,
			struct netlink_ext_ack *extack)
{
	int err;

	magnet_db_point_join(pt);
	err = point_taps_set(pt, s, NULL);
	if (err) {
		magnet_set_err(extack, NULL, "out of memory");
		return err;
	}
	err = magnet_db_point_get(pt, extack);
	if (err)
		point_taps_set(pt, NULL, s);
	return err;
}

/* Stop feeding @s; no handler writes into it when this returns. */
void magnet_db_point_untap(struct magnet_point *pt, struct magnet_stream *s)
{
	struct magnet_taps *old;
	unsigned int i;

	old = rcu_dereference_protected(pt->taps, db_locked());
	for (i = 0; old && i < old->n; i++)
		if (old->s[i] == s)
			break;
	if (!old || i == old->n)
		return;
	magnet_db_point_put(pt);
	point_taps_set(pt, NULL, s);
}

static int do_unregister(void *arg)
{
	struct magnet_point *pt = arg;

	/* the owner's exit calls us: its hooks are still there to detach */
	mutex_lock(&magnet_db.lock);
	magnet_synths_point_gone(pt);
	magnet_corrs_point_gone(pt);
	magnet_sockstat_point_gone(pt);
	magnet_db_point_disable(pt);
	WARN_ON(pt->users);
	list_del(&pt->node);
	idr_remove(&magnet_ids, pt->id);
	magnet_db.nr_points--;
	magnet_db.catalog_gen++;
	magnet_genl_notify_point(pt, false);
	mutex_unlock(&magnet_db.lock);
	free_percpu(pt->hits);
	kfree(pt);
	return 0;
}

void magnet_point_unregister(struct magnet_point *pt)
{
	if (!IS_ERR_OR_NULL(pt))
		magnetk_call(do_unregister, pt);
}
EXPORT_SYMBOL_GPL(magnet_point_unregister);

/* ---- streams --------------------------------------------------------- */

/*
 * The rings of all user streams together: at most max_rings_mb MiB
 * (default 0: half of RAM, as for one stream).  db.lock.  A deleted
 * stream's rings stop counting at deletion, though a reader that still
 * holds the file keeps them until it closes it.
 */
static unsigned int max_rings_mb;
module_param(max_rings_mb, uint, 0644);
MODULE_PARM_DESC(max_rings_mb,
		 "MiB of rings all streams may take together (0: half of RAM)");
static u64 magnet_rings_bytes;

static u64 stream_ring_bytes(u32 size, u32 count, u32 mode)
{
	return (u64)size * count *
	       (mode & MAGNET_STREAM_F_GLOBAL ? 1 : num_possible_cpus());
}

int magnet_db_stream_new(const char *name, u32 size, u32 count, u32 mode,
			 u32 clock, struct netlink_ext_ack *extack)
{
	u64 total = stream_ring_bytes(size, count, mode);
	u64 half = (u64)totalram_pages() * PAGE_SIZE / 2;
	u64 cap = READ_ONCE(max_rings_mb) ? (u64)READ_ONCE(max_rings_mb) << 20 :
		  half;
	struct magnet_stream *s;
	int err;

	lockdep_assert_held(&magnet_db.lock);
	if (!strcmp(name, MAGNET_SOCKSTAT_NAME)) {
		/* the per-socket statistics file has that name */
		magnet_set_err(extack, NULL, "stream name '%s' is reserved",
			       name);
		return -EEXIST;
	}
	if (magnet_db_find_stream(name)) {
		magnet_set_err(extack, NULL, "stream '%s' already exists",
			       name);
		return -EEXIST;
	}
	if (magnet_db.nr_streams >= MAGNET_STREAMS_MAX) {
		magnet_set_err(extack, NULL, "too many streams (at most %u)",
			       MAGNET_STREAMS_MAX);
		return -ENOSPC;
	}
	if (total > half) {
		magnet_set_err(extack, NULL,
			       "stream would take %llu MiB of rings, more than half of memory",
			       total >> 20);
		return -ENOMEM;
	}
	if (magnet_rings_bytes + total > cap) {
		magnet_set_err(extack, NULL,
			       "stream would take %llu MiB of rings, streams hold %llu MiB, the limit is %llu MiB (magnet.max_rings_mb)",
			       total >> 20, magnet_rings_bytes >> 20, cap >> 20);
		return -ENOMEM;
	}
	s = magnet_stream_alloc(name, size, count, mode, clock);
	if (IS_ERR(s)) {
		magnet_set_err(extack, NULL,
			       "cannot allocate %llu MiB of rings", total >> 20);
		return PTR_ERR(s);
	}
	err = magnetfs_add_stream(s);
	if (err) {
		magnet_set_err(extack, NULL, "cannot create the stream file (%d)",
			       err);
		magnet_stream_put(s);
		return err;
	}
	list_add_tail(&s->node, &magnet_db.streams);
	magnet_db.nr_streams++;
	magnet_rings_bytes += total;
	return 0;
}

static void magnet_db_stream_kill(struct magnet_stream *s)
{
	struct magnet_point *pt;

	list_for_each_entry(pt, &magnet_db.points, node) {
		if (rcu_access_pointer(pt->stream) == s)
			magnet_db_point_disable(pt);
	}
	magnet_filters_stream_gone(s);
	/* synthesizers writing here go, their last records in the stream */
	magnet_synths_stream_gone(s);
	/* correlators writing into @s: their last records go in first */
	magnet_corrs_stream_gone(s);
	/*
	 * Application writers (write(2), magnetfs/stream_write.c) write under
	 * rcu_read_lock() and refuse a closing stream: after this grace period
	 * no writer is left, so the flush below is the rings' last write and
	 * a reader may finish a dead ring's LOST accounting itself.
	 */
	WRITE_ONCE(s->closing, true);
	synchronize_rcu();
	/* losses up to now reach the readers, who drain and then see EOF */
	magnet_stream_flush(s);
	magnetfs_remove_stream(s);
	WRITE_ONCE(s->dead, true);
	smp_mb();
	wake_up_interruptible_all(&s->wq);
	list_del_init(&s->node);
	magnet_db.nr_streams--;
	magnet_rings_bytes -= stream_ring_bytes(s->rings.size, s->rings.count,
						s->rings.mode);
	magnet_stream_put(s);
}

int magnet_db_stream_del(const char *name, struct netlink_ext_ack *extack)
{
	struct magnet_stream *s;

	lockdep_assert_held(&magnet_db.lock);
	s = magnet_db_find_stream(name);
	if (!s) {
		magnet_set_err(extack, NULL, "no stream named '%s'", name);
		return -ENOENT;
	}
	magnet_db_stream_kill(s);
	return 0;
}

/* Core module exit: probe modules depend on us, so they are all gone. */
void magnet_db_teardown(void)
{
	struct magnet_stream *s, *tmp;

	mutex_lock(&magnet_db.lock);
	magnet_synths_teardown();
	magnet_corrs_teardown();
	list_for_each_entry_safe(s, tmp, &magnet_db.streams, node)
		magnet_db_stream_kill(s);
	magnet_filters_teardown();
	mutex_unlock(&magnet_db.lock);
	WARN_ON(!list_empty(&magnet_db.points));
	idr_destroy(&magnet_ids);
}
