// SPDX-License-Identifier: GPL-2.0-only
/*
 * magnetctl synth { add | del | list | show }  (docs/SYNTH.md)
 *
 *   synth add NAME probe PROBE [KEY VALUE]... [by GROUP[,GROUP...]]
 *             value { size | interval | field OFF:WIDTH }
 *             period DURATION stream STREAM [keys N]
 *     KEY   := cpu N | id ABSTRACT_ID | pid N | tgid N | cgroup { ID | PATH }
 *     GROUP := event | cpu | id | pid | tgid | cgroup
 *   synth show NAME [values [KEY VALUE]...]
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "magnetctl.h"
#include "output.h"

static int synth_help(void)
{
	printf("Usage: magnetctl synth add NAME probe PROBE [KEY VALUE]... [by GROUP[,GROUP]...]\n"
	       "                 value { size | interval | field OFF:WIDTH }\n"
	       "                 period DURATION stream STREAM [keys N]\n"
	       "       magnetctl synth del NAME\n"
	       "       magnetctl synth list\n"
	       "       magnetctl synth show NAME [values [GROUP VALUE]...]\n"
	       "PROBE    := { NAME | ID }\n"
	       "KEY      := { cpu N | id ABSTRACT_ID | pid N | tgid N | cgroup { ID | PATH } }\n"
	       "            (only events with these keys feed the synthesizer)\n"
	       "GROUP    := { event | cpu | id | pid | tgid | cgroup }\n"
	       "            (statistics are kept per distinct value of these keys)\n"
	       "OFF:WIDTH := payload byte offset and width 1, 2, 4 or 8 (unsigned)\n"
	       "DURATION := NUMBER[ns|us|ms|s] (default ns), 10ms to 1h\n"
	       "show NAME values: the open period's values of every key, or of the\n"
	       "key given by all its GROUP keys.\n");
	return MC_EXIT_OK;
}

static const struct {
	const char *name;
	__u32 bit;
} group_names[] = {
	{ "event", MAGNET_SYNTH_K_EVENT },
	{ "cpu", MAGNET_SYNTH_K_CPU },
	{ "id", MAGNET_SYNTH_K_AID },
	{ "pid", MAGNET_SYNTH_K_PID },
	{ "tgid", MAGNET_SYNTH_K_TGID },
	{ "cgroup", MAGNET_SYNTH_K_CGROUP },
};

#define NGROUPS (sizeof(group_names) / sizeof(group_names[0]))

static int parse_group(const char *s, __u32 *group)
{
	char buf[128], *tok, *save = NULL;
	unsigned int i;

	if (strlen(s) >= sizeof(buf))
		return mc_usage_error("synth add: bad group '%s'", s);
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < NGROUPS; i++)
			if (!strcmp(tok, group_names[i].name))
				break;
		if (i == NGROUPS)
			return mc_usage_error("synth add: bad group key '%s' (event, cpu, id, pid, tgid or cgroup)",
					      tok);
		if (*group & group_names[i].bit)
			return mc_usage_error("synth add: group key '%s' named twice",
					      tok);
		*group |= group_names[i].bit;
	}
	return 0;
}

static const char *const quantity_names[] = {
	[MAGNET_SYNTH_Q_SIZE] = "size",
	[MAGNET_SYNTH_Q_FIELD] = "field",
	[MAGNET_SYNTH_Q_INTERVAL] = "interval",
};

static const char *quantity_name(__u32 q)
{
	return q < __MAGNET_SYNTH_Q_MAX ? quantity_names[q] : "?";
}

static int parse_field(const char *s, __u32 *off, __u32 *width)
{
	char buf[64], *colon;

	if (!s || strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	colon = strchr(buf, ':');
	if (!colon)
		return -EINVAL;
	*colon = '\0';
	if (mc_parse_u32(buf, off) || mc_parse_u32(colon + 1, width))
		return -EINVAL;
	return 0;
}

/* Everything after NAME; a probe name is resolved by the kernel. */
static int parse_add(int argc, char **argv, struct magnet_synth_info *sy)
{
	const struct mc_match m = {
		.keys = &sy->keys, .cpu = &sy->cpu, .pid = &sy->pid,
		.tgid = &sy->tgid, .abstract_id = &sy->abstract_id,
		.cgroup = &sy->cgroup,
	};
	unsigned long long v;
	bool have_value = false;
	int i, ret;

	for (i = 1; i < argc; i++) {
		const char *kw = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!val)
			return mc_usage_error("synth add: '%s' needs a value", kw);
		i++;
		ret = mc_parse_match_key("synth add", kw, val, &m);
		if (ret != -ENOENT) {
			if (ret)
				return ret;
			continue;
		}
		if (!strcmp(kw, "probe")) {
			if (!mc_parse_u32(val, &sy->probe_id)) {
				sy->has_probe_id = true;
			} else {
				if (!mc_name_ok(val))
					return mc_usage_error("synth add: bad probe '%s'", val);
				strcpy(sy->probe, val);
			}
		} else if (!strcmp(kw, "by")) {
			ret = parse_group(val, &sy->group);
			if (ret)
				return ret;
		} else if (!strcmp(kw, "value")) {
			have_value = true;
			if (!strcmp(val, "size")) {
				sy->quantity = MAGNET_SYNTH_Q_SIZE;
			} else if (!strcmp(val, "interval")) {
				sy->quantity = MAGNET_SYNTH_Q_INTERVAL;
			} else if (!strcmp(val, "field")) {
				sy->quantity = MAGNET_SYNTH_Q_FIELD;
				if (i + 1 >= argc ||
				    parse_field(argv[i + 1], &sy->field_offset,
						&sy->field_width))
					return mc_usage_error("synth add: value field needs OFF:WIDTH, got '%s'",
							      i + 1 < argc ? argv[i + 1] : "");
				i++;
			} else {
				return mc_usage_error("synth add: bad value '%s' (size, interval or field OFF:WIDTH)",
						      val);
			}
		} else if (!strcmp(kw, "period")) {
			if (mc_parse_duration(val, &v))
				return mc_usage_error("synth add: bad period '%s' (NUMBER[ns|us|ms|s] > 0)",
						      val);
			sy->period_ns = v;
		} else if (!strcmp(kw, "stream")) {
			if (!mc_name_ok(val))
				return mc_usage_error("synth add: bad stream name '%s'", val);
			strcpy(sy->stream, val);
		} else if (!strcmp(kw, "keys")) {
			if (mc_parse_u32(val, &sy->max_keys) || !sy->max_keys)
				return mc_usage_error("synth add: bad keys '%s' (a number > 0)",
						      val);
		} else {
			return mc_usage_error("synth add: unexpected argument '%s'", kw);
		}
	}
	if (!sy->probe[0] && !sy->has_probe_id)
		return mc_usage_error("synth add: missing 'probe PROBE'");
	if (!have_value)
		return mc_usage_error("synth add: missing 'value { size | interval | field OFF:WIDTH }'");
	if (!sy->period_ns)
		return mc_usage_error("synth add: missing 'period DURATION'");
	if (!sy->stream[0])
		return mc_usage_error("synth add: missing 'stream STREAM'");
	return 0;
}

