// SPDX-License-Identifier: GPL-2.0
/*
 * Correlators: the kernel-thread filters of paper 004 (docs/CORRELATE.md).
 *
 * A correlator taps the points of its chain into an internal stream of
 * its own (never a file; the points' hooks are attached for it even when
 * no user stream has them), and magnetk drains that stream every
 * MAGNET_CORR_TICK_MS through the kernel reader (magnetfs/kreader.c), in
 * timestamp order up to MAGNET_CORR_LAG_NS ago, feeds the matching core
 * (corr_core.h) and writes one MAGNET_EVENT_CORR record per closed chain
 * into its destination stream.  Nothing of this runs in the tracing path:
 * the hooks only write into the internal stream's per-CPU rings.
 *
 * Objects live on magnet_corrs under db.lock; creation, deletion and the
 * periodic work all run in magnetk.  CORR_NEW, CORR_DEL and CORR_GET (do
 * and dump) with attributes nested in MAGNET_A_CORR.
 */
#include <net/genetlink.h>
#include <linux/bitmap.h>
#include <linux/jiffies.h>
#include <linux/log2.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>
#include "internal.h"
#include "compat.h"
#include "corr_core.h"
#include "../magnetfs/kreader.h"

#define MAGNET_CORR_TICK_MS	2
/* records younger than this are left for the next run (see kreader.h) */
#define MAGNET_CORR_LAG_NS	(10 * NSEC_PER_MSEC)
#define MAGNET_CORR_IN_SUBBUF	(128u << 10)
#define MAGNET_CORR_IN_COUNT	4
#define MAGNET_CORR_DRAIN	4096	/* records per drain call */
#define MAGNET_CORR_PTS		(MAGNET_CORR_STEPS_MAX * MAGNET_CORR_ALTS_MAX)
#define MAGNET_CORR_REC_MAX	(sizeof(struct magnet_corr_rec) + \
				 MAGNET_CORR_STEPS_MAX * sizeof(struct magnet_corr_step))

struct magnet_corr {
	struct list_head node;		/* magnet_corrs, db.lock */
	char name[MAGNET_NAME_MAX];
	u32 id;
	struct magnet_stream *dest;	/* a reference */
	struct magnet_stream *in;	/* internal stream, ours */
	struct magnet_kreader kr;
	unsigned int npts;
	struct magnet_point *pts[MAGNET_CORR_PTS];	/* tapped */
	DECLARE_BITMAP(net, MAGNET_EVENT_MAX + 1);	/* NET payloads */
	struct mcc m;
	u64 records;
	u8 rec[MAGNET_CORR_REC_MAX];
	/* internal (kernel client, no @dest): closed chains go here */
	mcc_emit_fn kemit;
	void *karg;
};

static LIST_HEAD(magnet_corrs);
/*
 * All correlators (read locklessly by the tick), and those of netlink,
 * which MAGNET_CORRS_MAX bounds.  The internal ones (sockstat's two,
 * made by an unprivileged watch) have their own small budget: they
 * never take a place of root's, nor root's correlators theirs.
 */
static unsigned int magnet_nr_corrs;
static unsigned int magnet_nr_user_corrs;
#define MAGNET_CORRS_INTERNAL_MAX	4
static u32 magnet_corr_next_id = 1;

/* ---- running ---------------------------------------------------------- */

static void corr_emit(void *arg, const struct mcc_chain *ch, u32 reached,
		      u32 flags)
{
	struct magnet_corr *c = arg;

	if (!c->dest) {
		c->kemit(c->karg, ch, reached, flags);
		c->records++;
		return;
	}
	mcc_rec_fill(&c->m, c->id, ch, reached, flags, c->rec);
	magnet_write_core(c->dest, MAGNET_EVENT_CORR, ch->key, ch->pid,
			  ch->tgid, c->rec, mcc_rec_size(&c->m));
	c->records++;
}

static bool corr_rec(void *arg, const struct magnet_rec_hdr *h)
{
	struct magnet_corr *c = arg;
	u32 bytes = 0;

	/* LOST records: the kernel reader sums them */
	if (h->event < MAGNET_EVENT_FIRST_PROBE)
		return true;
	if (test_bit(h->event, c->net) &&
	    h->size >= MAGNET_REC_HDR_SIZE + sizeof(struct magnet_net_payload))
		bytes = ((const struct magnet_net_payload *)(h + 1))->len;
	mcc_event(&c->m, h->event, h->abstract_id, h->timestamp, h->pid,
		  h->tgid, bytes);
	return true;
}

