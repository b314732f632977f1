// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Filters: FILTER_NEW, FILTER_DEL, FILTER_GET (do and dump), attributes
 * nested in MAGNET_A_FILTER (docs/FILTERS.md).
 */
#include <errno.h>
#include <string.h>
#include <netlink/netlink.h>
#include <netlink/genl/genl.h>

#include "internal.h"

static struct nla_policy filter_policy[MAGNET_FILTER_A_MAX + 1] = {
	[MAGNET_FILTER_A_NAME]		= { .type = NLA_STRING },
	[MAGNET_FILTER_A_EVENT]		= { .type = NLA_U32 },
	[MAGNET_FILTER_A_CPU]		= { .type = NLA_U32 },
	[MAGNET_FILTER_A_ABSTRACT_ID]	= { .type = NLA_U64 },
	[MAGNET_FILTER_A_PID]		= { .type = NLA_U32 },
	[MAGNET_FILTER_A_TGID]		= { .type = NLA_U32 },
	[MAGNET_FILTER_A_CGROUP]	= { .type = NLA_U64 },
	[MAGNET_FILTER_A_PRIORITY]	= { .type = NLA_U32 },
	[MAGNET_FILTER_A_ACTION]	= { .type = NLA_U32 },
	[MAGNET_FILTER_A_STREAM]	= { .type = NLA_STRING },
	[MAGNET_FILTER_A_SAMPLE_EVERY]	= { .type = NLA_U32 },
	[MAGNET_FILTER_A_SAMPLE_PERIOD]	= { .type = NLA_U64 },
	[MAGNET_FILTER_A_MATCHED]	= { .type = NLA_U64 },
	[MAGNET_FILTER_A_DELIVERED]	= { .type = NLA_U64 },
	[MAGNET_FILTER_A_DROPPED]	= { .type = NLA_U64 },
};

static const struct magnet_nl_obj filter_obj = {
	.nest = MAGNET_A_FILTER,
	.name = MAGNET_FILTER_A_NAME,
	.cmd_new = MAGNET_CMD_FILTER_NEW,
	.cmd_del = MAGNET_CMD_FILTER_DEL,
	.cmd_get = MAGNET_CMD_FILTER_GET,
};

/* Into the nest, after the name. */
static int put_filter(struct nl_msg *msg, const void *info)
{
	const struct magnet_filter_info *f = info;
	unsigned int i;
	int err;

	if (((f->keys & MAGNET_FILTER_KEY_EVENT) &&
	     nla_put_u32(msg, MAGNET_FILTER_A_EVENT, f->event) < 0) ||
	    ((f->keys & MAGNET_FILTER_KEY_CPU) &&
	     nla_put_u32(msg, MAGNET_FILTER_A_CPU, f->cpu) < 0) ||
	    ((f->keys & MAGNET_FILTER_KEY_ABSTRACT_ID) &&
	     nla_put_u64(msg, MAGNET_FILTER_A_ABSTRACT_ID, f->abstract_id) < 0) ||
	    ((f->keys & MAGNET_FILTER_KEY_PID) &&
	     nla_put_u32(msg, MAGNET_FILTER_A_PID, f->pid) < 0) ||
	    ((f->keys & MAGNET_FILTER_KEY_TGID) &&
	     nla_put_u32(msg, MAGNET_FILTER_A_TGID, f->tgid) < 0) ||
	    ((f->keys & MAGNET_FILTER_KEY_CGROUP) &&
	     nla_put_u64(msg, MAGNET_FILTER_A_CGROUP, f->cgroup) < 0) ||
	    (f->priority &&
	     nla_put_s32(msg, MAGNET_FILTER_A_PRIORITY, f->priority) < 0) ||
	    nla_put_u32(msg, MAGNET_FILTER_A_ACTION, f->action) < 0 ||
	    (f->sample_every &&
	     nla_put_u32(msg, MAGNET_FILTER_A_SAMPLE_EVERY, f->sample_every) < 0) ||
	    (f->sample_period_ns &&
	     nla_put_u64(msg, MAGNET_FILTER_A_SAMPLE_PERIOD,
			 f->sample_period_ns) < 0))
		return -EMSGSIZE;
	if (f->nr_streams > MAGNET_FILTER_STREAMS_MAX)
		return -EINVAL;
	for (i = 0; i < f->nr_streams; i++) {
		err = magnet_nl_put_str(msg, MAGNET_FILTER_A_STREAM,
					f->streams[i]);
		if (err)
			return err;
	}
	return 0;
}