static int synth_add(int argc, char **argv)
{
	struct magnet_synth_info sy;
	struct magnet_ctl *h;
	int ret;

	ret = mc_check_name("synth", "synthesizer", "add", argc, argv, 0);
	if (ret)
		return ret;
	memset(&sy, 0, sizeof(sy));
	strcpy(sy.name, argv[0]);
	ret = parse_add(argc, argv, &sy);
	if (ret)
		return ret;
	ret = mc_ctl_open(&h);
	if (ret)
		return ret;
	ret = magnet_synth_add(h, &sy);
	if (ret)
		ret = mc_name_error(h, ret, "synth", "add", argv[0]);
	magnet_ctl_close(h);
	return ret;
}

static int synth_del(int argc, char **argv)
{
	return mc_name_request("synth", "synthesizer", "del", argc, argv,
			       magnet_synth_del);
}

static void group_str(__u32 group, char *buf, size_t len)
{
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < NGROUPS; i++) {
		if (!(group & group_names[i].bit))
			continue;
		if (buf[0])
			strncat(buf, ",", len - strlen(buf) - 1);
		strncat(buf, group_names[i].name, len - strlen(buf) - 1);
	}
	if (!buf[0])
		snprintf(buf, len, "-");
}

static void print_match(const struct magnet_synth_info *sy)
{
	char buf[160] = "", part[48];

	if (sy->keys & MAGNET_FILTER_KEY_CPU) {
		out_uint("cpu", NULL, sy->cpu);
		snprintf(part, sizeof(part), "cpu=%u ", sy->cpu);
		strcat(buf, part);
	}
	if (sy->keys & MAGNET_FILTER_KEY_ABSTRACT_ID) {
		out_uint("id", NULL, sy->abstract_id);
		snprintf(part, sizeof(part), "id=%llu ",
			 (unsigned long long)sy->abstract_id);
		strcat(buf, part);
	}
	if (sy->keys & MAGNET_FILTER_KEY_PID) {
		out_uint("pid", NULL, sy->pid);
		snprintf(part, sizeof(part), "pid=%u ", sy->pid);
		strcat(buf, part);
	}
	if (sy->keys & MAGNET_FILTER_KEY_TGID) {
		out_uint("tgid", NULL, sy->tgid);
		snprintf(part, sizeof(part), "tgid=%u ", sy->tgid);
		strcat(buf, part);
	}
	if (sy->keys & MAGNET_FILTER_KEY_CGROUP) {
		out_uint("cgroup", NULL, sy->cgroup);
		snprintf(part, sizeof(part), "cgroup=%llu ",
			 (unsigned long long)sy->cgroup);
		strcat(buf, part);
	}
	if (buf[0])
		buf[strlen(buf) - 1] = '\0';
	out_text("%-14s ", buf[0] ? buf : "*");
}

