// SPDX-License-Identifier: GPL-2.0-only
/*
 * magnetctl plot KIND [--id ID] [--format png|svg] -o|--output OUT FILE...
 * (options before or after KIND and the files, getopt_long): the papers'
 * figures from a trace, drawn by gnuplot (docs/PLOT.md):
 *
 *   layers   one socket's records over time, a series per event: the
 *            bytes each layer saw (002 Fig. 14: how the stack reshapes
 *            what the application wrote)
 *   tcp      one socket's TCP state over time: snd_cwnd, snd_ssthresh
 *            (packets), srtt (ms, right axis), from magnet_tcpip.ko
 *   latency  per step of the correlators' chains, the distribution (CDF)
 *            of the time between two layers, from CORR records
 *   rate     events per second on each CPU
 *
 * Besides OUT it writes OUT.dat (the data, a gnuplot block per series,
 * each headed by "# SERIES name") and OUT.gp (the script), so a figure
 * can be redone or restyled.  --id picks the socket (abstract ID) of
 * layers and tcp; without it, the socket with the most records of the
 * kind.  Times are seconds from the trace's first event.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "magnetctl.h"

#define MAX_SERIES	64
#define RATE_BINS	200

struct point {
	double x, y[3];
};

struct series {
	char name[MAGNET_NAME_MAX * 2 + 8];
	struct point *p;
	size_t n, cap;
};

struct plot {
	const char *kind;
	struct series s[MAX_SERIES];
	unsigned int ns;
	unsigned long long skipped;	/* series beyond MAX_SERIES */
};

static struct series *series_get(struct plot *pl, const char *name)
{
	unsigned int i;

	for (i = 0; i < pl->ns; i++)
		if (!strcmp(pl->s[i].name, name))
			return &pl->s[i];
	if (pl->ns == MAX_SERIES) {
		pl->skipped++;
		return NULL;
	}
	snprintf(pl->s[pl->ns].name, sizeof(pl->s[0].name), "%s", name);
	return &pl->s[pl->ns++];
}

static int series_add(struct series *s, double x, double y0, double y1,
		      double y2)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		struct point *p = realloc(s->p, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->p = p;
		s->cap = cap;
	}
	s->p[s->n++] = (struct point){ x, { y0, y1, y2 } };
	return 0;
}

static bool is_tcp(const struct magnet_rec *r)
{
	return r->kind == MAGNET_REC_FIELDS && r->payload_type == MAGNET_PAYLOAD_TCP;
}

/* The bytes a record is about, or -1 when it carries none. */
static long long rec_bytes(const struct magnet_rec *r)
{
	const struct magnet_field *f;
	unsigned int i, n;

	switch (r->kind) {
	case MAGNET_REC_NET:
		return r->u.net.flags & MAGNET_NET_F_ERROR ? -1 : (long long)r->u.net.len;
	case MAGNET_REC_APP:
		return r->u.app.ret < 0 ? -1 : r->u.app.ret;
	case MAGNET_REC_FIELDS:
		f = magnet_payload_fields(r->payload_type, &n);
		for (i = 0; f && i < n; i++)
			if (!strcmp(f[i].name, "len"))
				return (long long)r->u.fields[i];
		return -1;
	default:
		return -1;
	}
}

static double field(const struct magnet_rec *r, const char *name)
{
	const struct magnet_field *f;
	unsigned int i, n;

	f = magnet_payload_fields(r->payload_type, &n);
	for (i = 0; f && i < n; i++)
		if (!strcmp(f[i].name, name))
			return (double)r->u.fields[i];
	return 0;
}

struct count {
	__u64 id;
	unsigned long long n;
};

/* The socket with the most records @want accepts (0: none). */
static __u64 busiest(struct magnet_sorted *st, bool (*want)(const struct magnet_rec *))
{
	const struct magnet_rec *r;
	struct count *c = NULL;
	size_t n = 0, i, best = 0;
	__u64 id = 0;

	while (magnet_sorted_next(st, &r) > 0) {
		if (!r->hdr.abstract_id || !want(r))
			continue;
		for (i = 0; i < n && c[i].id != r->hdr.abstract_id; i++)
			;
		if (i == n) {
			struct count *nc = realloc(c, (n + 1) * sizeof(*c));

			if (!nc)
				break;
			c = nc;
			c[n++] = (struct count){ r->hdr.abstract_id, 0 };
		}
		c[i].n++;
	}
	for (i = 0; i < n; i++)
		if (c[i].n > c[best].n)
			best = i;
	if (n)
		id = c[best].id;
	free(c);
	return id;
}

static bool has_bytes(const struct magnet_rec *r)
{
	return r->kind != MAGNET_REC_SYNTH && r->kind != MAGNET_REC_CORR &&
	       rec_bytes(r) >= 0;
}

