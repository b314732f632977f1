// SPDX-License-Identifier: GPL-2.0-only
/*
 * magnetctl dump [--file-order] [--time raw|wall|rel|delta]
 *                [--format text|csv] [--no-header] FILE...: one record per
 * line, the records of all FILEs merged in time order (libmagnet's sorted
 * traces: an application event at its call-entry time, everything else at
 * its header timestamp); --file-order prints one FILE as it is stored.
 *   text: a "#" header line, then time CPU pid event abstract-id size
 *         details (tab-separated; details: the payload as key=value and
 *         comm=NAME when the trace names the thread)
 *   csv:  the same columns (and tgid, comm) as RFC 4180 CSV with a header
 *   -j:   one JSON object per record (JSON lines) with decoded payloads
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "magnetctl.h"
#include "output.h"

#define NSEC_PER_SEC	1000000000ull

enum dump_time { TIME_RAW, TIME_WALL, TIME_REL, TIME_DELTA };
enum dump_format { FMT_TEXT, FMT_CSV };

/* Thread names the trace's sched records give (tid -> comm). */
#define COMM_LEN	16
struct comm_ent {
	unsigned int tid;	/* 0: free */
	char comm[COMM_LEN];
};

struct comm_map {
	struct comm_ent *e;
	size_t cap, used;	/* cap: a power of two */
};

struct dump_state {
	unsigned long long clock_hz;	/* from the latest SYSINFO */
	unsigned long long wall_ns_at_zero;
	bool have_sysinfo;
	const struct magnet_decoder *dec;
	enum dump_time time;
	enum dump_format format;
	bool header;
	bool started;			/* base/prev set */
	long long base_ns, prev_ns;	/* rel: first record; delta: last */
	struct comm_map comms;
};

static struct comm_ent *comm_slot(struct comm_map *m, unsigned int tid)
{
	size_t i = (tid * 2654435761u) & (m->cap - 1);

	while (m->e[i].tid && m->e[i].tid != tid)
		i = (i + 1) & (m->cap - 1);
	return &m->e[i];
}

static const char *comm_get(const struct comm_map *m, unsigned int tid)
{
	const struct comm_ent *e;

	if (!tid || !m->cap)
		return NULL;
	e = comm_slot((struct comm_map *)m, tid);
	return e->tid ? e->comm : NULL;
}

/* @overwrite false: keep a name already known (the prepass's first). */
static void comm_set(struct comm_map *m, unsigned int tid, const char *comm,
		     bool overwrite)
{
	struct comm_ent *e;
	size_t n;

	if (!tid || !comm[0])
		return;
	if (m->used + 1 > m->cap / 2) {
		struct comm_map n = { 0 };
		size_t i;

		n.cap = m->cap ? m->cap * 2 : 1024;
		n.e = calloc(n.cap, sizeof(*n.e));
		if (!n.e)
			return;		/* names are best effort */
		for (i = 0; i < m->cap; i++) {
			if (m->e[i].tid) {
				*comm_slot(&n, m->e[i].tid) = m->e[i];
				n.used++;
			}
		}
		free(m->e);
		*m = n;
	}
	e = comm_slot(m, tid);
	if (e->tid && !overwrite)
		return;
	if (!e->tid)
		m->used++;
	e->tid = tid;
	n = strnlen(comm, sizeof(e->comm) - 1);
	memcpy(e->comm, comm, n);
	e->comm[n] = '\0';
}

/* Value of the field called @name of a MAGNET_REC_FIELDS record. */
static bool rec_field(const struct magnet_rec *r, const char *name,
		      unsigned long long *v, char *buf, size_t len)
{
	const struct magnet_field *f;
	unsigned int i, n;

	if (r->kind != MAGNET_REC_FIELDS)
		return false;
	f = magnet_payload_fields(r->payload_type, &n);
	for (i = 0; f && i < n; i++) {
		if (strcmp(f[i].name, name))
			continue;
		if (f[i].kind == MAGNET_FIELD_STR)
			magnet_rec_field_str(r, &f[i], buf, len);
		else if (v)
			*v = r->u.fields[i];
		return true;
	}
	return false;
}

