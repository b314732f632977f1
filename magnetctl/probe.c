// SPDX-License-Identifier: GPL-2.0-only
/*
 * magnetctl probe { list | enable PROBE... stream STREAM | disable PROBE... |
 *                  add NAME kprobe|kretprobe SYMBOL... | del NAME }
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "magnetctl.h"
#include "output.h"

static int probe_help(void)
{
	printf("Usage: magnetctl probe list\n"
	       "       magnetctl probe enable PROBE [PROBE...] stream STREAM\n"
	       "       magnetctl probe disable PROBE [PROBE...]\n"
	       "       magnetctl probe add NAME kprobe SYMBOL[+OFFSET] [args I,J,...]\n"
	       "       magnetctl probe add NAME kretprobe SYMBOL [args I,J,...]\n"
	       "       magnetctl probe del NAME\n"
	       "PROBE := { NAME | ID | all }\n");
	return MC_EXIT_OK;
}

static int collect_probe(const struct magnet_probe_info *p, void *ctx)
{
	return mc_vec_push(ctx, p);
}

static int fetch_probes(struct magnet_ctl *h, struct mc_vec *pv)
{
	int err = magnet_probe_list(h, collect_probe, pv);

	if (err)
		return mc_ctl_error(h, err, "probe list");
	return 0;
}

static void print_probe(const struct magnet_probe_info *p)
{
	out_open_object(NULL);
	out_uint("id", "%-5llu ", p->id);
	out_string("name", "%-24s ", p->name);
	out_string("layer", "%-10s ", magnet_layer_name(p->layer));
	out_string("payload", "%-7s ", magnet_payload_name(p->payload));
	out_bool("enabled", "%-7s ", p->enabled);
	out_string("stream", "%-16s ", p->enabled ? p->stream : "-");
	out_uint("hits", "%12llu ", p->hits);
	out_string("module", "%-16s ", p->module);
	out_string("hook", "%s\n", p->hook);
	out_close_object();
}

static int probe_list(int argc, char **argv)
{
	struct mc_vec pv = { .size = sizeof(struct magnet_probe_info) };
	const struct magnet_probe_info *p;
	struct magnet_ctl *h;
	size_t i;
	int ret;

	if (argc > 0)
		return mc_usage_error("probe list: unexpected argument '%s'", argv[0]);
	ret = mc_ctl_open(&h);
	if (ret)
		return ret;
	ret = fetch_probes(h, &pv);
	if (!ret) {
		out_text("%-5s %-24s %-10s %-7s %-7s %-16s %12s %-16s %s\n",
			 "ID", "NAME", "LAYER", "PAYLOAD", "ENABLED", "STREAM",
			 "HITS", "MODULE", "HOOK");
		p = pv.v;
		out_open_array(NULL);
		for (i = 0; i < pv.n; i++)
			print_probe(&p[i]);
		out_close_array();
	}
	free(pv.v);
	magnet_ctl_close(h);
	return ret;
}

/* A PROBE argument: numeric ID or name. */
static int check_probe_arg(const char *obj, const char *arg)
{
	uint32_t id;

	if (arg[0] >= '0' && arg[0] <= '9') {
		if (mc_parse_u32(arg, &id))
			return mc_usage_error("%s: bad probe ID '%s'", obj, arg);
		return 0;
	}
	if (!mc_name_ok(arg))
		return mc_usage_error("%s: bad probe name '%s' (1 to %d characters)",
				      obj, arg, MAGNET_NAME_MAX - 1);
	return 0;
}

/* Enable (stream != NULL) or disable one probe given by name or ID. */
static int probe_set(struct magnet_ctl *h, const char *arg, const char *stream)
{
	uint32_t id;

	if (arg[0] >= '0' && arg[0] <= '9' && !mc_parse_u32(arg, &id))
		return stream ? magnet_probe_enable_id(h, id, stream) :
				magnet_probe_disable_id(h, id);
	return stream ? magnet_probe_enable(h, arg, stream) :
			magnet_probe_disable(h, arg);
}

static int set_one(struct magnet_ctl *h, const char *arg, const char *stream,
		   int done)
{
	const char *what = stream ? "enable" : "disable";
	char buf[128];
	int err = probe_set(h, arg, stream);

	if (!err)
		return 0;
	/* one error (one JSON object with -j), naming what was done before */
	if (done > 0)
		snprintf(buf, sizeof(buf), "probe %s %s (stopped there, after %d probe(s) %sd)",
			 what, arg, done, what);
	else
		snprintf(buf, sizeof(buf), "probe %s %s", what, arg);
	return mc_ctl_error(h, err, buf);
}

/* "all": every probe (enable), every enabled probe (disable). */
static int set_all(struct magnet_ctl *h, const char *stream)
{
	struct mc_vec pv = { .size = sizeof(struct magnet_probe_info) };
	const struct magnet_probe_info *p;
	char id[16];
	size_t i;
	int ret, done = 0;

	ret = fetch_probes(h, &pv);
	p = pv.v;
	for (i = 0; !ret && i < pv.n; i++) {
		if (!stream && !p[i].enabled)
			continue;
		if (stream && p[i].enabled && !strcmp(p[i].stream, stream))
			continue;
		snprintf(id, sizeof(id), "%u", p[i].id);
		ret = set_one(h, id, stream, done++);
	}
	free(pv.v);
	return ret;
}

