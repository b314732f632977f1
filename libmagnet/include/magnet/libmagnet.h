/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libmagnet: user-space access to MAGNET.
 *
 *  - control plane: the generic netlink family "magnet" (status, probes,
 *    streams), through an opaque struct magnet_ctl handle;
 *  - stream files: open/read/ioctl helpers for magnetfs stream files;
 *  - record decoding: a buffer-level decoder and a trace-file iterator.
 *
 * Conventions (as libbpf): functions return 0 (or a count) on success and
 * a negative errno on failure.  The kernel's extended-ack message of the
 * last failed request is kept in the handle: magnet_ctl_errmsg().
 */
#ifndef MAGNET_LIBMAGNET_H
#define MAGNET_LIBMAGNET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <magnet/uapi/magnet.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LIBMAGNET_API __attribute__((visibility("default")))

/* ------------------------------------------------------------------ */
/* Control plane (generic netlink)                                     */
/* ------------------------------------------------------------------ */

struct magnet_ctl;

/*
 * Connect to the "magnet" generic netlink family.  -ENOENT when the
 * family does not exist (MAGNET is not loaded).
 */
LIBMAGNET_API int magnet_ctl_open(struct magnet_ctl **out);
LIBMAGNET_API void magnet_ctl_close(struct magnet_ctl *h);
/*
 * Message explaining the last failure: the kernel's extack text when it
 * sent one, else strerror() of the error.  "" when nothing failed.
 */
LIBMAGNET_API const char *magnet_ctl_errmsg(const struct magnet_ctl *h);
/* True when the last failure carried a kernel extack message. */
LIBMAGNET_API bool magnet_ctl_has_extack(const struct magnet_ctl *h);

struct magnet_status {
	char version[64];
	__u32 abi;
	__u32 nr_cpus;
	__u32 nr_probes;
	__u32 nr_streams;
};

LIBMAGNET_API int magnet_status_get(struct magnet_ctl *h,
				    struct magnet_status *st);

struct magnet_probe_info {
	__u32 id;
	char name[MAGNET_NAME_MAX];
	__u32 layer;			/* enum magnet_layer */
	__u32 payload;			/* enum magnet_payload_type */
	bool enabled;
	char hook[128];
	char module[64];
	__u64 hits;
	char stream[MAGNET_NAME_MAX];	/* "" unless enabled */
};

/* Callbacks return 0 to continue, anything else stops the walk. */
typedef int (*magnet_probe_cb)(const struct magnet_probe_info *p, void *ctx);

LIBMAGNET_API int magnet_probe_list(struct magnet_ctl *h, magnet_probe_cb cb,
				    void *ctx);
LIBMAGNET_API int magnet_probe_get(struct magnet_ctl *h, const char *name,
				   struct magnet_probe_info *p);
LIBMAGNET_API int magnet_probe_enable(struct magnet_ctl *h, const char *name,
				      const char *stream);
LIBMAGNET_API int magnet_probe_enable_id(struct magnet_ctl *h, __u32 id,
					 const char *stream);
LIBMAGNET_API int magnet_probe_disable(struct magnet_ctl *h, const char *name);
LIBMAGNET_API int magnet_probe_disable_id(struct magnet_ctl *h, __u32 id);

/*
 * Run-time kprobes (MAGNET_CMD_KPROBE_NEW/DEL): a new point @name on
 * @symbol+@offset (kprobe) or a kretprobe on @symbol, recording the
 * arguments whose bit is set in @args (bit i: argument i, 0..5) and, for a
 * kretprobe, the return value (struct magnet_kprobe_payload).  Its event
 * ID comes back in *id.  Refusals carry the kernel's reason
 * (magnet_ctl_errmsg()), e.g. for a symbol that cannot be probed.
 */
struct magnet_kprobe_spec {
	const char *name;
	const char *symbol;
	__u32 offset;
	bool retprobe;
	__u32 args;
};

LIBMAGNET_API int magnet_kprobe_add(struct magnet_ctl *h,
				    const struct magnet_kprobe_spec *k,
				    __u32 *id);
LIBMAGNET_API int magnet_kprobe_del(struct magnet_ctl *h, const char *name);

struct magnet_stream_info {
	char name[MAGNET_NAME_MAX];
	char path[256];
	__u32 subbuf_size;
	__u32 subbuf_count;
	__u64 produced;
	__u64 written;
	__u64 lost;
	__u64 read;
	__u64 bytes;
	__u32 readers;
	__u32 probes;
	bool app_write;			/* anyone may write APP events */
	__u64 app_events;		/* APP records accepted */
	__u64 app_rejected;		/* write() calls refused */
};