/* Match everything recorded up to @horizon; then expire by it. */
static void corr_run(struct magnet_corr *c, u64 horizon)
{
	while (magnet_kreader_drain(&c->kr, horizon, MAGNET_CORR_DRAIN,
				    corr_rec, c) == MAGNET_CORR_DRAIN)
		cond_resched();
	/* every record up to @horizon is in: older chains cannot complete */
	if (horizon != U64_MAX)
		mcc_expire(&c->m, horizon);
}

long magnet_corrs_tick(void)
{
	struct magnet_corr *c;
	u64 now;

	if (!READ_ONCE(magnet_nr_corrs))
		return MAX_SCHEDULE_TIMEOUT;
	mutex_lock(&magnet_db.lock);
	now = ktime_get_mono_fast_ns();
	list_for_each_entry(c, &magnet_corrs, node)
		corr_run(c, now > MAGNET_CORR_LAG_NS ?
			 now - MAGNET_CORR_LAG_NS : 0);
	mutex_unlock(&magnet_db.lock);
	return max_t(long, msecs_to_jiffies(MAGNET_CORR_TICK_MS), 1);
}

/* ---- life cycle --------------------------------------------------------- */

static void corr_free(struct magnet_corr *c)
{
	magnet_kreader_close(&c->kr);
	if (c->in)
		magnet_stream_put(c->in);
	if (c->dest)
		magnet_stream_put(c->dest);
	kvfree(c->m.c);
	kvfree(c->m.hash);
	kfree(c);
}

/*
 * Stop the taps, then match everything they delivered and close the
 * chains still open (MAGNET_CORR_F_FLUSH): their records reach the
 * destination, which is still alive.  db.lock held.
 */
static void corr_destroy(struct magnet_corr *c)
{
	unsigned int i;

	for (i = 0; i < c->npts; i++)
		magnet_db_point_untap(c->pts[i], c->in);
	magnet_stream_flush(c->in);
	corr_run(c, U64_MAX);
	mcc_flush(&c->m, MAGNET_CORR_F_FLUSH);
	list_del(&c->node);
	WRITE_ONCE(magnet_nr_corrs, magnet_nr_corrs - 1);
	if (!c->kemit)
		magnet_nr_user_corrs--;
	corr_free(c);
}

void magnet_corrs_stream_gone(struct magnet_stream *s)
{
	struct magnet_corr *c, *tmp;

	lockdep_assert_held(&magnet_db.lock);
	list_for_each_entry_safe(c, tmp, &magnet_corrs, node)
		if (c->dest == s)
			corr_destroy(c);
}

/* A point is unregistered: its step gets no more events. */
void magnet_corrs_point_gone(struct magnet_point *pt)
{
	struct magnet_corr *c;
	unsigned int i;

	lockdep_assert_held(&magnet_db.lock);
	list_for_each_entry(c, &magnet_corrs, node) {
		for (i = 0; i < c->npts; i++) {
			if (c->pts[i] != pt)
				continue;
			magnet_db_point_untap(pt, c->in);
			c->pts[i] = c->pts[--c->npts];
			break;
		}
	}
}

void magnet_corrs_teardown(void)
{
	struct magnet_corr *c, *tmp;

	lockdep_assert_held(&magnet_db.lock);
	list_for_each_entry_safe(c, tmp, &magnet_corrs, node)
		corr_destroy(c);
}

static int corr_alloc_state(struct magnet_corr *c);

static struct magnet_corr *corr_find(const char *name)
{
	struct magnet_corr *c;

	lockdep_assert_held(&magnet_db.lock);
	list_for_each_entry(c, &magnet_corrs, node)
		if (c->dest && !strcmp(c->name, name))
			return c;
	return NULL;
}