static void print_synth(struct magnet_ctl *h,
			const struct magnet_synth_info *sy)
{
	char group[64], value[32];
	__u64 missed;
	bool has_missed;

	group_str(sy->group, group, sizeof(group));
	if (sy->quantity == MAGNET_SYNTH_Q_FIELD)
		snprintf(value, sizeof(value), "field %u:%u", sy->field_offset,
			 sy->field_width);
	else
		snprintf(value, sizeof(value), "%s", quantity_name(sy->quantity));
	out_open_object(NULL);
	out_string("name", "%-16s ", sy->name);
	out_string("probe", "%-14s ", sy->probe);
	out_uint("probe_id", NULL, sy->probe_id);
	print_match(sy);
	out_string("by", "%-12s ", group);
	out_string("value", "%-12s ", value);
	if (sy->quantity == MAGNET_SYNTH_Q_FIELD) {
		out_uint("field_offset", NULL, sy->field_offset);
		out_uint("field_width", NULL, sy->field_width);
	}
	out_uint("period_ns", "%12llu ", sy->period_ns);
	out_string("stream", "%-12s ", sy->stream);
	out_uint("keys", "%6llu/", sy->nr_keys);
	out_uint("max_keys", "%-6llu ", sy->max_keys);
	out_uint("start_ns", NULL, sy->start_ns);
	out_uint("matched", "%10llu ", sy->matched);
	out_uint("overflow", "%8llu ", sy->overflow);
	out_uint("records", "%8llu ", sy->records);
	out_uint("records_lost", "%6llu ", sy->records_lost);
	out_uint("short", NULL, sy->shrt);
	out_uint("nmi", NULL, sy->nmi);
	out_uint("reordered", NULL, sy->reordered);
	out_uint("late", NULL, sy->late);
	/* a GET of its own (ABI of the info); an older module has none */
	has_missed = !magnet_synth_get_missed(h, sy->name, &missed);
	if (has_missed)
		out_uint("missed", NULL, missed);
	out_text("short=%llu nmi=%llu reordered=%llu late=%llu",
		 (unsigned long long)sy->shrt, (unsigned long long)sy->nmi,
		 (unsigned long long)sy->reordered,
		 (unsigned long long)sy->late);
	if (has_missed)
		out_text(" missed=%llu", (unsigned long long)missed);
	out_text("\n");
	out_close_object();
}