typedef int (*magnet_stream_cb)(const struct magnet_stream_info *s, void *ctx);

/* @subbuf_size/@subbuf_count 0: kernel default (attribute omitted). */
LIBMAGNET_API int magnet_stream_create(struct magnet_ctl *h, const char *name,
				       __u32 subbuf_size, __u32 subbuf_count);
/*
 * Stream options, libbpf style: set @sz = sizeof(struct magnet_stream_opts)
 * (fields past a smaller @sz count as 0, so old callers keep working when
 * fields are added).  @subbuf_size/@subbuf_count 0: kernel default.
 * @mode: MAGNET_STREAM_F_* (0: per-CPU rings that discard when full; a
 * global ring, a flight recorder: docs/DESIGN.md "Buffer modes").
 * @app_write: every local user may write application events into the
 * stream (its files become writable by all; docs/INTERPOSER.md).
 * @clock: enum magnet_clock of the records' timestamps (0: the default,
 * MAGNET_CLOCK_MONOTONIC; MAGNET_CLOCK_LOCAL: the cheaper local_clock(),
 * for probe events only, docs/FORMAT.md "Clocks").
 */
struct magnet_stream_opts {
	size_t sz;
	__u32 subbuf_size;
	__u32 subbuf_count;
	__u32 mode;
	bool app_write;
	__u32 clock;
};

LIBMAGNET_API int magnet_stream_create_opts(struct magnet_ctl *h,
					    const char *name,
					    const struct magnet_stream_opts *opts);
LIBMAGNET_API int magnet_stream_delete(struct magnet_ctl *h, const char *name);
LIBMAGNET_API int magnet_stream_list(struct magnet_ctl *h, magnet_stream_cb cb,
				     void *ctx);
LIBMAGNET_API int magnet_stream_get(struct magnet_ctl *h, const char *name,
				    struct magnet_stream_info *s);
LIBMAGNET_API int magnet_stream_flush(struct magnet_ctl *h, const char *name);

/*
 * Filters (docs/FILTERS.md).  @keys says which key fields are given
 * (MAGNET_FILTER_KEY_*); the others are wildcards.  Counters are
 * filled by magnet_filter_get()/magnet_filter_list() only.
 */
#define MAGNET_FILTER_KEY_EVENT		0x01
#define MAGNET_FILTER_KEY_CPU		0x02
#define MAGNET_FILTER_KEY_ABSTRACT_ID	0x04
#define MAGNET_FILTER_KEY_PID		0x08
#define MAGNET_FILTER_KEY_TGID		0x10
#define MAGNET_FILTER_KEY_CGROUP	0x20

struct magnet_filter_info {
	char name[MAGNET_NAME_MAX];
	__u32 keys;
	__u32 event;
	__u32 cpu;
	__u32 pid;
	__u32 tgid;
	__u64 abstract_id;
	__u64 cgroup;			/* cgroup v2 ID (its inode number) */
	__s32 priority;
	__u32 action;			/* enum magnet_filter_action */
	__u32 sample_every;		/* 0: no count sampling */
	__u64 sample_period_ns;		/* 0: no time sampling */
	unsigned int nr_streams;	/* 0: the point's own stream */
	char streams[MAGNET_FILTER_STREAMS_MAX][MAGNET_NAME_MAX];
	__u64 matched;
	__u64 delivered;
	__u64 dropped;
};

typedef int (*magnet_filter_cb)(const struct magnet_filter_info *f, void *ctx);

LIBMAGNET_API int magnet_filter_add(struct magnet_ctl *h,
				    const struct magnet_filter_info *f);
LIBMAGNET_API int magnet_filter_del(struct magnet_ctl *h, const char *name);
LIBMAGNET_API int magnet_filter_get(struct magnet_ctl *h, const char *name,
				    struct magnet_filter_info *f);
LIBMAGNET_API int magnet_filter_list(struct magnet_ctl *h, magnet_filter_cb cb,
				     void *ctx);

/*
 * Synthesizers (docs/SYNTH.md): statistics of a quantity of one probe's
 * events per key and period, written as SYNTH records into @stream.
 * Probe by @probe name, or by @probe_id when @has_probe_id.  @keys says
 * which match keys are given (MAGNET_FILTER_KEY_*, no EVENT), @group
 * which keys statistics are kept per (MAGNET_SYNTH_K_*).  @period_ns
 * and @max_keys 0: the kernel's refusal / default.  Counters and
 * @start_ns are filled by magnet_synth_get()/magnet_synth_list() only.
 */