static void comm_pair(struct comm_map *m, const struct magnet_rec *r,
		      const char *pid, const char *comm, bool overwrite)
{
	unsigned long long tid = 0;
	char buf[COMM_LEN + 1];

	if (rec_field(r, pid, &tid, NULL, 0) &&
	    rec_field(r, comm, NULL, buf, sizeof(buf)))
		comm_set(m, (unsigned int)tid, buf, overwrite);
}

/* Learn thread names from sched_switch, sched_proc and sched_exec. */
static void comm_learn(struct comm_map *m, const struct magnet_rec *r,
		       bool overwrite)
{
	if (r->kind != MAGNET_REC_FIELDS)
		return;
	switch (r->payload_type) {
	case MAGNET_PAYLOAD_SCHED_SWITCH:
		comm_pair(m, r, "prev_pid", "prev_comm", overwrite);
		comm_pair(m, r, "next_pid", "next_comm", overwrite);
		break;
	case MAGNET_PAYLOAD_SCHED_PROC:
	case MAGNET_PAYLOAD_SCHED_EXEC:
		comm_pair(m, r, "pid", "comm", overwrite);
		break;
	}
}

static unsigned long long to_ns(const struct dump_state *ds,
				unsigned long long ts)
{
	if (!ds->clock_hz || ds->clock_hz == NSEC_PER_SEC)
		return ts;
	return (unsigned long long)((unsigned __int128)ts * NSEC_PER_SEC /
				    ds->clock_hz);
}

/*
 * The symbolic name of errno @e ("EMSGSIZE"), "E?" for one the C library
 * does not know (a kernel-internal code such as ENOIOCTLCMD).
 */
static const char *errno_name(int e)
{
	const char *n = e > 0 ? strerrorname_np(e) : NULL;

	return n ? n : "E?";
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
	}
	out_close_array();
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
		if (r->u.net.flags & MAGNET_NET_F_ERROR) {
			out_int("err", NULL, r->u.net.err);
			out_string("error", NULL, errno_name(-r->u.net.err));
		} else {
			out_uint("gso_size", NULL, r->u.net.gso_size);
		}
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

/* ---- text and CSV: a line's details as key=value ---- */

struct sbuf {
	char *p;
	size_t len, cap;
};

__attribute__((format(printf, 2, 3)))
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL,
			      b->p ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if (b->p && b->len + (size_t)n < b->cap) {
			b->len += n;
			return;
		}
		{
			size_t cap = (b->cap ? b->cap : 256);
			char *np;

			while (cap <= b->len + (size_t)n)
				cap *= 2;
			np = realloc(b->p, cap);
			if (!np)
				return;
			b->p = np;
			b->cap = cap;
		}
	}
}

/* " key=" before every pair but the first. */
static void sb_key(struct sbuf *b, const char *k)
{
	sb_printf(b, "%s%s=", b->len ? " " : "", k);
}

/* A string value: bytes that would split a line or a pair as \xNN. */
static void sb_str(struct sbuf *b, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c <= ' ' || c >= 0x7f || c == '\\' || c == '=')
			sb_printf(b, "\\x%02x", c);
		else
			sb_printf(b, "%c", c);
	}
}

static void sb_kstr(struct sbuf *b, const char *k, const char *v)
{
	sb_key(b, k);
	sb_str(b, v);
}

static const char *clock_name(unsigned int id)
{
	switch (id) {
	case MAGNET_CLOCK_MONOTONIC:
		return "monotonic";
	case MAGNET_CLOCK_LOCAL:
		return "local";
	default:
		return "unknown";
	}
}

