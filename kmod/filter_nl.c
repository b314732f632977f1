// SPDX-License-Identifier: GPL-2.0
/*
 * FILTER_NEW, FILTER_DEL and FILTER_GET (do and dump): the control of the
 * filters, attributes nested in MAGNET_A_FILTER (docs/FILTERS.md).
 * Changes run in magnetk under db.lock; every refusal names the
 * attribute at fault.  FILTER_GET needs CAP_NET_ADMIN too
 * (docs/THREATS.md): a filter's keys name the processes, cgroups and
 * sockets under watch, its counters measure them.
 */
#include <net/genetlink.h>
#include <linux/cpumask.h>
#include "filter.h"
#include "compat.h"

#define FILTER_GET_EPERM \
	"filters name the processes, cgroups and sockets under watch: reading them needs CAP_NET_ADMIN"

const struct nla_policy magnet_filter_policy[MAGNET_FILTER_A_MAX + 1] = {
	[MAGNET_FILTER_A_NAME]		= { .type = NLA_NUL_STRING, .len = MAGNET_NAME_MAX - 1 },
	[MAGNET_FILTER_A_EVENT]		= NLA_POLICY_MAX(NLA_U32, MAGNET_EVENT_MAX),
	[MAGNET_FILTER_A_CPU]		= { .type = NLA_U32 },
	[MAGNET_FILTER_A_ABSTRACT_ID]	= { .type = NLA_U64 },
	[MAGNET_FILTER_A_PID]		= { .type = NLA_U32 },
	[MAGNET_FILTER_A_TGID]		= { .type = NLA_U32 },
	[MAGNET_FILTER_A_CGROUP]	= { .type = NLA_U64 },
	[MAGNET_FILTER_A_PRIORITY]	= { .type = NLA_S32 },
	[MAGNET_FILTER_A_ACTION]	= NLA_POLICY_MAX(NLA_U32, __MAGNET_FILTER_ACTION_MAX - 1),
	[MAGNET_FILTER_A_STREAM]	= { .type = NLA_NUL_STRING, .len = MAGNET_NAME_MAX - 1 },
	[MAGNET_FILTER_A_SAMPLE_EVERY]	= NLA_POLICY_MIN(NLA_U32, 1),
	[MAGNET_FILTER_A_SAMPLE_PERIOD]	= { .type = NLA_U64 },
};

static int put_filter(struct sk_buff *skb, void *obj)
{
	struct magnet_filter *f = obj;
	struct magnet_filter_cnt c;
	struct nlattr *nest;
	unsigned int i;
	u32 m = f->key.mask;

	magnet_filter_read_cnt(f, &c);
	nest = nla_nest_start(skb, MAGNET_A_FILTER);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_string(skb, MAGNET_FILTER_A_NAME, f->name) ||
	    ((m & MAGNET_FK_EVENT) &&
	     nla_put_u32(skb, MAGNET_FILTER_A_EVENT, f->key.event)) ||
	    ((m & MAGNET_FK_CPU) &&
	     nla_put_u32(skb, MAGNET_FILTER_A_CPU, f->key.cpu)) ||
	    ((m & MAGNET_FK_AID) &&
	     nla_put_u64_64bit(skb, MAGNET_FILTER_A_ABSTRACT_ID,
			       f->key.abstract_id, MAGNET_FILTER_A_PAD)) ||
	    ((m & MAGNET_FK_PID) &&
	     nla_put_u32(skb, MAGNET_FILTER_A_PID, f->key.pid)) ||
	    ((m & MAGNET_FK_TGID) &&
	     nla_put_u32(skb, MAGNET_FILTER_A_TGID, f->key.tgid)) ||
	    ((m & MAGNET_FK_CGROUP) &&
	     nla_put_u64_64bit(skb, MAGNET_FILTER_A_CGROUP, f->key.cgroup,
			       MAGNET_FILTER_A_PAD)) ||
	    nla_put_s32(skb, MAGNET_FILTER_A_PRIORITY, f->priority) ||
	    nla_put_u32(skb, MAGNET_FILTER_A_ACTION, f->action) ||
	    (f->every &&
	     nla_put_u32(skb, MAGNET_FILTER_A_SAMPLE_EVERY, f->every)) ||
	    (f->period &&
	     nla_put_u64_64bit(skb, MAGNET_FILTER_A_SAMPLE_PERIOD, f->period,
			       MAGNET_FILTER_A_PAD)) ||
	    nla_put_u64_64bit(skb, MAGNET_FILTER_A_MATCHED, c.matched,
			      MAGNET_FILTER_A_PAD) ||
	    nla_put_u64_64bit(skb, MAGNET_FILTER_A_DELIVERED, c.delivered,
			      MAGNET_FILTER_A_PAD) ||
	    nla_put_u64_64bit(skb, MAGNET_FILTER_A_DROPPED, c.dropped,
			      MAGNET_FILTER_A_PAD))
		goto cancel;
	for (i = 0; i < f->nr_streams; i++)
		if (nla_put_string(skb, MAGNET_FILTER_A_STREAM,
				   f->streams[i]->name))
			goto cancel;
	nla_nest_end(skb, nest);
	return 0;