int magnet_filter_add(struct magnet_ctl *h, const struct magnet_filter_info *f)
{
	return magnet_nl_obj_add(h, &filter_obj, f->name, put_filter, f);
}

int magnet_filter_del(struct magnet_ctl *h, const char *name)
{
	return magnet_nl_obj_del(h, &filter_obj, name);
}

static int parse_filter(struct nlattr *nest, struct magnet_filter_info *f)
{
	static const struct { int attr; __u32 bit; } keys[] = {
		{ MAGNET_FILTER_A_EVENT, MAGNET_FILTER_KEY_EVENT },
		{ MAGNET_FILTER_A_CPU, MAGNET_FILTER_KEY_CPU },
		{ MAGNET_FILTER_A_ABSTRACT_ID, MAGNET_FILTER_KEY_ABSTRACT_ID },
		{ MAGNET_FILTER_A_PID, MAGNET_FILTER_KEY_PID },
		{ MAGNET_FILTER_A_TGID, MAGNET_FILTER_KEY_TGID },
		{ MAGNET_FILTER_A_CGROUP, MAGNET_FILTER_KEY_CGROUP },
	};
	struct nlattr *tb[MAGNET_FILTER_A_MAX + 1], *a;
	unsigned int i;
	int rem;

	memset(f, 0, sizeof(*f));
	if (!nest || nla_parse_nested(tb, MAGNET_FILTER_A_MAX, nest,
				      filter_policy) < 0)
		return -EPROTO;
	magnet_nl_str(tb, MAGNET_FILTER_A_NAME, f->name, sizeof(f->name));
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (tb[keys[i].attr])
			f->keys |= keys[i].bit;
	f->event = magnet_nl_u32(tb, MAGNET_FILTER_A_EVENT);
	f->cpu = magnet_nl_u32(tb, MAGNET_FILTER_A_CPU);
	f->pid = magnet_nl_u32(tb, MAGNET_FILTER_A_PID);
	f->tgid = magnet_nl_u32(tb, MAGNET_FILTER_A_TGID);
	f->abstract_id = magnet_nl_u64(tb, MAGNET_FILTER_A_ABSTRACT_ID);
	f->cgroup = magnet_nl_u64(tb, MAGNET_FILTER_A_CGROUP);
	f->priority = (__s32)magnet_nl_u32(tb, MAGNET_FILTER_A_PRIORITY);
	f->action = magnet_nl_u32(tb, MAGNET_FILTER_A_ACTION);
	f->sample_every = magnet_nl_u32(tb, MAGNET_FILTER_A_SAMPLE_EVERY);
	f->sample_period_ns = magnet_nl_u64(tb, MAGNET_FILTER_A_SAMPLE_PERIOD);
	f->matched = magnet_nl_u64(tb, MAGNET_FILTER_A_MATCHED);
	f->delivered = magnet_nl_u64(tb, MAGNET_FILTER_A_DELIVERED);
	f->dropped = magnet_nl_u64(tb, MAGNET_FILTER_A_DROPPED);
	nla_for_each_nested(a, nest, rem) {
		if (nla_type(a) != MAGNET_FILTER_A_STREAM ||
		    f->nr_streams == MAGNET_FILTER_STREAMS_MAX)
			continue;
		nla_strlcpy(f->streams[f->nr_streams++], a, MAGNET_NAME_MAX);
	}
	return 0;
}

static int parse_one(struct nlattr **tb, void *arg)
{
	return parse_filter(tb[MAGNET_A_FILTER], arg);
}

int magnet_filter_get(struct magnet_ctl *h, const char *name,
		      struct magnet_filter_info *f)
{
	return magnet_nl_obj_get(h, &filter_obj, name, parse_one, f,
				 sizeof(*f));
}

struct filter_walk {
	magnet_filter_cb cb;
	void *ctx;
};

static int parse_walk(struct nlattr **tb, void *arg)
{
	struct filter_walk *w = arg;
	struct magnet_filter_info f;
	int err = parse_filter(tb[MAGNET_A_FILTER], &f);

	return err ? err : w->cb(&f, w->ctx);
}

int magnet_filter_list(struct magnet_ctl *h, magnet_filter_cb cb, void *ctx)
{
	struct filter_walk w = { .cb = cb, .ctx = ctx };

	if (!cb)
		return magnet_nl_set_error(h, -EINVAL);
	return magnet_nl_dump(h, MAGNET_CMD_FILTER_GET, parse_walk, &w);
}
