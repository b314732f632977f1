// SPDX-License-Identifier: GPL-2.0
/*
 * Synthesizers (docs/SYNTH.md): per key and per period, exact integer
 * moments of a quantity of one point's events, computed on the fast path
 * and written by magnetk as SYNTH records.
 *
 * Fast path (magnet_synth_feed(), interrupts off, rcu_read_lock_sched):
 * each synthesizer of the point (an RCU list, at most MAGNET_SYNTHS_MAX)
 * matches the event's keys, finds its key slot in a preallocated
 * open-addressing table (lock-free lookup; an insertion takes the
 * synthesizer's raw spinlock, at most max_keys times in its life) and
 * updates the key's moments under the key's raw spinlock: a few dozen
 * instructions, no allocation, no sleeping.  NMIs are only counted.
 *
 * Periods: period p covers [start + p P, start + (p + 1) P); an event
 * belongs to the period of its timestamp, read once in __magnet_add().
 * Each key holds the moments of its current period (@cur) and of one
 * closed period magnetk has not emitted yet (@done); an event of a later
 * period moves @cur to @done (merging, and flagging, only if magnetk
 * fell more than a period behind).
 *
 * The emitter, a thread of its own (magnetk-synth, magnet_synth_tick()),
 * reads the clock, waits for every event that may have read an earlier
 * time (synchronize_rcu(): events run in rcu_read_lock_sched sections with
 * interrupts off) and emits every closed period.  Hence no event of an
 * emitted period can still arrive.  It takes synths_lock, not db.lock: a
 * control request that runs for seconds in magnetk (a correlator
 * attaching or detaching its hooks, each detach waiting for an RCU-tasks
 * grace period) does not hold the periods back.
 *
 * Locking: magnet_synths changes with db.lock and synths_lock both held
 * (in that order), so holding either one reads it safely; synths_lock
 * also makes an emission and a synthesizer's removal exclusive.
 */
#include <linux/kprobes.h>
#include <linux/cgroup.h>
#include <linux/hardirq.h>
#include <linux/hashtable.h>
#include <linux/jhash.h>
#include <linux/jiffies.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/timekeeping.h>
#include "synth.h"
#include "compat.h"

LIST_HEAD(magnet_synths);
static DEFINE_MUTEX(synths_lock);

/*
 * Synthesizers of one socket (@owner: sockstat's, seven per watched
 * socket, up to 32 sockets) hash by that socket instead of sitting on
 * their point's list, which every event of the point walks with
 * interrupts off: an event looks at its own socket's bucket only, so the
 * walk stays the user's synthesizers (at most 64) plus a few, not 224
 * more.  Linked and unlinked by magnetk (db.lock), read under
 * rcu_read_lock_sched.
 */
#define SYNTH_OWNED_BITS	7
static DEFINE_HASHTABLE(synth_owned, SYNTH_OWNED_BITS);
static unsigned int magnet_nr_synths;

/*
 * @gfp: GFP_KERNEL, or GFP_KERNEL_ACCOUNT for a synthesizer made on
 * behalf of an unprivileged caller (sockstat), allocated in its context.
 */
struct magnet_synth *magnet_synth_alloc_gfp(u32 max_keys, gfp_t gfp)
{
	struct magnet_synth *sy = kzalloc(sizeof(*sy), gfp);
	u32 i, hsize = roundup_pow_of_two(max_keys * 2);

	if (!sy)
		return NULL;
	raw_spin_lock_init(&sy->ins_lock);
	sy->max_keys = max_keys;
	sy->hmask = hsize - 1;
	sy->cnt = alloc_percpu_gfp(struct magnet_synth_cnt, gfp);
	sy->slots = kvcalloc(hsize, sizeof(*sy->slots), gfp);
	sy->keys = kvcalloc(max_keys, sizeof(*sy->keys), gfp);
	if (!sy->cnt || !sy->slots || !sy->keys) {
		magnet_synth_free(sy);
		return NULL;
	}
	for (i = 0; i < max_keys; i++)
		raw_spin_lock_init(&sy->keys[i].lock);
	return sy;
}

