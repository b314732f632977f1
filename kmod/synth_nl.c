// SPDX-License-Identifier: GPL-2.0
/*
 * SYNTH_NEW, SYNTH_DEL and SYNTH_GET (do and dump; with VALUES the
 * per-key values of the open period): the control of the synthesizers,
 * attributes nested in MAGNET_A_SYNTH (docs/SYNTH.md).  Changes run in
 * magnetk under db.lock; every refusal names the attribute at fault.
 * SYNTH_GET needs CAP_NET_ADMIN too (docs/THREATS.md): a synthesizer's
 * match keys and group keys name processes, cgroups and sockets, and its
 * counters and values measure their traffic.
 */
#include <net/genetlink.h>
#include <linux/cpumask.h>
#include "synth.h"
#include "compat.h"

#define SYNTH_GET_EPERM \
	"synthesizers single out processes, cgroups and sockets: reading them needs CAP_NET_ADMIN"

const struct nla_policy magnet_synth_policy[MAGNET_SYNTH_A_MAX + 1] = {
	[MAGNET_SYNTH_A_NAME]		= { .type = NLA_NUL_STRING, .len = MAGNET_NAME_MAX - 1 },
	[MAGNET_SYNTH_A_PROBE_NAME]	= { .type = NLA_NUL_STRING, .len = MAGNET_NAME_MAX - 1 },
	[MAGNET_SYNTH_A_PROBE_ID]	= NLA_POLICY_MAX(NLA_U32, MAGNET_EVENT_MAX),
	[MAGNET_SYNTH_A_CPU]		= { .type = NLA_U32 },
	[MAGNET_SYNTH_A_ABSTRACT_ID]	= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_PID]		= { .type = NLA_U32 },
	[MAGNET_SYNTH_A_TGID]		= { .type = NLA_U32 },
	[MAGNET_SYNTH_A_CGROUP]		= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_GROUP]		= NLA_POLICY_MASK(NLA_U32, MAGNET_SYNTH_K_ALL),
	[MAGNET_SYNTH_A_QUANTITY]	= NLA_POLICY_MAX(NLA_U32, __MAGNET_SYNTH_Q_MAX - 1),
	[MAGNET_SYNTH_A_FIELD_OFFSET]	= NLA_POLICY_MAX(NLA_U32, MAGNET_PAYLOAD_MAX - 1),
	[MAGNET_SYNTH_A_FIELD_WIDTH]	= NLA_POLICY_RANGE(NLA_U32, 1, 8),
	[MAGNET_SYNTH_A_PERIOD]		= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_STREAM]		= { .type = NLA_NUL_STRING, .len = MAGNET_NAME_MAX - 1 },
	[MAGNET_SYNTH_A_MAX_KEYS]	= NLA_POLICY_MIN(NLA_U32, 1),
	[MAGNET_SYNTH_A_VALUES]		= { .type = NLA_FLAG },
	[MAGNET_SYNTH_A_KEY_EVENT]	= { .type = NLA_U32 },
	[MAGNET_SYNTH_A_KEY_CPU]	= { .type = NLA_U32 },
	[MAGNET_SYNTH_A_KEY_ABSTRACT_ID] = { .type = NLA_U64 },
	[MAGNET_SYNTH_A_KEY_PID]	= { .type = NLA_U32 },
	[MAGNET_SYNTH_A_KEY_TGID]	= { .type = NLA_U32 },
	[MAGNET_SYNTH_A_KEY_CGROUP]	= { .type = NLA_U64 },
};