static void details_fields(struct sbuf *b, const struct magnet_rec *r)
{
	const struct magnet_field *f;
	unsigned int i, n;
	char buf[128];

	f = magnet_payload_fields(r->payload_type, &n);
	for (i = 0; f && i < n; i++) {
		switch (f[i].kind) {
		case MAGNET_FIELD_STR:
			sb_kstr(b, f[i].name,
				magnet_rec_field_str(r, &f[i], buf, sizeof(buf)));
			break;
		case MAGNET_FIELD_INT:
			sb_key(b, f[i].name);
			sb_printf(b, "%lld", (long long)r->u.fields[i]);
			break;
		case MAGNET_FIELD_HEX:
			sb_key(b, f[i].name);
			sb_printf(b, "0x%llx", (unsigned long long)r->u.fields[i]);
			break;
		default:
			sb_key(b, f[i].name);
			sb_printf(b, "%llu", (unsigned long long)r->u.fields[i]);
			break;
		}
	}
	if (r->payload_type == MAGNET_PAYLOAD_IP) {
		const unsigned char *p = (const unsigned char *)r->payload +
					 sizeof(struct magnet_ip_payload);
		unsigned long long hl = 0;
		size_t k;

		rec_field(r, "hdr_len", &hl, NULL, 0);
		if (hl && hl <= 64 &&
		    sizeof(struct magnet_ip_payload) + hl <= r->payload_len) {
			sb_key(b, "bytes");
			for (k = 0; k < hl; k++)
				sb_printf(b, "%02x", p[k]);
		}
	}
}

/* The payload of @r as key=value pairs (@sep between CORR steps). */
static void rec_details(const struct dump_state *ds, struct sbuf *b,
			const struct magnet_rec *r, const char *sep)
{
	const struct magnet_sysinfo *si = &r->u.sysinfo;
	const struct magnet_synth_payload *sp = &r->u.synth;
	struct magnet_corr_step st;
	double mean, var;
	unsigned int i;

	switch (r->kind) {
	case MAGNET_REC_SYSINFO:
		sb_kstr(b, "stream", si->stream);
		sb_kstr(b, "release", si->release);
		sb_printf(b, " clock=%s clock_hz=%llu wall_ns_at_zero=%llu"
			  " nr_cpus=%u subbuf_size=%u subbuf_count=%u flags=0x%x"
			  " format=%u.%u abi=%u",
			  clock_name(si->clock_id),
			  (unsigned long long)si->clock_hz,
			  (unsigned long long)si->wall_ns_at_zero, si->nr_cpus,
			  si->subbuf_size, si->subbuf_count, si->flags,
			  si->format_major, si->format_minor, si->abi_version);
		break;
	case MAGNET_REC_LOST:
		sb_printf(b, "count=%llu", (unsigned long long)r->u.lost.count);
		break;
	case MAGNET_REC_EVENTDEF:
		sb_printf(b, "id=%u", r->u.eventdef.id);
		sb_kstr(b, "name", r->u.eventdef.name);
		sb_printf(b, " layer=%s payload=%s",
			  magnet_layer_name(r->u.eventdef.layer),
			  magnet_payload_name(r->u.eventdef.payload));
		break;
	case MAGNET_REC_NET:
		if (r->u.net.flags & MAGNET_NET_F_ERROR) {
			sb_printf(b, "len=%u ifindex=%u proto=%u flags=0x%x err=%s(%d)",
				  r->u.net.len, r->u.net.ifindex, r->u.net.proto,
				  r->u.net.flags, errno_name(-r->u.net.err),
				  r->u.net.err);
			break;
		}
		sb_printf(b, "len=%u ifindex=%u proto=%u flags=0x%x gso_size=%u gso_segs=%u",
			  r->u.net.len, r->u.net.ifindex, r->u.net.proto,
			  r->u.net.flags, r->u.net.gso_size, r->u.net.gso_segs);
		break;
	case MAGNET_REC_FIELDS:
		details_fields(b, r);
		break;
	case MAGNET_REC_SYNTH:
		magnet_synth_moments(sp->count, sp->sum_lo, sp->sum_hi,
				     sp->sumsq_lo, sp->sumsq_hi, &mean, &var);
		sb_kstr(b, "synth", sp->name);
		sb_printf(b, " count=%llu min=%llu max=%llu mean=%.6g variance=%.6g"
			  " period_start=%llu period_end=%llu abstract_id=%llu"
			  " event=%u cpu=%u pid=%u tgid=%u cgroup=%llu",
			  (unsigned long long)sp->count,
			  (unsigned long long)sp->min,
			  (unsigned long long)sp->max, mean, var,
			  (unsigned long long)sp->period_start,
			  (unsigned long long)sp->period_end,
			  (unsigned long long)sp->abstract_id, sp->event,
			  sp->cpu, sp->pid, sp->tgid,
			  (unsigned long long)sp->cgroup);
		break;
	case MAGNET_REC_CORR:
		/* +delta(count) per reached step after the first */
		for (i = 1; i < r->u.corr.nsteps && i < r->u.corr.reached; i++) {
			if (magnet_rec_corr_step(ds->dec, r, i, &st))
				break;
			sb_printf(b, "%s+%lluns(%u)", i > 1 ? sep : "",
				  (unsigned long long)st.delta_ns, st.count);
		}
		if (r->u.corr.flags)
			sb_printf(b, "%sflags=0x%x", b->len ? sep : "",
				  r->u.corr.flags);
		break;
	case MAGNET_REC_APP:
		/* "write fd=3 req=10240 ret=10240 dur=41234ns" */
		sb_printf(b, "%s fd=%d req=%llu ret=%lld dur=%lluns",
			  magnet_app_call_name(r->u.app.call), r->u.app.fd,
			  (unsigned long long)r->u.app.req,
			  (long long)r->u.app.ret,
			  (unsigned long long)(r->u.app.exit_ns -
					       r->u.app.entry_ns));
		break;
	case MAGNET_REC_PLAIN:
		break;
	}
}