struct magnet_synth *magnet_synth_alloc(u32 max_keys)
{
	return magnet_synth_alloc_gfp(max_keys, GFP_KERNEL);
}

/* @sy is unlinked (or never was) and no reader can see it. */
void magnet_synth_free(struct magnet_synth *sy)
{
	if (!sy)
		return;
	if (sy->stream)
		magnet_stream_put(sy->stream);
	free_percpu(sy->cnt);
	kvfree(sy->slots);
	kvfree(sy->keys);
	kfree(sy);
}

struct magnet_synth *magnet_synth_find(const char *name)
{
	struct magnet_synth *sy;

	lockdep_assert_held(&magnet_db.lock);
	list_for_each_entry(sy, &magnet_synths, node)
		if (sy->stream && !strcmp(sy->name, name))
			return sy;
	return NULL;
}

unsigned int magnet_synth_count(void)
{
	return magnet_nr_synths;
}

u32 magnet_synth_nr_keys(struct magnet_synth *sy)
{
	/* pairs with the release in skey_get(): keys below are complete */
	return smp_load_acquire(&sy->nr_keys);
}

void magnet_synth_read_cnt(struct magnet_synth *sy,
			   struct magnet_synth_cnt *sum)
{
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		struct magnet_synth_cnt *c = per_cpu_ptr(sy->cnt, cpu);

		sum->matched += READ_ONCE(c->matched);
		sum->overflow += READ_ONCE(c->overflow);
		sum->shrt += READ_ONCE(c->shrt);
		sum->nmi += READ_ONCE(c->nmi);
		sum->reordered += READ_ONCE(c->reordered);
		sum->late += READ_ONCE(c->late);
		sum->missed += READ_ONCE(c->missed);
	}
}

/* ---- key table --------------------------------------------------------- */

static notrace u32 skey_hash(const struct magnet_fkey *k)
{
	u32 w[8] = {
		k->event, k->cpu, k->pid, k->tgid,
		(u32)k->abstract_id, (u32)(k->abstract_id >> 32),
		(u32)k->cgroup, (u32)(k->cgroup >> 32),
	};

	return jhash2(w, ARRAY_SIZE(w), 0x6d61676e);
}
NOKPROBE_SYMBOL(skey_hash);

static notrace bool skey_eq(const struct magnet_fkey *a, const struct magnet_fkey *b)
{
	return a->event == b->event && a->cpu == b->cpu && a->pid == b->pid &&
	       a->tgid == b->tgid && a->abstract_id == b->abstract_id &&
	       a->cgroup == b->cgroup;
}
NOKPROBE_SYMBOL(skey_eq);

/* Slot of @k: its index + 1, or 0 (and *@free the empty slot) if absent. */
static notrace u32 skey_lookup(struct magnet_synth *sy, const struct magnet_fkey *k,
		      u32 h, u32 *free)
{
	u32 i, pos, idx;

	for (i = 0; i <= sy->hmask; i++) {
		pos = (h + i) & sy->hmask;
		/* pairs with smp_store_release() in skey_get() */
		idx = smp_load_acquire(&sy->slots[pos]);
		if (!idx) {
			*free = pos;
			return 0;
		}
		if (skey_eq(&sy->keys[idx - 1].key, k))
			return idx;
	}
	*free = ~0u;	/* cannot happen: the table is at most half full */
	return 0;
}
NOKPROBE_SYMBOL(skey_lookup);

/* The key's state, created on first sight; NULL when all slots are used. */
static notrace struct magnet_synth_key *skey_get(struct magnet_synth *sy,
					const struct magnet_fkey *k, u64 p)
{
	struct magnet_synth_key *e = NULL;
	u32 h = skey_hash(k), idx, free;

	idx = skey_lookup(sy, k, h, &free);
	if (likely(idx))
		return &sy->keys[idx - 1];
	raw_spin_lock(&sy->ins_lock);
	idx = skey_lookup(sy, k, h, &free);
	if (idx) {
		e = &sy->keys[idx - 1];
	} else if (sy->nr_keys < sy->max_keys && free != ~0u) {
		e = &sy->keys[sy->nr_keys];
		e->key = *k;
		e->cp = p;
		magnet_moments_reset(&e->cur);
		magnet_moments_reset(&e->done);
		/* the key is complete before anyone can find it */
		smp_store_release(&sy->slots[free], sy->nr_keys + 1);
		/* for magnetk's and the queries' walks over keys[] */
		smp_store_release(&sy->nr_keys, sy->nr_keys + 1);
	}
	raw_spin_unlock(&sy->ins_lock);
	return e;
}
NOKPROBE_SYMBOL(skey_get);

