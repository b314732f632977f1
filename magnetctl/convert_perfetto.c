// SPDX-License-Identifier: GPL-2.0-only
/*
 * magnetctl convert --to perfetto -o OUT FILE...: a Perfetto trace
 * (protos/perfetto/trace/trace.proto: TracePackets of TrackEvents) that
 * ui.perfetto.dev and trace_processor open (docs/PERFETTO.md):
 *
 *   - a track per CPU ("cpu N"): every event an instant named after it,
 *     with pid, tgid, socket (or the record's abstract ID as "id") and
 *     bytes as debug annotations, and every field of its payload in a
 *     "payload" annotation (libmagnet's table of the record's fields, the
 *     one magnetctl dump -j and the babeltrace2 plugin use); LOST records
 *     as "LOST" instants with their count;
 *   - a track per socket ("socket ID"): the events of records that name
 *     it (network, application, TCP/IP payloads), as instants again;
 *   - CORR records as slices: a "chain" slice from the first step's event
 *     to the last reached step's, holding a slice per step ("udp_send ->
 *     ip_send"), on lanes ("correlator C lane L") so that chains that
 *     overlap in time do not nest;
 *   - counters: each SYNTH record's mean ("synth NAME KEY"), each TCP
 *     state record's snd_cwnd, snd_ssthresh (unless unset) and srtt_us
 *     ("socket ID snd_cwnd" ...);
 *   - process and thread descriptors with the names sched records carry;
 *   - a clock snapshot: the trace's timestamps are its stream clock's, as
 *     BOOTTIME and MONOTONIC, and REALTIME = SYSINFO's wall_ns_at_zero +
 *     timestamp.
 * The protobuf encoding is written here (varints and length-delimited
 * fields); field numbers are perfetto's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "magnetctl.h"

/* protos/perfetto/trace: field numbers */
#define TRACE_PACKET		1
#define TP_CLOCK_SNAPSHOT	6
#define TP_TIMESTAMP		8
#define TP_SEQ_ID		10
#define TP_TRACK_EVENT		11
#define TP_SEQ_FLAGS		13
#define TP_TRACK_DESCRIPTOR	60
#define CS_CLOCKS		1
#define CS_PRIMARY		2
#define CLK_ID			1
#define CLK_TS			2
#define TE_DEBUG		4
#define TE_TYPE			9
#define TE_TRACK_UUID		11
#define TE_NAME			23
#define TE_DOUBLE_COUNTER	44
#define DA_UINT			3
#define DA_INT			4
#define DA_STRING		6
#define DA_NAME			10
#define DA_DICT			11
#define TD_UUID			1
#define TD_NAME			2
#define TD_PROCESS		3
#define TD_THREAD		4
#define TD_PARENT		5
#define TD_COUNTER		8
#define PD_PID			1
#define PD_NAME			6
#define THD_PID			1
#define THD_TID			2
#define THD_NAME		5

#define TYPE_SLICE_BEGIN	1
#define TYPE_SLICE_END		2
#define TYPE_INSTANT		3
#define TYPE_COUNTER		4
#define CLOCK_REALTIME_ID	1
#define CLOCK_MONOTONIC_ID	3
#define CLOCK_BOOTTIME_ID	6
#define SEQ_ID			1
#define SEQ_STATE_CLEARED	1

#define MAX_TRACKS	8192
#define MAX_LANES	64
#define MAX_TASKS	4096

struct pb {
	unsigned char *p;
	size_t len, cap;
	bool oom;
};

