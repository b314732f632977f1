// SPDX-License-Identifier: GPL-2.0
/*
 * Filters on the fast path.
 *
 * One global table of MAGNET_FTAB_SIZE RCU-protected chains indexed by
 * event ID, plus one chain for filters whose event is a wildcard.  Each
 * chain is sorted by precedence (filter_core.h), so the first match of a
 * chain is its best; the event's filter is the better of the first match
 * in its event's chain and the first in the wildcard chain.  Work per
 * event is bounded by MAGNET_FILTERS_MAX and costs one load when no
 * filter exists.  Writers (magnetk, under db.lock) link and unlink with
 * the _rcu list primitives and free only after synchronize_rcu(), which
 * also waits for magnet_add()'s rcu_read_lock_sched sections.
 *
 * The decision is made before any payload is copied: a dropped or
 * unsampled event costs the lookup and three per-CPU counter increments.
 */
#include <linux/kprobes.h>
#include <linux/cgroup.h>
#include <linux/hardirq.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/timekeeping.h>
#include <net/sock.h>
#include "filter.h"

#define MAGNET_FTAB_BITS	6
#define MAGNET_FTAB_SIZE	(1 << MAGNET_FTAB_BITS)
#define MAGNET_FTAB_WILD	MAGNET_FTAB_SIZE

static struct hlist_head magnet_ftab[MAGNET_FTAB_SIZE + 1];
LIST_HEAD(magnet_filters);
static unsigned int magnet_nr_filters;
static unsigned int magnet_nr_cgroup_filters;
static u32 magnet_filter_seq;

/* Non-zero while any filter exists: the one load of the fast path. */
int magnet_filters_active;
EXPORT_SYMBOL_GPL(magnet_filters_active);

static notrace struct hlist_head *ftab_chain(const struct magnet_fkey *k)
{
	if (!(k->mask & MAGNET_FK_EVENT))
		return &magnet_ftab[MAGNET_FTAB_WILD];
	return &magnet_ftab[k->event & (MAGNET_FTAB_SIZE - 1)];
}
NOKPROBE_SYMBOL(ftab_chain);

static bool filter_before(const struct magnet_filter *a,
			  const struct magnet_filter *b)
{
	return magnet_filter_before(a->spec, a->priority, a->seq,
				    b->spec, b->priority, b->seq);
}

struct magnet_filter *magnet_filter_alloc(void)
{
	struct magnet_filter *f = kzalloc(sizeof(*f), GFP_KERNEL);

	if (!f)
		return NULL;
	f->cnt = alloc_percpu(struct magnet_filter_cnt);
	if (!f->cnt) {
		kfree(f);
		return NULL;
	}
	return f;
}

/* @f is unlinked (or never was) and no reader can see it. */
void magnet_filter_free(struct magnet_filter *f)
{
	unsigned int i;

	if (!f)
		return;
	for (i = 0; i < f->nr_streams; i++)
		magnet_stream_put(f->streams[i]);
	free_percpu(f->cnt);
	kfree(f);
}

struct magnet_filter *magnet_filter_find(const char *name)
{
	struct magnet_filter *f;

	lockdep_assert_held(&magnet_db.lock);
	list_for_each_entry(f, &magnet_filters, node)
		if (!strcmp(f->name, name))
			return f;
	return NULL;
}

unsigned int magnet_filter_count(void)
{
	return magnet_nr_filters;
}

/* Link @f into its chain at its place in precedence order. */
void magnet_filter_insert(struct magnet_filter *f)
{
	struct hlist_head *h = ftab_chain(&f->key);
	struct magnet_filter *pos, *last = NULL;

	lockdep_assert_held(&magnet_db.lock);
	f->seq = magnet_filter_seq++;
	f->spec = magnet_fkey_spec(f->key.mask);
	atomic64_set(&f->seen, 0);
	atomic64_set(&f->next_ns, 0);
	list_add_tail(&f->node, &magnet_filters);
	magnet_nr_filters++;
	if (f->key.mask & MAGNET_FK_CGROUP)
		magnet_nr_cgroup_filters++;
	hlist_for_each_entry(pos, h, hnode) {
		if (filter_before(f, pos)) {
			hlist_add_before_rcu(&f->hnode, &pos->hnode);
			goto linked;
		}
		last = pos;
	}
	if (last)
		hlist_add_behind_rcu(&f->hnode, &last->hnode);
	else
		hlist_add_head_rcu(&f->hnode, h);
linked:
	WRITE_ONCE(magnet_filters_active, 1);
}

