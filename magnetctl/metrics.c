// SPDX-License-Identifier: GPL-2.0-only
/*
 * What magnetctl export serves on /metrics: MAGNET's counters in the
 * Prometheus text exposition format 0.0.4, read over generic netlink at
 * each scrape (magnetk answers; the tracing path is not involved).  The
 * families, their labels and the cardinality bounds: docs/PROMETHEUS.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "magnetctl.h"
#include "metrics.h"

const double mc_hist_bounds[MC_HIST_BUCKETS] = {
	1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4,
	5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 1e-1,
};

/* ---- collected objects ---- */

struct vec {
	void *v;
	size_t n, cap, sz;
};

static int vec_push(struct vec *a, const void *x)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 16;
		void *p = realloc(a->v, cap * a->sz);

		if (!p)
			return -ENOMEM;
		a->v = p;
		a->cap = cap;
	}
	memcpy((char *)a->v + a->n * a->sz, x, a->sz);
	a->n++;
	return 0;
}

#define VEC(type)	{ NULL, 0, 0, sizeof(type) }
#define AT(a, type, i)	(&((type *)(a).v)[i])

static int push_stream(const struct magnet_stream_info *s, void *ctx) { return vec_push(ctx, s); }
static int push_probe(const struct magnet_probe_info *p, void *ctx) { return vec_push(ctx, p); }
static int push_filter(const struct magnet_filter_info *f, void *ctx) { return vec_push(ctx, f); }
static int push_synth(const struct magnet_synth_info *s, void *ctx) { return vec_push(ctx, s); }
static int push_corr(const struct magnet_corr_info *c, void *ctx) { return vec_push(ctx, c); }

struct synth_keys {
	struct vec vals;		/* struct magnet_synth_value */
	unsigned int max;
	unsigned long long dropped;
};

static int push_value(const struct magnet_synth_value *v, void *ctx)
{
	struct synth_keys *k = ctx;

	if (k->vals.n >= k->max) {
		k->dropped++;
		return 0;
	}
	return vec_push(&k->vals, v);
}

/* ---- exposition ---- */

static void family(FILE *o, const char *name, const char *type,
		   const char *help)
{
	fprintf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* @s with \\, " and newline escaped into @buf (cut to fit). */
static const char *escape(char *buf, size_t n, const char *s)
{
	size_t k = 0;

	for (; *s && k + 3 < n; s++) {
		if (*s == '\\' || *s == '"' || *s == '\n')
			buf[k++] = '\\';
		buf[k++] = *s == '\n' ? 'n' : *s;
	}
	buf[k] = '\0';
	return buf;
}

/* A label value with \, " and newline escaped. */
static void label_value(FILE *o, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', o);
		if (*s == '\n') {
			fputs("\\n", o);
			continue;
		}
		fputc(*s, o);
	}
}

static void sample_u(FILE *o, const char *name, const char *lname,
		     const char *lval, unsigned long long v)
{
	fprintf(o, "%s{%s=\"", name, lname);
	label_value(o, lval);
	fprintf(o, "\"} %llu\n", v);
}

#define EACH(vec, type, p) \
	for (type *p = (type *)(vec).v; p < (type *)(vec).v + (vec).n; p++)

/* One counter family over streams: field @f of each. */
#define STREAM_FAMILY(o, streams, fam, type, help, f) do {		\
	family(o, fam, type, help);					\
	EACH(streams, struct magnet_stream_info, s)			\
		sample_u(o, fam, "stream", s->name, s->f);		\
} while (0)

