// SPDX-License-Identifier: GPL-2.0-only
/*
 * magnetctl filter { add | del | list | show }  (docs/FILTERS.md)
 *
 *   filter add NAME [KEY VALUE]... [priority N] ACTION
 *     KEY    := event PROBE | cpu N | id ABSTRACT_ID | pid N | tgid N |
 *               cgroup { ID | PATH }
 *     ACTION := drop | [stream STREAM]... [every N | period DURATION]
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "magnetctl.h"
#include "output.h"

static int filter_help(void)
{
	printf("Usage: magnetctl filter add NAME [KEY VALUE]... [priority N] ACTION\n"
	       "       magnetctl filter del NAME\n"
	       "       magnetctl filter list\n"
	       "       magnetctl filter show NAME\n"
	       "KEY      := { event PROBE | cpu N | id ABSTRACT_ID | pid N | tgid N |\n"
	       "             cgroup { ID | PATH } }   (a key left out matches anything)\n"
	       "ACTION   := { drop | [stream STREAM]... [every N | period DURATION] }\n"
	       "PROBE    := { NAME | ID }\n"
	       "DURATION := NUMBER[ns|us|ms|s] (default ns)\n"
	       "The most specific matching filter acts, then the higher priority,\n"
	       "then the older one.  Without stream, events go to the probe's stream.\n");
	return MC_EXIT_OK;
}

static int parse_s32(const char *s, int32_t *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (*end || errno || v < INT32_MIN || v > INT32_MAX)
		return -EINVAL;
	*out = (int32_t)v;
	return 0;
}

/* A probe name is looked up in the kernel later: *@name. */
static int parse_event(const char *s, uint32_t *id, const char **name)
{
	if (!mc_parse_u32(s, id))
		return 0;
	if (!mc_name_ok(s))
		return mc_usage_error("filter add: bad event '%s'", s);
	*name = s;
	return 0;
}

/* Everything after NAME, without the kernel (probe names: @event). */
static int parse_add(int argc, char **argv, struct magnet_filter_info *f,
		     const char **event)
{
	const struct mc_match m = {
		.keys = &f->keys, .cpu = &f->cpu, .pid = &f->pid,
		.tgid = &f->tgid, .abstract_id = &f->abstract_id,
		.cgroup = &f->cgroup,
	};
	unsigned long long v;
	int i, ret;

	for (i = 1; i < argc; i++) {
		const char *kw = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(kw, "drop")) {
			f->action = MAGNET_FILTER_DROP;
			continue;
		}
		if (!val)
			return mc_usage_error("filter add: '%s' needs a value", kw);
		i++;
		ret = mc_parse_match_key("filter add", kw, val, &m);
		if (ret != -ENOENT) {
			if (ret)
				return ret;
			continue;
		}
		if (!strcmp(kw, "event")) {
			ret = parse_event(val, &f->event, event);
			if (ret)
				return ret;
			f->keys |= MAGNET_FILTER_KEY_EVENT;
		} else if (!strcmp(kw, "priority")) {
			if (parse_s32(val, &f->priority))
				return mc_usage_error("filter add: bad priority '%s'", val);
		} else if (!strcmp(kw, "stream")) {
			if (f->nr_streams == MAGNET_FILTER_STREAMS_MAX)
				return mc_usage_error("filter add: at most %d streams",
						      MAGNET_FILTER_STREAMS_MAX);
			if (!mc_name_ok(val))
				return mc_usage_error("filter add: bad stream name '%s'", val);
			strcpy(f->streams[f->nr_streams++], val);
		} else if (!strcmp(kw, "every")) {
			if (mc_parse_u32(val, &f->sample_every) || !f->sample_every)
				return mc_usage_error("filter add: bad every '%s' (a number > 0)",
						      val);
		} else if (!strcmp(kw, "period")) {
			if (mc_parse_duration(val, &v))
				return mc_usage_error("filter add: bad period '%s' (NUMBER[ns|us|ms|s] > 0)",
						      val);
			f->sample_period_ns = v;
		} else {
			return mc_usage_error("filter add: unexpected argument '%s'", kw);
		}
	}
	return 0;
}

static int filter_add(int argc, char **argv)
{
	struct magnet_filter_info f;
	struct magnet_probe_info p;
	const char *event = NULL;
	struct magnet_ctl *h;
	int ret;

	ret = mc_check_name("filter", "filter", "add", argc, argv, 0);
	if (ret)
		return ret;
	memset(&f, 0, sizeof(f));
	strcpy(f.name, argv[0]);
	ret = parse_add(argc, argv, &f, &event);
	if (ret)
		return ret;
	ret = mc_ctl_open(&h);
	if (ret)
		return ret;
	if (event) {
		ret = magnet_probe_get(h, event, &p);
		if (ret)
			ret = mc_ctl_error(h, ret, "filter add: event");
		else
			f.event = p.id;
	}
	if (!ret) {
		ret = magnet_filter_add(h, &f);
		if (ret)
			ret = mc_name_error(h, ret, "filter", "add", argv[0]);
	}
	magnet_ctl_close(h);
	return ret;
}

static int filter_del(int argc, char **argv)
{
	return mc_name_request("filter", "filter", "del", argc, argv,
			       magnet_filter_del);
}