/* ---- fast path: interrupts off, rcu_read_lock_sched ---------------------- */

static notrace void synth_account(struct magnet_synth *sy, const struct magnet_fkey *ev,
			  u16 len, const void *payload, u64 now)
{
	struct magnet_fkey k = { .mask = sy->group };
	struct magnet_synth_key *e;
	u64 x = 0, p;
	u32 g = sy->group;

	if (sy->quantity == MAGNET_SYNTH_Q_FIELD) {
		if (sy->off + sy->width > len) {
			this_cpu_inc(sy->cnt->shrt);
			return;
		}
		x = magnet_synth_field(payload, sy->off, sy->width);
	} else if (sy->quantity == MAGNET_SYNTH_Q_SIZE) {
		x = ALIGN(MAGNET_REC_HDR_SIZE + len, MAGNET_REC_ALIGN);
	}
	if (g & MAGNET_SYNTH_K_EVENT)
		k.event = ev->event;
	if (g & MAGNET_SYNTH_K_CPU)
		k.cpu = ev->cpu;
	if (g & MAGNET_SYNTH_K_AID)
		k.abstract_id = ev->abstract_id;
	if (g & MAGNET_SYNTH_K_PID)
		k.pid = ev->pid;
	if (g & MAGNET_SYNTH_K_TGID)
		k.tgid = ev->tgid;
	if (g & MAGNET_SYNTH_K_CGROUP)
		k.cgroup = ev->cgroup;
	p = magnet_synth_period_of(now, sy->start, sy->period);
	e = skey_get(sy, &k, p);
	if (unlikely(!e)) {
		this_cpu_inc(sy->cnt->overflow);
		return;
	}

	raw_spin_lock(&e->lock);
	if (sy->quantity == MAGNET_SYNTH_Q_INTERVAL) {
		if (!e->has_last) {
			/* the key's first event: the reference, no sample */
			e->has_last = true;
			e->last_ts = now;
			goto out;
		}
		if (unlikely(now < e->last_ts)) {
			/* two CPUs raced on one key: no sample, counted */
			this_cpu_inc(sy->cnt->reordered);
			goto out;
		}
		x = now - e->last_ts;
		e->last_ts = now;
	}
	if (p > e->cp) {
		if (e->cur.count) {
			if (e->done_valid) {
				/* magnetk is more than a period behind */
				magnet_moments_merge(&e->done, &e->cur);
				e->dp_last = e->cp;
			} else {
				e->done = e->cur;
				e->dp_first = e->cp;
				e->dp_last = e->cp;
				e->done_valid = true;
			}
			magnet_moments_reset(&e->cur);
		}
		e->cp = p;
	} else if (unlikely(p < e->cp)) {
		/* its period was emitted already: counted in the open one */
		this_cpu_inc(sy->cnt->late);
	}
	magnet_moments_add(&e->cur, x);
	e->total_count++;
	if (e->total_sum_lo + x < e->total_sum_lo)
		e->total_sum_hi++;
	e->total_sum_lo += x;
out:
	raw_spin_unlock(&e->lock);
}
NOKPROBE_SYMBOL(synth_account);

/* @sy's flag condition (internal synthesizers): a short payload fails it */
static __always_inline bool synth_flags_want(const struct magnet_synth *sy,
					     const void *payload, u16 len)
{
	u16 v;

	if (sy->flag_off + sizeof(v) > len)
		return false;
	memcpy(&v, (const u8 *)payload + sy->flag_off, sizeof(v));
	return (v & sy->flag_mask) == sy->flag_want;
}