static void fmt_signed_ns(char *buf, size_t len, long long ns)
{
	unsigned long long a = ns < 0 ? -(unsigned long long)ns :
					 (unsigned long long)ns;

	snprintf(buf, len, "%s%llu.%09llu", ns < 0 ? "-" : "", a / NSEC_PER_SEC,
		 a % NSEC_PER_SEC);
}

/* The time column as --time asks. */
static void fmt_time(struct dump_state *ds, unsigned long long ns, char *buf,
		     size_t len)
{
	unsigned long long wall;
	struct tm tm;
	time_t sec;

	if (!ds->started) {
		ds->base_ns = ns;
		ds->prev_ns = ns;
		ds->started = true;
	}
	switch (ds->time) {
	case TIME_WALL:
		if (!ds->have_sysinfo) {
			snprintf(buf, len, "?");
			break;
		}
		wall = ds->wall_ns_at_zero + ns;
		sec = (time_t)(wall / NSEC_PER_SEC);
		gmtime_r(&sec, &tm);
		strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(buf + strlen(buf), len - strlen(buf), ".%09lluZ",
			 wall % NSEC_PER_SEC);
		break;
	case TIME_REL:
		fmt_signed_ns(buf, len, (long long)ns - ds->base_ns);
		break;
	case TIME_DELTA:
		fmt_signed_ns(buf, len, (long long)ns - ds->prev_ns);
		break;
	default:
		snprintf(buf, len, "%llu.%09llu", ns / NSEC_PER_SEC,
			 ns % NSEC_PER_SEC);
		break;
	}
	ds->prev_ns = ns;
}

/* RFC 4180: a field with a comma, quote or line break goes in quotes. */
static void csv_field(const char *s, bool last)
{
	if (strpbrk(s, ",\"\r\n")) {
		putchar('"');
		for (; *s; s++) {
			if (*s == '"')
				putchar('"');
			putchar(*s);
		}
		putchar('"');
	} else {
		fputs(s, stdout);
	}
	putchar(last ? '\n' : ',');
}

