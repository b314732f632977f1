// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Synthesizers: SYNTH_NEW, SYNTH_DEL, SYNTH_GET (do, dump, per-key values),
 * attributes nested in MAGNET_A_SYNTH (docs/SYNTH.md); and the mean and
 * variance in double from a SYNTH record's exact moments.
 */
#include <errno.h>
#include <string.h>
#include <netlink/netlink.h>
#include <netlink/genl/genl.h>

#include "internal.h"

static struct nla_policy synth_policy[MAGNET_SYNTH_A_MAX + 1] = {
	[MAGNET_SYNTH_A_NAME]		= { .type = NLA_STRING },
	[MAGNET_SYNTH_A_PROBE_NAME]	= { .type = NLA_STRING },
	[MAGNET_SYNTH_A_PROBE_ID]	= { .type = NLA_U32 },
	[MAGNET_SYNTH_A_CPU]		= { .type = NLA_U32 },
	[MAGNET_SYNTH_A_ABSTRACT_ID]	= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_PID]		= { .type = NLA_U32 },
	[MAGNET_SYNTH_A_TGID]		= { .type = NLA_U32 },
	[MAGNET_SYNTH_A_CGROUP]		= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_GROUP]		= { .type = NLA_U32 },
	[MAGNET_SYNTH_A_QUANTITY]	= { .type = NLA_U32 },
	[MAGNET_SYNTH_A_FIELD_OFFSET]	= { .type = NLA_U32 },
	[MAGNET_SYNTH_A_FIELD_WIDTH]	= { .type = NLA_U32 },
	[MAGNET_SYNTH_A_PERIOD]		= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_STREAM]		= { .type = NLA_STRING },
	[MAGNET_SYNTH_A_MAX_KEYS]	= { .type = NLA_U32 },
	[MAGNET_SYNTH_A_START]		= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_MATCHED]	= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_KEYS]		= { .type = NLA_U32 },
	[MAGNET_SYNTH_A_OVERFLOW]	= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_SHORT]		= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_NMI]		= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_REORDERED]	= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_LATE]		= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_RECORDS]	= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_RECORDS_LOST]	= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_VALUES]		= { .type = NLA_FLAG },
	[MAGNET_SYNTH_A_KEY_EVENT]	= { .type = NLA_U32 },
	[MAGNET_SYNTH_A_KEY_CPU]	= { .type = NLA_U32 },
	[MAGNET_SYNTH_A_KEY_ABSTRACT_ID] = { .type = NLA_U64 },
	[MAGNET_SYNTH_A_KEY_PID]	= { .type = NLA_U32 },
	[MAGNET_SYNTH_A_KEY_TGID]	= { .type = NLA_U32 },
	[MAGNET_SYNTH_A_KEY_CGROUP]	= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_V_PERIOD_START]	= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_V_COUNT]	= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_V_MIN]		= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_V_MAX]		= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_V_SUM_LO]	= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_V_SUM_HI]	= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_V_SUMSQ_LO]	= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_V_SUMSQ_HI]	= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_V_MEAN]		= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_V_VARIANCE]	= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_V_FLAGS]	= { .type = NLA_U32 },
	[MAGNET_SYNTH_A_V_TOTAL_COUNT]	= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_V_TOTAL_SUM_LO]	= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_V_TOTAL_SUM_HI]	= { .type = NLA_U64 },
	[MAGNET_SYNTH_A_MISSED]		= { .type = NLA_U64 },
};

static const struct magnet_nl_obj synth_obj = {
	.nest = MAGNET_A_SYNTH,
	.name = MAGNET_SYNTH_A_NAME,
	.cmd_new = MAGNET_CMD_SYNTH_NEW,
	.cmd_del = MAGNET_CMD_SYNTH_DEL,
	.cmd_get = MAGNET_CMD_SYNTH_GET,
};