static void print_header(void)
{
	out_text("%-16s %-14s %-14s %-12s %-12s %12s %13s %10s %8s %8s %6s %s\n",
		 "NAME", "PROBE", "MATCH", "BY", "VALUE", "PERIOD_NS",
		 "KEYS", "MATCHED", "OVERFLOW", "RECORDS", "LOST", "OTHER");
}

static int collect(const struct magnet_synth_info *sy, void *ctx)
{
	return mc_vec_push(ctx, sy);
}

static int synth_list(int argc, char **argv)
{
	struct mc_vec sv = { .size = sizeof(struct magnet_synth_info) };
	const struct magnet_synth_info *sy;
	struct magnet_ctl *h;
	size_t i;
	int ret;

	if (argc > 0)
		return mc_usage_error("synth list: unexpected argument '%s'", argv[0]);
	ret = mc_ctl_open(&h);
	if (ret)
		return ret;
	ret = magnet_synth_list(h, collect, &sv);
	if (ret) {
		ret = mc_ctl_error(h, ret, "synth list");
	} else {
		sy = sv.v;
		print_header();
		out_open_array(NULL);
		for (i = 0; i < sv.n; i++)
			print_synth(h, &sy[i]);
		out_close_array();
	}
	free(sv.v);
	magnet_ctl_close(h);
	return ret;
}

static void print_value(const struct magnet_synth_value *v)
{
	char key[160] = "", part[48];
	unsigned long long sum = v->sum_lo, sumsq = v->sumsq_lo;

	out_open_object(NULL);
	out_string("name", NULL, v->name);
	if (v->group & MAGNET_SYNTH_K_EVENT) {
		out_uint("event", NULL, v->event);
		snprintf(part, sizeof(part), "event=%u ", v->event);
		strcat(key, part);
	}
	if (v->group & MAGNET_SYNTH_K_CPU) {
		out_uint("cpu", NULL, v->cpu);
		snprintf(part, sizeof(part), "cpu=%u ", v->cpu);
		strcat(key, part);
	}
	if (v->group & MAGNET_SYNTH_K_AID) {
		out_uint("id", NULL, v->abstract_id);
		snprintf(part, sizeof(part), "id=%llu ",
			 (unsigned long long)v->abstract_id);
		strcat(key, part);
	}
	if (v->group & MAGNET_SYNTH_K_PID) {
		out_uint("pid", NULL, v->pid);
		snprintf(part, sizeof(part), "pid=%u ", v->pid);
		strcat(key, part);
	}
	if (v->group & MAGNET_SYNTH_K_TGID) {
		out_uint("tgid", NULL, v->tgid);
		snprintf(part, sizeof(part), "tgid=%u ", v->tgid);
		strcat(key, part);
	}
	if (v->group & MAGNET_SYNTH_K_CGROUP) {
		out_uint("cgroup", NULL, v->cgroup);
		snprintf(part, sizeof(part), "cgroup=%llu ",
			 (unsigned long long)v->cgroup);
		strcat(key, part);
	}
	if (key[0])
		key[strlen(key) - 1] = '\0';
	out_text("%-28s ", key[0] ? key : "(all)");
	out_uint("period_start_ns", NULL, v->period_start);
	out_uint("count", "%10llu ", v->count);
	out_uint("min", "%12llu ", v->min);
	out_uint("max", "%12llu ", v->max);
	out_uint("sum_lo", NULL, v->sum_lo);
	out_uint("sum_hi", NULL, v->sum_hi);
	out_uint("sumsq_lo", NULL, v->sumsq_lo);
	out_uint("sumsq_hi", NULL, v->sumsq_hi);
	if (v->sum_hi)
		out_text("%16s ", "(>2^64)");
	else
		out_text("%16llu ", sum);
	(void)sumsq;
	out_uint("mean", NULL, v->mean);
	out_uint("variance", NULL, v->variance);
	out_double("mean_d", "%14.3f ", v->mean_d);
	out_double("variance_d", "%18.3f ", v->variance_d);
	out_uint("flags", NULL, v->flags);
	out_uint("total_count", "%10llu", v->total_count);
	out_uint("total_sum_lo", NULL, v->total_sum_lo);
	out_uint("total_sum_hi", NULL, v->total_sum_hi);
	out_text("\n");
	out_close_object();
}