static void pb_raw(struct pb *b, const void *d, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n > b->cap) {
		size_t cap = (b->len + n) * 2 + 64;
		unsigned char *p = realloc(b->p, cap);

		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	unsigned char t[10];
	size_t n = 0;

	do {
		t[n++] = (v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	pb_raw(b, t, n);
}

static void pb_uint(struct pb *b, unsigned int f, uint64_t v)
{
	pb_varint(b, (uint64_t)f << 3);
	pb_varint(b, v);
}

static void pb_double(struct pb *b, unsigned int f, double v)
{
	pb_varint(b, (uint64_t)f << 3 | 1);
	pb_raw(b, &v, 8);	/* little endian on the hosts MAGNET runs on */
}

static void pb_bytes(struct pb *b, unsigned int f, const void *d, size_t n)
{
	pb_varint(b, (uint64_t)f << 3 | 2);
	pb_varint(b, n);
	pb_raw(b, d, n);
}

static void pb_str(struct pb *b, unsigned int f, const char *s)
{
	pb_bytes(b, f, s, strlen(s));
}

/* Append @sub as field @f and empty it for reuse. */
static void pb_msg(struct pb *b, unsigned int f, struct pb *sub)
{
	pb_bytes(b, f, sub->p, sub->len);
	b->oom |= sub->oom;
	sub->len = 0;
}

struct track {
	char name[192];
	__u64 uuid;
};

struct task {
	__u32 pid, tgid;
	char comm[MAGNET_COMM_LEN + 1];
};

struct pconv {
	FILE *f;
	struct pb pkt, te, sub, sub2;	/* a packet and nested messages */
	struct track *tracks;
	unsigned int ntracks;
	unsigned long long lost_tracks;	/* events beyond MAX_TRACKS */
	struct task *tasks;
	unsigned int ntasks;
	struct { __u32 corr; __u64 end; } lanes[MAX_LANES];
	unsigned int nlanes;
	unsigned long long lane_overflow, events, slices, counters;
	bool started;
	__u64 wall0;
	const struct magnet_decoder *dec;
};

/* Write the packet built in c->pkt (plus the sequence ID). */
static int emit(struct pconv *c)
{
	struct pb out = { 0 };

	pb_uint(&c->pkt, TP_SEQ_ID, SEQ_ID);
	pb_msg(&out, TRACE_PACKET, &c->pkt);
	if (out.oom || fwrite(out.p, 1, out.len, c->f) != out.len) {
		free(out.p);
		return -EIO;
	}
	free(out.p);
	return 0;
}

/* The track named @name (its descriptor written on first use); 0 if none left. */
static __u64 track(struct pconv *c, const char *name, __u64 parent, bool counter)
{
	unsigned int i;

	for (i = 0; i < c->ntracks; i++)
		if (!strcmp(c->tracks[i].name, name))
			return c->tracks[i].uuid;
	if (c->ntracks == MAX_TRACKS) {
		c->lost_tracks++;
		return 0;
	}
	snprintf(c->tracks[i].name, sizeof(c->tracks[i].name), "%s", name);
	c->tracks[i].uuid = 0x4d41474eull << 24 | (i + 1);
	c->ntracks++;
	pb_uint(&c->sub, TD_UUID, c->tracks[i].uuid);
	pb_str(&c->sub, TD_NAME, name);
	if (parent)
		pb_uint(&c->sub, TD_PARENT, parent);
	if (counter)
		pb_bytes(&c->sub, TD_COUNTER, "", 0);
	pb_msg(&c->pkt, TP_TRACK_DESCRIPTOR, &c->sub);
	if (emit(c))
		return 0;
	return c->tracks[i].uuid;
}

static void annot_uint(struct pconv *c, const char *name, __u64 v)
{
	pb_str(&c->sub, DA_NAME, name);
	pb_uint(&c->sub, DA_UINT, v);
	pb_msg(&c->te, TE_DEBUG, &c->sub);
}

static void annot_int(struct pconv *c, const char *name, __s64 v)
{
	pb_str(&c->sub, DA_NAME, name);
	pb_uint(&c->sub, DA_INT, (__u64)v);
	pb_msg(&c->te, TE_DEBUG, &c->sub);
}

/* A track event (c->te, its annotations already in) at @ts on @uuid. */
static int track_event(struct pconv *c, __u64 ts, __u64 uuid, unsigned int type,
		       const char *name)
{
	pb_uint(&c->pkt, TP_TIMESTAMP, ts);
	pb_uint(&c->te, TE_TYPE, type);
	pb_uint(&c->te, TE_TRACK_UUID, uuid);
	if (name)
		pb_str(&c->te, TE_NAME, name);
	pb_msg(&c->pkt, TP_TRACK_EVENT, &c->te);
	return emit(c);
}

static int counter(struct pconv *c, const char *name, __u64 ts, double v)
{
	__u64 uuid = track(c, name, 0, true);

	if (!uuid)
		return 0;
	c->counters++;
	pb_double(&c->te, TE_DOUBLE_COUNTER, v);
	return track_event(c, ts, uuid, TYPE_COUNTER, NULL);
}

static bool rec_u(const struct magnet_rec *r, const char *name, __u64 *v,
		  char *buf, size_t len)
{
	const struct magnet_field *f;
	unsigned int i, n;

	f = magnet_rec_fields(r, &n);
	for (i = 0; f && i < n; i++) {
		if (strcmp(f[i].name, name))
			continue;
		if (f[i].kind == MAGNET_FIELD_STR)
			magnet_rec_field_str(r, &f[i], buf, len);
		else
			*v = magnet_rec_field_value(r, i);
		return true;
	}
	return false;
}

/*
 * Every payload field of @r (libmagnet's table for its kind) as one
 * "payload" annotation holding an entry per field: the UI shows them as
 * args "debug.payload.NAME".  A failed network call's -errno, in
 * gso_size's place, is the "err" annotation instead.
 */
static void annot_payload(struct pconv *c, const struct magnet_rec *r)
{
	const struct magnet_field *f;
	char buf[MAGNET_PAYLOAD_MAX + 1];
	unsigned int i, n;

	f = magnet_rec_fields(r, &n);
	if (!f || !n)
		return;
	if (r->kind == MAGNET_REC_APP) {
		pb_str(&c->sub2, DA_NAME, "call");
		pb_str(&c->sub2, DA_STRING, magnet_app_call_name(r->u.app.call));
		pb_msg(&c->sub, DA_DICT, &c->sub2);
	}
	for (i = 0; i < n; i++) {
		if (r->kind == MAGNET_REC_NET && (r->u.net.flags & MAGNET_NET_F_ERROR) &&
		    !strcmp(f[i].name, "gso_size"))
			continue;
		pb_str(&c->sub2, DA_NAME, f[i].name);
		if (f[i].kind == MAGNET_FIELD_STR)
			pb_str(&c->sub2, DA_STRING,
			       magnet_rec_field_str(r, &f[i], buf, sizeof(buf)));
		else
			pb_uint(&c->sub2, f[i].kind == MAGNET_FIELD_INT ? DA_INT : DA_UINT,
				magnet_rec_field_value(r, i));
		pb_msg(&c->sub, DA_DICT, &c->sub2);
	}
	pb_str(&c->sub, DA_NAME, "payload");
	pb_msg(&c->te, TE_DEBUG, &c->sub);
}

/* Thread names from sched records (pid, tgid, comm fields). */
static void learn_task(struct pconv *c, __u32 pid, __u32 tgid, const char *comm)
{
	unsigned int i;

	if (!pid || !comm[0])
		return;
	for (i = 0; i < c->ntasks; i++)
		if (c->tasks[i].pid == pid)
			break;
	if (i == c->ntasks) {
		if (c->ntasks == MAX_TASKS)
			return;
		c->ntasks++;
	}
	c->tasks[i].pid = pid;
	c->tasks[i].tgid = tgid ? tgid : pid;
	snprintf(c->tasks[i].comm, sizeof(c->tasks[i].comm), "%s", comm);
}

static void learn_tasks(struct pconv *c, const struct magnet_rec *r)
{
	char comm[MAGNET_COMM_LEN + 1] = "";
	__u64 pid = 0, tgid = 0;

	if (r->payload_type == MAGNET_PAYLOAD_SCHED_SWITCH) {
		if (rec_u(r, "next_pid", &pid, NULL, 0) &&
		    rec_u(r, "next_tgid", &tgid, NULL, 0) &&
		    rec_u(r, "next_comm", NULL, comm, sizeof(comm)))
			learn_task(c, pid, tgid, comm);
		if (rec_u(r, "prev_pid", &pid, NULL, 0) &&
		    rec_u(r, "prev_tgid", &tgid, NULL, 0) &&
		    rec_u(r, "prev_comm", NULL, comm, sizeof(comm)))
			learn_task(c, pid, tgid, comm);
	} else if (rec_u(r, "pid", &pid, NULL, 0) &&
		   rec_u(r, "comm", NULL, comm, sizeof(comm))) {
		rec_u(r, "tgid", &tgid, NULL, 0);
		learn_task(c, pid, tgid, comm);
	}
}

static int start(struct pconv *c, const struct magnet_rec *si, __u64 ts)
{
	static const unsigned int ids[] = { CLOCK_BOOTTIME_ID, CLOCK_MONOTONIC_ID };
	unsigned int i;

	c->wall0 = si->u.sysinfo.wall_ns_at_zero;
	for (i = 0; i < 2; i++) {
		pb_uint(&c->sub2, CLK_ID, ids[i]);
		pb_uint(&c->sub2, CLK_TS, ts);
		pb_msg(&c->sub, CS_CLOCKS, &c->sub2);
	}
	pb_uint(&c->sub2, CLK_ID, CLOCK_REALTIME_ID);
	pb_uint(&c->sub2, CLK_TS, c->wall0 + ts);
	pb_msg(&c->sub, CS_CLOCKS, &c->sub2);
	pb_uint(&c->sub, CS_PRIMARY, CLOCK_BOOTTIME_ID);
	pb_uint(&c->pkt, TP_TIMESTAMP, ts);
	pb_msg(&c->pkt, TP_CLOCK_SNAPSHOT, &c->sub);
	pb_uint(&c->pkt, TP_SEQ_FLAGS, SEQ_STATE_CLEARED);
	c->started = true;
	return emit(c);
}

static bool on_socket_track(const struct magnet_rec *r)
{
	return r->hdr.abstract_id &&
	       (r->kind == MAGNET_REC_NET || r->kind == MAGNET_REC_APP ||
		(r->kind == MAGNET_REC_FIELDS &&
		 (r->payload_type == MAGNET_PAYLOAD_TCP ||
		  r->payload_type == MAGNET_PAYLOAD_IP)));
}

static long long bytes_of(const struct magnet_rec *r)
{
	__u64 v = 0;

	if (r->kind == MAGNET_REC_NET)
		return r->u.net.flags & MAGNET_NET_F_ERROR ? -1 : (long long)r->u.net.len;
	if (r->kind == MAGNET_REC_APP)
		return r->u.app.ret;
	if (rec_u(r, "len", &v, NULL, 0))
		return (long long)v;
	return -1;
}

static int instant(struct pconv *c, const struct magnet_rec *r, __u64 ts,
		   __u64 uuid, const char *name)
{
	long long b = bytes_of(r);

	annot_uint(c, "pid", r->hdr.pid);
	annot_uint(c, "tgid", r->hdr.tgid);
	if (r->hdr.abstract_id)
		annot_uint(c, on_socket_track(r) ? "socket" : "id",
			   r->hdr.abstract_id);
	if (r->kind == MAGNET_REC_LOST)
		annot_uint(c, "count", r->u.lost.count);
	else if (r->kind == MAGNET_REC_NET && (r->u.net.flags & MAGNET_NET_F_ERROR))
		annot_int(c, "err", r->u.net.err);
	else if (b >= 0)
		annot_int(c, "bytes", b);
	annot_payload(c, r);
	return track_event(c, ts, uuid, TYPE_INSTANT, name);
}

static int on_event(struct pconv *c, const struct magnet_rec *r, __u64 ts)
{
	char name[128];
	__u64 uuid, v = 0;
	int err;

	snprintf(name, sizeof(name), "cpu %u", r->hdr.cpu);
	uuid = track(c, name, 0, false);
	if (!uuid)
		return 0;
	err = instant(c, r, ts, uuid, r->name);
	c->events++;
	if (err || !on_socket_track(r))
		return err;
	snprintf(name, sizeof(name), "socket %llu",
		 (unsigned long long)r->hdr.abstract_id);
	uuid = track(c, name, 0, false);
	if (uuid)
		err = instant(c, r, ts, uuid, r->name);
	if (err || r->kind != MAGNET_REC_FIELDS || r->payload_type != MAGNET_PAYLOAD_TCP)
		return err;
	snprintf(name, sizeof(name), "socket %llu snd_cwnd",
		 (unsigned long long)r->hdr.abstract_id);
	if (rec_u(r, "snd_cwnd", &v, NULL, 0) && (err = counter(c, name, ts, v)))
		return err;
	snprintf(name, sizeof(name), "socket %llu snd_ssthresh",
		 (unsigned long long)r->hdr.abstract_id);
	if (rec_u(r, "snd_ssthresh", &v, NULL, 0) && v < 0x7fffffff &&
	    (err = counter(c, name, ts, v)))
		return err;
	snprintf(name, sizeof(name), "socket %llu srtt_us",
		 (unsigned long long)r->hdr.abstract_id);
	if (rec_u(r, "srtt_us", &v, NULL, 0))
		err = counter(c, name, ts, v);
	return err;
}

static int on_synth(struct pconv *c, const struct magnet_rec *r, __u64 ts)
{
	const struct magnet_synth_payload *s = &r->u.synth;
	char name[160];
	int n;

	n = snprintf(name, sizeof(name), "synth %.*s", MAGNET_NAME_MAX, s->name);
	if (s->group & MAGNET_SYNTH_K_EVENT)
		n += snprintf(name + n, sizeof(name) - n, " event=%u", s->event);
	if (s->group & MAGNET_SYNTH_K_CPU)
		n += snprintf(name + n, sizeof(name) - n, " cpu=%u", s->cpu);
	if (s->group & MAGNET_SYNTH_K_AID)
		n += snprintf(name + n, sizeof(name) - n, " id=%llu",
			      (unsigned long long)s->abstract_id);
	if (s->group & MAGNET_SYNTH_K_PID)
		n += snprintf(name + n, sizeof(name) - n, " pid=%u", s->pid);
	if (s->group & MAGNET_SYNTH_K_TGID)
		n += snprintf(name + n, sizeof(name) - n, " tgid=%u", s->tgid);
	if (s->group & MAGNET_SYNTH_K_CGROUP)
		snprintf(name + n, sizeof(name) - n, " cgroup=%llu",
			 (unsigned long long)s->cgroup);
	return counter(c, name, ts, s->count ? (double)s->mean : 0.0);
}

/* A chain as nested slices on a lane of its correlator. */
static int on_corr(struct pconv *c, const struct magnet_rec *r)
{
	struct magnet_corr_step prev, st;
	char name[128], a[MAGNET_NAME_MAX + 16], b[MAGNET_NAME_MAX + 16];
	__u64 t = r->u.corr.start, end = r->u.corr.start, uuid, parent;
	unsigned int i, lane;
	int err;

	for (i = 1; i < r->u.corr.nsteps && i < r->u.corr.reached; i++)
		if (!magnet_rec_corr_step(c->dec, r, i, &st))
			end += st.delta_ns;
	for (lane = 0; lane < c->nlanes; lane++)
		if (c->lanes[lane].corr == r->u.corr.corr_id &&
		    c->lanes[lane].end <= t)
			break;
	if (lane == c->nlanes) {
		if (c->nlanes == MAX_LANES) {
			c->lane_overflow++;
			return 0;
		}
		c->lanes[c->nlanes++].corr = r->u.corr.corr_id;
	}
	c->lanes[lane].end = end;
	snprintf(name, sizeof(name), "correlator %u", r->u.corr.corr_id);
	parent = track(c, name, 0, false);
	snprintf(name, sizeof(name), "correlator %u lane %u", r->u.corr.corr_id, lane);
	uuid = parent ? track(c, name, parent, false) : 0;
	if (!uuid)
		return 0;
	annot_uint(c, "reached", r->u.corr.reached);
	annot_uint(c, "steps", r->u.corr.nsteps);
	if (r->u.corr.flags)
		annot_uint(c, "flags", r->u.corr.flags);
	err = track_event(c, t, uuid, TYPE_SLICE_BEGIN,
			  r->u.corr.reached == r->u.corr.nsteps ? "chain" : "partial chain");
	if (err || magnet_rec_corr_step(c->dec, r, 0, &prev))
		return err;
	for (i = 1; i < r->u.corr.nsteps && i < r->u.corr.reached; i++) {
		if (magnet_rec_corr_step(c->dec, r, i, &st))
			break;
		snprintf(name, sizeof(name), "%s -> %s",
			 magnet_decoder_event_name(c->dec, prev.event, a, sizeof(a)),
			 magnet_decoder_event_name(c->dec, st.event, b, sizeof(b)));
		annot_uint(c, "bytes", st.bytes);
		annot_uint(c, "count", st.count);
		err = track_event(c, t, uuid, TYPE_SLICE_BEGIN, name);
		t += st.delta_ns;
		err = err ?: track_event(c, t, uuid, TYPE_SLICE_END, NULL);
		if (err)
			return err;
		c->slices++;
		prev = st;
	}
	c->slices++;
	return track_event(c, t, uuid, TYPE_SLICE_END, NULL);
}

/* Process and thread descriptors with the names learnt. */
static int write_tasks(struct pconv *c)
{
	unsigned int i;
	int err = 0;

	for (i = 0; i < c->ntasks && !err; i++) {
		struct task *t = &c->tasks[i];

		if (t->pid == t->tgid) {
			pb_uint(&c->sub, TD_UUID, 0x50524f43ull << 24 | t->pid);
			pb_uint(&c->sub2, PD_PID, t->pid);
			pb_str(&c->sub2, PD_NAME, t->comm);
			pb_msg(&c->sub, TD_PROCESS, &c->sub2);
		} else {
			pb_uint(&c->sub, TD_UUID, 0x54485244ull << 24 | t->pid);
			pb_uint(&c->sub2, THD_PID, t->tgid);
			pb_uint(&c->sub2, THD_TID, t->pid);
			pb_str(&c->sub2, THD_NAME, t->comm);
			pb_msg(&c->sub, TD_THREAD, &c->sub2);
		}
		pb_msg(&c->pkt, TP_TRACK_DESCRIPTOR, &c->sub);
		err = emit(c);
	}
	return err;
}

int convert_perfetto(const char *out, int argc, char **argv)
{
	struct pconv *c = calloc(1, sizeof(*c));
	struct magnet_sorted *st = NULL;
	const struct magnet_rec *r;
	bool to_stdout = !out || !strcmp(out, "-");
	int ret, err = 0, code = MC_EXIT_FILE, i;

	if (!c || !(c->tracks = calloc(MAX_TRACKS, sizeof(*c->tracks))) ||
	    !(c->tasks = calloc(MAX_TASKS, sizeof(*c->tasks)))) {
		mc_error("convert: out of memory");
		goto out;
	}
	for (i = 0; i < argc; i++) {
		FILE *f = fopen(argv[i], "r");

		if (!f) {
			mc_error("convert: %s: %s", argv[i], strerror(errno));
			goto out;
		}
		fclose(f);
	}
	ret = magnet_sorted_open((const char *const *)argv, argc, &st);
	if (ret) {
		mc_error("convert: %s", strerror(-ret));
		goto out;
	}
	c->dec = magnet_sorted_decoder(st);
	c->f = to_stdout ? stdout : fopen(out, "w");
	if (!c->f) {
		mc_error("convert: %s: %s", out, strerror(errno));
		goto out;
	}
	while (!err && (ret = magnet_sorted_next(st, &r)) > 0) {
		__u64 ts = magnet_rec_time(r);

		c->dec = magnet_sorted_decoder(st);
		if (r->kind == MAGNET_REC_SYSINFO) {
			if (!c->started)
				err = start(c, r, 0);
			continue;
		}
		if (r->kind == MAGNET_REC_EVENTDEF)
			continue;
		if (r->kind == MAGNET_REC_FIELDS)
			learn_tasks(c, r);
		if (r->kind == MAGNET_REC_CORR)
			err = on_corr(c, r);
		else if (r->kind == MAGNET_REC_SYNTH)
			err = on_synth(c, r, ts);
		else
			err = on_event(c, r, ts);
	}
	if (!err)
		err = write_tasks(c);
	if (!err && (c->pkt.oom || c->te.oom || c->sub.oom || c->sub2.oom))
		err = -ENOMEM;
	if (ret < 0) {
		mc_error("convert: %s", magnet_sorted_errmsg(st));
	} else if (err) {
		mc_error("convert: %s: %s", to_stdout ? "standard output" : out,
			 strerror(-err));
	} else {
		code = MC_EXIT_OK;
	}
	if (!to_stdout && fclose(c->f) && code == MC_EXIT_OK) {
		mc_error("convert: %s: %s", out, strerror(errno));
		code = MC_EXIT_FILE;
	}
	if (code == MC_EXIT_OK && !to_stdout) {
		if (mc_opts.json)
			printf("{\"file\":\"%s\",\"events\":%llu,\"slices\":%llu,\"counters\":%llu,\"tracks\":%u}\n",
			       out, c->events, c->slices, c->counters, c->ntracks);
		else
			printf("%s: %llu events, %llu slices, %llu counter values on %u tracks\n",
			       out, c->events, c->slices, c->counters, c->ntracks);
	}
	if (c->lost_tracks || c->lane_overflow)
		fprintf(stderr, "magnetctl: convert: %llu events beyond %d tracks and %llu chains beyond %d lanes left out\n",
			c->lost_tracks, MAX_TRACKS, c->lane_overflow, MAX_LANES);
out:
	if (st)
		magnet_sorted_close(st);
	if (c) {
		free(c->pkt.p);
		free(c->te.p);
		free(c->sub.p);
		free(c->sub2.p);
		free(c->tracks);
		free(c->tasks);
	}
	free(c);
	return code;
}