/* One synthesizer's share of an event (interrupts off). */
static __always_inline void synth_feed_one(struct magnet_synth *sy,
					   struct magnet_fkey *ev, bool *cg,
					   const void *payload, u16 len,
					   u64 now, const struct magnet_who *w)
{
	if (unlikely(in_nmi())) {
		this_cpu_inc(sy->cnt->nmi);
		return;
	}
	if (unlikely((sy->match.mask | sy->group) & MAGNET_FK_CGROUP) &&
	    !*cg) {
		magnet_event_cgroup(ev, w->owner);
		*cg = true;
	}
	/* exactly the events of [start, end): see insert/remove */
	if (now < READ_ONCE(sy->start) || now >= READ_ONCE(sy->end))
		return;
	if (!magnet_fkey_match(&sy->match, ev))
		return;
	if (unlikely(sy->flag_mask) && !synth_flags_want(sy, payload, len))
		return;
	this_cpu_inc(sy->cnt->matched);
	synth_account(sy, ev, len, payload, now);
}

notrace void magnet_synth_feed(struct magnet_point *pt, u64 abstract_id,
		       const void *payload, u16 len, u64 now,
		       const struct magnet_who *w)
{
	struct magnet_fkey ev = {
		.event = pt->id,
		.cpu = raw_smp_processor_id(),
		.abstract_id = abstract_id,
	};
	struct magnet_synth *sy;
	bool cg = false;

	magnet_event_task(&ev, w);
	/* the caller's rcu_read_lock_sched keeps the cgroup valid (filter.c) */
	hlist_for_each_entry_rcu(sy, &pt->synths, pnode)
		synth_feed_one(sy, &ev, &cg, payload, len, now, w);
	if (!w->owner || !READ_ONCE(pt->owned))
		return;
	hash_for_each_possible_rcu(synth_owned, sy, pnode,
				   (unsigned long)w->owner)
		if (sy->owner == w->owner && sy->pt == pt)
			synth_feed_one(sy, &ev, &cg, payload, len, now, w);
}
NOKPROBE_SYMBOL(magnet_synth_feed);

/* @n events missed by @pt's synthesizers that read every socket */
static __always_inline void synth_missed_all_sockets(struct magnet_point *pt,
						     u64 n)
{
	struct magnet_synth *sy;

	hlist_for_each_entry_rcu(sy, &pt->synths, pnode)
		this_cpu_add(sy->cnt->missed, n);
}

/*
 * Events of @pt that never reached its synthesizers: the hook missed them
 * (ops->missed, magnet_add_lost()).  Which socket a missed call was about
 * is not known, so every synthesizer of one socket on @pt counts them too.
 * Any context; callers hold rcu_read_lock_sched.
 */
notrace void magnet_synth_missed(struct magnet_point *pt, u64 n)
{
	struct magnet_synth *sy;
	unsigned int b;

	synth_missed_all_sockets(pt, n);
	if (!READ_ONCE(pt->owned))
		return;
	hash_for_each_rcu(synth_owned, b, sy, pnode)
		if (sy->pt == pt)
			this_cpu_add(sy->cnt->missed, n);
}
NOKPROBE_SYMBOL(magnet_synth_missed);

/*
 * One event of @pt that began inside a write on its CPU (add.c,
 * magnet_add_nested()): its socket @owner (or NULL) is known, so only the
 * synthesizers it would have been fed to count it.  Any context, under
 * rcu_read_lock_sched.
 */
notrace void magnet_synth_missed_one(struct magnet_point *pt,
				     const struct sock *owner)
{
	struct magnet_synth *sy;

	synth_missed_all_sockets(pt, 1);
	if (!owner || !READ_ONCE(pt->owned))
		return;
	hash_for_each_possible_rcu(synth_owned, sy, pnode,
				   (unsigned long)owner)
		if (sy->owner == owner && sy->pt == pt)
			this_cpu_inc(sy->cnt->missed);
}
NOKPROBE_SYMBOL(magnet_synth_missed_one);