/* Fill @pl from the trace; 0 or -errno (message printed). */
static int collect(struct plot *pl, const char *const *files, int nf,
		   __u64 *id)
{
	struct magnet_sorted *st;
	const struct magnet_rec *r;
	double t0 = -1, t;
	int ret;
	char name[sizeof(pl->s[0].name)], a[MAGNET_NAME_MAX + 16],
	     b[MAGNET_NAME_MAX + 16];

	ret = magnet_sorted_open(files, nf, &st);
	if (ret) {
		mc_error("plot: %s: %s", files[0], strerror(-ret));
		return ret;
	}
	if (!*id && (!strcmp(pl->kind, "layers") || !strcmp(pl->kind, "tcp"))) {
		*id = busiest(st, !strcmp(pl->kind, "tcp") ? is_tcp : has_bytes);
		magnet_sorted_close(st);
		ret = magnet_sorted_open(files, nf, &st);
		if (ret)
			return ret;
	}
	while ((ret = magnet_sorted_next(st, &r)) > 0) {
		struct series *s;
		unsigned int i;

		if (r->kind == MAGNET_REC_SYSINFO || r->kind == MAGNET_REC_EVENTDEF ||
		    r->kind == MAGNET_REC_LOST)
			continue;
		if (t0 < 0)
			t0 = (double)magnet_rec_time(r);
		t = ((double)magnet_rec_time(r) - t0) / 1e9;
		if (!strcmp(pl->kind, "layers")) {
			if (r->hdr.abstract_id != *id || !has_bytes(r))
				continue;
			s = series_get(pl, r->name);
			if (s && series_add(s, t, rec_bytes(r), 0, 0))
				goto nomem;
		} else if (!strcmp(pl->kind, "tcp")) {
			double ss;

			if (r->hdr.abstract_id != *id || !is_tcp(r))
				continue;
			s = series_get(pl, "tcp");
			/* an infinite ssthresh (not yet set) is left out: NaN */
			ss = field(r, "snd_ssthresh");
			if (s && series_add(s, t, field(r, "snd_cwnd"),
					    ss >= 0x7fffffff ? 0.0 / 0.0 : ss,
					    field(r, "srtt_us") / 1000.0))
				goto nomem;
		} else if (!strcmp(pl->kind, "latency")) {
			const struct magnet_decoder *d = magnet_sorted_decoder(st);
			struct magnet_corr_step prev, cur;

			if (r->kind != MAGNET_REC_CORR || magnet_rec_corr_step(d, r, 0, &prev))
				continue;
			for (i = 1; i < r->u.corr.nsteps && i < r->u.corr.reached; i++) {
				if (magnet_rec_corr_step(d, r, i, &cur))
					break;
				snprintf(name, sizeof(name), "%u: %s -> %s", i,
					 magnet_decoder_event_name(d, prev.event, a, sizeof(a)),
					 magnet_decoder_event_name(d, cur.event, b, sizeof(b)));
				s = series_get(pl, name);
				if (s && series_add(s, cur.delta_ns / 1000.0, 0, 0, 0))
					goto nomem;
				prev = cur;
			}
		} else {	/* rate: one point per event, binned below */
			snprintf(name, sizeof(name), "cpu%u", r->hdr.cpu);
			s = series_get(pl, name);
			if (s && series_add(s, t, 0, 0, 0))
				goto nomem;
		}
	}
	if (ret < 0)
		mc_error("plot: %s", magnet_sorted_errmsg(st));
	magnet_sorted_close(st);
	return ret < 0 ? ret : 0;
nomem:
	mc_error("plot: out of memory");
	magnet_sorted_close(st);
	return -ENOMEM;
}

static int cmp_x(const void *a, const void *b)
{
	double x = ((const struct point *)a)->x, y = ((const struct point *)b)->x;

	return (x > y) - (x < y);
}