static void write_streams(FILE *o, struct vec *v)
{
	STREAM_FAMILY(o, *v, "magnet_stream_produced_total", "counter",
		      "Events offered to the stream's rings.", produced);
	STREAM_FAMILY(o, *v, "magnet_stream_written_total", "counter",
		      "Events written to the stream's rings.", written);
	STREAM_FAMILY(o, *v, "magnet_stream_lost_total", "counter",
		      "Events lost for want of space (produced = written + lost).", lost);
	STREAM_FAMILY(o, *v, "magnet_stream_read_total", "counter",
		      "Records read from the stream's file.", read);
	STREAM_FAMILY(o, *v, "magnet_stream_written_bytes_total", "counter",
		      "Bytes of records written to the stream's rings.", bytes);
	STREAM_FAMILY(o, *v, "magnet_stream_app_events_total", "counter",
		      "Application records accepted by write().", app_events);
	STREAM_FAMILY(o, *v, "magnet_stream_app_rejected_total", "counter",
		      "write() calls of application records refused.", app_rejected);
	STREAM_FAMILY(o, *v, "magnet_stream_readers", "gauge",
		      "Open readers of the stream's file.", readers);
	STREAM_FAMILY(o, *v, "magnet_stream_probes", "gauge",
		      "Probes enabled into the stream.", probes);
	family(o, "magnet_stream_ring_bytes", "gauge",
	       "Ring size per CPU: sub-buffer size times count.");
	EACH(*v, struct magnet_stream_info, s)
		sample_u(o, "magnet_stream_ring_bytes", "stream", s->name,
			 (unsigned long long)s->subbuf_size * s->subbuf_count);
}

static void write_probes(FILE *o, struct vec *v)
{
	family(o, "magnet_probe_hits_total", "counter",
	       "Events the probe recorded: delivered to its stream or refused by a filter.");
	EACH(*v, struct magnet_probe_info, p) {
		fputs("magnet_probe_hits_total{probe=\"", o);
		label_value(o, p->name);
		fprintf(o, "\",layer=\"%s\"} %llu\n", magnet_layer_name(p->layer),
			(unsigned long long)p->hits);
	}
	family(o, "magnet_probe_enabled", "gauge",
	       "1 when the probe records into a stream, else 0.");
	EACH(*v, struct magnet_probe_info, p) {
		fputs("magnet_probe_enabled{probe=\"", o);
		label_value(o, p->name);
		fputs("\",stream=\"", o);
		label_value(o, p->stream);
		fprintf(o, "\"} %d\n", p->enabled ? 1 : 0);
	}
}

static void write_filters(FILE *o, struct vec *v)
{
	family(o, "magnet_filter_matched_total", "counter",
	       "Events the filter's keys matched.");
	EACH(*v, struct magnet_filter_info, f)
		sample_u(o, "magnet_filter_matched_total", "filter", f->name,
			 f->matched);
	family(o, "magnet_filter_delivered_total", "counter",
	       "Matched events the filter let through (sampling kept them).");
	EACH(*v, struct magnet_filter_info, f)
		sample_u(o, "magnet_filter_delivered_total", "filter", f->name,
			 f->delivered);
	family(o, "magnet_filter_dropped_total", "counter",
	       "Matched events the filter dropped.");
	EACH(*v, struct magnet_filter_info, f)
		sample_u(o, "magnet_filter_dropped_total", "filter", f->name,
			 f->dropped);
}

static const char *quantity_unit(__u32 q)
{
	return q == MAGNET_SYNTH_Q_INTERVAL ? "ns" :
	       q == MAGNET_SYNTH_Q_SIZE ? "bytes" : "value";
}

/* The key labels a value's group names (docs/SYNTH.md). */
static void key_labels(FILE *o, const struct magnet_synth_value *k)
{
	fputs("synth=\"", o);
	label_value(o, k->name);
	fputc('"', o);
	if (k->group & MAGNET_SYNTH_K_EVENT)
		fprintf(o, ",event=\"%u\"", k->event);
	if (k->group & MAGNET_SYNTH_K_CPU)
		fprintf(o, ",cpu=\"%u\"", k->cpu);
	if (k->group & MAGNET_SYNTH_K_AID)
		fprintf(o, ",id=\"%llu\"", (unsigned long long)k->abstract_id);
	if (k->group & MAGNET_SYNTH_K_PID)
		fprintf(o, ",pid=\"%u\"", k->pid);
	if (k->group & MAGNET_SYNTH_K_TGID)
		fprintf(o, ",tgid=\"%u\"", k->tgid);
	if (k->group & MAGNET_SYNTH_K_CGROUP)
		fprintf(o, ",cgroup=\"%llu\"", (unsigned long long)k->cgroup);
}

static double u128(__u64 lo, __u64 hi)
{
	return (double)hi * 18446744073709551616.0 + (double)lo;
}