struct magnet_synth_info {
	char name[MAGNET_NAME_MAX];
	char probe[MAGNET_NAME_MAX];
	__u32 probe_id;
	bool has_probe_id;
	__u32 keys;			/* MAGNET_FILTER_KEY_* (match) */
	__u32 cpu;
	__u32 pid;
	__u32 tgid;
	__u64 abstract_id;
	__u64 cgroup;
	__u32 group;			/* MAGNET_SYNTH_K_* */
	__u32 quantity;			/* enum magnet_synth_quantity */
	__u32 field_offset;
	__u32 field_width;
	__u64 period_ns;
	char stream[MAGNET_NAME_MAX];
	__u32 max_keys;
	/* filled by get/list */
	__u32 nr_keys;
	__u64 start_ns;			/* period 0 starts here */
	__u64 matched;
	__u64 overflow;			/* events of keys beyond max_keys */
	__u64 shrt;			/* events without the field */
	__u64 nmi;
	__u64 reordered;
	__u64 late;
	__u64 records;			/* SYNTH records written */
	__u64 records_lost;
};

/*
 * One key's open-period values (count 0 when the key had no event in
 * the current period yet) and totals since creation.  Key fields not in
 * @group are 0.  @mean_d/@variance_d: magnet_synth_moments() of them.
 */
struct magnet_synth_value {
	char name[MAGNET_NAME_MAX];
	__u32 group;
	__u32 quantity;
	__u32 event;
	__u32 cpu;
	__u32 pid;
	__u32 tgid;
	__u64 abstract_id;
	__u64 cgroup;
	__u64 period_start;
	__u64 count;
	__u64 min;
	__u64 max;
	__u64 sum_lo, sum_hi;
	__u64 sumsq_lo, sumsq_hi;
	__u64 mean;			/* floor */
	__u64 variance;			/* floor, population */
	__u32 flags;			/* MAGNET_SYNTH_F_* */
	__u64 total_count;
	__u64 total_sum_lo, total_sum_hi;
	double mean_d;
	double variance_d;
};

typedef int (*magnet_synth_cb)(const struct magnet_synth_info *sy, void *ctx);
typedef int (*magnet_synth_value_cb)(const struct magnet_synth_value *v,
				     void *ctx);

LIBMAGNET_API int magnet_synth_add(struct magnet_ctl *h,
				   const struct magnet_synth_info *sy);
LIBMAGNET_API int magnet_synth_del(struct magnet_ctl *h, const char *name);
LIBMAGNET_API int magnet_synth_get(struct magnet_ctl *h, const char *name,
				   struct magnet_synth_info *sy);
LIBMAGNET_API int magnet_synth_list(struct magnet_ctl *h, magnet_synth_cb cb,
				    void *ctx);
/*
 * Events the synthesizer never saw (a SYNTH_GET of its own: the size of
 * struct magnet_synth_info is ABI): calls its probe's hook missed and
 * events that began inside a write on their CPU; -EOPNOTSUPP from a
 * module that predates the counter.
 */
LIBMAGNET_API int magnet_synth_get_missed(struct magnet_ctl *h,
					  const char *name, __u64 *missed);
/* Every key's values (a dump). */
LIBMAGNET_API int magnet_synth_values(struct magnet_ctl *h, const char *name,
				      magnet_synth_value_cb cb, void *ctx);
/*
 * One key's values: @key->group must be the synthesizer's group and the
 * key fields it names set; -ENOENT when that key has had no event.
 */
LIBMAGNET_API int magnet_synth_value_get(struct magnet_ctl *h,
					 const char *name,
					 const struct magnet_synth_value *key,
					 struct magnet_synth_value *out);
/*
 * Mean and population variance in double from exact moments (a SYNTH
 * record's or a value's), without cancellation.  -EINVAL for count 0.
 */
LIBMAGNET_API int magnet_synth_moments(__u64 count, __u64 sum_lo,
				       __u64 sum_hi, __u64 sumsq_lo,
				       __u64 sumsq_hi, double *mean,
				       double *variance);

/*
 * Correlators (docs/CORRELATE.md).  @event[i][0..nalt[i]) are the event
 * IDs that make step i.  The arrays have room for more steps and points
 * than the kernel accepts, so that it is the kernel that refuses (with a
 * message).  Counters are filled by magnet_corr_get()/magnet_corr_list().
 */
