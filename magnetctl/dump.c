// SPDX-License-Identifier: GPL-2.0-only
/*
 * magnetctl dump [--file-order] FILE...: one record per line, the records
 * of all FILEs merged in time order (libmagnet's sorted traces: an
 * application event at its call-entry time, everything else at its header
 * timestamp); --file-order prints one FILE as it is stored.
 *   text: time CPU pid event abstract-id size (tab-separated)
 *   -j:   one JSON object per record (JSON lines) with decoded payloads
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "magnetctl.h"
#include "output.h"

#define NSEC_PER_SEC	1000000000ull

struct dump_state {
	unsigned long long clock_hz;	/* from the latest SYSINFO */
	const struct magnet_decoder *dec;
};

static unsigned long long to_ns(const struct dump_state *ds,
				unsigned long long ts)
{
	if (!ds->clock_hz || ds->clock_hz == NSEC_PER_SEC)
		return ts;
	return (unsigned long long)((unsigned __int128)ts * NSEC_PER_SEC /
				    ds->clock_hz);
}

/* The "size" column: what the event is about, in its own unit. */
static unsigned long long rec_size(const struct magnet_rec *r)
{
	switch (r->kind) {
	case MAGNET_REC_NET:
		return r->u.net.len;
	case MAGNET_REC_LOST:
		return r->u.lost.count;
	case MAGNET_REC_SYNTH:
		return r->u.synth.count;
	case MAGNET_REC_CORR:
		return r->u.corr.reached;
	case MAGNET_REC_APP:
		return r->u.app.ret < 0 ? 0 : (unsigned long long)r->u.app.ret;
	default:
		return r->payload_len;
	}
}

static void print_sysinfo(const struct magnet_sysinfo *si)
{
	out_open_object("sysinfo");
	out_uint("endian", NULL, si->endian);
	out_uint("format_major", NULL, si->format_major);
	out_uint("format_minor", NULL, si->format_minor);
	out_uint("abi_version", NULL, si->abi_version);
	out_uint("clock_id", NULL, si->clock_id);
	out_uint("clock_hz", NULL, si->clock_hz);
	out_uint("wall_ns_at_zero", NULL, si->wall_ns_at_zero);
	out_uint("nr_cpus", NULL, si->nr_cpus);
	out_uint("ptr_size", NULL, si->ptr_size);
	out_uint("page_size", NULL, si->page_size);
	out_uint("subbuf_size", NULL, si->subbuf_size);
	out_uint("subbuf_count", NULL, si->subbuf_count);
	out_uint("flags", NULL, si->flags);
	out_string("stream", NULL, si->stream);
	out_string("release", NULL, si->release);
	out_close_object();
}