static void print_header(struct dump_state *ds)
{
	if (!ds->header || out_json())
		return;
	ds->header = false;
	if (ds->format == FMT_CSV)
		printf("time,cpu,pid,tgid,comm,event,abstract_id,size,details\n");
	else
		printf("# time\tcpu\tpid\tevent\tabstract_id\tsize\tdetails\n");
}

static void print_line(struct dump_state *ds, const struct magnet_rec *r,
		       unsigned long long ns)
{
	const char *comm = comm_get(&ds->comms, r->hdr.pid);
	struct sbuf d = { 0 };
	char tbuf[64], num[32];

	fmt_time(ds, ns, tbuf, sizeof(tbuf));
	rec_details(ds, &d, r, ds->format == FMT_CSV ? " " : "\t");
	if (ds->format == FMT_CSV) {
		csv_field(tbuf, false);
		printf("%u,%u,%u,", r->hdr.cpu, r->hdr.pid, r->hdr.tgid);
		csv_field(comm ? comm : "", false);
		csv_field(r->name, false);
		snprintf(num, sizeof(num), "%llu",
			 (unsigned long long)r->hdr.abstract_id);
		csv_field(num, false);
		snprintf(num, sizeof(num), "%llu", rec_size(r));
		csv_field(num, false);
		csv_field(d.p ? d.p : "", true);
	} else {
		if (comm)
			sb_kstr(&d, "comm", comm);
		printf("%s\t%u\t%u\t%s\t%llu\t%llu%s%s\n", tbuf, r->hdr.cpu,
		       r->hdr.pid, r->name,
		       (unsigned long long)r->hdr.abstract_id, rec_size(r),
		       d.len ? "\t" : "", d.len ? d.p : "");
	}
	free(d.p);
}

static void print_rec(struct dump_state *ds, const struct magnet_rec *r)
{
	const char *comm;
	unsigned long long ns;

	if (r->kind == MAGNET_REC_SYSINFO) {
		ds->clock_hz = r->u.sysinfo.clock_hz;
		ds->wall_ns_at_zero = r->u.sysinfo.wall_ns_at_zero;
		ds->have_sysinfo = true;
	}
	comm_learn(&ds->comms, r, true);
	/* the time the records are ordered by (an APP call's entry) */
	ns = to_ns(ds, magnet_rec_time(r));
	if (!out_json()) {
		print_header(ds);
		print_line(ds, r, ns);
		return;
	}
	comm = comm_get(&ds->comms, r->hdr.pid);
	out_open_object(NULL);
	out_uint("timestamp", NULL, r->hdr.timestamp);
	out_uint("time", NULL, magnet_rec_time(r));
	if (ds->have_sysinfo)
		out_uint("wall_ns", NULL, ds->wall_ns_at_zero + ns);
	out_uint("cpu", NULL, r->hdr.cpu);
	out_uint("pid", NULL, r->hdr.pid);
	out_uint("tgid", NULL, r->hdr.tgid);
	if (comm)
		out_string("comm", NULL, comm);
	out_uint("event", NULL, r->hdr.event);
	out_string("name", NULL, r->name);
	out_uint("abstract_id", NULL, r->hdr.abstract_id);
	out_uint("size", NULL, r->hdr.size);
	print_payload(ds, r);
	out_close_object();
}

/* Thread names first known anywhere in the trace (records before a
 * thread's first sched event get its name too). */
static void prepass_file(struct dump_state *ds, const char *path)
{
	struct magnet_trace *t;
	struct magnet_rec rec;

	if (magnet_trace_open(path, &t))
		return;
	while (magnet_trace_next(t, &rec) > 0)
		comm_learn(&ds->comms, &rec, false);
	magnet_trace_close(t);
}

static void prepass_sorted(struct dump_state *ds, int argc, char **argv)
{
	struct magnet_sorted *st;
	const struct magnet_rec *rec;

	if (magnet_sorted_open((const char *const *)argv, argc, &st))
		return;
	while (magnet_sorted_next(st, &rec) > 0)
		comm_learn(&ds->comms, rec, false);
	magnet_sorted_close(st);
}