#define MAGNET_CORR_INFO_STEPS	16
#define MAGNET_CORR_INFO_ALTS	8

struct magnet_corr_info {
	char name[MAGNET_NAME_MAX];
	char stream[MAGNET_NAME_MAX];	/* destination */
	__u32 id;
	unsigned int nsteps;
	unsigned int nalt[MAGNET_CORR_INFO_STEPS];
	__u32 event[MAGNET_CORR_INFO_STEPS][MAGNET_CORR_INFO_ALTS];
	__u64 window_ns;
	__u64 events;			/* read from the internal stream */
	__u64 completed;
	__u64 expired;
	__u64 partial;
	__u64 overflow;
	__u64 stray;
	__u64 lost;			/* lost by the internal stream */
	__u64 late;
	__u64 records;			/* written to @stream */
	__u64 in_written;
	__u64 in_read;
	__u32 pending;
};

typedef int (*magnet_corr_cb)(const struct magnet_corr_info *c, void *ctx);

LIBMAGNET_API int magnet_corr_add(struct magnet_ctl *h,
				  const struct magnet_corr_info *c);
LIBMAGNET_API int magnet_corr_del(struct magnet_ctl *h, const char *name);
LIBMAGNET_API int magnet_corr_get(struct magnet_ctl *h, const char *name,
				  struct magnet_corr_info *c);
LIBMAGNET_API int magnet_corr_list(struct magnet_ctl *h, magnet_corr_cb cb,
				   void *ctx);

/* Names of enum values ("socket", "net", ...); "?" when unknown. */
LIBMAGNET_API const char *magnet_layer_name(__u32 layer);
LIBMAGNET_API const char *magnet_payload_name(__u32 payload);

/* ------------------------------------------------------------------ */
/* Stream files                                                        */
/* ------------------------------------------------------------------ */

/* Open a stream file read-only; returns the fd or -errno. */
LIBMAGNET_API int magnet_stream_open(const char *path, bool nonblock);
LIBMAGNET_API int magnet_stream_set_nonblock(int fd, bool nonblock);
/*
 * Read whole records: blocks until at least one record (unless
 * non-blocking), returns the byte count, 0 at EOF (stream deleted),
 * -EAGAIN when non-blocking and empty, -EINTR when a signal arrived.
 */
LIBMAGNET_API ssize_t magnet_stream_read(int fd, void *buf, size_t len);
/* poll() for readability: 1 readable/EOF, 0 timeout, -errno. */
LIBMAGNET_API int magnet_stream_wait(int fd, int timeout_ms);
/* MAGNET_IOC_FLUSH: write pending LOST records on every CPU. */
LIBMAGNET_API int magnet_stream_fd_flush(int fd);
/*
 * MAGNET_IOC_GET_STATS in its first layout: fills the counters up to
 * @fill (MAGNET_STREAM_STATS_SIZE_V1 bytes) and nothing after them, as
 * binaries built before the buffer modes expect.  All counters:
 * magnet_stream_fd_stats2().
 */
LIBMAGNET_API int magnet_stream_fd_stats(int fd,
					 struct magnet_stream_stats *st);

/* ------------------------------------------------------------------ */
/* Record decoding                                                     */
/* ------------------------------------------------------------------ */

enum magnet_rec_kind {
	MAGNET_REC_PLAIN,	/* payload not decoded (raw/none/unknown) */
	MAGNET_REC_SYSINFO,	/* u.sysinfo */
	MAGNET_REC_LOST,	/* u.lost */
	MAGNET_REC_EVENTDEF,	/* u.eventdef */
	MAGNET_REC_NET,		/* u.net */
	MAGNET_REC_FIELDS,	/* u.fields, described by magnet_payload_fields() */
	MAGNET_REC_SYNTH,	/* u.synth */
	MAGNET_REC_CORR,	/* u.corr; steps: magnet_rec_corr_step() */
	MAGNET_REC_APP,		/* u.app: an application event (MAGNET_EVENT_APP) */
};

/* Most fields of a table-described payload (MAGNET_REC_FIELDS). */
#define MAGNET_REC_FIELDS_MAX	24

/*
 * One decoded record.  Header fields and the decoded payload (u) are in
 * host byte order; @payload points at the raw bytes in the caller's
 * buffer (writer byte order) and is valid as long as that buffer.
 */