/* Into the nest, after the name. */
static int put_synth(struct nl_msg *msg, const void *info)
{
	const struct magnet_synth_info *sy = info;
	int err = 0;

	if (sy->probe[0])
		err = magnet_nl_put_str(msg, MAGNET_SYNTH_A_PROBE_NAME,
					sy->probe);
	if (!err && sy->stream[0])
		err = magnet_nl_put_str(msg, MAGNET_SYNTH_A_STREAM, sy->stream);
	if (err)
		return err;
	if ((sy->has_probe_id &&
	     nla_put_u32(msg, MAGNET_SYNTH_A_PROBE_ID, sy->probe_id) < 0) ||
	    ((sy->keys & MAGNET_FILTER_KEY_CPU) &&
	     nla_put_u32(msg, MAGNET_SYNTH_A_CPU, sy->cpu) < 0) ||
	    ((sy->keys & MAGNET_FILTER_KEY_ABSTRACT_ID) &&
	     nla_put_u64(msg, MAGNET_SYNTH_A_ABSTRACT_ID, sy->abstract_id) < 0) ||
	    ((sy->keys & MAGNET_FILTER_KEY_PID) &&
	     nla_put_u32(msg, MAGNET_SYNTH_A_PID, sy->pid) < 0) ||
	    ((sy->keys & MAGNET_FILTER_KEY_TGID) &&
	     nla_put_u32(msg, MAGNET_SYNTH_A_TGID, sy->tgid) < 0) ||
	    ((sy->keys & MAGNET_FILTER_KEY_CGROUP) &&
	     nla_put_u64(msg, MAGNET_SYNTH_A_CGROUP, sy->cgroup) < 0) ||
	    nla_put_u32(msg, MAGNET_SYNTH_A_GROUP, sy->group) < 0 ||
	    nla_put_u32(msg, MAGNET_SYNTH_A_QUANTITY, sy->quantity) < 0 ||
	    (sy->quantity == MAGNET_SYNTH_Q_FIELD &&
	     (nla_put_u32(msg, MAGNET_SYNTH_A_FIELD_OFFSET, sy->field_offset) < 0 ||
	      nla_put_u32(msg, MAGNET_SYNTH_A_FIELD_WIDTH, sy->field_width) < 0)) ||
	    (sy->period_ns &&
	     nla_put_u64(msg, MAGNET_SYNTH_A_PERIOD, sy->period_ns) < 0) ||
	    (sy->max_keys &&
	     nla_put_u32(msg, MAGNET_SYNTH_A_MAX_KEYS, sy->max_keys) < 0))
		return -EMSGSIZE;
	return 0;
}

int magnet_synth_add(struct magnet_ctl *h, const struct magnet_synth_info *sy)
{
	return magnet_nl_obj_add(h, &synth_obj, sy->name, put_synth, sy);
}

/* A SYNTH_GET of values: the nest holds NAME, VALUES and @key's keys. */
static struct nl_msg *req_values(struct magnet_ctl *h, int flags,
				 const char *name,
				 const struct magnet_synth_value *key, int *err)
{
	__u32 g = key ? key->group : 0;
	struct nlattr *nest;
	struct nl_msg *msg = magnet_nl_obj_req(h, &synth_obj,
					       MAGNET_CMD_SYNTH_GET, flags,
					       name, &nest, err);

	if (!msg)
		return NULL;
	if (nla_put_flag(msg, MAGNET_SYNTH_A_VALUES) < 0 ||
	    ((g & MAGNET_SYNTH_K_EVENT) &&
	     nla_put_u32(msg, MAGNET_SYNTH_A_KEY_EVENT, key->event) < 0) ||
	    ((g & MAGNET_SYNTH_K_CPU) &&
	     nla_put_u32(msg, MAGNET_SYNTH_A_KEY_CPU, key->cpu) < 0) ||
	    ((g & MAGNET_SYNTH_K_AID) &&
	     nla_put_u64(msg, MAGNET_SYNTH_A_KEY_ABSTRACT_ID, key->abstract_id) < 0) ||
	    ((g & MAGNET_SYNTH_K_PID) &&
	     nla_put_u32(msg, MAGNET_SYNTH_A_KEY_PID, key->pid) < 0) ||
	    ((g & MAGNET_SYNTH_K_TGID) &&
	     nla_put_u32(msg, MAGNET_SYNTH_A_KEY_TGID, key->tgid) < 0) ||
	    ((g & MAGNET_SYNTH_K_CGROUP) &&
	     nla_put_u64(msg, MAGNET_SYNTH_A_KEY_CGROUP, key->cgroup) < 0)) {
		nlmsg_free(msg);
		*err = -EMSGSIZE;
		return NULL;
	}
	nla_nest_end(msg, nest);
	return msg;
}