/* ---- emission (the emitter, synths_lock) ------------------------------ */

static void synth_emit(struct magnet_synth *sy, struct magnet_synth_key *e,
		       const struct magnet_moments *m, u64 first, u64 last,
		       u64 end, u32 flags)
{
	struct magnet_synth_payload rec = { };
	u32 dflags;

	if (!sy->stream)	/* internal: its owner reads the keys */
		return;
	strscpy(rec.name, sy->name, sizeof(rec.name));
	rec.period_start = sy->start + first * sy->period;
	rec.period_end = end ?: sy->start + (last + 1) * sy->period;
	rec.count = m->count;
	rec.min = m->min;
	rec.max = m->max;
	rec.sum_lo = m->sum_lo;
	rec.sum_hi = m->sum_hi;
	rec.sumsq_lo = m->sq_lo;
	rec.sumsq_hi = m->sq_hi;
	dflags = magnet_moments_derive(m, &rec.mean, &rec.variance, NULL,
				       NULL);
	rec.cgroup = e->key.cgroup;
	rec.abstract_id = e->key.abstract_id;
	rec.event = e->key.event;
	rec.cpu = e->key.cpu;
	rec.pid = e->key.pid;
	rec.tgid = e->key.tgid;
	rec.group = sy->group;
	rec.flags = flags | dflags | (last > first ? MAGNET_SYNTH_F_MERGED : 0);
	rec.quantity = sy->quantity;
	/* the header names magnetk, the writer (docs/FORMAT.md) */
	if (magnet_write_core(sy->stream, MAGNET_EVENT_SYNTH,
			      rec.abstract_id, current->pid, current->tgid,
			      &rec, sizeof(rec)))
		sy->records++;
	else
		sy->records_lost++;
}

/*
 * Emit every period of @sy before period @pnow (all of them when
 * @final: the open one flagged PARTIAL, ending at @now).  Every event
 * that read a clock value before @now has finished (the caller waited).
 */
static void synth_harvest(struct magnet_synth *sy, u64 now, bool final)
{
	u64 pnow = magnet_synth_period_of(now, sy->start, sy->period);
	u32 i, n = magnet_synth_nr_keys(sy);
	struct magnet_moments done, cur;
	u64 df, dl, cp;
	bool have_done, have_cur;
	unsigned long flags;

	for (i = 0; i < n; i++) {
		struct magnet_synth_key *e = &sy->keys[i];

		raw_spin_lock_irqsave(&e->lock, flags);
		/* a merged @done may reach past @now: it waits then */
		have_done = e->done_valid && (final || e->dp_last < pnow);
		if (have_done) {
			done = e->done;
			df = e->dp_first;
			dl = e->dp_last;
			e->done_valid = false;
			magnet_moments_reset(&e->done);
		}
		have_cur = e->cur.count && (final || e->cp < pnow);
		if (have_cur) {
			cur = e->cur;
			cp = e->cp;
			magnet_moments_reset(&e->cur);
			if (e->cp < pnow)
				e->cp = pnow;
		}
		raw_spin_unlock_irqrestore(&e->lock, flags);
		if (have_done)
			synth_emit(sy, e, &done, df, dl, 0, 0);
		if (have_cur)
			synth_emit(sy, e, &cur, cp, cp,
				   cp >= pnow ? now : 0,
				   cp >= pnow ? MAGNET_SYNTH_F_PARTIAL : 0);
		cond_resched();
	}
}

static void synth_set_due(struct magnet_synth *sy, u64 now)
{
	u64 pnow = magnet_synth_period_of(now, sy->start, sy->period);

	sy->next_due = sy->start + (pnow + 1) * sy->period;
}

/*
 * The emitter's work (magnetk-synth): emit the closed periods of every
 * synthesizer whose period ended.  Returns the jiffies until the next
 * period ends (MAX_SCHEDULE_TIMEOUT when there is no synthesizer).
 */
