// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Correlators: CORR_NEW, CORR_DEL, CORR_GET (do and dump), attributes
 * nested in MAGNET_A_CORR (docs/CORRELATE.md).
 */
#include <errno.h>
#include <string.h>
#include <netlink/netlink.h>
#include <netlink/genl/genl.h>

#include "internal.h"

static struct nla_policy corr_policy[MAGNET_CORR_A_MAX + 1] = {
	[MAGNET_CORR_A_NAME]		= { .type = NLA_STRING },
	[MAGNET_CORR_A_ID]		= { .type = NLA_U32 },
	[MAGNET_CORR_A_STEP]		= { .type = NLA_NESTED },
	[MAGNET_CORR_A_WINDOW]		= { .type = NLA_U64 },
	[MAGNET_CORR_A_STREAM]		= { .type = NLA_STRING },
	[MAGNET_CORR_A_EVENTS]		= { .type = NLA_U64 },
	[MAGNET_CORR_A_COMPLETED]	= { .type = NLA_U64 },
	[MAGNET_CORR_A_EXPIRED]		= { .type = NLA_U64 },
	[MAGNET_CORR_A_PARTIAL]		= { .type = NLA_U64 },
	[MAGNET_CORR_A_OVERFLOW]	= { .type = NLA_U64 },
	[MAGNET_CORR_A_STRAY]		= { .type = NLA_U64 },
	[MAGNET_CORR_A_LOST]		= { .type = NLA_U64 },
	[MAGNET_CORR_A_LATE]		= { .type = NLA_U64 },
	[MAGNET_CORR_A_PENDING]		= { .type = NLA_U32 },
	[MAGNET_CORR_A_RECORDS]		= { .type = NLA_U64 },
	[MAGNET_CORR_A_IN_WRITTEN]	= { .type = NLA_U64 },
	[MAGNET_CORR_A_IN_READ]		= { .type = NLA_U64 },
};

static const struct magnet_nl_obj corr_obj = {
	.nest = MAGNET_A_CORR,
	.name = MAGNET_CORR_A_NAME,
	.cmd_new = MAGNET_CMD_CORR_NEW,
	.cmd_del = MAGNET_CMD_CORR_DEL,
	.cmd_get = MAGNET_CMD_CORR_GET,
};

/* Into the nest, after the name. */
static int put_corr(struct nl_msg *msg, const void *info)
{
	const struct magnet_corr_info *c = info;
	struct nlattr *step;
	unsigned int i, k;

	/* the kernel checks the counts and says what is wrong */
	if (c->nsteps > MAGNET_CORR_INFO_STEPS)
		return -EINVAL;
	for (i = 0; i < c->nsteps; i++) {
		step = nla_nest_start(msg, MAGNET_CORR_A_STEP);
		if (!step || c->nalt[i] > MAGNET_CORR_INFO_ALTS)
			return step ? -EINVAL : -EMSGSIZE;
		for (k = 0; k < c->nalt[i]; k++)
			if (nla_put_u32(msg, MAGNET_CORR_STEP_A_EVENT,
					c->event[i][k]) < 0)
				return -EMSGSIZE;
		nla_nest_end(msg, step);
	}
	if ((c->window_ns &&
	     nla_put_u64(msg, MAGNET_CORR_A_WINDOW, c->window_ns) < 0))
		return -EMSGSIZE;
	if (c->stream[0])
		return magnet_nl_put_str(msg, MAGNET_CORR_A_STREAM, c->stream);
	return 0;
}

int magnet_corr_add(struct magnet_ctl *h, const struct magnet_corr_info *c)
{
	return magnet_nl_obj_add(h, &corr_obj, c->name, put_corr, c);
}

int magnet_corr_del(struct magnet_ctl *h, const char *name)
{
	return magnet_nl_obj_del(h, &corr_obj, name);
}

static int parse_corr(struct nlattr *nest, struct magnet_corr_info *c)
{
	struct nlattr *tb[MAGNET_CORR_A_MAX + 1], *a, *e;
	int rem, rem2;

	memset(c, 0, sizeof(*c));
	if (!nest || nla_parse_nested(tb, MAGNET_CORR_A_MAX, nest,
				      corr_policy) < 0)
		return -EPROTO;
	magnet_nl_str(tb, MAGNET_CORR_A_NAME, c->name, sizeof(c->name));
	magnet_nl_str(tb, MAGNET_CORR_A_STREAM, c->stream, sizeof(c->stream));
	c->id = magnet_nl_u32(tb, MAGNET_CORR_A_ID);
	c->pending = magnet_nl_u32(tb, MAGNET_CORR_A_PENDING);
	c->window_ns = magnet_nl_u64(tb, MAGNET_CORR_A_WINDOW);
	c->events = magnet_nl_u64(tb, MAGNET_CORR_A_EVENTS);
	c->completed = magnet_nl_u64(tb, MAGNET_CORR_A_COMPLETED);
	c->expired = magnet_nl_u64(tb, MAGNET_CORR_A_EXPIRED);
	c->partial = magnet_nl_u64(tb, MAGNET_CORR_A_PARTIAL);
	c->overflow = magnet_nl_u64(tb, MAGNET_CORR_A_OVERFLOW);
	c->stray = magnet_nl_u64(tb, MAGNET_CORR_A_STRAY);
	c->lost = magnet_nl_u64(tb, MAGNET_CORR_A_LOST);
	c->late = magnet_nl_u64(tb, MAGNET_CORR_A_LATE);
	c->records = magnet_nl_u64(tb, MAGNET_CORR_A_RECORDS);
	c->in_written = magnet_nl_u64(tb, MAGNET_CORR_A_IN_WRITTEN);
	c->in_read = magnet_nl_u64(tb, MAGNET_CORR_A_IN_READ);
	nla_for_each_nested(a, nest, rem) {
		if (nla_type(a) != MAGNET_CORR_A_STEP ||
		    c->nsteps == MAGNET_CORR_STEPS_MAX)
			continue;
		nla_for_each_nested(e, a, rem2) {
			if (nla_type(e) != MAGNET_CORR_STEP_A_EVENT ||
			    nla_len(e) < 4 ||
			    c->nalt[c->nsteps] == MAGNET_CORR_ALTS_MAX)
				continue;
			c->event[c->nsteps][c->nalt[c->nsteps]++] =
				nla_get_u32(e);
		}
		c->nsteps++;
	}
	return 0;
}

static int parse_one(struct nlattr **tb, void *arg)
{
	return parse_corr(tb[MAGNET_A_CORR], arg);
}

int magnet_corr_get(struct magnet_ctl *h, const char *name,
		    struct magnet_corr_info *c)
{
	return magnet_nl_obj_get(h, &corr_obj, name, parse_one, c, sizeof(*c));
}

struct corr_walk {
	magnet_corr_cb cb;
	void *ctx;
};

static int parse_walk(struct nlattr **tb, void *arg)
{
	struct corr_walk *w = arg;
	struct magnet_corr_info c;
	int err = parse_corr(tb[MAGNET_A_CORR], &c);

	return err ? err : w->cb(&c, w->ctx);
}

int magnet_corr_list(struct magnet_ctl *h, magnet_corr_cb cb, void *ctx)
{
	struct corr_walk w = { .cb = cb, .ctx = ctx };

	return magnet_nl_dump(h, MAGNET_CMD_CORR_GET, parse_walk, &w);
}