static int collect_value(const struct magnet_synth_value *v, void *ctx)
{
	(void)ctx;
	print_value(v);
	return 0;
}

static void print_value_header(void)
{
	out_text("%-28s %10s %12s %12s %16s %14s %18s %10s\n", "KEY", "COUNT",
		 "MIN", "MAX", "SUM", "MEAN", "VARIANCE", "TOTAL");
}

/* show NAME values [GROUP VALUE]...: one key when all its keys are given */
static int parse_value_key(int argc, char **argv,
			   struct magnet_synth_value *key)
{
	unsigned long long v;
	unsigned int j;
	int i;

	for (i = 0; i < argc; i += 2) {
		for (j = 0; j < NGROUPS; j++)
			if (!strcmp(argv[i], group_names[j].name))
				break;
		if (j == NGROUPS)
			return mc_usage_error("synth show: bad key '%s' (event, cpu, id, pid, tgid or cgroup)",
					      argv[i]);
		if (i + 1 >= argc)
			return mc_usage_error("synth show: key '%s' needs a value",
					      argv[i]);
		if (group_names[j].bit == MAGNET_SYNTH_K_CGROUP ?
		    mc_parse_cgroup(argv[i + 1], &v) : mc_parse_u64(argv[i + 1], &v))
			return mc_usage_error("synth show: bad %s '%s'", argv[i],
					      argv[i + 1]);
		key->group |= group_names[j].bit;
		switch (group_names[j].bit) {
		case MAGNET_SYNTH_K_EVENT:
			key->event = (__u32)v;
			break;
		case MAGNET_SYNTH_K_CPU:
			key->cpu = (__u32)v;
			break;
		case MAGNET_SYNTH_K_AID:
			key->abstract_id = v;
			break;
		case MAGNET_SYNTH_K_PID:
			key->pid = (__u32)v;
			break;
		case MAGNET_SYNTH_K_TGID:
			key->tgid = (__u32)v;
			break;
		default:
			key->cgroup = v;
			break;
		}
	}
	return 0;
}

static int synth_show(int argc, char **argv)
{
	struct magnet_synth_value key, val;
	struct magnet_synth_info sy;
	struct magnet_ctl *h;
	bool values = argc > 1 && !strcmp(argv[1], "values");
	int ret;

	ret = mc_check_name("synth", "synthesizer", "show", argc, argv,
			    values ? 0 : 1);
	if (ret)
		return ret;
	memset(&key, 0, sizeof(key));
	if (values) {
		ret = parse_value_key(argc - 2, argv + 2, &key);
		if (ret)
			return ret;
	}
	ret = mc_ctl_open(&h);
	if (ret)
		return ret;
	if (!values) {
		ret = magnet_synth_get(h, argv[0], &sy);
		if (ret) {
			ret = mc_name_error(h, ret, "synth", "show", argv[0]);
		} else {
			print_header();
			print_synth(h, &sy);
		}
	} else if (key.group) {
		ret = magnet_synth_value_get(h, argv[0], &key, &val);
		if (ret) {
			ret = mc_name_error(h, ret, "synth", "show", argv[0]);
		} else {
			print_value_header();
			print_value(&val);
		}
	} else {
		print_value_header();
		out_open_array(NULL);
		ret = magnet_synth_values(h, argv[0], collect_value, NULL);
		out_close_array();
		if (ret)
			ret = mc_name_error(h, ret, "synth", "show", argv[0]);
	}
	magnet_ctl_close(h);
	return ret;
}

static const struct mc_cmd synth_cmds[] = {
	{ "add",	synth_add },
	{ "create",	synth_add },
	{ "del",	synth_del },
	{ "delete",	synth_del },
	{ "list",	synth_list },
	{ "ls",		synth_list },
	{ "show",	synth_show },
	{ NULL,		NULL },
};

int do_synth(int argc, char **argv)
{
	return mc_dispatch("synth", synth_cmds, synth_help, "list", argc, argv);
}