static int dump_file(struct dump_state *ds, const char *path)
{
	struct magnet_trace *t;
	struct magnet_rec rec;
	int ret;

	ret = magnet_trace_open(path, &t);
	if (ret) {
		mc_error("dump: %s: %s", path, strerror(-ret));
		return MC_EXIT_FILE;
	}
	prepass_file(ds, path);
	ds->dec = magnet_trace_decoder(t);
	while ((ret = magnet_trace_next(t, &rec)) > 0)
		print_rec(ds, &rec);
	if (ret < 0) {
		fflush(stdout);		/* good records first, then the error */
		mc_error("dump: %s: %s", path, magnet_trace_errmsg(t));
	}
	magnet_trace_close(t);
	return ret < 0 ? MC_EXIT_FILE : MC_EXIT_OK;
}

/* All FILEs merged in time order (libmagnet's sorted traces). */
static int dump_sorted(struct dump_state *ds, int argc, char **argv)
{
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
	prepass_sorted(ds, argc, argv);
	while ((ret = magnet_sorted_next(st, &rec)) > 0) {
		/* the record's own file's decoder (CORR steps) */
		ds->dec = magnet_sorted_decoder(st);
		print_rec(ds, rec);
	}
	if (ret < 0) {
		fflush(stdout);		/* good records first, then the error */
		mc_error("dump: %s", magnet_sorted_errmsg(st));
	}
	magnet_sorted_close(st);
	return ret < 0 ? MC_EXIT_FILE : MC_EXIT_OK;
}

#define DUMP_USAGE							\
	"Usage: magnetctl dump [--file-order] [--time raw|wall|rel|delta]\n" \
	"                      [--format text|csv] [--no-header] FILE...\n"

int do_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "file-order",	no_argument,	   NULL, 'F' },
		{ "no-header",	no_argument,	   NULL, 'H' },
		{ "time",	required_argument, NULL, 't' },
		{ "format",	required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct dump_state ds = { .header = true };
	bool file_order = false;
	/* getopt_long over "dump ARGS...": options anywhere, --opt=V too */
	char **gv = argv - 1;
	const char *v;
	int c, i, ret;

	if (argc >= 1 && !strcmp(argv[0], "help")) {
		printf(DUMP_USAGE);
		return MC_EXIT_OK;
	}
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc + 1, gv, ":", opts, NULL)) != -1) {
		v = optarg;
		switch (c) {
		case 'F':
			file_order = true;
			break;
		case 'H':
			ds.header = false;
			break;
		case 't':
			if (!strcmp(v, "raw"))
				ds.time = TIME_RAW;
			else if (!strcmp(v, "wall"))
				ds.time = TIME_WALL;
			else if (!strcmp(v, "rel"))
				ds.time = TIME_REL;
			else if (!strcmp(v, "delta"))
				ds.time = TIME_DELTA;
			else
				return mc_usage_error("dump: --time takes raw, wall, rel or delta, not '%s'",
						      v);
			break;
		case 'f':
			if (!strcmp(v, "text"))
				ds.format = FMT_TEXT;
			else if (!strcmp(v, "csv"))
				ds.format = FMT_CSV;
			else
				return mc_usage_error("dump: --format takes text or csv, not '%s'",
						      v);
			break;
		case ':':
			return mc_usage_error("dump: %s needs a value", gv[optind - 1]);
		default:
			return mc_option_error("dump", gv[optind - 1]);
		}
	}
	i = optind - 1;
	argc -= i;
	argv += i;
	if (argc < 1)
		return mc_usage_error("dump: missing FILE");
	if (file_order && argc > 1)
		return mc_usage_error("dump: --file-order takes one FILE, not '%s'",
				      argv[1]);
	if (file_order)
		ret = dump_file(&ds, argv[0]);
	else
		ret = dump_sorted(&ds, argc, argv);
	free(ds.comms.e);
	return ret;
}