int magnet_synth_del(struct magnet_ctl *h, const char *name)
{
	return magnet_nl_obj_del(h, &synth_obj, name);
}

static int parse_synth(struct nlattr *nest, struct magnet_synth_info *sy)
{
	static const struct { int attr; __u32 bit; } keys[] = {
		{ MAGNET_SYNTH_A_CPU, MAGNET_FILTER_KEY_CPU },
		{ MAGNET_SYNTH_A_ABSTRACT_ID, MAGNET_FILTER_KEY_ABSTRACT_ID },
		{ MAGNET_SYNTH_A_PID, MAGNET_FILTER_KEY_PID },
		{ MAGNET_SYNTH_A_TGID, MAGNET_FILTER_KEY_TGID },
		{ MAGNET_SYNTH_A_CGROUP, MAGNET_FILTER_KEY_CGROUP },
	};
	struct nlattr *tb[MAGNET_SYNTH_A_MAX + 1];
	unsigned int i;

	memset(sy, 0, sizeof(*sy));
	if (!nest || nla_parse_nested(tb, MAGNET_SYNTH_A_MAX, nest,
				      synth_policy) < 0)
		return -EPROTO;
	magnet_nl_str(tb, MAGNET_SYNTH_A_NAME, sy->name, sizeof(sy->name));
	magnet_nl_str(tb, MAGNET_SYNTH_A_PROBE_NAME, sy->probe,
		      sizeof(sy->probe));
	magnet_nl_str(tb, MAGNET_SYNTH_A_STREAM, sy->stream,
		      sizeof(sy->stream));
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (tb[keys[i].attr])
			sy->keys |= keys[i].bit;
	sy->probe_id = magnet_nl_u32(tb, MAGNET_SYNTH_A_PROBE_ID);
	sy->has_probe_id = !!tb[MAGNET_SYNTH_A_PROBE_ID];
	sy->cpu = magnet_nl_u32(tb, MAGNET_SYNTH_A_CPU);
	sy->pid = magnet_nl_u32(tb, MAGNET_SYNTH_A_PID);
	sy->tgid = magnet_nl_u32(tb, MAGNET_SYNTH_A_TGID);
	sy->abstract_id = magnet_nl_u64(tb, MAGNET_SYNTH_A_ABSTRACT_ID);
	sy->cgroup = magnet_nl_u64(tb, MAGNET_SYNTH_A_CGROUP);
	sy->group = magnet_nl_u32(tb, MAGNET_SYNTH_A_GROUP);
	sy->quantity = magnet_nl_u32(tb, MAGNET_SYNTH_A_QUANTITY);
	sy->field_offset = magnet_nl_u32(tb, MAGNET_SYNTH_A_FIELD_OFFSET);
	sy->field_width = magnet_nl_u32(tb, MAGNET_SYNTH_A_FIELD_WIDTH);
	sy->period_ns = magnet_nl_u64(tb, MAGNET_SYNTH_A_PERIOD);
	sy->max_keys = magnet_nl_u32(tb, MAGNET_SYNTH_A_MAX_KEYS);
	sy->start_ns = magnet_nl_u64(tb, MAGNET_SYNTH_A_START);
	sy->matched = magnet_nl_u64(tb, MAGNET_SYNTH_A_MATCHED);
	sy->nr_keys = magnet_nl_u32(tb, MAGNET_SYNTH_A_KEYS);
	sy->overflow = magnet_nl_u64(tb, MAGNET_SYNTH_A_OVERFLOW);
	sy->shrt = magnet_nl_u64(tb, MAGNET_SYNTH_A_SHORT);
	sy->nmi = magnet_nl_u64(tb, MAGNET_SYNTH_A_NMI);
	sy->reordered = magnet_nl_u64(tb, MAGNET_SYNTH_A_REORDERED);
	sy->late = magnet_nl_u64(tb, MAGNET_SYNTH_A_LATE);
	sy->records = magnet_nl_u64(tb, MAGNET_SYNTH_A_RECORDS);
	sy->records_lost = magnet_nl_u64(tb, MAGNET_SYNTH_A_RECORDS_LOST);
	return 0;
}