static int probe_set_many(char **probes, int n, const char *stream)
{
	struct magnet_ctl *h;
	int i, ret;

	ret = mc_ctl_open(&h);
	if (ret)
		return ret;
	for (i = 0; !ret && i < n; i++) {
		if (!strcmp(probes[i], "all"))
			ret = set_all(h, stream);
		else
			ret = set_one(h, probes[i], stream, i);
	}
	magnet_ctl_close(h);
	return ret;
}

static int check_probe_args(const char *obj, char **probes, int n)
{
	int i, ret;

	if (n == 0)
		return mc_usage_error("%s: missing PROBE", obj);
	for (i = 0; i < n; i++) {
		if (!strcmp(probes[i], "all"))
			continue;
		ret = check_probe_arg(obj, probes[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static int probe_enable(int argc, char **argv)
{
	const char *stream;
	int n, ret;

	for (n = 0; n < argc && strcmp(argv[n], "stream"); n++)
		;
	if (n == argc)
		return mc_usage_error("probe enable: missing 'stream STREAM'");
	if (n + 1 >= argc)
		return mc_usage_error("probe enable: 'stream' needs a STREAM name");
	if (n + 2 < argc)
		return mc_usage_error("probe enable: unexpected argument '%s'",
				      argv[n + 2]);
	stream = argv[n + 1];
	if (!mc_name_ok(stream))
		return mc_usage_error("probe enable: bad stream name '%s'", stream);
	ret = check_probe_args("probe enable", argv, n);
	if (ret)
		return ret;
	return probe_set_many(argv, n, stream);
}

static int probe_disable(int argc, char **argv)
{
	int ret = check_probe_args("probe disable", argv, argc);

	if (ret)
		return ret;
	return probe_set_many(argv, argc, NULL);
}

/* "0,1,2" -> bit mask of argument indexes 0..5 */
static int parse_args_list(const char *s, uint32_t *mask)
{
	char *end;
	long v;

	*mask = 0;
	for (;;) {
		if (*s < '0' || *s > '9')
			return -1;
		v = strtol(s, &end, 10);
		if (v < 0 || v >= MAGNET_KPROBE_NARGS)
			return -1;
		*mask |= 1u << v;
		if (!*end)
			return 0;
		if (*end != ',')
			return -1;
		s = end + 1;
	}
}

/*
 * probe add NAME kprobe SYMBOL[+OFFSET] [args I,J,...]
 * probe add NAME kretprobe SYMBOL [args I,J,...]
 */
static int probe_add(int argc, char **argv)
{
	struct magnet_kprobe_spec k = { 0 };
	char sym[256], *plus;
	struct magnet_ctl *h;
	uint32_t id, off;
	int ret;

	if (argc < 3)
		return mc_usage_error("probe add: usage: probe add NAME { kprobe SYMBOL[+OFFSET] | kretprobe SYMBOL } [args I,J,...]");
	if (!mc_name_ok(argv[0]))
		return mc_usage_error("probe add: bad probe name '%s'", argv[0]);
	if (!strcmp(argv[1], "kretprobe"))
		k.retprobe = true;
	else if (strcmp(argv[1], "kprobe"))
		return mc_usage_error("probe add: '%s': expected kprobe or kretprobe",
				      argv[1]);
	if (strlen(argv[2]) >= sizeof(sym))
		return mc_usage_error("probe add: symbol too long");
	strcpy(sym, argv[2]);
	plus = strchr(sym, '+');
	if (plus) {
		*plus = '\0';
		if (k.retprobe)
			return mc_usage_error("probe add: a kretprobe takes no offset");
		if (mc_parse_u32(plus + 1, &off))
			return mc_usage_error("probe add: bad offset '%s'", plus + 1);
		k.offset = off;
	}
	if (!sym[0])
		return mc_usage_error("probe add: missing SYMBOL");
	if (argc == 5 && !strcmp(argv[3], "args")) {
		if (parse_args_list(argv[4], &k.args))
			return mc_usage_error("probe add: bad args '%s': indexes 0 to %d, comma-separated",
					      argv[4], MAGNET_KPROBE_NARGS - 1);
	} else if (argc != 3) {
		return mc_usage_error("probe add: unexpected argument '%s'", argv[3]);
	}
	k.name = argv[0];
	k.symbol = sym;
	ret = mc_ctl_open(&h);
	if (ret)
		return ret;
	ret = magnet_kprobe_add(h, &k, &id);
	if (ret) {
		ret = mc_ctl_error(h, ret, "probe add");
	} else {
		out_open_object(NULL);
		out_string("name", "probe %s: ", k.name);
		out_uint("id", "event ID %llu\n", id);
		out_close_object();
	}
	magnet_ctl_close(h);
	return ret;
}

static int probe_del(int argc, char **argv)
{
	struct magnet_ctl *h;
	int ret;

	if (argc != 1)
		return mc_usage_error("probe del: usage: probe del NAME");
	ret = mc_ctl_open(&h);
	if (ret)
		return ret;
	ret = magnet_kprobe_del(h, argv[0]);
	if (ret)
		ret = mc_ctl_error(h, ret, "probe del");
	magnet_ctl_close(h);
	return ret;
}

static const struct mc_cmd probe_cmds[] = {
	{ "list",	probe_list },
	{ "show",	probe_list },
	{ "enable",	probe_enable },
	{ "disable",	probe_disable },
	{ "add",	probe_add },
	{ "del",	probe_del },
	{ "delete",	probe_del },
	{ NULL,		NULL },
};

int do_probe(int argc, char **argv)
{
	return mc_dispatch("probe", probe_cmds, probe_help, "list", argc, argv);
}
