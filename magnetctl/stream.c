// SPDX-License-Identifier: GPL-2.0-only
/* magnetctl stream { create | delete | list | show | flush | snapshot | ... } */
#include <errno.h>
#include <getopt.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "magnetctl.h"
#include "output.h"

static int stream_help(void)
{
	printf("Usage: magnetctl stream create NAME [subbuf-size BYTES] [subbuf-count N]\n"
	       "                                   [global] [overwrite] [app-write]\n"
	       "                                   [clock { monotonic | local }]\n"
	       "       magnetctl stream delete NAME\n"
	       "       magnetctl stream list\n"
	       "       magnetctl stream show NAME\n"
	       "       magnetctl stream flush NAME\n"
	       "       magnetctl stream snapshot NAME -o FILE\n"
	       "       magnetctl stream { freeze | resume } NAME\n"
	       "BYTES := NUMBER[K|M|G] (powers of 1024)\n"
	       "global: one ring for all CPUs (global order); overwrite: a flight\n"
	       "recorder that keeps the newest data, read by snapshot\n"
	       "clock: of the timestamps; monotonic (the default, one order across\n"
	       "CPUs; from the TSC where the kernel trusts it) or local\n"
	       "(local_clock(), ordered per CPU: cheaper where the kernel distrusts\n"
	       "the TSC; probe events only)\n");
	return MC_EXIT_OK;
}

/*
 * Parse "create NAME [subbuf-size BYTES] [subbuf-count N] [global]
 * [overwrite]" (size and count also as "size" and "count").
 */
int mc_parse_stream_create(int argc, char **argv, uint32_t *size,
			   uint32_t *count, uint32_t *mode)
{
	int i, ret = mc_check_name("stream", "stream", "create", argc, argv, 0);

	if (ret)
		return ret;
	*size = *count = *mode = 0;
	for (i = 1; i < argc; i += 2) {
		const char *kw = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(kw, "global") || !strcmp(kw, "overwrite")) {
			uint32_t bit = kw[0] == 'g' ? MAGNET_STREAM_F_GLOBAL :
				       MAGNET_STREAM_F_OVERWRITE;

			if (*mode & bit)
				return mc_usage_error("stream create: '%s' given twice", kw);
			*mode |= bit;
			i--;	/* a keyword without a value */
			continue;
		}
		if (!strcmp(kw, "size"))
			kw = "subbuf-size";
		else if (!strcmp(kw, "count"))
			kw = "subbuf-count";
		if (strcmp(kw, "subbuf-size") && strcmp(kw, "subbuf-count"))
			return mc_usage_error("stream create: unexpected argument '%s'", kw);
		if (!val)
			return mc_usage_error("stream create: '%s' needs a value", kw);
		if (!strcmp(kw, "subbuf-size")) {
			if (mc_parse_size(val, size))
				return mc_usage_error("stream create: bad subbuf-size '%s' (BYTES > 0, suffix K, M or G)",
						      val);
		} else if (mc_parse_u32(val, count) || !*count) {
			return mc_usage_error("stream create: bad subbuf-count '%s' (a number > 0)",
					      val);
		}
	}
	return 0;
}

static int stream_create(int argc, char **argv)
{
	struct magnet_stream_opts o = { .sz = sizeof(o) };
	struct magnet_ctl *h;
	int i, ret;

	/*
	 * "app-write", a keyword without a value, and "clock NAME",
	 * anywhere after NAME
	 */
	for (i = 1; i < argc; i++) {
		int n = 1;

		if (!strcmp(argv[i], "app-write")) {
			o.app_write = true;
		} else if (!strcmp(argv[i], "clock")) {
			const char *val = i + 1 < argc ? argv[i + 1] : NULL;

			if (!val)
				return mc_usage_error("stream create: 'clock' needs a value (monotonic or local)");
			if (o.clock)
				return mc_usage_error("stream create: 'clock' given twice");
			if (!strcmp(val, "monotonic"))
				o.clock = MAGNET_CLOCK_MONOTONIC;
			else if (!strcmp(val, "local"))
				o.clock = MAGNET_CLOCK_LOCAL;
			else
				return mc_usage_error("stream create: bad clock '%s' (monotonic or local)",
						      val);
			n = 2;
		} else {
			continue;
		}
		memmove(&argv[i], &argv[i + n], (argc - i - n) * sizeof(*argv));
		argc -= n;
		i--;
	}
	ret = mc_parse_stream_create(argc, argv, &o.subbuf_size,
				     &o.subbuf_count, &o.mode);
	if (ret)
		return ret;
	ret = mc_ctl_open(&h);
	if (ret)
		return ret;
	ret = magnet_stream_create_opts(h, argv[0], &o);
	if (ret)
		ret = mc_name_error(h, ret, "stream", "create", argv[0]);
	magnet_ctl_close(h);
	return ret;
}