static void write_data(FILE *f, struct plot *pl)
{
	unsigned int i;
	size_t k;

	for (i = 0; i < pl->ns; i++) {
		struct series *s = &pl->s[i];

		fprintf(f, "%s# SERIES %s\n", i ? "\n\n" : "", s->name);
		if (!strcmp(pl->kind, "latency")) {
			/* CDF: the sorted deltas (us) and the share at or below */
			qsort(s->p, s->n, sizeof(*s->p), cmp_x);
			for (k = 0; k < s->n; k++)
				fprintf(f, "%.3f %.6f\n", s->p[k].x,
					(double)(k + 1) / s->n);
		} else if (!strcmp(pl->kind, "rate")) {
			double end = s->n ? s->p[s->n - 1].x : 0, w;
			unsigned long long bin[RATE_BINS] = { 0 };
			unsigned int j;

			for (j = 0; j < pl->ns; j++)	/* one bin width for all CPUs */
				if (pl->s[j].n && pl->s[j].p[pl->s[j].n - 1].x > end)
					end = pl->s[j].p[pl->s[j].n - 1].x;
			w = end > 0 ? end / RATE_BINS : 1;
			for (k = 0; k < s->n; k++) {
				j = (unsigned int)(s->p[k].x / w);
				bin[j < RATE_BINS ? j : RATE_BINS - 1]++;
			}
			for (j = 0; j < RATE_BINS; j++)
				fprintf(f, "%.6f %.1f\n", (j + 0.5) * w, bin[j] / w);
		} else if (!strcmp(pl->kind, "tcp")) {
			for (k = 0; k < s->n; k++)
				fprintf(f, "%.9f %.0f %.0f %.3f\n", s->p[k].x,
					s->p[k].y[0], s->p[k].y[1], s->p[k].y[2]);
		} else {
			for (k = 0; k < s->n; k++)
				fprintf(f, "%.9f %.0f\n", s->p[k].x, s->p[k].y[0]);
		}
	}
}

/* A string for gnuplot: its quotes and backslashes escaped. */
static void gp_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/*
 * A text drawn as it is written: noenhanced, since gnuplot's enhanced
 * text would take the '_' of every event and field name (dev_recv,
 * snd_cwnd) for a subscript.  The terminal stays enhanced for the tic
 * labels gnuplot makes itself (1x10^7, the 7 raised).
 */
static void gp_text(FILE *f, const char *s)
{
	gp_str(f, s);
	fputs(" noenhanced", f);
}

/* set WHAT "TEXT" noenhanced */
static void gp_set(FILE *f, const char *what, const char *text)
{
	fprintf(f, "set %s ", what);
	gp_text(f, text);
	fputc('\n', f);
}

static void write_script(FILE *f, const struct plot *pl, const char *out,
			 const char *dat, const char *fmt, __u64 id)
{
	char title[64];
	unsigned int i;

	fprintf(f, "# magnetctl plot %s: gnuplot %s\n", pl->kind, out);
	fprintf(f, "set terminal %s size 1000,600\n",
		!strcmp(fmt, "svg") ? "svg dynamic" : "pngcairo");
	fputs("set output ", f);
	gp_str(f, out);
	fputs("\nset grid\nset key outside right\n", f);
	if (!strcmp(pl->kind, "layers")) {
		snprintf(title, sizeof(title), "bytes per layer, socket %llu",
			 (unsigned long long)id);
		gp_set(f, "title", title);
		gp_set(f, "xlabel", "time (s)");
		gp_set(f, "ylabel", "bytes per event");
	} else if (!strcmp(pl->kind, "tcp")) {
		snprintf(title, sizeof(title), "TCP state, socket %llu",
			 (unsigned long long)id);
		gp_set(f, "title", title);
		gp_set(f, "xlabel", "time (s)");
		gp_set(f, "ylabel", "packets");
		gp_set(f, "y2label", "srtt (ms)");
		fputs("set y2tics\nset ytics nomirror\n", f);
	} else if (!strcmp(pl->kind, "latency")) {
		gp_set(f, "title", "time between layers (correlated chains)");
		gp_set(f, "xlabel", "microseconds");
		gp_set(f, "ylabel", "fraction of chains");
		fputs("set logscale x\nset yrange [0:1]\n", f);
	} else {
		gp_set(f, "title", "events per second per CPU");
		gp_set(f, "xlabel", "time (s)");
		gp_set(f, "ylabel", "events/s");
	}
	fputs("plot ", f);
	for (i = 0; i < pl->ns; i++) {
		if (!strcmp(pl->kind, "tcp")) {
			gp_str(f, dat);
			fprintf(f, " index %u using 1:2 with steps title ", i);
			gp_text(f, "snd_cwnd");
			fputs(", ", f);
			gp_str(f, dat);
			fprintf(f, " index %u using 1:3 with steps title ", i);
			gp_text(f, "snd_ssthresh");
			fputs(", ", f);
			gp_str(f, dat);
			fprintf(f, " index %u using 1:4 axes x1y2 with lines title ", i);
			gp_text(f, "srtt");
			break;
		}
		if (i)
			fputs(", ", f);
		gp_str(f, dat);
		fprintf(f, " index %u using 1:2 with %s title ", i,
			!strcmp(pl->kind, "layers") ? "points" :
			!strcmp(pl->kind, "latency") ? "steps" : "lines");
		gp_text(f, pl->s[i].name);
	}
	fputc('\n', f);
}