/* Bytes of each payload type (0: none; the variable ones: the maximum). */
static u32 payload_size(u32 type)
{
	switch (type) {
	case MAGNET_PAYLOAD_NONE:
		return 0;
	case MAGNET_PAYLOAD_NET:
		return sizeof(struct magnet_net_payload);
	case MAGNET_PAYLOAD_SCHED_SWITCH:
		return sizeof(struct magnet_sched_switch_payload);
	case MAGNET_PAYLOAD_SCHED_PROC:
		return sizeof(struct magnet_sched_proc_payload);
	case MAGNET_PAYLOAD_SCHED_EXEC:
		return sizeof(struct magnet_sched_exec_payload);
	case MAGNET_PAYLOAD_FAULT:
		return sizeof(struct magnet_fault_payload);
	case MAGNET_PAYLOAD_PAGE:
		return sizeof(struct magnet_page_payload);
	case MAGNET_PAYLOAD_TCP:
		return sizeof(struct magnet_tcp_payload);
	case MAGNET_PAYLOAD_KPROBE:
		return sizeof(struct magnet_kprobe_payload);
	case MAGNET_PAYLOAD_SCHED_SWITCH_END:
		return sizeof(struct magnet_sched_switch_end_payload);
	default:	/* RAW, IP (+ packet bytes) */
		return MAGNET_PAYLOAD_MAX;
	}
}

#define PUT64(skb, type, v) \
	nla_put_u64_64bit(skb, type, v, MAGNET_SYNTH_A_PAD)

