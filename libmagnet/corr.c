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

static int put_str(struct nl_msg *msg, int type, const char *s)
{
	if (!s || !s[0] || strlen(s) >= MAGNET_NAME_MAX)
		return -EINVAL;
	return nla_put_string(msg, type, s) < 0 ? -EMSGSIZE : 0;
}

static int put_corr(struct nl_msg *msg, const struct magnet_corr_info *c)
{
	struct nlattr *nest = nla_nest_start(msg, MAGNET_A_CORR), *step;
	unsigned int i, k;
	int err;

	if (!nest)
		return -EMSGSIZE;
	err = put_str(msg, MAGNET_CORR_A_NAME, c->name);
	if (err)
		return err;
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
	if (c->stream[0]) {
		err = put_str(msg, MAGNET_CORR_A_STREAM, c->stream);
		if (err)
			return err;
	}
	nla_nest_end(msg, nest);
	return 0;
}

int magnet_corr_add(struct magnet_ctl *h, const struct magnet_corr_info *c)
{
	struct nl_msg *msg = magnet_nl_req_new(h, MAGNET_CMD_CORR_NEW, NLM_F_ACK);
	int err;

	if (!msg)
		return magnet_nl_set_error(h, -ENOMEM);
	err = put_corr(msg, c);
	if (err) {
		nlmsg_free(msg);
		return magnet_nl_set_error(h, err);
	}
	return magnet_nl_req_run(h, msg, NULL, NULL);
}

static struct nl_msg *req_named(struct magnet_ctl *h, __u8 cmd, int flags,
				const char *name, int *err)
{
	struct nl_msg *msg = magnet_nl_req_new(h, cmd, flags);
	struct nlattr *nest;

	*err = -ENOMEM;
	if (!msg)
		return NULL;
	nest = nla_nest_start(msg, MAGNET_A_CORR);
	*err = nest ? put_str(msg, MAGNET_CORR_A_NAME, name) : -EMSGSIZE;
	if (*err) {
		nlmsg_free(msg);
		return NULL;
	}
	nla_nest_end(msg, nest);
	return msg;
}

int magnet_corr_del(struct magnet_ctl *h, const char *name)
{
	int err;
	struct nl_msg *msg = req_named(h, MAGNET_CMD_CORR_DEL, NLM_F_ACK,
				       name, &err);

	if (!msg)
		return magnet_nl_set_error(h, err);
	return magnet_nl_req_run(h, msg, NULL, NULL);
}

static __u64 u64_of(struct nlattr **tb, int t)
{
	return tb[t] ? nla_get_u64(tb[t]) : 0;
}

static int parse_corr(struct nlattr *nest, struct magnet_corr_info *c)
{
	struct nlattr *tb[MAGNET_CORR_A_MAX + 1], *a, *e;
	int rem, rem2;

	memset(c, 0, sizeof(*c));
	if (!nest || nla_parse_nested(tb, MAGNET_CORR_A_MAX, nest,
				      corr_policy) < 0)
		return -EPROTO;
	if (tb[MAGNET_CORR_A_NAME])
		nla_strlcpy(c->name, tb[MAGNET_CORR_A_NAME], sizeof(c->name));
	if (tb[MAGNET_CORR_A_STREAM])
		nla_strlcpy(c->stream, tb[MAGNET_CORR_A_STREAM],
			    sizeof(c->stream));
	c->id = tb[MAGNET_CORR_A_ID] ? nla_get_u32(tb[MAGNET_CORR_A_ID]) : 0;
	c->pending = tb[MAGNET_CORR_A_PENDING] ?
		     nla_get_u32(tb[MAGNET_CORR_A_PENDING]) : 0;
	c->window_ns = u64_of(tb, MAGNET_CORR_A_WINDOW);
	c->events = u64_of(tb, MAGNET_CORR_A_EVENTS);
	c->completed = u64_of(tb, MAGNET_CORR_A_COMPLETED);
	c->expired = u64_of(tb, MAGNET_CORR_A_EXPIRED);
	c->partial = u64_of(tb, MAGNET_CORR_A_PARTIAL);
	c->overflow = u64_of(tb, MAGNET_CORR_A_OVERFLOW);
	c->stray = u64_of(tb, MAGNET_CORR_A_STRAY);
	c->lost = u64_of(tb, MAGNET_CORR_A_LOST);
	c->late = u64_of(tb, MAGNET_CORR_A_LATE);
	c->records = u64_of(tb, MAGNET_CORR_A_RECORDS);
	c->in_written = u64_of(tb, MAGNET_CORR_A_IN_WRITTEN);
	c->in_read = u64_of(tb, MAGNET_CORR_A_IN_READ);
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
	int err;
	struct nl_msg *msg = req_named(h, MAGNET_CMD_CORR_GET, 0, name, &err);

	if (!msg)
		return magnet_nl_set_error(h, err);
	memset(c, 0, sizeof(*c));
	return magnet_nl_req_run(h, msg, parse_one, c);
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
	struct nl_msg *msg = magnet_nl_req_new(h, MAGNET_CMD_CORR_GET,
					       NLM_F_DUMP);
	struct corr_walk w = { .cb = cb, .ctx = ctx };

	if (!msg)
		return magnet_nl_set_error(h, -ENOMEM);
	return magnet_nl_req_run(h, msg, parse_walk, &w);
}