/*
 * An internal correlator for a kernel client (kmod/sockstat.c): no
 * destination stream, closed chains handed to @emit in magnetk under
 * db.lock; not listed, not found by name.  @steps: @nsteps arrays of up
 * to MAGNET_CORR_ALTS_MAX point names (NULL-terminated); points that do
 * not exist are left out, a step left with none is -ENODEV.  db.lock held,
 * in magnetk.
 */
struct magnet_corr *magnet_corr_kernel_new(const char *name,
					   const char *const steps[][MAGNET_CORR_ALTS_MAX + 1],
					   unsigned int nsteps, u64 window,
					   mcc_emit_fn emit, void *arg)
{
	struct magnet_point *pt;
	struct magnet_corr *c;
	unsigned int i, k;
	int err;

	lockdep_assert_held(&magnet_db.lock);
	/* @emit: what makes it internal (kemit), counted apart */
	if (nsteps < MAGNET_CORR_STEPS_MIN || nsteps > MAGNET_CORR_STEPS_MAX ||
	    !emit)
		return ERR_PTR(-EINVAL);
	if (magnet_nr_corrs - magnet_nr_user_corrs >= MAGNET_CORRS_INTERNAL_MAX)
		return ERR_PTR(-ENOSPC);
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return ERR_PTR(-ENOMEM);
	strscpy(c->name, name, sizeof(c->name));
	for (i = 0; i < nsteps; i++) {
		for (k = 0; k < MAGNET_CORR_ALTS_MAX && steps[i][k]; k++) {
			pt = magnet_db_find_point(steps[i][k], 0);
			if (!pt)
				continue;
			if (pt->desc->payload == MAGNET_PAYLOAD_NET)
				__set_bit(pt->id, c->net);
			c->m.alt[i][c->m.nalt[i]++] = pt->id;
			c->pts[c->npts++] = pt;
		}
		err = -ENODEV;
		if (!c->m.nalt[i])
			goto err_free;
	}
	c->m.nsteps = nsteps;
	c->m.window = window;
	c->kemit = emit;
	c->karg = arg;
	err = corr_alloc_state(c);
	if (err)
		goto err_free;
	for (i = 0; i < c->npts; i++) {
		err = magnet_db_point_tap(c->pts[i], c->in, NULL);
		if (err) {
			while (i--)
				magnet_db_point_untap(c->pts[i], c->in);
			goto err_free;
		}
	}
	c->id = magnet_corr_next_id++;
	list_add_tail(&c->node, &magnet_corrs);
	WRITE_ONCE(magnet_nr_corrs, magnet_nr_corrs + 1);
	return c;

err_free:
	corr_free(c);
	return ERR_PTR(err);
}

/* Match what it holds (chains still open: MAGNET_CORR_F_FLUSH), free it. */
void magnet_corr_kernel_del(struct magnet_corr *c)
{
	lockdep_assert_held(&magnet_db.lock);
	corr_destroy(c);
}

/* ---- netlink ------------------------------------------------------------ */

static const struct nla_policy corr_step_policy[MAGNET_CORR_STEP_A_MAX + 1] = {
	[MAGNET_CORR_STEP_A_EVENT]	= NLA_POLICY_MAX(NLA_U32, MAGNET_EVENT_MAX),
};

const struct nla_policy magnet_corr_policy[MAGNET_CORR_A_MAX + 1] = {
	[MAGNET_CORR_A_NAME]	= { .type = NLA_NUL_STRING, .len = MAGNET_NAME_MAX - 1 },
	[MAGNET_CORR_A_STEP]	= NLA_POLICY_NESTED(corr_step_policy),
	[MAGNET_CORR_A_WINDOW]	= { .type = NLA_U64 },
	[MAGNET_CORR_A_STREAM]	= { .type = NLA_NUL_STRING, .len = MAGNET_NAME_MAX - 1 },
};

static int put_u64(struct sk_buff *skb, int type, u64 v)
{
	return nla_put_u64_64bit(skb, type, v, MAGNET_CORR_A_PAD);
}