static int parse_value(struct nlattr *nest, struct magnet_synth_value *v)
{
	struct nlattr *tb[MAGNET_SYNTH_A_MAX + 1];

	memset(v, 0, sizeof(*v));
	if (!nest || nla_parse_nested(tb, MAGNET_SYNTH_A_MAX, nest,
				      synth_policy) < 0)
		return -EPROTO;
	magnet_nl_str(tb, MAGNET_SYNTH_A_NAME, v->name, sizeof(v->name));
	v->group = magnet_nl_u32(tb, MAGNET_SYNTH_A_GROUP);
	v->quantity = magnet_nl_u32(tb, MAGNET_SYNTH_A_QUANTITY);
	v->event = magnet_nl_u32(tb, MAGNET_SYNTH_A_KEY_EVENT);
	v->cpu = magnet_nl_u32(tb, MAGNET_SYNTH_A_KEY_CPU);
	v->abstract_id = magnet_nl_u64(tb, MAGNET_SYNTH_A_KEY_ABSTRACT_ID);
	v->pid = magnet_nl_u32(tb, MAGNET_SYNTH_A_KEY_PID);
	v->tgid = magnet_nl_u32(tb, MAGNET_SYNTH_A_KEY_TGID);
	v->cgroup = magnet_nl_u64(tb, MAGNET_SYNTH_A_KEY_CGROUP);
	v->period_start = magnet_nl_u64(tb, MAGNET_SYNTH_A_V_PERIOD_START);
	v->count = magnet_nl_u64(tb, MAGNET_SYNTH_A_V_COUNT);
	v->min = magnet_nl_u64(tb, MAGNET_SYNTH_A_V_MIN);
	v->max = magnet_nl_u64(tb, MAGNET_SYNTH_A_V_MAX);
	v->sum_lo = magnet_nl_u64(tb, MAGNET_SYNTH_A_V_SUM_LO);
	v->sum_hi = magnet_nl_u64(tb, MAGNET_SYNTH_A_V_SUM_HI);
	v->sumsq_lo = magnet_nl_u64(tb, MAGNET_SYNTH_A_V_SUMSQ_LO);
	v->sumsq_hi = magnet_nl_u64(tb, MAGNET_SYNTH_A_V_SUMSQ_HI);
	v->mean = magnet_nl_u64(tb, MAGNET_SYNTH_A_V_MEAN);
	v->variance = magnet_nl_u64(tb, MAGNET_SYNTH_A_V_VARIANCE);
	v->flags = magnet_nl_u32(tb, MAGNET_SYNTH_A_V_FLAGS);
	v->total_count = magnet_nl_u64(tb, MAGNET_SYNTH_A_V_TOTAL_COUNT);
	v->total_sum_lo = magnet_nl_u64(tb, MAGNET_SYNTH_A_V_TOTAL_SUM_LO);
	v->total_sum_hi = magnet_nl_u64(tb, MAGNET_SYNTH_A_V_TOTAL_SUM_HI);
	magnet_synth_moments(v->count, v->sum_lo, v->sum_hi, v->sumsq_lo,
			     v->sumsq_hi, &v->mean_d, &v->variance_d);
	return 0;
}

static int parse_one(struct nlattr **tb, void *arg)
{
	return parse_synth(tb[MAGNET_A_SYNTH], arg);
}

int magnet_synth_get(struct magnet_ctl *h, const char *name,
		     struct magnet_synth_info *sy)
{
	return magnet_nl_obj_get(h, &synth_obj, name, parse_one, sy,
				 sizeof(*sy));
}