long magnet_synth_tick(void)
{
	struct magnet_synth *sy;
	u64 now, next = U64_MAX;
	bool due = false;

	mutex_lock(&synths_lock);
	now = ktime_get_mono_fast_ns();
	list_for_each_entry(sy, &magnet_synths, node)
		if (now >= sy->next_due)
			due = true;
	if (due) {
		/*
		 * Every event that read a time before @now has finished.
		 * Expedited: a normal grace period can take longer than a
		 * short period, and magnetk would fall behind (MERGED).
		 */
		synchronize_rcu_expedited();
		list_for_each_entry(sy, &magnet_synths, node) {
			if (now < sy->next_due)
				continue;
			synth_harvest(sy, now, false);
			synth_set_due(sy, now);
		}
	}
	list_for_each_entry(sy, &magnet_synths, node)
		next = min(next, sy->next_due);
	mutex_unlock(&synths_lock);
	if (next == U64_MAX)
		return MAX_SCHEDULE_TIMEOUT;
	now = ktime_get_mono_fast_ns();
	if (next <= now)
		return 1;
	/* one jiffy late rather than early */
	return nsecs_to_jiffies(next - now) + 1;
}

/* ---- creation and removal (magnetk, db.lock) ------------------------- */

/* Where an event of its point finds @sy: its point's list or by owner. */
static void synth_link(struct magnet_synth *sy)
{
	if (!sy->owner) {
		hlist_add_head_rcu(&sy->pnode, &sy->pt->synths);
		return;
	}
	hash_add_rcu(synth_owned, &sy->pnode, (unsigned long)sy->owner);
	WRITE_ONCE(sy->pt->owned, sy->pt->owned + 1);
}

static void synth_unlink(struct magnet_synth *sy)
{
	hash_del_rcu(&sy->pnode);	/* hlist_del_rcu() either way */
	if (sy->owner)
		WRITE_ONCE(sy->pt->owned, sy->pt->owned - 1);
}

/*
 * Link the @n synthesizers of @sys at once; each counts exactly the events
 * whose timestamp is at least their common start, read after every event
 * that could have missed the links has finished (the events before it are
 * ignored by the check in magnet_synth_feed()).  One grace period for all:
 * a sockstat watch inserts seven, and a grace period can take a tenth of a
 * second (PREEMPT_RT under emulation: more), which the watcher and every
 * request queued behind it in magnetk wait for.  On failure none is
 * linked and the caller still owns them all.
 */
int magnet_synth_insert_many(struct magnet_synth *const *sys, unsigned int n,
			     struct netlink_ext_ack *extack)
{
	struct magnet_synth *sy;
	unsigned int i;
	u64 start;
	int err = 0;

	lockdep_assert_held(&magnet_db.lock);
	for (i = 0; i < n; i++) {
		sy = sys[i];
		sy->start = U64_MAX;
		sy->end = U64_MAX;
		magnet_db_point_join(sy->pt);
		synth_link(sy);
		err = magnet_db_point_get(sy->pt, extack);
		if (err) {
			synth_unlink(sy);
			break;
		}
	}
	if (err) {
		while (i--) {
			synth_unlink(sys[i]);
			magnet_db_point_put(sys[i]->pt);
		}
		synchronize_rcu();
		return err;
	}
	synchronize_rcu();
	start = ktime_get_mono_fast_ns();
	mutex_lock(&synths_lock);
	for (i = 0; i < n; i++) {
		sy = sys[i];
		WRITE_ONCE(sy->start, start);
		synth_set_due(sy, start);
		list_add_tail(&sy->node, &magnet_synths);
		if (sy->stream)
			magnet_nr_synths++;
	}
	mutex_unlock(&synths_lock);
	/* its first period may end before the emitter's next wake-up */
	magnetk_synth_kick();
	return 0;
}

int magnet_synth_insert(struct magnet_synth *sy,
			struct netlink_ext_ack *extack)
{
	return magnet_synth_insert_many(&sy, 1, extack);
}

/*
 * Close every synthesizer on @doomed (moved there from magnet_synths with
 * synths_lock held: the emitter no longer sees them) at one @end: each
 * counted exactly the events of [start, end).  Wait for those still
 * running, emit what each holds (the open period flagged PARTIAL, ending
 * at @end) into its stream, unlink and free them: two grace periods
 * however many there are.
 */