static int put_corr(struct sk_buff *skb, void *obj)
{
	struct magnet_corr *c = obj;
	struct magnet_stream_stats in;
	struct nlattr *nest, *step;
	u32 i, k;

	magnet_stream_stats(c->in, &in);
	nest = nla_nest_start(skb, MAGNET_A_CORR);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_string(skb, MAGNET_CORR_A_NAME, c->name) ||
	    nla_put_u32(skb, MAGNET_CORR_A_ID, c->id))
		goto cancel;
	for (i = 0; i < c->m.nsteps; i++) {
		step = nla_nest_start(skb, MAGNET_CORR_A_STEP);
		if (!step)
			goto cancel;
		for (k = 0; k < c->m.nalt[i]; k++)
			if (nla_put_u32(skb, MAGNET_CORR_STEP_A_EVENT,
					c->m.alt[i][k]))
				goto cancel;
		nla_nest_end(skb, step);
	}
	if (put_u64(skb, MAGNET_CORR_A_WINDOW, c->m.window) ||
	    nla_put_string(skb, MAGNET_CORR_A_STREAM, c->dest->name) ||
	    put_u64(skb, MAGNET_CORR_A_EVENTS, c->m.st.events) ||
	    put_u64(skb, MAGNET_CORR_A_COMPLETED, c->m.st.completed) ||
	    put_u64(skb, MAGNET_CORR_A_EXPIRED, c->m.st.expired) ||
	    put_u64(skb, MAGNET_CORR_A_PARTIAL, c->m.st.partial) ||
	    put_u64(skb, MAGNET_CORR_A_OVERFLOW, c->m.st.overflow) ||
	    put_u64(skb, MAGNET_CORR_A_STRAY, c->m.st.stray) ||
	    put_u64(skb, MAGNET_CORR_A_LOST, in.lost) ||
	    put_u64(skb, MAGNET_CORR_A_LATE, c->kr.st.late) ||
	    nla_put_u32(skb, MAGNET_CORR_A_PENDING, c->m.pending) ||
	    put_u64(skb, MAGNET_CORR_A_RECORDS, c->records) ||
	    put_u64(skb, MAGNET_CORR_A_IN_WRITTEN, in.written) ||
	    put_u64(skb, MAGNET_CORR_A_IN_READ, in.read))
		goto cancel;
	nla_nest_end(skb, nest);
	return 0;
cancel:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

static int parse_nest(struct genl_info *info, struct nlattr **tb)
{
	struct nlattr *nest = info->attrs[MAGNET_A_CORR];
	int err;

	if (!nest) {
		NL_SET_ERR_MSG(info->extack,
			       "correlator attributes (MAGNET_A_CORR) are required");
		return -EINVAL;
	}
	err = nla_parse_nested(tb, MAGNET_CORR_A_MAX, nest, magnet_corr_policy,
			       info->extack);
	if (err)
		return err;
	if (!tb[MAGNET_CORR_A_NAME]) {
		magnet_set_err(info->extack, nest,
			       "a correlator name is required");
		return -EINVAL;
	}
	return 0;
}

static struct magnet_corr *lookup_corr(struct genl_info *info,
				       struct nlattr **tb)
{
	struct nlattr *na = tb[MAGNET_CORR_A_NAME];
	struct magnet_corr *c = corr_find(nla_data(na));

	if (!c)
		magnet_set_err(info->extack, na, "no correlator named '%s'",
			       (char *)nla_data(na));
	return c;
}

/* Is @id in steps 0..@last of the chain being built? */
static bool corr_has_point(struct magnet_corr *c, u32 last, u16 id)
{
	u32 i, k;

	for (i = 0; i <= last; i++)
		for (k = 0; k < c->m.nalt[i]; k++)
			if (c->m.alt[i][k] == id)
				return true;
	return false;
}

/* One STEP nest: its points, which must exist and be new to the chain. */
static int parse_step(struct genl_info *info, struct nlattr *a,
		      struct magnet_corr *c)
{
	u32 i = c->m.nsteps;
	struct magnet_point *pt;
	struct nlattr *e;
	int rem;