static int parse_missed(struct nlattr **tb, void *arg)
{
	struct nlattr *st[MAGNET_SYNTH_A_MAX + 1];
	struct nlattr *nest = tb[MAGNET_A_SYNTH];

	if (!nest || nla_parse_nested(st, MAGNET_SYNTH_A_MAX, nest,
				      synth_policy) < 0)
		return -EPROTO;
	if (!st[MAGNET_SYNTH_A_MISSED])
		return -EOPNOTSUPP;	/* a module older than the counter */
	*(__u64 *)arg = nla_get_u64(st[MAGNET_SYNTH_A_MISSED]);
	return 0;
}

int magnet_synth_get_missed(struct magnet_ctl *h, const char *name,
			    __u64 *missed)
{
	return magnet_nl_obj_get(h, &synth_obj, name, parse_missed, missed,
				 sizeof(*missed));
}

struct synth_walk {
	magnet_synth_cb cb;
	magnet_synth_value_cb vcb;
	void *ctx;
};

static int parse_walk(struct nlattr **tb, void *arg)
{
	struct synth_walk *w = arg;
	struct magnet_synth_info sy;
	int err = parse_synth(tb[MAGNET_A_SYNTH], &sy);

	return err ? err : w->cb(&sy, w->ctx);
}

int magnet_synth_list(struct magnet_ctl *h, magnet_synth_cb cb, void *ctx)
{
	struct synth_walk w = { .cb = cb, .ctx = ctx };

	return magnet_nl_dump(h, MAGNET_CMD_SYNTH_GET, parse_walk, &w);
}

static int parse_vwalk(struct nlattr **tb, void *arg)
{
	struct synth_walk *w = arg;
	struct magnet_synth_value v;
	int err = parse_value(tb[MAGNET_A_SYNTH], &v);

	return err ? err : w->vcb(&v, w->ctx);
}

int magnet_synth_values(struct magnet_ctl *h, const char *name,
			magnet_synth_value_cb cb, void *ctx)
{
	struct synth_walk w = { .vcb = cb, .ctx = ctx };
	int err;
	struct nl_msg *msg = req_values(h, NLM_F_DUMP, name, NULL, &err);

	if (!msg)
		return magnet_nl_set_error(h, err);
	return magnet_nl_req_run(h, msg, parse_vwalk, &w);
}

static int parse_vone(struct nlattr **tb, void *arg)
{
	return parse_value(tb[MAGNET_A_SYNTH], arg);
}

int magnet_synth_value_get(struct magnet_ctl *h, const char *name,
			   const struct magnet_synth_value *key,
			   struct magnet_synth_value *out)
{
	int err;
	struct nl_msg *msg = req_values(h, 0, name, key, &err);

	if (!msg)
		return magnet_nl_set_error(h, err);
	memset(out, 0, sizeof(*out));
	return magnet_nl_req_run(h, msg, parse_vone, out);
}

/*
 * Mean and population variance in double from exact moments, without
 * the cancellation of (S2 - S1^2 / n) / n in floating point: with
 * m = floor(S1 / n), r = S1 mod n, A = S2 - m^2 n - 2 m r is exact in
 * 128-bit integers and the variance is (A - r^2 / n) / n.
 */
int magnet_synth_moments(__u64 count, __u64 sum_lo, __u64 sum_hi,
			 __u64 sumsq_lo, __u64 sumsq_hi, double *mean,
			 double *variance)
{
	unsigned __int128 s1 = ((unsigned __int128)sum_hi << 64) | sum_lo;
	unsigned __int128 s2 = ((unsigned __int128)sumsq_hi << 64) | sumsq_lo;
	unsigned __int128 m, r, a;
	long double rr;

	*mean = 0;
	*variance = 0;
	if (!count)
		return -EINVAL;
	m = s1 / count;
	r = s1 % count;
	if (m >> 64)
		return -ERANGE;
	a = s2 - m * m * count - 2 * m * r;
	rr = (long double)r * (long double)r / (long double)count;
	*mean = (double)((long double)m + (long double)r / (long double)count);
	*variance = (double)(((long double)a - rr) / (long double)count);
	if (*variance < 0)
		*variance = 0;
	return 0;
}

/* Byte order: decode_synth() in record.c fixes the payload. */