cancel:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

/* Parse the MAGNET_A_FILTER nest into @tb; it must name a filter. */
static int parse_nest(struct genl_info *info, struct nlattr **tb)
{
	struct nlattr *nest = info->attrs[MAGNET_A_FILTER];
	int err;

	if (!nest) {
		NL_SET_ERR_MSG(info->extack,
			       "filter attributes (MAGNET_A_FILTER) are required");
		return -EINVAL;
	}
	err = nla_parse_nested(tb, MAGNET_FILTER_A_MAX, nest,
			       magnet_filter_policy, info->extack);
	if (err)
		return err;
	if (!tb[MAGNET_FILTER_A_NAME]) {
		magnet_set_err(info->extack, nest, "a filter name is required");
		return -EINVAL;
	}
	return 0;
}

static struct magnet_filter *lookup_filter(struct genl_info *info,
					   struct nlattr **tb)
{
	struct nlattr *na = tb[MAGNET_FILTER_A_NAME];
	struct magnet_filter *f = magnet_filter_find(nla_data(na));

	if (!f)
		magnet_set_err(info->extack, na, "no filter named '%s'",
			       (char *)nla_data(na));
	return f;
}

/* The keys: absent attributes are wildcards. */
static int parse_key(struct genl_info *info, struct nlattr **tb,
		     struct magnet_fkey *k)
{
	const struct magnet_fkey_attrs a = {
		.event		= tb[MAGNET_FILTER_A_EVENT],
		.cpu		= tb[MAGNET_FILTER_A_CPU],
		.abstract_id	= tb[MAGNET_FILTER_A_ABSTRACT_ID],
		.pid		= tb[MAGNET_FILTER_A_PID],
		.tgid		= tb[MAGNET_FILTER_A_TGID],
		.cgroup		= tb[MAGNET_FILTER_A_CGROUP],
	};

	return magnet_nl_parse_fkey(&a, k, info->extack);
}

/* Every STREAM attribute of the nest, in order; takes references. */
static int parse_streams(struct genl_info *info, struct magnet_filter *f)
{
	struct nlattr *a;
	struct magnet_stream *s;
	unsigned int i;
	int rem;

	nla_for_each_nested(a, info->attrs[MAGNET_A_FILTER], rem) {
		if (nla_type(a) != MAGNET_FILTER_A_STREAM)
			continue;
		if (f->nr_streams == MAGNET_FILTER_STREAMS_MAX) {
			magnet_set_err(info->extack, a,
				       "a filter delivers to at most %u streams",
				       MAGNET_FILTER_STREAMS_MAX);
			return -EINVAL;
		}
		s = magnet_db_find_stream(nla_data(a));
		if (!s) {
			magnet_set_err(info->extack, a, "no stream named '%s'",
				       (char *)nla_data(a));
			return -ENOENT;
		}
		for (i = 0; i < f->nr_streams; i++) {
			if (f->streams[i] == s) {
				magnet_set_err(info->extack, a,
					       "stream '%s' named twice",
					       s->name);
				return -EINVAL;
			}
		}
		magnet_stream_get(s);
		f->streams[f->nr_streams++] = s;
	}
	return 0;
}

static int parse_action(struct genl_info *info, struct nlattr **tb,
			struct magnet_filter *f)
{
	struct nlattr *every = tb[MAGNET_FILTER_A_SAMPLE_EVERY];
	struct nlattr *period = tb[MAGNET_FILTER_A_SAMPLE_PERIOD];