struct magnet_rec {
	struct magnet_rec_hdr hdr;
	const void *payload;
	size_t payload_len;		/* hdr.size - MAGNET_REC_HDR_SIZE */
	enum magnet_rec_kind kind;
	__u16 layer;			/* from EVENTDEF, else 0 */
	__u16 payload_type;		/* from EVENTDEF, else 0 */
	char name[MAGNET_NAME_MAX];	/* "SYSINFO", probe name, "event<N>" */
	union {
		struct magnet_sysinfo sysinfo;
		struct magnet_lost lost;
		struct magnet_eventdef eventdef;
		struct magnet_net_payload net;
		struct magnet_synth_payload synth;
		struct magnet_corr_rec corr;
		struct magnet_app_payload app;
		/*
		 * MAGNET_REC_FIELDS: value of field i of
		 * magnet_payload_fields(payload_type), host order, signed
		 * ones sign-extended; strings: magnet_rec_field_str().
		 */
		__u64 fields[MAGNET_REC_FIELDS_MAX];
	} u;
};

/*
 * Payload fields by name (the probe library's payloads: sched, memory,
 * TCP/IP, run-time kprobes).  MAGNET_PAYLOAD_NET keeps its own struct.
 */
enum magnet_field_kind {
	MAGNET_FIELD_UINT,
	MAGNET_FIELD_INT,
	MAGNET_FIELD_HEX,	/* unsigned, best shown in hex */
	MAGNET_FIELD_STR,	/* NUL-padded char array of @size bytes */
};

struct magnet_field {
	const char *name;
	__u16 offset;		/* in the payload */
	__u16 size;		/* bytes: 1, 2, 4, 8, or the array's size */
	__u16 kind;		/* enum magnet_field_kind */
};

/* Fields of payload type @payload (NULL and *nr = 0 if not described). */
LIBMAGNET_API const struct magnet_field *magnet_payload_fields(__u32 payload,
							       unsigned int *nr);
/*
 * The fields of record @r whatever its kind, in the order they are shown:
 * MAGNET_REC_NET (struct magnet_net_payload; a failed call's -errno is in
 * gso_size's place, see MAGNET_NET_F_ERROR), MAGNET_REC_APP,
 * MAGNET_REC_SYNTH, MAGNET_REC_CORR (the header; nsteps last, the steps
 * by magnet_rec_corr_step()) and MAGNET_REC_FIELDS (its payload type's
 * table).  NULL and *nr = 0 for the other kinds.
 */
LIBMAGNET_API const struct magnet_field *magnet_rec_fields(const struct magnet_rec *r,
							   unsigned int *nr);
/* Fields of struct magnet_corr_step (magnet_rec_corr_step()). */
LIBMAGNET_API const struct magnet_field *magnet_corr_step_fields(unsigned int *nr);
/*
 * Value of field i of magnet_rec_fields(r), host order, signed ones
 * sign-extended; 0 for a string or i out of range.
 */
LIBMAGNET_API __u64 magnet_rec_field_value(const struct magnet_rec *r,
					   unsigned int i);
/* Value of field @f of a host-order struct at @base (a step, say). */
LIBMAGNET_API __u64 magnet_field_get(const void *base,
				     const struct magnet_field *f);
/* String field @f of a record of magnet_rec_fields(), copied into @buf. */
LIBMAGNET_API const char *magnet_rec_field_str(const struct magnet_rec *r,
					       const struct magnet_field *f,
					       char *buf, size_t len);

struct magnet_decoder;

LIBMAGNET_API struct magnet_decoder *magnet_decoder_new(void);
LIBMAGNET_API void magnet_decoder_free(struct magnet_decoder *d);
/* Forget everything (byte order, names) to decode a new trace. */
LIBMAGNET_API void magnet_decoder_reset(struct magnet_decoder *d);
/*
 * Decode the record at *off in buf[0..len).  Returns 1 and advances *off,
 * 0 at the end of the buffer, or -EBADMSG on corrupt data (then *off is
 * left at the bad record and magnet_decoder_errmsg() says
 * "offset N: reason").  The first record must be SYSINFO.
 */
LIBMAGNET_API int magnet_rec_next(struct magnet_decoder *d, const void *buf,
				  size_t len, size_t *off,
				  struct magnet_rec *out);
LIBMAGNET_API const char *magnet_decoder_errmsg(const struct magnet_decoder *d);
/* The decoder of a trace file (for magnet_rec_corr_step()). */
struct magnet_trace;
LIBMAGNET_API const struct magnet_decoder *magnet_trace_decoder(const struct magnet_trace *t);
/*
 * Step @i (< r->u.corr.nsteps) of a MAGNET_REC_CORR record, host order.
 * 0, or -EINVAL when @r is no such record or @i is out of range.
 */