static int put_synth(struct sk_buff *skb, void *obj)
{
	struct magnet_synth *sy = obj;
	struct magnet_synth_cnt c;
	struct nlattr *nest;
	u32 m = sy->match.mask;

	magnet_synth_read_cnt(sy, &c);
	nest = nla_nest_start(skb, MAGNET_A_SYNTH);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_string(skb, MAGNET_SYNTH_A_NAME, sy->name) ||
	    nla_put_string(skb, MAGNET_SYNTH_A_PROBE_NAME, sy->pt->desc->name) ||
	    nla_put_u32(skb, MAGNET_SYNTH_A_PROBE_ID, sy->pt->id) ||
	    ((m & MAGNET_FK_CPU) &&
	     nla_put_u32(skb, MAGNET_SYNTH_A_CPU, sy->match.cpu)) ||
	    ((m & MAGNET_FK_AID) &&
	     PUT64(skb, MAGNET_SYNTH_A_ABSTRACT_ID, sy->match.abstract_id)) ||
	    ((m & MAGNET_FK_PID) &&
	     nla_put_u32(skb, MAGNET_SYNTH_A_PID, sy->match.pid)) ||
	    ((m & MAGNET_FK_TGID) &&
	     nla_put_u32(skb, MAGNET_SYNTH_A_TGID, sy->match.tgid)) ||
	    ((m & MAGNET_FK_CGROUP) &&
	     PUT64(skb, MAGNET_SYNTH_A_CGROUP, sy->match.cgroup)) ||
	    nla_put_u32(skb, MAGNET_SYNTH_A_GROUP, sy->group) ||
	    nla_put_u32(skb, MAGNET_SYNTH_A_QUANTITY, sy->quantity) ||
	    (sy->quantity == MAGNET_SYNTH_Q_FIELD &&
	     (nla_put_u32(skb, MAGNET_SYNTH_A_FIELD_OFFSET, sy->off) ||
	      nla_put_u32(skb, MAGNET_SYNTH_A_FIELD_WIDTH, sy->width))) ||
	    PUT64(skb, MAGNET_SYNTH_A_PERIOD, sy->period) ||
	    nla_put_string(skb, MAGNET_SYNTH_A_STREAM, sy->stream->name) ||
	    nla_put_u32(skb, MAGNET_SYNTH_A_MAX_KEYS, sy->max_keys) ||
	    PUT64(skb, MAGNET_SYNTH_A_START, sy->start) ||
	    PUT64(skb, MAGNET_SYNTH_A_MATCHED, c.matched) ||
	    nla_put_u32(skb, MAGNET_SYNTH_A_KEYS, magnet_synth_nr_keys(sy)) ||
	    PUT64(skb, MAGNET_SYNTH_A_OVERFLOW, c.overflow) ||
	    PUT64(skb, MAGNET_SYNTH_A_SHORT, c.shrt) ||
	    PUT64(skb, MAGNET_SYNTH_A_NMI, c.nmi) ||
	    PUT64(skb, MAGNET_SYNTH_A_REORDERED, c.reordered) ||
	    PUT64(skb, MAGNET_SYNTH_A_LATE, c.late) ||
	    PUT64(skb, MAGNET_SYNTH_A_MISSED, c.missed) ||
	    PUT64(skb, MAGNET_SYNTH_A_RECORDS, sy->records) ||
	    PUT64(skb, MAGNET_SYNTH_A_RECORDS_LOST, sy->records_lost)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* One key's values: which synthesizer and key index in @obj. */
struct synth_kv {
	struct magnet_synth *sy;
	u32 idx;
};

static int put_values(struct sk_buff *skb, void *obj)
{
	struct synth_kv *kv = obj;
	struct magnet_synth *sy = kv->sy;
	struct magnet_synth_key v;
	struct nlattr *nest;
	u64 start, mean, var;
	u32 g = sy->group, flags;

	magnet_synth_key_values(sy, kv->idx, &v, &start);
	flags = magnet_moments_derive(&v.cur, &mean, &var, NULL, NULL);
	nest = nla_nest_start(skb, MAGNET_A_SYNTH);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_string(skb, MAGNET_SYNTH_A_NAME, sy->name) ||
	    nla_put_u32(skb, MAGNET_SYNTH_A_GROUP, g) ||
	    nla_put_u32(skb, MAGNET_SYNTH_A_QUANTITY, sy->quantity) ||
	    ((g & MAGNET_SYNTH_K_EVENT) &&
	     nla_put_u32(skb, MAGNET_SYNTH_A_KEY_EVENT, v.key.event)) ||
	    ((g & MAGNET_SYNTH_K_CPU) &&
	     nla_put_u32(skb, MAGNET_SYNTH_A_KEY_CPU, v.key.cpu)) ||
	    ((g & MAGNET_SYNTH_K_AID) &&
	     PUT64(skb, MAGNET_SYNTH_A_KEY_ABSTRACT_ID, v.key.abstract_id)) ||
	    ((g & MAGNET_SYNTH_K_PID) &&
	     nla_put_u32(skb, MAGNET_SYNTH_A_KEY_PID, v.key.pid)) ||
	    ((g & MAGNET_SYNTH_K_TGID) &&
	     nla_put_u32(skb, MAGNET_SYNTH_A_KEY_TGID, v.key.tgid)) ||
	    ((g & MAGNET_SYNTH_K_CGROUP) &&
	     PUT64(skb, MAGNET_SYNTH_A_KEY_CGROUP, v.key.cgroup)) ||
	    PUT64(skb, MAGNET_SYNTH_A_V_PERIOD_START, start) ||
	    PUT64(skb, MAGNET_SYNTH_A_V_COUNT, v.cur.count) ||
	    PUT64(skb, MAGNET_SYNTH_A_V_MIN, v.cur.count ? v.cur.min : 0) ||
	    PUT64(skb, MAGNET_SYNTH_A_V_MAX, v.cur.max) ||
	    PUT64(skb, MAGNET_SYNTH_A_V_SUM_LO, v.cur.sum_lo) ||
	    PUT64(skb, MAGNET_SYNTH_A_V_SUM_HI, v.cur.sum_hi) ||
	    PUT64(skb, MAGNET_SYNTH_A_V_SUMSQ_LO, v.cur.sq_lo) ||
	    PUT64(skb, MAGNET_SYNTH_A_V_SUMSQ_HI, v.cur.sq_hi) ||
	    PUT64(skb, MAGNET_SYNTH_A_V_MEAN, mean) ||
	    PUT64(skb, MAGNET_SYNTH_A_V_VARIANCE, var) ||
	    nla_put_u32(skb, MAGNET_SYNTH_A_V_FLAGS, flags) ||
	    PUT64(skb, MAGNET_SYNTH_A_V_TOTAL_COUNT, v.total_count) ||
	    PUT64(skb, MAGNET_SYNTH_A_V_TOTAL_SUM_LO, v.total_sum_lo) ||
	    PUT64(skb, MAGNET_SYNTH_A_V_TOTAL_SUM_HI, v.total_sum_hi)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* Parse the MAGNET_A_SYNTH nest into @tb; it must name a synthesizer. */
static int parse_nest(struct genl_info *info, struct nlattr **tb)
{
	struct nlattr *nest = info->attrs[MAGNET_A_SYNTH];
	int err;

	if (!nest) {
		NL_SET_ERR_MSG(info->extack,
			       "synthesizer attributes (MAGNET_A_SYNTH) are required");
		return -EINVAL;
	}
	err = nla_parse_nested(tb, MAGNET_SYNTH_A_MAX, nest,
			       magnet_synth_policy, info->extack);
	if (err)
		return err;
	if (!tb[MAGNET_SYNTH_A_NAME]) {
		magnet_set_err(info->extack, nest,
			       "a synthesizer name is required");
		return -EINVAL;
	}
	return 0;
}

static struct magnet_synth *lookup_synth(struct genl_info *info,
					 struct nlattr **tb)
{
	struct nlattr *na = tb[MAGNET_SYNTH_A_NAME];
	struct magnet_synth *sy = magnet_synth_find(nla_data(na));

	if (!sy)
		magnet_set_err(info->extack, na, "no synthesizer named '%s'",
			       (char *)nla_data(na));
	return sy;
}

static struct magnet_point *lookup_point(struct genl_info *info,
					 struct nlattr **tb)
{
	return magnet_nl_find_point(info->extack, tb[MAGNET_SYNTH_A_PROBE_NAME],
				    tb[MAGNET_SYNTH_A_PROBE_ID],
				    info->attrs[MAGNET_A_SYNTH]);
}

/* The match keys (the event is the synthesizer's point). */
static int parse_match(struct genl_info *info, struct nlattr **tb,
		       struct magnet_fkey *k)
{
	const struct magnet_fkey_attrs a = {
		.cpu		= tb[MAGNET_SYNTH_A_CPU],
		.abstract_id	= tb[MAGNET_SYNTH_A_ABSTRACT_ID],
		.pid		= tb[MAGNET_SYNTH_A_PID],
		.tgid		= tb[MAGNET_SYNTH_A_TGID],
		.cgroup		= tb[MAGNET_SYNTH_A_CGROUP],
	};

	return magnet_nl_parse_fkey(&a, k, info->extack);
}

static int parse_quantity(struct genl_info *info, struct nlattr **tb,
			  struct magnet_synth *sy)
{
	struct nlattr *q = tb[MAGNET_SYNTH_A_QUANTITY];
	struct nlattr *off = tb[MAGNET_SYNTH_A_FIELD_OFFSET];
	struct nlattr *w = tb[MAGNET_SYNTH_A_FIELD_WIDTH];
	u32 psize;

	if (!q) {
		magnet_set_err(info->extack, info->attrs[MAGNET_A_SYNTH],
			       "a quantity (size, field or interval) is required");
		return -EINVAL;
	}
	sy->quantity = nla_get_u32(q);
	if (sy->quantity != MAGNET_SYNTH_Q_FIELD) {
		if (off || w) {
			magnet_set_err(info->extack, off ?: w,
				       "a field offset or width needs quantity 'field'");
			return -EINVAL;
		}
		return 0;
	}
	if (!off || !w) {
		magnet_set_err(info->extack, q,
			       "quantity 'field' needs a field offset and width");
		return -EINVAL;
	}
	sy->off = nla_get_u32(off);
	sy->width = nla_get_u32(w);
	if (sy->width != 1 && sy->width != 2 && sy->width != 4 &&
	    sy->width != 8) {
		magnet_set_err(info->extack, w,
			       "field width %u: must be 1, 2, 4 or 8 bytes",
			       sy->width);
		return -EINVAL;
	}
	psize = payload_size(sy->pt->desc->payload);
	if (sy->off + sy->width > psize) {
		magnet_set_err(info->extack, off,
			       "field %u:%u lies beyond the %u-byte payload of probe '%s'",
			       sy->off, sy->width, psize, sy->pt->desc->name);
		return -EINVAL;
	}
	return 0;
}

static int parse_period(struct genl_info *info, struct nlattr **tb,
			struct magnet_synth *sy)
{
	struct nlattr *a = tb[MAGNET_SYNTH_A_PERIOD];

	if (!a) {
		magnet_set_err(info->extack, info->attrs[MAGNET_A_SYNTH],
			       "a period is required");
		return -EINVAL;
	}
	sy->period = nla_get_u64(a);
	if (sy->period < MAGNET_SYNTH_PERIOD_MIN ||
	    sy->period > MAGNET_SYNTH_PERIOD_MAX) {
		magnet_set_err(info->extack, a,
			       "period %llu ns: must be between %llu ns (10 ms) and %llu ns (1 h)",
			       sy->period, MAGNET_SYNTH_PERIOD_MIN,
			       MAGNET_SYNTH_PERIOD_MAX);
		return -EINVAL;
	}
	return 0;
}

static int do_synth_new(struct genl_info *info)
{
	struct nlattr *tb[MAGNET_SYNTH_A_MAX + 1];
	struct magnet_synth *sy;
	struct magnet_point *pt;
	struct magnet_stream *s;
	struct nlattr *na, *a;
	u32 max_keys = MAGNET_SYNTH_KEYS_DEFAULT;
	int err;

	err = parse_nest(info, tb);
	if (err)
		return err;
	na = tb[MAGNET_SYNTH_A_NAME];
	if (!magnet_name_valid(nla_data(na))) {
		magnet_set_err(info->extack, na,
			       "bad synthesizer name '%s': use 1-31 of [A-Za-z0-9_.-], not starting with '.' or '-'",
			       (char *)nla_data(na));
		return -EINVAL;
	}
	if (magnet_synth_find(nla_data(na))) {
		magnet_set_err(info->extack, na,
			       "synthesizer '%s' already exists",
			       (char *)nla_data(na));
		return -EEXIST;
	}
	if (magnet_synth_count() >= MAGNET_SYNTHS_MAX) {
		magnet_set_err(info->extack, na,
			       "too many synthesizers (at most %u)",
			       MAGNET_SYNTHS_MAX);
		return -ENOSPC;
	}
	if (tb[MAGNET_SYNTH_A_VALUES]) {
		magnet_set_err(info->extack, tb[MAGNET_SYNTH_A_VALUES],
			       "VALUES is a query flag, not a definition");
		return -EINVAL;
	}
	pt = lookup_point(info, tb);
	if (IS_ERR(pt))
		return PTR_ERR(pt);
	a = tb[MAGNET_SYNTH_A_STREAM];
	if (!a) {
		magnet_set_err(info->extack, info->attrs[MAGNET_A_SYNTH],
			       "a stream for the SYNTH records is required");
		return -EINVAL;
	}
	s = magnet_db_find_stream(nla_data(a));
	if (!s) {
		magnet_set_err(info->extack, a, "no stream named '%s'",
			       (char *)nla_data(a));
		return -ENOENT;
	}
	if (s->rings.clock != MAGNET_CLOCK_MONOTONIC) {
		magnet_set_err(info->extack, a,
			       "stream '%s' uses the local clock: SYNTH periods are CLOCK_MONOTONIC, use a monotonic stream",
			       s->name);
		return -EINVAL;
	}
	a = tb[MAGNET_SYNTH_A_MAX_KEYS];
	if (a) {
		max_keys = nla_get_u32(a);
		if (max_keys > MAGNET_SYNTH_KEYS_MAX) {
			magnet_set_err(info->extack, a,
				       "too many keys: %u, at most %u",
				       max_keys, MAGNET_SYNTH_KEYS_MAX);
			return -EINVAL;
		}
	}
	sy = magnet_synth_alloc(max_keys);
	if (!sy) {
		magnet_set_err(info->extack, tb[MAGNET_SYNTH_A_MAX_KEYS],
			       "cannot allocate %u key slots", max_keys);
		return -ENOMEM;
	}
	strscpy(sy->name, nla_data(na), sizeof(sy->name));
	sy->pt = pt;
	if (tb[MAGNET_SYNTH_A_GROUP])
		sy->group = nla_get_u32(tb[MAGNET_SYNTH_A_GROUP]);
	err = parse_match(info, tb, &sy->match);
	if (!err)
		err = parse_quantity(info, tb, sy);
	if (!err)
		err = parse_period(info, tb, sy);
	if (err) {
		magnet_synth_free(sy);
		return err;
	}
	magnet_stream_get(s);
	sy->stream = s;
	err = magnet_synth_insert(sy, info->extack);
	if (err)
		magnet_synth_free(sy);
	return err;
}

static int do_synth_del(struct genl_info *info)
{
	struct nlattr *tb[MAGNET_SYNTH_A_MAX + 1];
	struct magnet_synth *sy;
	int err;

	err = parse_nest(info, tb);
	if (err)
		return err;
	sy = lookup_synth(info, tb);
	if (!sy)
		return -ENOENT;
	magnet_synth_remove(sy);
	return 0;
}

int magnet_nl_synth_new(struct sk_buff *skb, struct genl_info *info)
{
	return magnet_nl_run(do_synth_new, info);
}

int magnet_nl_synth_del(struct sk_buff *skb, struct genl_info *info)
{
	return magnet_nl_run(do_synth_del, info);
}

/* The key selector of a VALUES do: exactly the synthesizer's group keys. */
static int parse_key(struct genl_info *info, struct nlattr **tb,
		     struct magnet_synth *sy, struct magnet_fkey *k)
{
	static const struct {
		u32 bit;
		int attr;
		const char *name;
	} keys[] = {
		{ MAGNET_SYNTH_K_EVENT, MAGNET_SYNTH_A_KEY_EVENT, "event" },
		{ MAGNET_SYNTH_K_CPU, MAGNET_SYNTH_A_KEY_CPU, "cpu" },
		{ MAGNET_SYNTH_K_AID, MAGNET_SYNTH_A_KEY_ABSTRACT_ID, "id" },
		{ MAGNET_SYNTH_K_PID, MAGNET_SYNTH_A_KEY_PID, "pid" },
		{ MAGNET_SYNTH_K_TGID, MAGNET_SYNTH_A_KEY_TGID, "tgid" },
		{ MAGNET_SYNTH_K_CGROUP, MAGNET_SYNTH_A_KEY_CGROUP, "cgroup" },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		struct nlattr *a = tb[keys[i].attr];

		if (!!a != !!(sy->group & keys[i].bit)) {
			magnet_set_err(info->extack,
				       a ?: info->attrs[MAGNET_A_SYNTH],
				       a ? "key '%s' is not a group key of synthesizer '%s'" :
					   "key '%s' of synthesizer '%s' is missing",
				       keys[i].name, sy->name);
			return -EINVAL;
		}
	}
	k->mask = sy->group;
	if (tb[MAGNET_SYNTH_A_KEY_EVENT])
		k->event = nla_get_u32(tb[MAGNET_SYNTH_A_KEY_EVENT]);
	if (tb[MAGNET_SYNTH_A_KEY_CPU])
		k->cpu = nla_get_u32(tb[MAGNET_SYNTH_A_KEY_CPU]);
	if (tb[MAGNET_SYNTH_A_KEY_ABSTRACT_ID])
		k->abstract_id = nla_get_u64(tb[MAGNET_SYNTH_A_KEY_ABSTRACT_ID]);
	if (tb[MAGNET_SYNTH_A_KEY_PID])
		k->pid = nla_get_u32(tb[MAGNET_SYNTH_A_KEY_PID]);
	if (tb[MAGNET_SYNTH_A_KEY_TGID])
		k->tgid = nla_get_u32(tb[MAGNET_SYNTH_A_KEY_TGID]);
	if (tb[MAGNET_SYNTH_A_KEY_CGROUP])
		k->cgroup = nla_get_u64(tb[MAGNET_SYNTH_A_KEY_CGROUP]);
	return 0;
}

/*
 * do: the definition and counters; with VALUES and the key attributes
 * of every group key, that key's open-period values.
 */
int magnet_nl_synth_get(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *tb[MAGNET_SYNTH_A_MAX + 1];
	struct magnet_synth *sy;
	struct magnet_fkey k = { };
	struct synth_kv kv;
	int err, idx;

	if (!netlink_capable(skb, CAP_NET_ADMIN)) {
		NL_SET_ERR_MSG(info->extack, SYNTH_GET_EPERM);
		return -EPERM;
	}
	mutex_lock(&magnet_db.lock);
	err = parse_nest(info, tb);
	if (err)
		goto out;
	sy = lookup_synth(info, tb);
	if (!sy) {
		err = -ENOENT;
		goto out;
	}
	if (!tb[MAGNET_SYNTH_A_VALUES]) {
		err = magnet_nl_reply(info, MAGNET_CMD_SYNTH_GET, put_synth, sy);
		goto out;
	}
	err = parse_key(info, tb, sy, &k);
	if (err)
		goto out;
	idx = magnet_synth_key_find(sy, &k);
	if (idx < 0) {
		magnet_set_err(info->extack, info->attrs[MAGNET_A_SYNTH],
			       "synthesizer '%s' has seen no event of that key",
			       sy->name);
		err = -ENOENT;
		goto out;
	}
	kv.sy = sy;
	kv.idx = idx;
	err = magnet_nl_reply(info, MAGNET_CMD_SYNTH_GET, put_values, &kv);
out:
	mutex_unlock(&magnet_db.lock);
	return err;
}

/*
 * dump: every synthesizer; with a MAGNET_A_SYNTH nest holding NAME and
 * VALUES, every key of that one.  cb->args[0]: next index.
 */
int magnet_nl_synth_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nlattr **attrs = magnet_dump_attrs(cb);
	struct nlattr *nest = attrs ? attrs[MAGNET_A_SYNTH] : NULL;
	struct nlattr *tb[MAGNET_SYNTH_A_MAX + 1];
	struct magnet_synth *sy;
	struct synth_kv kv;
	long idx = 0;
	u32 n;
	int err;

	if (!netlink_capable(cb->skb, CAP_NET_ADMIN)) {
		NL_SET_ERR_MSG(cb->extack, SYNTH_GET_EPERM);
		return -EPERM;
	}
	mutex_lock(&magnet_db.lock);
	if (nest) {
		err = nla_parse_nested(tb, MAGNET_SYNTH_A_MAX, nest,
				       magnet_synth_policy, cb->extack);
		if (err)
			goto fail;
		if (tb[MAGNET_SYNTH_A_VALUES]) {
			if (!tb[MAGNET_SYNTH_A_NAME]) {
				NL_SET_ERR_MSG(cb->extack,
					       "a values dump needs a synthesizer name");
				err = -EINVAL;
				goto fail;
			}
			sy = magnet_synth_find(nla_data(tb[MAGNET_SYNTH_A_NAME]));
			if (!sy) {
				/*
				 * A constant: a dump's message is read after
				 * this call returns, and magnet_set_err()'s
				 * interning is for requests (kmod/compat.h).
				 */
				NL_SET_ERR_MSG(cb->extack,
					       "no synthesizer of that name");
				err = -ENOENT;
				goto fail;
			}
			kv.sy = sy;
			n = magnet_synth_nr_keys(sy);
			for (kv.idx = cb->args[0]; kv.idx < n; kv.idx++)
				if (magnet_nl_dump_one(skb, cb,
						       MAGNET_CMD_SYNTH_GET,
						       put_values, &kv))
					break;
			cb->args[0] = kv.idx;
			mutex_unlock(&magnet_db.lock);
			return skb->len;
		}
	}
	list_for_each_entry(sy, &magnet_synths, node) {
		if (!sy->stream)	/* internal (sockstat) */
			continue;
		if (idx++ < cb->args[0])
			continue;
		if (magnet_nl_dump_one(skb, cb, MAGNET_CMD_SYNTH_GET,
				       put_synth, sy)) {
			idx--;
			break;
		}
	}
	mutex_unlock(&magnet_db.lock);
	cb->args[0] = idx;
	return skb->len;
fail:
	mutex_unlock(&magnet_db.lock);
	return err;
}