/*
 * Unlink @f and free it once no magnet_add() can still use it.  Events
 * it already passed on are in their rings: nothing delivered is lost.
 */
void magnet_filter_remove(struct magnet_filter *f)
{
	lockdep_assert_held(&magnet_db.lock);
	hlist_del_rcu(&f->hnode);
	list_del(&f->node);
	magnet_nr_filters--;
	if (f->key.mask & MAGNET_FK_CGROUP)
		magnet_nr_cgroup_filters--;
	if (!magnet_nr_filters)
		WRITE_ONCE(magnet_filters_active, 0);
	synchronize_rcu();
	magnet_filter_free(f);
}

/* A stream goes away: so do the filters that deliver into it. */
void magnet_filters_stream_gone(struct magnet_stream *s)
{
	struct magnet_filter *f, *tmp;
	unsigned int i;

	lockdep_assert_held(&magnet_db.lock);
	list_for_each_entry_safe(f, tmp, &magnet_filters, node) {
		for (i = 0; i < f->nr_streams; i++) {
			if (f->streams[i] == s) {
				magnet_filter_remove(f);
				break;
			}
		}
	}
}

void magnet_filters_teardown(void)
{
	struct magnet_filter *f, *tmp;

	lockdep_assert_held(&magnet_db.lock);
	list_for_each_entry_safe(f, tmp, &magnet_filters, node)
		magnet_filter_remove(f);
}

void magnet_filter_read_cnt(struct magnet_filter *f,
			    struct magnet_filter_cnt *sum)
{
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		struct magnet_filter_cnt *c = per_cpu_ptr(f->cnt, cpu);

		sum->matched += READ_ONCE(c->matched);
		sum->delivered += READ_ONCE(c->delivered);
		sum->dropped += READ_ONCE(c->dropped);
	}
}

/* ---- fast path: rcu_read_lock_sched held, not in NMI ----------------- */

/*
 * The task of an event for pid and tgid keys: the current one in task
 * context; in interrupt context the one @w names (the socket's last user,
 * sock_user.h), else none (0).
 */
notrace void magnet_event_task(struct magnet_fkey *ev,
			       const struct magnet_who *w)
{
	const u32 *who = magnet_who_ids(w);

	if (in_task()) {
		ev->pid = current->pid;
		ev->tgid = current->tgid;
	} else if (who) {
		ev->pid = who[0];
		ev->tgid = who[1];
	}
}
NOKPROBE_SYMBOL(magnet_event_task);

/*
 * The cgroup v2 an event is about, and its ID, for cgroup keys (filters
 * and synthesizers): the current task's in task context; in interrupt
 * context, where the interrupted task is not who the event is about, the
 * cgroup of @owner, the local socket the event is about (the cgroup its
 * creator was in, which the kernel keeps with the socket for cgroup BPF;
 * an accepted socket has its listener's), else none.  No rcu_read_lock()
 * of its own: the caller's rcu_read_lock_sched section keeps the cgroup
 * and its ancestors alive, since RCU's flavours are one (4.20) and the
 * grace period before a cgroup is freed waits for preemption-disabled
 * sections too; lockdep agrees (task_css_set_check() accepts
 * rcu_read_lock_sched_held()).  A socket holds its cgroup, and @owner is
 * held by the caller.  The fast path so takes no RCU read lock per event,
 * cgroup key or not.
 */
notrace void magnet_event_cgroup(struct magnet_fkey *ev,
				 const struct sock *owner)
{
#ifdef CONFIG_CGROUPS
	struct cgroup *c = NULL;

	if (in_task())
		c = task_dfl_cgroup(current);
#ifdef CONFIG_SOCK_CGROUP_DATA
	else if (owner)
		c = READ_ONCE(owner->sk_cgrp_data.cgroup);
#endif
	if (c) {
		ev->cgrp = c;
		ev->cgroup = cgroup_id(c);
	}
#endif
}
NOKPROBE_SYMBOL(magnet_event_cgroup);

static notrace struct magnet_filter *chain_first(struct hlist_head *h,
					 const struct magnet_fkey *ev)
{
	struct magnet_filter *f;

	hlist_for_each_entry_rcu(f, h, hnode)
		if (magnet_fkey_match(&f->key, ev))
			return f;
	return NULL;
}
NOKPROBE_SYMBOL(chain_first);