LIBMAGNET_API int magnet_rec_corr_step(const struct magnet_decoder *d,
				       const struct magnet_rec *r,
				       unsigned int i,
				       struct magnet_corr_step *out);
/* True when the trace is from a machine of the other byte order. */
LIBMAGNET_API bool magnet_decoder_swapped(const struct magnet_decoder *d);
/* Name of an event ID as known so far ("event<N>" when unknown). */
LIBMAGNET_API const char *magnet_decoder_event_name(const struct magnet_decoder *d,
						    __u16 id, char *buf,
						    size_t len);

/* Trace files: a file of records as read from a stream. */
struct magnet_trace;

LIBMAGNET_API int magnet_trace_open(const char *path, struct magnet_trace **out);
/*
 * 1: *out holds the next record (payload valid until the next call);
 * 0: end of file; -EBADMSG corrupt/truncated, -ENODATA empty file,
 * -errno read error (see magnet_trace_errmsg()).
 */
LIBMAGNET_API int magnet_trace_next(struct magnet_trace *t,
				    struct magnet_rec *out);
LIBMAGNET_API const char *magnet_trace_errmsg(const struct magnet_trace *t);
/* File offset of the next record (of the bad one after an error). */
LIBMAGNET_API unsigned long long magnet_trace_offset(const struct magnet_trace *t);
LIBMAGNET_API void magnet_trace_close(struct magnet_trace *t);

/*
 * The read rule of a stream file descriptor (docs/IOCTL.md): a read
 * completes when @bytes of records and @n probe events are there, after
 * @ms milliseconds (0: never) with what there is, or at the stream's end.
 * 0 or -errno (-EINVAL: watermark above one CPU's ring, negative timeout).
 */
LIBMAGNET_API int magnet_stream_set_watermark(int fd, __u64 bytes);
LIBMAGNET_API int magnet_stream_get_watermark(int fd, __u64 *bytes);
LIBMAGNET_API int magnet_stream_set_timeout(int fd, __s64 ms);
LIBMAGNET_API int magnet_stream_get_timeout(int fd, __s64 *ms);
LIBMAGNET_API int magnet_stream_set_min_events(int fd, __u64 n);
LIBMAGNET_API int magnet_stream_get_min_events(int fd, __u64 *n);
/* One read that never waits: bytes, 0 at EOF, -EAGAIN (rule not met). */
LIBMAGNET_API ssize_t magnet_stream_read_nonblock(int fd, void *buf, size_t len);
/*
 * Signal-driven I/O: this process gets @sig (0: SIGIO; a real-time signal
 * carries si_fd and si_band) each time the stream becomes readable by
 * the rule after a read.
 */
LIBMAGNET_API int magnet_stream_sigio(int fd, int sig);

/*
 * Asynchronous reader on libaio: @depth reads of @buf_size bytes (at least
 * MAGNET_REC_MAX) stay in flight; next() returns the next completed one:
 * bytes of whole records (*data valid until the next call), 0 at the
 * stream's end (once every read in flight has completed: data a read took
 * is never dropped because another read saw the end first), -ETIMEDOUT
 * (the read timeout passed with nothing),
 * -EAGAIN (@timeout_ms passed; -1 waits), -EINTR, -errno.  Reads complete
 * in stream order.  cancel() cancels what is in flight and returns the
 * completions one by one (data that raced the cancel, then -ECANCELED),
 * 0 when none is left: nothing is lost by stopping.
 */
struct magnet_aio_reader;
LIBMAGNET_API int magnet_aio_reader_open(int fd, unsigned int depth,
					 size_t buf_size,
					 struct magnet_aio_reader **out);
LIBMAGNET_API ssize_t magnet_aio_reader_next(struct magnet_aio_reader *ar,
					     int timeout_ms, const void **data);
LIBMAGNET_API ssize_t magnet_aio_reader_cancel(struct magnet_aio_reader *ar,
					       const void **data);
LIBMAGNET_API void magnet_aio_reader_close(struct magnet_aio_reader *ar);