	if (i == MAGNET_CORR_STEPS_MAX) {
		magnet_set_err(info->extack, a,
			       "chain too long: at most %u steps",
			       MAGNET_CORR_STEPS_MAX);
		return -EINVAL;
	}
	nla_for_each_nested(e, a, rem) {
		u32 id;

		if (nla_type(e) != MAGNET_CORR_STEP_A_EVENT)
			continue;
		id = nla_get_u32(e);
		if (c->m.nalt[i] == MAGNET_CORR_ALTS_MAX) {
			magnet_set_err(info->extack, e,
				       "step %u: at most %u points", i + 1,
				       MAGNET_CORR_ALTS_MAX);
			return -EINVAL;
		}
		pt = magnet_db_find_point(NULL, id);
		if (!pt) {
			magnet_set_err(info->extack, e,
				       "unknown point: no probe has event ID %u",
				       id);
			return -ENOENT;
		}
		if (corr_has_point(c, i, id)) {
			magnet_set_err(info->extack, e,
				       "point '%s' is in the chain twice",
				       pt->desc->name);
			return -EINVAL;
		}
		if (pt->desc->payload == MAGNET_PAYLOAD_NET)
			__set_bit(id, c->net);
		c->m.alt[i][c->m.nalt[i]++] = id;
		c->pts[c->npts++] = pt;
	}
	if (!c->m.nalt[i]) {
		magnet_set_err(info->extack, a, "step %u names no point", i + 1);
		return -EINVAL;
	}
	c->m.nsteps = i + 1;
	return 0;
}

static int parse_chain(struct genl_info *info, struct magnet_corr *c)
{
	struct nlattr *nest = info->attrs[MAGNET_A_CORR], *a;
	int rem, err;

	nla_for_each_nested(a, nest, rem) {
		if (nla_type(a) != MAGNET_CORR_A_STEP)
			continue;
		err = parse_step(info, a, c);
		if (err)
			return err;
	}
	if (c->m.nsteps < MAGNET_CORR_STEPS_MIN) {
		magnet_set_err(info->extack, nest,
			       "chain too short: %u step(s), at least %u",
			       c->m.nsteps, MAGNET_CORR_STEPS_MIN);
		return -EINVAL;
	}
	return 0;
}

static int corr_alloc_state(struct magnet_corr *c)
{
	c->m.cap = MAGNET_CORR_PENDING_MAX;
	c->m.nbuckets = roundup_pow_of_two(MAGNET_CORR_PENDING_MAX);
	c->m.c = kvcalloc(c->m.cap, sizeof(*c->m.c), GFP_KERNEL);
	c->m.hash = kvcalloc(c->m.nbuckets, sizeof(*c->m.hash), GFP_KERNEL);
	if (!c->m.c || !c->m.hash)
		return -ENOMEM;
	c->m.emit = corr_emit;
	c->m.arg = c;
	mcc_init(&c->m);
	/* per-CPU rings that discard when full: the kernel reader's kind */
	c->in = magnet_stream_alloc(c->name, MAGNET_CORR_IN_SUBBUF,
				    MAGNET_CORR_IN_COUNT, 0,
				    MAGNET_CLOCK_MONOTONIC);
	if (IS_ERR(c->in)) {
		int err = PTR_ERR(c->in);

		c->in = NULL;
		return err;
	}
	return magnet_kreader_open(&c->kr, c->in);
}