static int stream_delete(int argc, char **argv)
{
	return mc_name_request("stream", "stream", "delete", argc, argv,
			       magnet_stream_delete);
}

static int stream_flush(int argc, char **argv)
{
	return mc_name_request("stream", "stream", "flush", argc, argv,
			       magnet_stream_flush);
}

static int stream_freeze(int argc, char **argv)
{
	return mc_name_request("stream", "stream", "freeze", argc, argv,
			       magnet_stream_freeze);
}

static int stream_resume(int argc, char **argv)
{
	return mc_name_request("stream", "stream", "resume", argc, argv,
			       magnet_stream_resume);
}

/*
 * "snapshot NAME -o FILE" (-o anywhere, --output[=]FILE, or the keyword
 * form "output FILE"): freeze, write a trace file, resume.
 */
static int stream_snapshot(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL;
	char **gv = argv - 1;
	struct magnet_ctl *h;
	__u64 bytes = 0;
	int c, i, fd, ret;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc + 1, gv, ":o:", opts, NULL)) != -1) {
		if (c == 'o')
			out = optarg;
		else if (c == ':')
			return mc_usage_error("stream snapshot: '%s' needs a FILE",
					      gv[optind - 1]);
		else
			return mc_option_error("stream snapshot", gv[optind - 1]);
	}
	argc = argc + 1 - optind;
	argv = gv + optind;
	ret = mc_check_name("stream", "stream", "snapshot", argc, argv, 0);
	if (ret)
		return ret;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "output"))
			return mc_usage_error("stream snapshot: unexpected argument '%s'",
					      argv[i]);
		if (i + 1 >= argc)
			return mc_usage_error("stream snapshot: '%s' needs a FILE",
					      argv[i]);
		out = argv[++i];
	}
	if (!out)
		return mc_usage_error("stream snapshot: missing '-o FILE'");
	ret = mc_ctl_open(&h);
	if (ret)
		return ret;
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		mc_error("stream snapshot %s: %s: %s", argv[0], out,
			 strerror(errno));
		magnet_ctl_close(h);
		return MC_EXIT_FILE;
	}
	ret = magnet_stream_snapshot(h, argv[0], fd, &bytes);
	if (close(fd) && !ret) {
		mc_error("stream snapshot %s: %s: %s", argv[0], out,
			 strerror(errno));
		ret = MC_EXIT_FILE;
	} else if (ret && !strncmp(magnet_ctl_errmsg(h), "copying ", 8)) {
		/* the stream was frozen and resumed; reading it or writing FILE failed */
		mc_error("stream snapshot %s: %s: %s", argv[0], out,
			 magnet_ctl_errmsg(h));
		ret = MC_EXIT_FILE;
	} else if (ret) {
		ret = mc_name_error(h, ret, "stream", "snapshot", argv[0]);
	} else {
		out_open_object(NULL);
		out_string("stream", "stream %s: ", argv[0]);
		out_uint("bytes", "%llu bytes ", bytes);
		out_string("file", "to %s\n", out);
		out_close_object();
	}
	magnet_ctl_close(h);
	return ret;
}

static const char *mode_name(uint32_t mode)
{
	static const char *const names[] = {
		"percpu", "global", "percpu,overwrite", "global,overwrite",
	};

	return names[mode & MAGNET_STREAM_F_ALL];
}

/* Mode and overwrite counters: a second STREAM_GET (ABI of the info). */
static void print_stream_mode(struct magnet_ctl *h, const char *name,
			      bool detail)
{
	struct magnet_stream_mode_info m;

	uint32_t clock;

	if (magnet_stream_get_mode(h, name, &m))
		memset(&m, 0, sizeof(m));
	if (magnet_stream_get_clock(h, name, &clock))
		clock = MAGNET_CLOCK_MONOTONIC;
	if (!detail) {
		out_string("mode", "%-16s ", mode_name(m.mode));
		out_uint("overwritten", "%12llu ", m.overwritten);
		return;
	}
	out_string("mode", "mode:          %s\n", mode_name(m.mode));
	out_string("clock", "clock:         %s\n",
		   clock == MAGNET_CLOCK_LOCAL ? "local" : "monotonic");
	out_bool("global", NULL, m.mode & MAGNET_STREAM_F_GLOBAL);
	out_bool("overwrite", NULL, m.mode & MAGNET_STREAM_F_OVERWRITE);
	out_bool("frozen", "frozen:        %s\n", m.frozen);
	out_uint("overwritten", "overwritten:   %llu\n", m.overwritten);
	out_uint("overwritten_bytes", "overwritten-bytes: %llu\n",
		 m.overwritten_bytes);
	out_uint("frozen_lost", "frozen-lost:   %llu\n", m.frozen_lost);
}

