// SPDX-License-Identifier: GPL-2.0-only
/*
 * magnetctl correlate { add | del | list | show }  (docs/CORRELATE.md)
 *
 *   correlate add NAME chain STEP,STEP[,STEP]... window DURATION stream STREAM
 *     STEP := POINT[|POINT]...   POINT := { NAME | ID }
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "magnetctl.h"
#include "output.h"

static int corr_help(void)
{
	printf("Usage: magnetctl correlate add NAME chain STEP,STEP[,STEP]... window DURATION\n"
	       "                              stream STREAM\n"
	       "       magnetctl correlate del NAME\n"
	       "       magnetctl correlate list\n"
	       "       magnetctl correlate show NAME\n"
	       "STEP     := POINT[|POINT]...   (2 to 8 steps, up to 4 points each: the kernel checks)\n"
	       "POINT    := { NAME | ID }\n"
	       "DURATION := NUMBER[ns|us|ms|s] (default ns)\n"
	       "Per abstract ID, events of the chain's steps in time order within the\n"
	       "window make one record (event CORR) in STREAM with the time between steps.\n");
	return MC_EXIT_OK;
}

/* Names are looked up in the kernel later; numbers are event IDs. */
struct chain_arg {
	const char *name[MAGNET_CORR_INFO_STEPS][MAGNET_CORR_INFO_ALTS];
};

static int parse_chain(char *s, struct magnet_corr_info *c,
		       struct chain_arg *ca)
{
	char *step, *pt, *sp1, *sp2;

	for (step = strtok_r(s, ",", &sp1); step;
	     step = strtok_r(NULL, ",", &sp1)) {
		unsigned int i = c->nsteps;

		if (i == MAGNET_CORR_INFO_STEPS)
			return mc_usage_error("correlate add: chain too long (more than %d steps)",
					      MAGNET_CORR_INFO_STEPS);
		for (pt = strtok_r(step, "|", &sp2); pt;
		     pt = strtok_r(NULL, "|", &sp2)) {
			unsigned int k = c->nalt[i];

			if (k == MAGNET_CORR_INFO_ALTS)
				return mc_usage_error("correlate add: step %u: too many points",
						      i + 1);
			if (mc_parse_u32(pt, &c->event[i][k])) {
				if (!mc_name_ok(pt))
					return mc_usage_error("correlate add: bad point '%s'",
							      pt);
				ca->name[i][k] = pt;
			}
			c->nalt[i]++;
		}
		if (!c->nalt[i])
			return mc_usage_error("correlate add: empty step %u in the chain",
					      i + 1);
		c->nsteps++;
	}
	if (!c->nsteps)
		return mc_usage_error("correlate add: empty chain");
	return 0;
}

static int parse_add(int argc, char **argv, struct magnet_corr_info *c,
		     struct chain_arg *ca)
{
	unsigned long long v;
	bool chain = false;
	int i, ret;

	for (i = 1; i < argc; i++) {
		const char *kw = argv[i];
		char *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!val)
			return mc_usage_error("correlate add: '%s' needs a value", kw);
		i++;
		if (!strcmp(kw, "chain")) {
			if (chain)
				return mc_usage_error("correlate add: chain given twice");
			chain = true;
			ret = parse_chain(val, c, ca);
			if (ret)
				return ret;
		} else if (!strcmp(kw, "window")) {
			if (mc_parse_duration(val, &v))
				return mc_usage_error("correlate add: bad window '%s' (NUMBER[ns|us|ms|s] > 0)",
						      val);
			c->window_ns = v;
		} else if (!strcmp(kw, "stream")) {
			if (!mc_name_ok(val))
				return mc_usage_error("correlate add: bad stream name '%s'", val);
			strcpy(c->stream, val);
		} else {
			return mc_usage_error("correlate add: unexpected argument '%s'", kw);
		}
	}
	if (!chain)
		return mc_usage_error("correlate add: missing chain");
	if (!c->window_ns)
		return mc_usage_error("correlate add: missing window");
	if (!c->stream[0])
		return mc_usage_error("correlate add: missing stream");
	return 0;
}

static int corr_add(int argc, char **argv)
{
	struct magnet_corr_info c;
	struct magnet_probe_info p;
	struct chain_arg ca;
	struct magnet_ctl *h;
	unsigned int i, k;
	int ret;

	ret = mc_check_name("correlate", "correlator", "add", argc, argv, 0);
	if (ret)
		return ret;
	memset(&c, 0, sizeof(c));
	memset(&ca, 0, sizeof(ca));
	strcpy(c.name, argv[0]);
	ret = parse_add(argc, argv, &c, &ca);
	if (ret)
		return ret;
	ret = mc_ctl_open(&h);
	if (ret)
		return ret;
	for (i = 0; !ret && i < c.nsteps; i++) {
		for (k = 0; !ret && k < c.nalt[i]; k++) {
			if (!ca.name[i][k])
				continue;
			ret = magnet_probe_get(h, ca.name[i][k], &p);
			if (ret) {
				char what[96];

				snprintf(what, sizeof(what),
					 "correlate add: unknown point '%s'",
					 ca.name[i][k]);
				ret = mc_ctl_error(h, ret, what);
			} else {
				c.event[i][k] = p.id;
			}
		}
	}
	if (!ret) {
		ret = magnet_corr_add(h, &c);
		if (ret)
			ret = mc_name_error(h, ret, "correlate", "add",
					    argv[0]);
	}
	magnet_ctl_close(h);
	return ret;
}