static int run_gnuplot(const char *script)
{
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		mc_error("plot: fork: %s", strerror(errno));
		return MC_EXIT_FILE;
	}
	if (!pid) {
		execlp("gnuplot", "gnuplot", script, (char *)NULL);
		fprintf(stderr, "magnetctl: plot: gnuplot: %s%s\n", strerror(errno),
			errno == ENOENT ? " (apt install gnuplot-nox)" : "");
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return MC_EXIT_FILE;
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return MC_EXIT_OK;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 127)
		mc_error("plot: gnuplot failed on %s", script);
	return MC_EXIT_FILE;
}

#define PLOT_USAGE \
	"Usage: magnetctl plot { layers | tcp | latency | rate } [--id ID] [--format png|svg]\n" \
	"                      -o|--output OUT FILE...\n"

int do_plot(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "id",		required_argument, NULL, 'i' },
		{ "format",	required_argument, NULL, 'f' },
		{ "output",	required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *fmt = "png", *kind;
	unsigned long long id = 0;
	struct plot *pl;
	char *dat = NULL, *gp = NULL;
	/* getopt_long over "plot ARGS...": options anywhere, --opt=V too */
	char **gv = argv - 1;
	FILE *f;
	unsigned int i;
	int c, n, code = MC_EXIT_FILE;

	if (argc < 1 || !strcmp(argv[0], "help")) {
		printf(PLOT_USAGE);
		return argc < 1 ? MC_EXIT_USAGE : MC_EXIT_OK;
	}
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc + 1, gv, ":o:", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'f':
			fmt = optarg;
			if (strcmp(fmt, "png") && strcmp(fmt, "svg"))
				return mc_usage_error("plot: --format '%s': png or svg", fmt);
			break;
		case 'i':
			if (mc_parse_u64(optarg, &id) || !id)
				return mc_usage_error("plot: --id '%s': not a socket ID",
						      optarg);
			break;
		case ':':
			return mc_usage_error("plot: %s needs a value", gv[optind - 1]);
		default:
			return mc_option_error("plot", gv[optind - 1]);
		}
	}
	/* what is left: FIGURE FILE... */
	n = optind - 1;
	argc -= n;
	argv += n;
	if (argc < 1)
		return mc_usage_error("plot: missing FIGURE (layers, tcp, latency, rate)");
	kind = argv[0];
	if (strcmp(kind, "layers") && strcmp(kind, "tcp") &&
	    strcmp(kind, "latency") && strcmp(kind, "rate"))
		return mc_usage_error("plot: unknown figure '%s' (layers, tcp, latency, rate)",
				      kind);
	if (id && (!strcmp(kind, "latency") || !strcmp(kind, "rate")))
		return mc_usage_error("plot %s: --id is for layers and tcp", kind);
	if (!out)
		return mc_usage_error("plot: missing -o OUT");
	if (argc < 2)
		return mc_usage_error("plot: missing FILE");
	pl = calloc(1, sizeof(*pl));
	if (!pl || asprintf(&dat, "%s.dat", out) < 0 ||
	    asprintf(&gp, "%s.gp", out) < 0) {
		mc_error("plot: out of memory");
		goto out;
	}
	pl->kind = kind;
	if (collect(pl, (const char *const *)argv + 1, argc - 1, (__u64 *)&id))
		goto out;
	if (!pl->ns) {
		mc_error("plot %s: the trace has nothing to draw (%s)", kind,
			 !strcmp(kind, "tcp") ? "no tcp_state records" :
			 !strcmp(kind, "latency") ? "no CORR records" :
			 !strcmp(kind, "layers") ? "no socket's records with bytes" :
			 "no events");
		goto out;
	}
	if (pl->skipped)
		fprintf(stderr, "magnetctl: plot: more than %d series: %llu records of the others left out\n",
			MAX_SERIES, pl->skipped);
	f = fopen(dat, "w");
	if (!f) {
		mc_error("plot: %s: %s", dat, strerror(errno));
		goto out;
	}
	write_data(f, pl);
	if (fclose(f)) {
		mc_error("plot: %s: %s", dat, strerror(errno));
		goto out;
	}
	f = fopen(gp, "w");
	if (!f) {
		mc_error("plot: %s: %s", gp, strerror(errno));
		goto out;
	}
	write_script(f, pl, out, dat, fmt, id);
	if (fclose(f)) {
		mc_error("plot: %s: %s", gp, strerror(errno));
		goto out;
	}
	code = run_gnuplot(gp);
	if (code == MC_EXIT_OK && id)
		printf("%s: %u series, socket %llu (data %s, script %s)\n", out,
		       pl->ns, id, dat, gp);
	else if (code == MC_EXIT_OK)
		printf("%s: %u series (data %s, script %s)\n", out, pl->ns, dat, gp);
out:
	if (pl)
		for (i = 0; i < pl->ns; i++)
			free(pl->s[i].p);
	free(pl);
	free(dat);
	free(gp);
	return code;
}