static notrace struct magnet_filter *magnet_filter_lookup(struct magnet_point *pt,
						  u64 abstract_id,
						  const struct magnet_who *who)
{
	struct magnet_fkey ev = {
		.event = pt->id,
		.cpu = raw_smp_processor_id(),
		.abstract_id = abstract_id,
	};
	struct magnet_filter *a, *w;

	magnet_event_task(&ev, who);
	/* the caller's rcu_read_lock_sched keeps the cgroup valid (above) */
	if (READ_ONCE(magnet_nr_cgroup_filters))
		magnet_event_cgroup(&ev, who ? who->owner : NULL);
	a = chain_first(&magnet_ftab[pt->id & (MAGNET_FTAB_SIZE - 1)], &ev);
	w = chain_first(&magnet_ftab[MAGNET_FTAB_WILD], &ev);
	if (!a)
		return w;
	if (!w)
		return a;
	return filter_before(a, w) ? a : w;
}
NOKPROBE_SYMBOL(magnet_filter_lookup);

static notrace void filter_refuse(struct magnet_filter *f)
{
	this_cpu_inc(f->cnt->dropped);
}
NOKPROBE_SYMBOL(filter_refuse);

/*
 * Route one event of @pt (whose stream is @s) through the filters.
 * Returns false when no filter matches: the caller writes it to @s.
 * *@now is CLOCK_MONOTONIC or 0 (not read yet); it is read here, at most
 * once and in the caller's irq-off section, only where a filter needs it:
 * to sample by time, or to give the copies of an event in several streams
 * one timestamp.  An event refused by key or count, or passed to one
 * stream, costs no clock read here; its ring stamps it (ring/clock.h).
 */
notrace bool magnet_filter_add(struct magnet_point *pt, struct magnet_stream *s,
		       u64 abstract_id, const void *payload, u16 len, u64 *now,
		       const struct magnet_who *w)
{
	struct magnet_filter *f;
	unsigned int i;
	u64 next;

	if (unlikely(in_nmi()))
		return false;
	f = magnet_filter_lookup(pt, abstract_id, w);
	if (!f)
		return false;
	this_cpu_inc(f->cnt->matched);
	if (f->action == MAGNET_FILTER_DROP)
		goto refuse;
	if (f->every > 1 &&
	    !magnet_sample_count_ok(atomic64_inc_return(&f->seen), f->every))
		goto refuse;
	if ((f->period || f->nr_streams > 1) && !*now)
		*now = ktime_get_mono_fast_ns();
	if (f->period) {
		next = atomic64_read(&f->next_ns);
		if (!magnet_sample_time_ok(*now, next) ||
		    atomic64_cmpxchg(&f->next_ns, next,
				     magnet_sample_time_next(*now, f->period)) != next)
			goto refuse;
	}
	this_cpu_inc(f->cnt->delivered);
	if (!f->nr_streams)
		magnet_write(pt, s, abstract_id, payload, len, *now, w);
	for (i = 0; i < f->nr_streams; i++)
		magnet_write(pt, f->streams[i], abstract_id, payload, len,
			     *now, w);
	return true;
refuse:
	filter_refuse(f);
	return true;
}
NOKPROBE_SYMBOL(magnet_filter_add);

/*
 * magnet_wants(): would a filter certainly refuse this event?  Only a
 * drop filter or a closed time-sampling window can say so without
 * consuming a sample; a refusal is counted here (hits, matched,
 * dropped) because the caller then does not call magnet_add().
 */
notrace bool __magnet_wants(struct magnet_point *pt, u64 abstract_id)
{
	struct magnet_filter *f;
	bool want = true;

	rcu_read_lock_sched_notrace();
	if (unlikely(in_nmi()))
		goto out;
	f = magnet_filter_lookup(pt, abstract_id, NULL);
	if (!f)
		goto out;
	if (f->action == MAGNET_FILTER_DROP ||
	    (f->period &&
	     !magnet_sample_time_ok(ktime_get_mono_fast_ns(),
				    atomic64_read(&f->next_ns)))) {
		this_cpu_inc(*pt->hits);
		this_cpu_inc(f->cnt->matched);
		filter_refuse(f);
		want = false;
	}
out:
	rcu_read_unlock_sched_notrace();
	return want;
}
EXPORT_SYMBOL_GPL(__magnet_wants);
NOKPROBE_SYMBOL(__magnet_wants);