	if (tb[MAGNET_FILTER_A_ACTION])
		f->action = nla_get_u32(tb[MAGNET_FILTER_A_ACTION]);
	if (tb[MAGNET_FILTER_A_PRIORITY])
		f->priority = nla_get_s32(tb[MAGNET_FILTER_A_PRIORITY]);
	if (f->action == MAGNET_FILTER_DROP && (every || period)) {
		magnet_set_err(info->extack, every ?: period,
			       "a drop filter does not sample");
		return -EINVAL;
	}
	if (f->action == MAGNET_FILTER_DROP && tb[MAGNET_FILTER_A_STREAM]) {
		magnet_set_err(info->extack, tb[MAGNET_FILTER_A_STREAM],
			       "a drop filter delivers to no stream");
		return -EINVAL;
	}
	if (every && period) {
		magnet_set_err(info->extack, period,
			       "sample-every and sample-period exclude each other");
		return -EINVAL;
	}
	if (every)
		f->every = nla_get_u32(every);
	if (period) {
		f->period = nla_get_u64(period);
		if (!f->period) {
			magnet_set_err(info->extack, period,
				       "sample period must be above 0 ns");
			return -EINVAL;
		}
	}
	return 0;
}

static int do_filter_new(struct genl_info *info)
{
	struct nlattr *tb[MAGNET_FILTER_A_MAX + 1];
	struct magnet_filter *f;
	struct nlattr *na;
	int err;

	err = parse_nest(info, tb);
	if (err)
		return err;
	na = tb[MAGNET_FILTER_A_NAME];
	if (!magnet_name_valid(nla_data(na))) {
		magnet_set_err(info->extack, na,
			       "bad filter name '%s': use 1-31 of [A-Za-z0-9_.-], not starting with '.' or '-'",
			       (char *)nla_data(na));
		return -EINVAL;
	}
	if (magnet_filter_find(nla_data(na))) {
		magnet_set_err(info->extack, na, "filter '%s' already exists",
			       (char *)nla_data(na));
		return -EEXIST;
	}
	if (magnet_filter_count() >= MAGNET_FILTERS_MAX) {
		magnet_set_err(info->extack, na, "too many filters (at most %u)",
			       MAGNET_FILTERS_MAX);
		return -ENOSPC;
	}
	f = magnet_filter_alloc();
	if (!f) {
		NL_SET_ERR_MSG(info->extack, "cannot allocate the filter");
		return -ENOMEM;
	}
	strscpy(f->name, nla_data(na), sizeof(f->name));
	err = parse_key(info, tb, &f->key);
	if (!err)
		err = parse_action(info, tb, f);
	if (!err)
		err = parse_streams(info, f);
	if (err) {
		magnet_filter_free(f);
		return err;
	}
	magnet_filter_insert(f);
	return 0;
}

static int do_filter_del(struct genl_info *info)
{
	struct nlattr *tb[MAGNET_FILTER_A_MAX + 1];
	struct magnet_filter *f;
	int err;

	err = parse_nest(info, tb);
	if (err)
		return err;
	f = lookup_filter(info, tb);
	if (!f)
		return -ENOENT;
	magnet_filter_remove(f);
	return 0;
}

int magnet_nl_filter_new(struct sk_buff *skb, struct genl_info *info)
{
	return magnet_nl_run(do_filter_new, info);
}

int magnet_nl_filter_del(struct sk_buff *skb, struct genl_info *info)
{
	return magnet_nl_run(do_filter_del, info);
}

int magnet_nl_filter_get(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *tb[MAGNET_FILTER_A_MAX + 1];
	struct magnet_filter *f;
	int err;

	if (!netlink_capable(skb, CAP_NET_ADMIN)) {
		NL_SET_ERR_MSG(info->extack, FILTER_GET_EPERM);
		return -EPERM;
	}
	mutex_lock(&magnet_db.lock);
	err = parse_nest(info, tb);
	if (!err) {
		f = lookup_filter(info, tb);
		err = f ? magnet_nl_reply(info, MAGNET_CMD_FILTER_GET,
					  put_filter, f) : -ENOENT;
	}
	mutex_unlock(&magnet_db.lock);
	return err;
}

int magnet_nl_filter_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct magnet_filter *f;
	long idx = 0;

	if (!netlink_capable(cb->skb, CAP_NET_ADMIN)) {
		NL_SET_ERR_MSG(cb->extack, FILTER_GET_EPERM);
		return -EPERM;
	}
	mutex_lock(&magnet_db.lock);
	list_for_each_entry(f, &magnet_filters, node) {
		if (idx++ < cb->args[0])
			continue;
		if (magnet_nl_dump_one(skb, cb, MAGNET_CMD_FILTER_GET,
				       put_filter, f)) {
			idx--;
			break;
		}
	}
	mutex_unlock(&magnet_db.lock);
	cb->args[0] = idx;
	return skb->len;
}