/* The synthesizers' own counters, then their keys' values. */
static void write_synths(struct magnet_ctl *h, FILE *o, struct vec *v,
			 unsigned int max_keys)
{
	struct synth_keys *keys = calloc(v->n ? v->n : 1, sizeof(*keys));
	size_t i;

	family(o, "magnet_synth_matched_total", "counter",
	       "Events the synthesizer took in.");
	EACH(*v, struct magnet_synth_info, s)
		sample_u(o, "magnet_synth_matched_total", "synth", s->name, s->matched);
	family(o, "magnet_synth_overflow_total", "counter",
	       "Events of keys beyond the synthesizer's key table.");
	EACH(*v, struct magnet_synth_info, s)
		sample_u(o, "magnet_synth_overflow_total", "synth", s->name, s->overflow);
	family(o, "magnet_synth_records_total", "counter",
	       "SYNTH records written to the synthesizer's stream.");
	EACH(*v, struct magnet_synth_info, s)
		sample_u(o, "magnet_synth_records_total", "synth", s->name, s->records);
	family(o, "magnet_synth_records_lost_total", "counter",
	       "SYNTH records lost for want of space in the stream.");
	EACH(*v, struct magnet_synth_info, s)
		sample_u(o, "magnet_synth_records_lost_total", "synth", s->name,
			 s->records_lost);
	family(o, "magnet_synth_missed_total", "counter",
	       "Events the synthesizer never saw: its probe's hook missed them, or they began inside a write.");
	for (i = 0; i < v->n; i++) {
		const struct magnet_synth_info *s = AT(*v, struct magnet_synth_info, i);
		__u64 missed;

		/* a GET of its own (ABI of the info); an older module has none */
		if (!magnet_synth_get_missed(h, s->name, &missed))
			sample_u(o, "magnet_synth_missed_total", "synth", s->name, missed);
	}
	family(o, "magnet_synth_keys", "gauge", "Keys the synthesizer holds.");
	EACH(*v, struct magnet_synth_info, s)
		sample_u(o, "magnet_synth_keys", "synth", s->name, s->nr_keys);
	if (!keys)
		return;
	for (i = 0; i < v->n; i++) {
		keys[i].vals.sz = sizeof(struct magnet_synth_value);
		keys[i].max = max_keys;
		magnet_synth_values(h, AT(*v, struct magnet_synth_info, i)->name,
				    push_value, &keys[i]);
	}
	family(o, "magnet_synth_exported_keys_dropped", "gauge",
	       "Keys left out of this scrape (magnetctl export --max-keys).");
	for (i = 0; i < v->n; i++)
		sample_u(o, "magnet_synth_exported_keys_dropped", "synth",
			 AT(*v, struct magnet_synth_info, i)->name, keys[i].dropped);
	family(o, "magnet_synth_samples_total", "counter",
	       "Samples of the key since the synthesizer was made.");
	for (i = 0; i < v->n; i++)
		EACH(keys[i].vals, struct magnet_synth_value, k) {
			fputs("magnet_synth_samples_total{", o);
			key_labels(o, k);
			fprintf(o, ",unit=\"%s\"} %llu\n", quantity_unit(k->quantity),
				(unsigned long long)k->total_count);
		}
	family(o, "magnet_synth_sum_total", "counter",
	       "Sum of the key's samples since the synthesizer was made (label unit).");
	for (i = 0; i < v->n; i++)
		EACH(keys[i].vals, struct magnet_synth_value, k) {
			fputs("magnet_synth_sum_total{", o);
			key_labels(o, k);
			fprintf(o, ",unit=\"%s\"} %.17g\n", quantity_unit(k->quantity),
				u128(k->total_sum_lo, k->total_sum_hi));
		}
	family(o, "magnet_synth_period_samples", "gauge",
	       "Samples of the key in the open period.");
	for (i = 0; i < v->n; i++)
		EACH(keys[i].vals, struct magnet_synth_value, k) {
			fputs("magnet_synth_period_samples{", o);
			key_labels(o, k);
			fprintf(o, "} %llu\n", (unsigned long long)k->count);
		}
	family(o, "magnet_synth_period_mean", "gauge",
	       "Mean of the key's samples in the open period (NaN before its first).");
	for (i = 0; i < v->n; i++)
		EACH(keys[i].vals, struct magnet_synth_value, k) {
			fputs("magnet_synth_period_mean{", o);
			key_labels(o, k);
			if (k->count)
				fprintf(o, ",unit=\"%s\"} %.17g\n",
					quantity_unit(k->quantity), k->mean_d);
			else
				fprintf(o, ",unit=\"%s\"} NaN\n",
					quantity_unit(k->quantity));
		}
	for (i = 0; i < v->n; i++)
		free(keys[i].vals.v);
	free(keys);
}