static int corr_del(int argc, char **argv)
{
	return mc_name_request("correlate", "correlator", "del", argc, argv,
			       magnet_corr_del);
}

/* Event IDs to names for printing chains. */
struct names {
	char name[MAGNET_EVENT_MAX + 1][MAGNET_NAME_MAX];
};

static int name_cb(const struct magnet_probe_info *p, void *ctx)
{
	struct names *n = ctx;

	if (p->id <= MAGNET_EVENT_MAX)
		snprintf(n->name[p->id], MAGNET_NAME_MAX, "%s", p->name);
	return 0;
}

static void chain_str(const struct magnet_corr_info *c, const struct names *n,
		      char *buf, size_t len)
{
	unsigned int i, k;
	size_t off = 0;

	buf[0] = '\0';
	for (i = 0; i < c->nsteps; i++) {
		for (k = 0; k < c->nalt[i]; k++) {
			__u32 id = c->event[i][k];
			const char *sep = k ? "|" : i ? "," : "";

			if (id <= MAGNET_EVENT_MAX && n->name[id][0])
				off += snprintf(buf + off, len - off, "%s%s",
						sep, n->name[id]);
			else
				off += snprintf(buf + off, len - off, "%s%u",
						sep, id);
			if (off >= len)
				return;
		}
	}
}

static void print_header(void)
{
	out_text("%-12s %3s %-40s %12s %-12s %10s %10s %8s %8s %8s %8s %8s %6s %7s\n",
		 "NAME", "ID", "CHAIN", "WINDOW_NS", "STREAM", "EVENTS",
		 "COMPLETED", "EXPIRED", "PARTIAL", "OVERFLOW", "STRAY", "LOST",
		 "LATE", "PENDING");
}

static void print_corr(const struct magnet_corr_info *c, const struct names *n)
{
	char chain[MAGNET_CORR_INFO_STEPS * MAGNET_CORR_INFO_ALTS *
		   (MAGNET_NAME_MAX + 1)];

	chain_str(c, n, chain, sizeof(chain));
	out_open_object(NULL);
	out_string("name", "%-12s ", c->name);
	out_uint("id", "%3llu ", c->id);
	out_string("chain", "%-40s ", chain);
	out_uint("window_ns", "%12llu ", c->window_ns);
	out_string("stream", "%-12s ", c->stream);
	out_uint("events", "%10llu ", c->events);
	out_uint("completed", "%10llu ", c->completed);
	out_uint("expired", "%8llu ", c->expired);
	out_uint("partial", "%8llu ", c->partial);
	out_uint("overflow", "%8llu ", c->overflow);
	out_uint("stray", "%8llu ", c->stray);
	out_uint("lost", "%8llu ", c->lost);
	out_uint("late", "%6llu ", c->late);
	out_uint("pending", "%7llu\n", c->pending);
	out_uint("records", NULL, c->records);
	out_uint("in_written", NULL, c->in_written);
	out_uint("in_read", NULL, c->in_read);
	out_close_object();
}

static int collect(const struct magnet_corr_info *c, void *ctx)
{
	return mc_vec_push(ctx, c);
}

static int corr_list(int argc, char **argv)
{
	struct mc_vec cv = { .size = sizeof(struct magnet_corr_info) };
	struct names *n = calloc(1, sizeof(*n));
	const struct magnet_corr_info *c;
	struct magnet_ctl *h;
	size_t i;
	int ret;

	if (argc > 0) {
		free(n);
		return mc_usage_error("correlate list: unexpected argument '%s'", argv[0]);
	}
	if (!n) {
		mc_error("correlate list: out of memory");
		return MC_EXIT_FILE;
	}
	ret = mc_ctl_open(&h);
	if (ret) {
		free(n);
		return ret;
	}
	ret = magnet_probe_list(h, name_cb, n);
	if (!ret)
		ret = magnet_corr_list(h, collect, &cv);
	if (ret) {
		ret = mc_ctl_error(h, ret, "correlate list");
	} else {
		c = cv.v;
		print_header();
		out_open_array(NULL);
		for (i = 0; i < cv.n; i++)
			print_corr(&c[i], n);
		out_close_array();
	}
	free(cv.v);
	free(n);
	magnet_ctl_close(h);
	return ret;
}

static int corr_show(int argc, char **argv)
{
	struct magnet_corr_info c;
	struct names *n;
	struct magnet_ctl *h;
	int ret;

	ret = mc_check_name("correlate", "correlator", "show", argc, argv, 1);
	if (ret)
		return ret;
	n = calloc(1, sizeof(*n));
	if (!n) {
		mc_error("correlate show: out of memory");
		return MC_EXIT_FILE;
	}
	ret = mc_ctl_open(&h);
	if (ret) {
		free(n);
		return ret;
	}
	ret = magnet_corr_get(h, argv[0], &c);
	if (!ret)
		ret = magnet_probe_list(h, name_cb, n);
	if (ret) {
		ret = mc_name_error(h, ret, "correlate", "show", argv[0]);
	} else {
		print_header();
		print_corr(&c, n);
	}
	free(n);
	magnet_ctl_close(h);
	return ret;
}

static const struct mc_cmd corr_cmds[] = {
	{ "add",	corr_add },
	{ "create",	corr_add },
	{ "del",	corr_del },
	{ "delete",	corr_del },
	{ "list",	corr_list },
	{ "ls",		corr_list },
	{ "show",	corr_show },
	{ NULL,		NULL },
};

int do_correlate(int argc, char **argv)
{
	return mc_dispatch("correlate", corr_cmds, corr_help, "list", argc, argv);
}