/*
 * Span reader (docs/IOCTL.md "Spans"): the records of the stream file @fd
 * taken in place, without a copy into a read buffer and without being
 * looked at, for consumers that move them elsewhere (magnetctl record
 * write(2)s them to its trace file).  get() returns 1 with a view:
 * @meta/@meta_len, SYSINFO/EVENTDEF records that come first (the ones
 * read() returns first), then @data/@len, whole records of one ring,
 * valid until put() (@len 0: metadata only, nothing to put); 0 at the
 * stream's end; -EAGAIN nothing now (poll() the fd: the read rule says
 * when); -EBUSY a span is held (put it first) or an overwrite stream is
 * running; -errno.  @partial also takes the sub-buffer being written, up
 * to what is committed; without it only finished sub-buffers come.
 * put() consumes the span: the ring may reuse its room.  The stream's
 * counters (magnet_stream_fd_stats2()) count what was taken.
 */
struct magnet_span_view {
	const void *meta;
	size_t meta_len;
	const void *data;
	size_t len;
	__u64 events;		/* events among the records of @data */
	__u32 ring;		/* the CPU (0 for a global ring) */
	bool closed;		/* @data ends a finished sub-buffer */
};
struct magnet_span_reader;
LIBMAGNET_API int magnet_span_reader_open(int fd,
					  struct magnet_span_reader **out);
LIBMAGNET_API int magnet_span_reader_get(struct magnet_span_reader *sr,
					 bool partial,
					 struct magnet_span_view *v);
LIBMAGNET_API int magnet_span_reader_put(struct magnet_span_reader *sr);
LIBMAGNET_API void magnet_span_reader_close(struct magnet_span_reader *sr);

/*
 * The same on io_uring (-EOPNOTSUPP when built without liburing).
 * io_uring retries short reads of regular files, and stream files are
 * debugfs regular files: a read completes when its buffer is full as far
 * as whole records go (or at the end).  Use @buf_size = the watermark.
 * The reads are chained (IOSQE_IO_DRAIN): one runs at a time and they
 * complete in stream order.
 */
struct magnet_uring_reader;
LIBMAGNET_API int magnet_uring_reader_open(int fd, unsigned int depth,
					   size_t buf_size,
					   struct magnet_uring_reader **out);
LIBMAGNET_API ssize_t magnet_uring_reader_next(struct magnet_uring_reader *ur,
					       int timeout_ms, const void **data);
LIBMAGNET_API void magnet_uring_reader_close(struct magnet_uring_reader *ur);

/*
 * Time of a record for ordering: an application event's call-entry time
 * (u.app.entry_ns), else the header's timestamp.  A send() then sorts
 * before the kernel's events of the same call, which the kernel wrote
 * while the call ran, before the application's batch reached the stream.
 */
LIBMAGNET_API __u64 magnet_rec_time(const struct magnet_rec *r);
/* Name of an application call ("send", "recvmsg", ...; "?" unknown). */
LIBMAGNET_API const char *magnet_app_call_name(__u32 call);

/*
 * Sorted traces: read whole trace files (one or more, e.g. a kernel
 * stream's and an application stream's) and hand out their records in
 * magnet_rec_time() order (ties: file order).  SYSINFO and EVENTDEF come
 * first, each file's in its order.  open(): 0, -EINVAL (no paths),
 * -ENOMEM, -errno of open/read (magnet_sorted_errmsg() names the file).
 * A corrupt or truncated file keeps its records before the bad one;
 * next() returns 1 (*out valid until the next call, its payload until
 * close), then 0 at the end, or
 * -EBADMSG at the end when a file was corrupt (errmsg says where).
 */
struct magnet_sorted;
LIBMAGNET_API int magnet_sorted_open(const char *const *paths,
				     unsigned int nr,
				     struct magnet_sorted **out);
LIBMAGNET_API int magnet_sorted_next(struct magnet_sorted *st,
				     const struct magnet_rec **out);
LIBMAGNET_API const char *magnet_sorted_errmsg(const struct magnet_sorted *st);
LIBMAGNET_API void magnet_sorted_close(struct magnet_sorted *st);
/* The decoder of the record last returned (for magnet_rec_corr_step()). */
LIBMAGNET_API const struct magnet_decoder *magnet_sorted_decoder(const struct magnet_sorted *st);

/*
 * Merge reader: push() whole records as read from a stream (any CPU mix);
 * next() hands them out in timestamp order.  Each CPU's records come in
 * order, so the oldest head is safe once every CPU seen so far has a
 * record waiting; otherwise it is held back until the newest timestamp
 * pushed is @window_ns past it or more than @max_records (0: 65536) are
 * held (the bounded lookahead).  A CPU whose data comes later than that
 * is emitted out of order and counted by magnet_merge_late().  SYSINFO and
 * EVENTDEF pass through first.  next(): 1 (*rec valid until the next
 * call), 0 nothing ready (@flush: hand out everything held).
 * push(): 0, -EBADMSG, -ENOMEM.
 */