#define CORR_FAMILY(o, corrs, fam, type, help, f) do {			\
	family(o, fam, type, help);					\
	EACH(corrs, struct magnet_corr_info, c)				\
		sample_u(o, fam, "correlator", c->name, c->f);		\
} while (0)

static void write_corrs(FILE *o, struct vec *v)
{
	CORR_FAMILY(o, *v, "magnet_corr_events_total", "counter",
		    "Events the correlator read.", events);
	CORR_FAMILY(o, *v, "magnet_corr_completed_total", "counter",
		    "Chains completed.", completed);
	CORR_FAMILY(o, *v, "magnet_corr_expired_total", "counter",
		    "Chains that ran out of their window.", expired);
	CORR_FAMILY(o, *v, "magnet_corr_partial_total", "counter",
		    "Partial chains written.", partial);
	CORR_FAMILY(o, *v, "magnet_corr_overflow_total", "counter",
		    "Chains refused for want of table space.", overflow);
	CORR_FAMILY(o, *v, "magnet_corr_stray_total", "counter",
		    "Events that joined no chain.", stray);
	CORR_FAMILY(o, *v, "magnet_corr_lost_total", "counter",
		    "Events the correlator's internal stream lost.", lost);
	CORR_FAMILY(o, *v, "magnet_corr_records_total", "counter",
		    "CORR records written.", records);
	CORR_FAMILY(o, *v, "magnet_corr_pending", "gauge",
		    "Chains open now.", pending);
}

static const char *corr_name(struct vec *v, __u32 id)
{
	EACH(*v, struct magnet_corr_info, c)
		if (c->id == id)
			return c->name;
	return NULL;
}

static void write_hists(FILE *o, struct vec *corrs,
			const struct mc_metrics_opts *opt)
{
	const struct mc_corr_hists *ch = opt->hists;
	const char *name = "magnet_corr_step_latency_seconds";
	char from[MAGNET_NAME_MAX + 16], to[MAGNET_NAME_MAX + 16], idn[16];
	unsigned int i, b;

	family(o, "magnet_export_corr_records_total", "counter",
	       "CORR records magnetctl export read from its stream (--corr-stream).");
	sample_u(o, "magnet_export_corr_records_total", "stream",
		 opt->hist_stream, ch->records);
	family(o, "magnet_export_corr_lost_total", "counter",
	       "Records its stream lost before export read them (LOST records).");
	sample_u(o, "magnet_export_corr_lost_total", "stream", opt->hist_stream,
		 ch->lost);
	family(o, name, "histogram",
	       "Time between two layers of a correlated chain (CORR step delta_ns).");
	for (i = 0; i < ch->n; i++) {
		const struct mc_hist *h = &ch->h[i];
		const char *cn = corr_name(corrs, h->corr_id);
		unsigned long long cum = 0;
		char lab[512], e1[80], e2[80], e3[80];

		if (!cn) {
			snprintf(idn, sizeof(idn), "%u", h->corr_id);
			cn = idn;
		}
		magnet_decoder_event_name(ch->dec, h->from, from, sizeof(from));
		magnet_decoder_event_name(ch->dec, h->to, to, sizeof(to));
		snprintf(lab, sizeof(lab), "correlator=\"%s\",step=\"%u\",from=\"%s\",to=\"%s\"",
			 escape(e1, sizeof(e1), cn), h->step,
			 escape(e2, sizeof(e2), from), escape(e3, sizeof(e3), to));
		for (b = 0; b < MC_HIST_BUCKETS; b++) {
			cum += h->bucket[b];
			fprintf(o, "%s_bucket{%s,le=\"%g\"} %llu\n", name, lab,
				mc_hist_bounds[b], cum);
		}
		fprintf(o, "%s_bucket{%s,le=\"+Inf\"} %llu\n", name, lab, h->count);
		fprintf(o, "%s_sum{%s} %.9f\n", name, lab, h->sum);
		fprintf(o, "%s_count{%s} %llu\n", name, lab, h->count);
	}
}