static int do_corr_new(struct genl_info *info)
{
	struct nlattr *tb[MAGNET_CORR_A_MAX + 1];
	struct magnet_corr *c;
	struct nlattr *na, *a;
	unsigned int i;
	int err;

	err = parse_nest(info, tb);
	if (err)
		return err;
	na = tb[MAGNET_CORR_A_NAME];
	if (!magnet_name_valid(nla_data(na))) {
		magnet_set_err(info->extack, na,
			       "bad correlator name '%s': use 1-31 of [A-Za-z0-9_.-], not starting with '.' or '-'",
			       (char *)nla_data(na));
		return -EINVAL;
	}
	if (corr_find(nla_data(na))) {
		magnet_set_err(info->extack, na,
			       "correlator '%s' already exists",
			       (char *)nla_data(na));
		return -EEXIST;
	}
	if (magnet_nr_user_corrs >= MAGNET_CORRS_MAX) {
		magnet_set_err(info->extack, na,
			       "too many correlators (at most %u)",
			       MAGNET_CORRS_MAX);
		return -ENOSPC;
	}
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c) {
		NL_SET_ERR_MSG(info->extack, "cannot allocate the correlator");
		return -ENOMEM;
	}
	strscpy(c->name, nla_data(na), sizeof(c->name));
	err = parse_chain(info, c);
	if (err)
		goto err_free;
	a = tb[MAGNET_CORR_A_WINDOW];
	err = -EINVAL;
	if (!a) {
		magnet_set_err(info->extack, info->attrs[MAGNET_A_CORR],
			       "a window is required");
		goto err_free;
	}
	c->m.window = nla_get_u64(a);
	if (c->m.window < MAGNET_CORR_WINDOW_MIN ||
	    c->m.window > MAGNET_CORR_WINDOW_MAX) {
		magnet_set_err(info->extack, a,
			       "window %llu ns out of range (%llu..%llu)",
			       c->m.window, MAGNET_CORR_WINDOW_MIN,
			       MAGNET_CORR_WINDOW_MAX);
		err = -ERANGE;
		goto err_free;
	}
	a = tb[MAGNET_CORR_A_STREAM];
	if (!a) {
		magnet_set_err(info->extack, info->attrs[MAGNET_A_CORR],
			       "a destination stream is required");
		goto err_free;
	}
	c->dest = magnet_db_find_stream(nla_data(a));
	if (!c->dest) {
		magnet_set_err(info->extack, a, "unknown destination stream: no stream named '%s'",
			       (char *)nla_data(a));
		err = -ENOENT;
		goto err_free;
	}
	if (c->dest->rings.clock != MAGNET_CLOCK_MONOTONIC) {
		magnet_set_err(info->extack, a,
			       "stream '%s' uses the local clock: CORR step times are CLOCK_MONOTONIC, use a monotonic stream",
			       c->dest->name);
		c->dest = NULL;
		err = -EINVAL;
		goto err_free;
	}
	magnet_stream_get(c->dest);
	err = corr_alloc_state(c);
	if (err) {
		NL_SET_ERR_MSG(info->extack,
			       "cannot allocate the correlator's table and stream");
		goto err_free;
	}
	for (i = 0; i < c->npts; i++) {
		err = magnet_db_point_tap(c->pts[i], c->in, info->extack);
		if (err) {
			while (i--)
				magnet_db_point_untap(c->pts[i], c->in);
			goto err_free;
		}
	}
	c->id = magnet_corr_next_id++;
	list_add_tail(&c->node, &magnet_corrs);
	WRITE_ONCE(magnet_nr_corrs, magnet_nr_corrs + 1);
	magnet_nr_user_corrs++;
	return 0;

err_free:
	corr_free(c);
	return err;
}

static int do_corr_del(struct genl_info *info)
{
	struct nlattr *tb[MAGNET_CORR_A_MAX + 1];
	struct magnet_corr *c;
	int err;

	err = parse_nest(info, tb);
	if (err)
		return err;
	c = lookup_corr(info, tb);
	if (!c)
		return -ENOENT;
	corr_destroy(c);
	return 0;
}

int magnet_nl_corr_new(struct sk_buff *skb, struct genl_info *info)
{
	return magnet_nl_run(do_corr_new, info);
}

int magnet_nl_corr_del(struct sk_buff *skb, struct genl_info *info)
{
	return magnet_nl_run(do_corr_del, info);
}

int magnet_nl_corr_get(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *tb[MAGNET_CORR_A_MAX + 1];
	struct magnet_corr *c;
	int err;

	mutex_lock(&magnet_db.lock);
	err = parse_nest(info, tb);
	if (!err) {
		c = lookup_corr(info, tb);
		err = c ? magnet_nl_reply(info, MAGNET_CMD_CORR_GET, put_corr,
					  c) : -ENOENT;
	}
	mutex_unlock(&magnet_db.lock);
	return err;
}

int magnet_nl_corr_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct magnet_corr *c;
	long idx = 0;

	mutex_lock(&magnet_db.lock);
	list_for_each_entry(c, &magnet_corrs, node) {
		if (!c->dest)		/* internal (sockstat) */
			continue;
		if (idx++ < cb->args[0])
			continue;
		if (magnet_nl_dump_one(skb, cb, MAGNET_CMD_CORR_GET, put_corr,
				       c)) {
			idx--;
			break;
		}
	}
	mutex_unlock(&magnet_db.lock);
	cb->args[0] = idx;
	return skb->len;
}
