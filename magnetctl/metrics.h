/* SPDX-License-Identifier: GPL-2.0-only */
/* The Prometheus exposition of MAGNET's counters (metrics.c, docs/PROMETHEUS.md). */
#ifndef MAGNETCTL_METRICS_H
#define MAGNETCTL_METRICS_H

#include <stdio.h>
#include <magnet/libmagnet.h>

/* Per-step latency buckets, in seconds (upper bounds; +Inf implied). */
#define MC_HIST_BUCKETS		16
#define MC_HIST_MAX		256	/* (correlator, step) pairs */

struct mc_hist {
	__u32 corr_id;
	unsigned int step;		/* 1..nsteps-1: from step-1 to step */
	__u16 from, to;			/* event IDs */
	unsigned long long bucket[MC_HIST_BUCKETS];	/* non-cumulative */
	unsigned long long count;
	double sum;			/* seconds */
};

/* Correlation records read from a stream, folded into histograms. */
struct mc_corr_hists {
	struct mc_hist h[MC_HIST_MAX];
	unsigned int n;
	unsigned long long records;	/* CORR records folded */
	unsigned long long dropped;	/* steps beyond MC_HIST_MAX pairs */
	unsigned long long lost;	/* LOST records' counts */
	const struct magnet_decoder *dec;	/* names the events */
};

extern const double mc_hist_bounds[MC_HIST_BUCKETS];

/* Fold one decoded record (CORR and LOST count, others are ignored). */
void mc_hist_fold(struct mc_corr_hists *ch, const struct magnet_rec *r);

struct mc_metrics_opts {
	unsigned int max_keys;		/* synthesizer keys per synthesizer */
	const struct mc_corr_hists *hists;	/* NULL: no histograms */
	const char *hist_stream;
};

/*
 * Write the exposition (text format 0.0.4) of everything MAGNET counts to
 * @out.  @h NULL (not loaded): magnet_up 0 and nothing else.
 */
void mc_metrics_write(struct magnet_ctl *h, FILE *out,
		      const struct mc_metrics_opts *o);

#endif