void mc_hist_fold(struct mc_corr_hists *ch, const struct magnet_rec *r)
{
	struct magnet_corr_step prev, st;
	unsigned int i, j, b;

	if (r->kind == MAGNET_REC_LOST) {
		ch->lost += r->u.lost.count;
		return;
	}
	if (r->kind != MAGNET_REC_CORR)
		return;
	ch->records++;
	if (magnet_rec_corr_step(ch->dec, r, 0, &prev))
		return;
	for (i = 1; i < r->u.corr.nsteps && i < r->u.corr.reached; i++) {
		struct mc_hist *h = NULL;
		double s;

		if (magnet_rec_corr_step(ch->dec, r, i, &st))
			return;
		for (j = 0; j < ch->n; j++)
			if (ch->h[j].corr_id == r->u.corr.corr_id &&
			    ch->h[j].step == i) {
				h = &ch->h[j];
				break;
			}
		if (!h) {
			if (ch->n == MC_HIST_MAX) {
				ch->dropped++;
				prev = st;
				continue;
			}
			h = &ch->h[ch->n++];
			memset(h, 0, sizeof(*h));
			h->corr_id = r->u.corr.corr_id;
			h->step = i;
			h->from = prev.event;
			h->to = st.event;
		}
		s = st.delta_ns / 1e9;
		for (b = 0; b < MC_HIST_BUCKETS && s > mc_hist_bounds[b]; b++)
			;
		if (b < MC_HIST_BUCKETS)
			h->bucket[b]++;
		h->count++;
		h->sum += s;
		prev = st;
	}
}

/* A listing: 0, 1 when refused for want of CAP_NET_ADMIN, -1 on failure. */
static int listed(int err)
{
	return err == -EPERM ? 1 : err ? -1 : 0;
}

void mc_metrics_write(struct magnet_ctl *h, FILE *o,
		      const struct mc_metrics_opts *opt)
{
	struct vec streams = VEC(struct magnet_stream_info);
	struct vec probes = VEC(struct magnet_probe_info);
	struct vec filters = VEC(struct magnet_filter_info);
	struct vec synths = VEC(struct magnet_synth_info);
	struct vec corrs = VEC(struct magnet_corr_info);
	int fl = 0, sy = 0, up = h &&
		!magnet_stream_list(h, push_stream, &streams) &&
		!magnet_probe_list(h, push_probe, &probes) &&
		!magnet_corr_list(h, push_corr, &corrs) &&
		(fl = listed(magnet_filter_list(h, push_filter, &filters))) >= 0 &&
		(sy = listed(magnet_synth_list(h, push_synth, &synths))) >= 0;

	family(o, "magnet_up", "gauge",
	       "1 when MAGNET answered this scrape's requests, else 0.");
	fprintf(o, "magnet_up %d\n", up);
	if (up) {
		/* filters and synthesizers are root's (docs/THREATS.md) */
		family(o, "magnet_export_denied", "gauge",
		       "1 when the exporter may not read these objects (needs CAP_NET_ADMIN).");
		fprintf(o, "magnet_export_denied{object=\"filter\"} %d\n", fl);
		fprintf(o, "magnet_export_denied{object=\"synth\"} %d\n", sy);
		write_streams(o, &streams);
		write_probes(o, &probes);
		if (!fl)
			write_filters(o, &filters);
		if (!sy)
			write_synths(h, o, &synths, opt->max_keys);
		write_corrs(o, &corrs);
		if (opt->hists)
			write_hists(o, &corrs, opt);
	}
	free(streams.v);
	free(probes.v);
	free(filters.v);
	free(synths.v);
	free(corrs.v);
}