struct magnet_merge;
LIBMAGNET_API struct magnet_merge *magnet_merge_new(__u64 window_ns,
						    size_t max_records);
LIBMAGNET_API int magnet_merge_push(struct magnet_merge *m, const void *buf,
				    size_t len);
LIBMAGNET_API int magnet_merge_next(struct magnet_merge *m, bool flush,
				    const struct magnet_rec_hdr **rec);
LIBMAGNET_API unsigned long long magnet_merge_late(const struct magnet_merge *m);
LIBMAGNET_API void magnet_merge_free(struct magnet_merge *m);

/* ------------------------------------------------------------------ */
/* Buffer modes (docs/DESIGN.md "Buffer modes")                        */
/* ------------------------------------------------------------------ */

/* Buffer modes: magnet_stream_create_opts() with @mode creates them. */

/* What STREAM_GET says of a stream's buffer mode. */
struct magnet_stream_mode_info {
	__u32 mode;			/* MAGNET_STREAM_F_* */
	__u32 frozen;			/* 1 while a snapshot freezes it */
	__u64 overwritten;		/* events overwritten unread */
	__u64 overwritten_bytes;
	__u64 frozen_lost;		/* events refused while frozen */
};

LIBMAGNET_API int magnet_stream_get_mode(struct magnet_ctl *h,
					 const char *name,
					 struct magnet_stream_mode_info *m);
/*
 * The clock of the stream's timestamps (enum magnet_clock) into @clock;
 * MAGNET_CLOCK_MONOTONIC from a module that predates the choice.
 */
LIBMAGNET_API int magnet_stream_get_clock(struct magnet_ctl *h,
					  const char *name, __u32 *clock);
/* Overwrite streams: stop the writers so the file can be read / go on. */
LIBMAGNET_API int magnet_stream_freeze(struct magnet_ctl *h, const char *name);
LIBMAGNET_API int magnet_stream_resume(struct magnet_ctl *h, const char *name);
/*
 * Snapshot of an overwrite stream: freeze it, copy everything it holds
 * (SYSINFO, EVENTDEFs, then the newest records of each ring in order: a
 * trace file) to @out_fd, resume it (also after an error).  *@bytes (if
 * not NULL) gets the bytes written.  Returns 0 or -errno.
 */
LIBMAGNET_API int magnet_stream_snapshot(struct magnet_ctl *h,
					 const char *name, int out_fd,
					 __u64 *bytes);
/*
 * MAGNET_IOC_GET_STATS with @sz bytes of @st (MAGNET_STREAM_STATS_SIZE_V1
 * .. sizeof(*st)); fields the kernel does not know are zeroed.
 */
LIBMAGNET_API int magnet_stream_fd_stats2(int fd,
					  struct magnet_stream_stats *st,
					  size_t sz);
/*
 * Per-socket statistics for the socket's owner (docs/SOCKSTAT.md).  No
 * privilege needed: the kernel resolves @fd in the caller's own file
 * table.  watch(): counting starts now (or at the socket's first watch
 * by anyone); unwatch(): stop.  stats(): the figures now.
 * stats_by_id(): any watched socket by abstract ID (socket inode), root
 * only (-EPERM).  subscribe(): a new descriptor (poll/epoll, close it
 * when done) from which read() returns one summary per period
 * (MAGNET_SOCK_PERIOD_MIN_MS..MAX_MS, else -ERANGE); read(): one summary
 * (blocks unless the descriptor is O_NONBLOCK: -EAGAIN).  Negative errno:
 * -EBADF, -ENOTSOCK (not a socket of the caller), -ENOENT (not watched, or
 * no sockstat file), -ENODEV (probe module magnet_net not loaded),
 * -ENOSPC (MAGNET_SOCK_WATCH_MAX sockets watched), -EBADMSG/-EPROTO (a
 * summary of the wrong size or version), -ENODATA (subscription ended).
 */
LIBMAGNET_API int magnet_sock_watch(int fd);
LIBMAGNET_API int magnet_sock_unwatch(int fd);
LIBMAGNET_API int magnet_sock_stats(int fd, struct magnet_sock_stats *st);
LIBMAGNET_API int magnet_sock_stats_by_id(__u64 id,
					  struct magnet_sock_stats *st);
LIBMAGNET_API int magnet_sock_subscribe(int fd, unsigned int period_ms);
LIBMAGNET_API int magnet_sock_read(int subfd, struct magnet_sock_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* MAGNET_LIBMAGNET_H */