/* ip_hdr_*: the packet bytes after struct magnet_ip_payload, in hex. */
static void print_ip_bytes(const struct magnet_rec *r)
{
	const unsigned char *b = (const unsigned char *)r->payload +
				 sizeof(struct magnet_ip_payload);
	const struct magnet_field *f;
	unsigned int nf;
	size_t i, n = 0;
	char hex[2 * 64 + 1];

	f = magnet_payload_fields(MAGNET_PAYLOAD_IP, &nf);
	for (i = 0; i < nf; i++)
		if (!strcmp(f[i].name, "hdr_len"))
			n = r->u.fields[i];

	if (!n)
		return;
	if (n > 64 || sizeof(struct magnet_ip_payload) + n > r->payload_len)
		n = 0;
	for (i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", b[i]);
	hex[2 * n] = '\0';
	out_string("bytes", NULL, hex);
}

/* A table-described payload: each field by name (-j), under its type. */
static void print_fields(const struct magnet_rec *r)
{
	const struct magnet_field *f;
	unsigned int i, n;
	char buf[128];

	f = magnet_payload_fields(r->payload_type, &n);
	if (!f)
		return;
	out_open_object(magnet_payload_name(r->payload_type));
	for (i = 0; i < n; i++) {
		switch (f[i].kind) {
		case MAGNET_FIELD_STR:
			out_string(f[i].name, NULL,
				   magnet_rec_field_str(r, &f[i], buf,
							sizeof(buf)));
			break;
		case MAGNET_FIELD_INT:
			out_int(f[i].name, NULL, (int64_t)r->u.fields[i]);
			break;
		default:
			out_uint(f[i].name, NULL, r->u.fields[i]);
			break;
		}
	}
	if (r->payload_type == MAGNET_PAYLOAD_IP)
		print_ip_bytes(r);
	out_close_object();
}

/* SYNTH: the exact moments and, in double, the mean and variance. */
static void print_synth(const struct magnet_synth_payload *sp)
{
	double mean, var;

	magnet_synth_moments(sp->count, sp->sum_lo, sp->sum_hi, sp->sumsq_lo,
			     sp->sumsq_hi, &mean, &var);
	out_open_object("synth");
	out_string("name", NULL, sp->name);
	out_uint("period_start", NULL, sp->period_start);
	out_uint("period_end", NULL, sp->period_end);
	out_uint("count", NULL, sp->count);
	out_uint("min", NULL, sp->min);
	out_uint("max", NULL, sp->max);
	out_uint("sum_lo", NULL, sp->sum_lo);
	out_uint("sum_hi", NULL, sp->sum_hi);
	out_uint("sumsq_lo", NULL, sp->sumsq_lo);
	out_uint("sumsq_hi", NULL, sp->sumsq_hi);
	out_uint("mean", NULL, sp->mean);
	out_uint("variance", NULL, sp->variance);
	out_double("mean_d", NULL, mean);
	out_double("variance_d", NULL, var);
	out_uint("cgroup", NULL, sp->cgroup);
	out_uint("abstract_id", NULL, sp->abstract_id);
	out_uint("event", NULL, sp->event);
	out_uint("cpu", NULL, sp->cpu);
	out_uint("pid", NULL, sp->pid);
	out_uint("tgid", NULL, sp->tgid);
	out_uint("group", NULL, sp->group);
	out_uint("flags", NULL, sp->flags);
	out_uint("quantity", NULL, sp->quantity);
	out_close_object();
}

/* A correlator's record: the chain and the time spent between its steps. */
static void print_corr(const struct dump_state *ds, const struct magnet_rec *r)
{
	const struct magnet_corr_rec *c = &r->u.corr;
	struct magnet_corr_step st;
	unsigned int i;

	out_open_object("corr");
	out_uint("corr_id", NULL, c->corr_id);
	out_uint("nsteps", NULL, c->nsteps);
	out_uint("reached", NULL, c->reached);
	out_uint("flags", NULL, c->flags);
	out_uint("start", NULL, c->start);
	out_open_array("steps");
	for (i = 0; i < c->nsteps; i++) {
		if (magnet_rec_corr_step(ds->dec, r, i, &st))
			break;
		out_open_object(NULL);
		out_uint("event", NULL, st.event);
		out_uint("delta_ns", NULL, st.delta_ns);
		out_uint("count", NULL, st.count);
		out_uint("bytes", NULL, st.bytes);
		out_close_object();
		/* text: +delta(count) per reached step after the first */
		if (i && i < c->reached)
			out_text("\t+%lluns(%u)", (unsigned long long)st.delta_ns,
				 st.count);
	}
	out_close_array();
	if (c->flags)
		out_text("\tflags=0x%x", c->flags);
	out_text("\n");
	out_close_object();
}

static void print_payload(const struct dump_state *ds,
			  const struct magnet_rec *r)
{
	switch (r->kind) {
	case MAGNET_REC_CORR:
		print_corr(ds, r);
		break;
	case MAGNET_REC_SYSINFO:
		print_sysinfo(&r->u.sysinfo);
		break;
	case MAGNET_REC_LOST:
		out_open_object("lost");
		out_uint("count", NULL, r->u.lost.count);
		out_close_object();
		break;
	case MAGNET_REC_EVENTDEF:
		out_open_object("eventdef");
		out_uint("id", NULL, r->u.eventdef.id);
		out_string("name", NULL, r->u.eventdef.name);
		out_uint("layer", NULL, r->u.eventdef.layer);
		out_uint("payload", NULL, r->u.eventdef.payload);
		out_close_object();
		break;
	case MAGNET_REC_NET:
		out_open_object("net");
		out_uint("len", NULL, r->u.net.len);
		out_uint("ifindex", NULL, r->u.net.ifindex);
		out_uint("proto", NULL, r->u.net.proto);
		out_uint("flags", NULL, r->u.net.flags);
		out_uint("gso_size", NULL, r->u.net.gso_size);
		out_uint("gso_segs", NULL, r->u.net.gso_segs);
		out_close_object();
		break;
	case MAGNET_REC_FIELDS:
		print_fields(r);
		break;
	case MAGNET_REC_SYNTH:
		print_synth(&r->u.synth);
		break;
	case MAGNET_REC_APP:
		out_open_object("app");
		out_string("call", NULL, magnet_app_call_name(r->u.app.call));
		out_int("fd", NULL, r->u.app.fd);
		out_uint("req", NULL, r->u.app.req);
		out_int("ret", NULL, r->u.app.ret);
		out_uint("entry_ns", NULL, r->u.app.entry_ns);
		out_uint("exit_ns", NULL, r->u.app.exit_ns);
		out_uint("flags", NULL, r->u.app.flags);
		out_uint("msg_flags", NULL, r->u.app.msg_flags);
		out_close_object();
		break;
	case MAGNET_REC_PLAIN:
		break;
	}
}

/*
 * Text: an application call after the size column, e.g.
 * "write fd=3 req=10240 ret=10240 dur=41234ns" (ret -errno on failure).
 */
static void print_app_text(const struct magnet_rec *r)
{
	if (r->kind != MAGNET_REC_APP || out_json())
		return;
	out_text("\t%s fd=%d req=%llu ret=%lld dur=%lluns\n",
		 magnet_app_call_name(r->u.app.call), r->u.app.fd,
		 (unsigned long long)r->u.app.req, (long long)r->u.app.ret,
		 (unsigned long long)(r->u.app.exit_ns - r->u.app.entry_ns));
}

static void print_rec(struct dump_state *ds, const struct magnet_rec *r)
{
	unsigned long long ns;

	if (r->kind == MAGNET_REC_SYSINFO)
		ds->clock_hz = r->u.sysinfo.clock_hz;
	/* the time the records are ordered by (an APP call's entry) */
	ns = to_ns(ds, magnet_rec_time(r));
	out_text("%llu.%09llu\t", ns / NSEC_PER_SEC, ns % NSEC_PER_SEC);
	out_open_object(NULL);
	out_uint("timestamp", NULL, r->hdr.timestamp);
	out_uint("time", NULL, magnet_rec_time(r));
	out_uint("cpu", "%llu\t", r->hdr.cpu);
	out_uint("pid", "%llu\t", r->hdr.pid);
	out_uint("tgid", NULL, r->hdr.tgid);
	out_uint("event", NULL, r->hdr.event);
	out_string("name", "%s\t", r->name);
	out_uint("abstract_id", "%llu\t", r->hdr.abstract_id);
	out_uint("size", NULL, r->hdr.size);
	out_uint(NULL, r->kind == MAGNET_REC_CORR || r->kind == MAGNET_REC_APP ?
		 "%llu" : "%llu\n", rec_size(r));
	print_app_text(r);
	print_payload(ds, r);
	out_close_object();
}

static int dump_file(const char *path)
{
	struct dump_state ds = { 0 };
	struct magnet_trace *t;
	struct magnet_rec rec;
	int ret;

	ret = magnet_trace_open(path, &t);
	if (ret) {
		mc_error("dump: %s: %s", path, strerror(-ret));
		return MC_EXIT_FILE;
	}
	ds.dec = magnet_trace_decoder(t);
	while ((ret = magnet_trace_next(t, &rec)) > 0)
		print_rec(&ds, &rec);
	if (ret < 0) {
		fflush(stdout);		/* good records first, then the error */
		mc_error("dump: %s: %s", path, magnet_trace_errmsg(t));
	}
	magnet_trace_close(t);
	return ret < 0 ? MC_EXIT_FILE : MC_EXIT_OK;
}

/* All FILEs merged in time order (libmagnet's sorted traces). */
static int dump_sorted(int argc, char **argv)
{
	struct dump_state ds = { 0 };
	struct magnet_sorted *st;
	const struct magnet_rec *rec;
	int i, ret;

	for (i = 0; i < argc; i++) {
		FILE *f = fopen(argv[i], "r");

		if (!f) {
			mc_error("dump: %s: %s", argv[i], strerror(errno));
			return MC_EXIT_FILE;
		}
		fclose(f);
	}
	ret = magnet_sorted_open((const char *const *)argv, argc, &st);
	if (ret) {
		mc_error("dump: %s", strerror(-ret));
		return MC_EXIT_FILE;
	}
	while ((ret = magnet_sorted_next(st, &rec)) > 0) {
		/* the record's own file's decoder (CORR steps) */
		ds.dec = magnet_sorted_decoder(st);
		print_rec(&ds, rec);
	}
	if (ret < 0) {
		fflush(stdout);		/* good records first, then the error */
		mc_error("dump: %s", magnet_sorted_errmsg(st));
	}
	magnet_sorted_close(st);
	return ret < 0 ? MC_EXIT_FILE : MC_EXIT_OK;
}

int do_dump(int argc, char **argv)
{
	bool file_order = false;

	if (argc >= 1 && !strcmp(argv[0], "help")) {
		printf("Usage: magnetctl dump [--file-order] FILE...\n");
		return MC_EXIT_OK;
	}
	if (argc >= 1 && !strcmp(argv[0], "--file-order")) {
		file_order = true;
		argc--;
		argv++;
	}
	if (argc < 1)
		return mc_usage_error("dump: missing FILE");
	if (file_order && argc > 1)
		return mc_usage_error("dump: --file-order takes one FILE, not '%s'",
				      argv[1]);
	if (file_order)
		return dump_file(argv[0]);
	return dump_sorted(argc, argv);
}