static void synth_remove_list(struct list_head *doomed)
{
	struct magnet_synth *sy, *tmp;
	u64 end;

	if (list_empty(doomed))
		return;
	end = ktime_get_mono_fast_ns();
	list_for_each_entry(sy, doomed, node)
		WRITE_ONCE(sy->end, end);
	synchronize_rcu();
	list_for_each_entry(sy, doomed, node) {
		synth_harvest(sy, end, true);
		synth_unlink(sy);
		if (sy->stream)
			magnet_nr_synths--;
		magnet_db_point_put(sy->pt);
	}
	synchronize_rcu();
	list_for_each_entry_safe(sy, tmp, doomed, node) {
		list_del(&sy->node);
		if (sy->gone)
			sy->gone(sy);
		magnet_synth_free(sy);
	}
}

/* Remove the @n synthesizers of @sys (linked ones) at once. */
void magnet_synth_remove_many(struct magnet_synth *const *sys, unsigned int n)
{
	LIST_HEAD(doomed);
	unsigned int i;

	lockdep_assert_held(&magnet_db.lock);
	mutex_lock(&synths_lock);
	for (i = 0; i < n; i++)
		list_move_tail(&sys[i]->node, &doomed);
	mutex_unlock(&synths_lock);
	synth_remove_list(&doomed);
}

void magnet_synth_remove(struct magnet_synth *sy)
{
	magnet_synth_remove_many(&sy, 1);
}

/* The synthesizers of magnet_synths that @match(sy, arg) picks, at once. */
static void synths_remove_if(bool (*match)(struct magnet_synth *sy,
					   const void *arg),
			     const void *arg)
{
	struct magnet_synth *sy, *tmp;
	LIST_HEAD(doomed);

	lockdep_assert_held(&magnet_db.lock);
	mutex_lock(&synths_lock);
	list_for_each_entry_safe(sy, tmp, &magnet_synths, node)
		if (!match || match(sy, arg))
			list_move_tail(&sy->node, &doomed);
	mutex_unlock(&synths_lock);
	synth_remove_list(&doomed);
}

static bool synth_of_stream(struct magnet_synth *sy, const void *s)
{
	return sy->stream == s;
}

static bool synth_of_point(struct magnet_synth *sy, const void *pt)
{
	return sy->pt == pt;
}

void magnet_synths_stream_gone(struct magnet_stream *s)
{
	synths_remove_if(synth_of_stream, s);
}

void magnet_synths_point_gone(struct magnet_point *pt)
{
	synths_remove_if(synth_of_point, pt);
}

void magnet_synths_teardown(void)
{
	synths_remove_if(NULL, NULL);
}

/* ---- queries (db.lock) ------------------------------------------------- */

int magnet_synth_key_find(struct magnet_synth *sy, const struct magnet_fkey *k)
{
	u32 free;

	return (int)skey_lookup(sy, k, skey_hash(k), &free) - 1;
}

/*
 * Key @i's open-period values (zero when its period has ended: those
 * wait for magnetk) and its totals, in @out; @open_start the open
 * period's start.
 */
void magnet_synth_key_values(struct magnet_synth *sy, u32 i,
			     struct magnet_synth_key *out, u64 *open_start)
{
	struct magnet_synth_key *e = &sy->keys[i];
	u64 pnow = magnet_synth_period_of(ktime_get_mono_fast_ns(),
					  sy->start, sy->period);
	unsigned long flags;

	raw_spin_lock_irqsave(&e->lock, flags);
	out->key = e->key;
	out->cp = e->cp;
	out->total_count = e->total_count;
	out->total_sum_lo = e->total_sum_lo;
	out->total_sum_hi = e->total_sum_hi;
	if (e->cp >= pnow)
		out->cur = e->cur;
	else
		magnet_moments_reset(&out->cur);
	raw_spin_unlock_irqrestore(&e->lock, flags);
	*open_start = sy->start + pnow * sy->period;
}