static void print_stream_row(struct magnet_ctl *h,
			     const struct magnet_stream_info *s)
{
	out_open_object(NULL);
	out_string("name", "%-16s ", s->name);
	out_uint("subbuf_size", "%10llu ", s->subbuf_size);
	out_uint("subbuf_count", "%6llu ", s->subbuf_count);
	out_uint("produced", "%12llu ", s->produced);
	out_uint("written", "%12llu ", s->written);
	out_uint("lost", "%10llu ", s->lost);
	out_uint("read", "%12llu ", s->read);
	out_uint("bytes", "%14llu ", s->bytes);
	out_uint("readers", "%7llu ", s->readers);
	out_uint("probes", "%6llu ", s->probes);
	print_stream_mode(h, s->name, false);
	out_string("path", "%s\n", s->path);
	out_close_object();
}

static int collect_stream(const struct magnet_stream_info *s, void *ctx)
{
	return mc_vec_push(ctx, s);
}

static int stream_list(int argc, char **argv)
{
	struct mc_vec sv = { .size = sizeof(struct magnet_stream_info) };
	const struct magnet_stream_info *s;
	struct magnet_ctl *h;
	size_t i;
	int ret;

	if (argc > 0)
		return mc_usage_error("stream list: unexpected argument '%s'", argv[0]);
	ret = mc_ctl_open(&h);
	if (ret)
		return ret;
	ret = magnet_stream_list(h, collect_stream, &sv);
	if (ret) {
		ret = mc_ctl_error(h, ret, "stream list");
	} else {
		out_text("%-16s %10s %6s %12s %12s %10s %12s %14s %7s %6s %-16s %12s %s\n",
			 "NAME", "SUBBUF", "COUNT", "PRODUCED", "WRITTEN",
			 "LOST", "READ", "BYTES", "READERS", "PROBES", "MODE",
			 "OVERWRITTEN", "PATH");
		s = sv.v;
		out_open_array(NULL);
		for (i = 0; i < sv.n; i++)
			print_stream_row(h, &s[i]);
		out_close_array();
	}
	free(sv.v);
	magnet_ctl_close(h);
	return ret;
}

static void print_stream_detail(struct magnet_ctl *h,
				const struct magnet_stream_info *s)
{
	out_open_object(NULL);
	out_string("name", "name:          %s\n", s->name);
	out_string("path", "path:          %s\n", s->path);
	out_uint("subbuf_size", "subbuf-size:   %llu\n", s->subbuf_size);
	out_uint("subbuf_count", "subbuf-count:  %llu\n", s->subbuf_count);
	out_uint("produced", "produced:      %llu\n", s->produced);
	out_uint("written", "written:       %llu\n", s->written);
	out_uint("lost", "lost:          %llu\n", s->lost);
	out_uint("read", "read:          %llu\n", s->read);
	out_uint("bytes", "bytes:         %llu\n", s->bytes);
	out_uint("readers", "readers:       %llu\n", s->readers);
	out_uint("probes", "probes:        %llu\n", s->probes);
	out_bool("app_write", "app-write:     %s\n", s->app_write);
	out_uint("app_events", "app-events:    %llu\n", s->app_events);
	out_uint("app_rejected", "app-rejected:  %llu\n", s->app_rejected);
	print_stream_mode(h, s->name, true);
	out_close_object();
}

static int stream_show(int argc, char **argv)
{
	struct magnet_stream_info s;
	struct magnet_ctl *h;
	int ret;

	ret = mc_check_name("stream", "stream", "show", argc, argv, 1);
	if (ret)
		return ret;
	ret = mc_ctl_open(&h);
	if (ret)
		return ret;
	ret = magnet_stream_get(h, argv[0], &s);
	if (ret)
		ret = mc_name_error(h, ret, "stream", "show", argv[0]);
	else
		print_stream_detail(h, &s);
	magnet_ctl_close(h);
	return ret;
}

static const struct mc_cmd stream_cmds[] = {
	{ "create",	stream_create },
	{ "add",	stream_create },
	{ "delete",	stream_delete },
	{ "del",	stream_delete },
	{ "list",	stream_list },
	{ "ls",		stream_list },
	{ "show",	stream_show },
	{ "flush",	stream_flush },
	{ "snapshot",	stream_snapshot },
	{ "freeze",	stream_freeze },
	{ "resume",	stream_resume },
	{ NULL,		NULL },
};

int do_stream(int argc, char **argv)
{
	return mc_dispatch("stream", stream_cmds, stream_help, "list", argc, argv);
}