/* A key: its value, or "*" (text) / nothing (JSON) when a wildcard. */
static void print_key(const struct magnet_filter_info *f, __u32 bit,
		      const char *key, const char *fmt, const char *wfmt,
		      unsigned long long v)
{
	if (f->keys & bit)
		out_uint(key, fmt, v);
	else
		out_text(wfmt, "*");
}

static void print_filter(const struct magnet_filter_info *f)
{
	char streams[MAGNET_FILTER_STREAMS_MAX * MAGNET_NAME_MAX] = "";
	char sample[32] = "-";
	char prio[16];
	unsigned int i;

	out_open_object(NULL);
	out_string("name", "%-16s ", f->name);
	print_key(f, MAGNET_FILTER_KEY_EVENT, "event", "%5llu ", "%5s ", f->event);
	print_key(f, MAGNET_FILTER_KEY_CPU, "cpu", "%4llu ", "%4s ", f->cpu);
	print_key(f, MAGNET_FILTER_KEY_ABSTRACT_ID, "id", "%10llu ", "%10s ",
		  f->abstract_id);
	print_key(f, MAGNET_FILTER_KEY_PID, "pid", "%7llu ", "%7s ", f->pid);
	print_key(f, MAGNET_FILTER_KEY_TGID, "tgid", "%7llu ", "%7s ", f->tgid);
	print_key(f, MAGNET_FILTER_KEY_CGROUP, "cgroup", "%7llu ", "%7s ",
		  f->cgroup);
	if (f->priority >= 0) {
		out_uint("priority", "%5llu ", (uint64_t)f->priority);
	} else {
		snprintf(prio, sizeof(prio), "%d", f->priority);
		out_string("priority", "%5s ", prio);
	}
	out_string("action", "%-7s ",
		   f->action == MAGNET_FILTER_DROP ? "drop" : "deliver");
	if (f->sample_every) {
		out_uint("every", NULL, f->sample_every);
		snprintf(sample, sizeof(sample), "1/%u", f->sample_every);
	}
	if (f->sample_period_ns) {
		out_uint("period_ns", NULL, f->sample_period_ns);
		snprintf(sample, sizeof(sample), "%lluns",
			 (unsigned long long)f->sample_period_ns);
	}
	out_text("%-12s ", sample);
	for (i = 0; i < f->nr_streams; i++) {
		if (i)
			strcat(streams, ",");
		strcat(streams, f->streams[i]);
	}
	/* JSON: comma-separated, "" for the probe's own stream */
	out_string("streams", NULL, streams);
	out_text("%-16s ", streams[0] ? streams : "(probe's)");
	out_uint("matched", "%12llu ", f->matched);
	out_uint("delivered", "%12llu ", f->delivered);
	out_uint("dropped", "%12llu\n", f->dropped);
	out_close_object();
}

static int collect(const struct magnet_filter_info *f, void *ctx)
{
	return mc_vec_push(ctx, f);
}

static void print_header(void)
{
	out_text("%-16s %5s %4s %10s %7s %7s %7s %5s %-7s %-12s %-16s %12s %12s %12s\n",
		 "NAME", "EVENT", "CPU", "ID", "PID", "TGID", "CGROUP", "PRIO",
		 "ACTION", "SAMPLE", "STREAMS", "MATCHED", "DELIVERED",
		 "DROPPED");
}

static int filter_list(int argc, char **argv)
{
	struct mc_vec fv = { .size = sizeof(struct magnet_filter_info) };
	const struct magnet_filter_info *f;
	struct magnet_ctl *h;
	size_t i;
	int ret;

	if (argc > 0)
		return mc_usage_error("filter list: unexpected argument '%s'", argv[0]);
	ret = mc_ctl_open(&h);
	if (ret)
		return ret;
	ret = magnet_filter_list(h, collect, &fv);
	if (ret) {
		ret = mc_ctl_error(h, ret, "filter list");
	} else {
		f = fv.v;
		print_header();
		out_open_array(NULL);
		for (i = 0; i < fv.n; i++)
			print_filter(&f[i]);
		out_close_array();
	}
	free(fv.v);
	magnet_ctl_close(h);
	return ret;
}

static int filter_show(int argc, char **argv)
{
	struct magnet_filter_info f;
	struct magnet_ctl *h;
	int ret;

	ret = mc_check_name("filter", "filter", "show", argc, argv, 1);
	if (ret)
		return ret;
	ret = mc_ctl_open(&h);
	if (ret)
		return ret;
	ret = magnet_filter_get(h, argv[0], &f);
	if (ret) {
		ret = mc_name_error(h, ret, "filter", "show", argv[0]);
	} else {
		print_header();
		print_filter(&f);
	}
	magnet_ctl_close(h);
	return ret;
}

static const struct mc_cmd filter_cmds[] = {
	{ "add",	filter_add },
	{ "create",	filter_add },
	{ "del",	filter_del },
	{ "delete",	filter_del },
	{ "list",	filter_list },
	{ "ls",		filter_list },
	{ "show",	filter_show },
	{ NULL,		NULL },
};

int do_filter(int argc, char **argv)
{
	return mc_dispatch("filter", filter_cmds, filter_help, "list", argc, argv);
}
