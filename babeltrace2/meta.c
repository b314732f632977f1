// SPDX-License-Identifier: GPL-2.0-only
/*
 * The trace IR of a MAGNET trace (docs/BABELTRACE.md):
 *   - one clock class from the first SYSINFO: its frequency, its offset
 *     from the Unix epoch (wall_ns_at_zero), named after the stream's clock;
 *   - the trace's environment: the other SYSINFO fields (kernel_release,
 *     magnet_stream, subbuf_size, ...), as LTTng names its own;
 *   - one stream class with packets (context: cpu_id), discarded events
 *     (LOST records) and the common context of every record's header
 *     (abstract_id, pid, tgid); one stream per CPU;
 *   - an event class per event ID, named by its EVENTDEF, whose payload is
 *     the record's decoded payload, field by field, with the names of
 *     magnetctl dump -j.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "mbt.h"

const char *mbt_clock_name(__u32 id)
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

static bt_field_class *fc_scalar(bt_trace_class *tc, unsigned int size,
				 unsigned int kind)
{
	bt_field_class *fc;

	if (kind == MAGNET_FIELD_STR)
		return bt_field_class_string_create(tc);
	if (kind == MAGNET_FIELD_INT)
		fc = bt_field_class_integer_signed_create(tc);
	else
		fc = bt_field_class_integer_unsigned_create(tc);
	if (!fc)
		return NULL;
	bt_field_class_integer_set_field_value_range(fc, size >= 8 ? 64 :
						     size * 8);
	if (kind == MAGNET_FIELD_HEX)
		bt_field_class_integer_set_preferred_display_base(fc,
			BT_FIELD_CLASS_INTEGER_PREFERRED_DISPLAY_BASE_HEXADECIMAL);
	return fc;
}

/* Append member @name to structure @st: 0 or -ENOMEM. */
static int add_member(bt_trace_class *tc, bt_field_class *st,
		      const char *name, unsigned int size, unsigned int kind)
{
	bt_field_class *fc = fc_scalar(tc, size, kind);
	int ret = -ENOMEM;

	if (fc && bt_field_class_structure_append_member(st, name, fc) ==
		  BT_FIELD_CLASS_STRUCTURE_APPEND_MEMBER_STATUS_OK)
		ret = 0;
	bt_field_class_put_ref(fc);
	return ret;
}

static int add_table(bt_trace_class *tc, bt_field_class *st,
		     const struct magnet_field *f, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (add_member(tc, st, f[i].name, f[i].size, f[i].kind))
			return -ENOMEM;
	return 0;
}

/*
 * A dynamic array @name of @elem (reference taken) whose length is the
 * preceding member @len_name (appended here, unsigned @len_size bytes).
 */
static int add_array(bt_trace_class *tc, bt_field_class *st,
		     const char *len_name, unsigned int len_size,
		     const char *name, bt_field_class *elem)
{
	bt_field_class *len = fc_scalar(tc, len_size, MAGNET_FIELD_UINT);
	bt_field_class *arr = NULL;
	int ret = -ENOMEM;

	if (!len || !elem)
		goto out;
	if (bt_field_class_structure_append_member(st, len_name, len))
		goto out;
	arr = bt_field_class_array_dynamic_create(tc, elem, len);
	if (arr && !bt_field_class_structure_append_member(st, name, arr))
		ret = 0;
out:
	bt_field_class_put_ref(arr);
	bt_field_class_put_ref(len);
	bt_field_class_put_ref(elem);
	return ret;
}

static bt_field_class *fc_bytes(bt_trace_class *tc)
{
	return fc_scalar(tc, 1, MAGNET_FIELD_HEX);
}

static bt_field_class *fc_step(bt_trace_class *tc)
{
	bt_field_class *st = bt_field_class_structure_create(tc);
	const struct magnet_field *f;
	unsigned int n;

	f = magnet_corr_step_fields(&n);
	if (st && !add_table(tc, st, f, n) &&
	    !add_member(tc, st, "event_name", 0, MAGNET_FIELD_STR))
		return st;
	bt_field_class_put_ref(st);
	return NULL;
}

/* Bytes of a FIELDS payload after its described struct (IP: packet bytes). */
static size_t fields_struct_size(unsigned int payload)
{
	return payload == MAGNET_PAYLOAD_IP ? sizeof(struct magnet_ip_payload) : 0;
}

static bt_field_class *payload_class(bt_trace_class *tc,
				     const struct magnet_rec *r)
{
	bt_field_class *st = bt_field_class_structure_create(tc);
	const struct magnet_field *f;
	unsigned int n = 0;
	int err = -ENOMEM;

	if (!st)
		return NULL;
	f = magnet_rec_fields(r, &n);
	switch (r->kind) {
	case MAGNET_REC_NET:
		err = add_table(tc, st, f, n);
		/* a failed call (MAGNET_NET_F_ERROR): -errno, else 0 */
		err = err ?: add_member(tc, st, "err", 4, MAGNET_FIELD_INT);
		break;
	case MAGNET_REC_FIELDS:
		err = add_table(tc, st, f, n);
		if (!err && fields_struct_size(r->payload_type))
			err = add_array(tc, st, "data_len", 4, "data",
					fc_bytes(tc));
		break;
	case MAGNET_REC_SYNTH:
		err = add_table(tc, st, f, n);
		break;
	case MAGNET_REC_CORR:
		/* nsteps, last of the table, is the steps' length */
		err = add_table(tc, st, f, n - 1);
		err = err ?: add_array(tc, st, "nsteps", 2, "steps",
				       fc_step(tc));
		break;
	case MAGNET_REC_APP:
		err = add_member(tc, st, "call", 0, MAGNET_FIELD_STR);
		err = err ?: add_table(tc, st, f, n);
		break;
	default:	/* PLAIN: raw bytes, if any */
		err = add_array(tc, st, "data_len", 4, "data", fc_bytes(tc));
		break;
	}
	if (!err)
		return st;
	bt_field_class_put_ref(st);
	return NULL;
}

static int set_env(struct mbt_meta *m, const struct magnet_sysinfo *si)
{
	char fmt[16];
	bt_trace *t = m->trace;
	int err = 0;

	snprintf(fmt, sizeof(fmt), "%u.%u", si->format_major, si->format_minor);
	err |= bt_trace_set_environment_entry_string(t, "tracer_name", "magnet");
	err |= bt_trace_set_environment_entry_string(t, "domain", "kernel");
	err |= bt_trace_set_environment_entry_string(t, "kernel_release",
						     si->release);
	err |= bt_trace_set_environment_entry_string(t, "magnet_stream",
						     si->stream);
	err |= bt_trace_set_environment_entry_string(t, "magnet_format", fmt);
	err |= bt_trace_set_environment_entry_string(t, "magnet_clock",
						     mbt_clock_name(si->clock_id));
	err |= bt_trace_set_environment_entry_integer(t, "magnet_abi",
						      si->abi_version);
	err |= bt_trace_set_environment_entry_integer(t, "nr_cpus", si->nr_cpus);
	err |= bt_trace_set_environment_entry_integer(t, "ptr_size",
						      si->ptr_size);
	err |= bt_trace_set_environment_entry_integer(t, "page_size",
						      si->page_size);
	err |= bt_trace_set_environment_entry_integer(t, "subbuf_size",
						      si->subbuf_size);
	err |= bt_trace_set_environment_entry_integer(t, "subbuf_count",
						      si->subbuf_count);
	err |= bt_trace_set_environment_entry_integer(t, "stream_flags",
						      si->flags);
	return err ? -ENOMEM : 0;
}

static int stream_class_init(struct mbt_meta *m)
{
	bt_trace_class *tc = m->tc;
	bt_field_class *pc, *cc;
	int err = -ENOMEM;

	m->sc = bt_stream_class_create(tc);
	pc = bt_field_class_structure_create(tc);
	cc = bt_field_class_structure_create(tc);
	if (!m->sc || !pc || !cc)
		goto out;
	if (bt_stream_class_set_default_clock_class(m->sc, m->cc))
		goto out;
	/* a stream per CPU, its ID the CPU; an event class ID is the event ID */
	bt_stream_class_set_assigns_automatic_stream_id(m->sc, BT_FALSE);
	bt_stream_class_set_assigns_automatic_event_class_id(m->sc, BT_FALSE);
	bt_stream_class_set_supports_packets(m->sc, BT_TRUE, BT_TRUE, BT_TRUE);
	bt_stream_class_set_supports_discarded_events(m->sc, BT_TRUE, BT_TRUE);
	if (add_member(tc, pc, "cpu_id", 4, MAGNET_FIELD_UINT) ||
	    bt_stream_class_set_packet_context_field_class(m->sc, pc))
		goto out;
	if (add_member(tc, cc, "abstract_id", 8, MAGNET_FIELD_UINT) ||
	    add_member(tc, cc, "pid", 4, MAGNET_FIELD_UINT) ||
	    add_member(tc, cc, "tgid", 4, MAGNET_FIELD_UINT) ||
	    bt_stream_class_set_event_common_context_field_class(m->sc, cc))
		goto out;
	err = 0;
out:
	bt_field_class_put_ref(pc);
	bt_field_class_put_ref(cc);
	return err;
}

int mbt_meta_init(struct mbt_meta *m, bt_self_component *self,
		  const struct magnet_sysinfo *si, const char **why)
{
	char desc[96];
	__u64 hz = si->clock_hz ? si->clock_hz : 1000000000ull;

	memset(m, 0, sizeof(*m));
	*why = "out of memory";
	m->clock_id = si->clock_id;
	m->tc = bt_trace_class_create(self);
	m->cc = bt_clock_class_create(self);
	if (!m->tc || !m->cc)
		return -ENOMEM;
	/* timestamps count from wall_ns_at_zero on the Unix epoch */
	bt_clock_class_set_frequency(m->cc, hz);
	bt_clock_class_set_offset(m->cc, (int64_t)(si->wall_ns_at_zero /
						   1000000000ull),
				  (si->wall_ns_at_zero % 1000000000ull) * hz /
				  1000000000ull);
	bt_clock_class_set_origin_is_unix_epoch(m->cc, BT_TRUE);
	snprintf(desc, sizeof(desc), "MAGNET stream clock %s (SYSINFO clock_id %u)",
		 mbt_clock_name(si->clock_id), si->clock_id);
	if (bt_clock_class_set_name(m->cc, mbt_clock_name(si->clock_id)) ||
	    bt_clock_class_set_description(m->cc, desc))
		return -ENOMEM;
	if (stream_class_init(m))
		return -ENOMEM;
	m->trace = bt_trace_create(m->tc);
	if (!m->trace || (si->stream[0] && bt_trace_set_name(m->trace,
							     si->stream)))
		return -ENOMEM;
	return set_env(m, si);
}

void mbt_meta_fini(struct mbt_meta *m)
{
	unsigned int i;

	for (i = 0; i < MBT_NR_EVENTS; i++)
		bt_event_class_put_ref(m->ec[i]);
	bt_trace_put_ref(m->trace);
	bt_stream_class_put_ref(m->sc);
	bt_clock_class_put_ref(m->cc);
	bt_trace_class_put_ref(m->tc);
	memset(m, 0, sizeof(*m));
}

bt_event_class *mbt_meta_event_class(struct mbt_meta *m,
				     const struct magnet_rec *r,
				     const char **why)
{
	unsigned int id = r->hdr.event;
	bt_event_class *ec;
	bt_field_class *pl;

	if (id >= MBT_NR_EVENTS) {
		*why = "event ID out of range";
		return NULL;
	}
	ec = m->ec[id];
	if (ec) {
		if (m->ec_kind[id] != r->kind ||
		    m->ec_payload[id] != r->payload_type) {
			*why = "an event ID whose payload type changed within the trace";
			return NULL;
		}
		return ec;
	}
	*why = "out of memory";
	ec = bt_event_class_create_with_id(m->sc, id);
	pl = ec ? payload_class(m->tc, r) : NULL;
	if (!pl || bt_event_class_set_name(ec, r->name) ||
	    bt_event_class_set_payload_field_class(ec, pl)) {
		bt_field_class_put_ref(pl);
		bt_event_class_put_ref(ec);
		return NULL;
	}
	bt_field_class_put_ref(pl);
	m->ec[id] = ec;
	m->ec_kind[id] = r->kind;
	m->ec_payload[id] = r->payload_type;
	return ec;
}

/* ---- values ---- */

static void set_uint(bt_field *st, uint64_t i, uint64_t v)
{
	bt_field_integer_unsigned_set_value(
		bt_field_structure_borrow_member_field_by_index(st, i), v);
}

static void set_int(bt_field *st, uint64_t i, int64_t v)
{
	bt_field_integer_signed_set_value(
		bt_field_structure_borrow_member_field_by_index(st, i), v);
}

static int set_str(bt_field *st, uint64_t i, const char *s)
{
	return bt_field_string_set_value(
		bt_field_structure_borrow_member_field_by_index(st, i), s) ?
		-ENOMEM : 0;
}

/* The members of step @st from @s (host order); event_name is set apart. */
static void fill_step(bt_field *st, const struct magnet_corr_step *s)
{
	const struct magnet_field *f;
	unsigned int i, n;

	f = magnet_corr_step_fields(&n);
	for (i = 0; i < n; i++)
		set_uint(st, i, magnet_field_get(s, &f[i]));
}

/* Members @first..@first + @n - 1 of @st: the first @n fields of @r. */
static int fill_rec(bt_field *st, uint64_t first, const struct magnet_rec *r,
		    unsigned int n)
{
	const struct magnet_field *f;
	unsigned int i, nf;
	char buf[MAGNET_PAYLOAD_MAX + 1];

	f = magnet_rec_fields(r, &nf);
	for (i = 0; i < n && i < nf; i++) {
		if (f[i].kind == MAGNET_FIELD_STR) {
			if (set_str(st, first + i,
				    magnet_rec_field_str(r, &f[i], buf,
							 sizeof(buf))))
				return -ENOMEM;
		} else if (f[i].kind == MAGNET_FIELD_INT) {
			set_int(st, first + i,
				(__s64)magnet_rec_field_value(r, i));
		} else {
			set_uint(st, first + i, magnet_rec_field_value(r, i));
		}
	}
	return 0;
}

/* Members @i (length) and @i + 1 (bytes) from @p[0..@n). */
static int fill_bytes(bt_field *st, uint64_t i, const unsigned char *p,
		      size_t n)
{
	bt_field *arr;
	size_t k;

	set_uint(st, i, n);
	arr = bt_field_structure_borrow_member_field_by_index(st, i + 1);
	if (bt_field_array_dynamic_set_length(arr, n))
		return -ENOMEM;
	for (k = 0; k < n; k++)
		bt_field_integer_unsigned_set_value(
			bt_field_array_borrow_element_field_by_index(arr, k),
			p[k]);
	return 0;
}

static int fill_fields(bt_field *st, const struct magnet_rec *r)
{
	size_t hdr = fields_struct_size(r->payload_type);
	unsigned int n = 0;

	magnet_rec_fields(r, &n);
	if (fill_rec(st, 0, r, n))
		return -ENOMEM;
	if (!hdr)
		return 0;
	return fill_bytes(st, n, (const unsigned char *)r->payload + hdr,
			  r->payload_len > hdr ? r->payload_len - hdr : 0);
}

static int fill_corr(bt_field *st, const struct magnet_rec *r,
		     const struct magnet_decoder *dec)
{
	struct magnet_corr_step s;
	bt_field *arr, *e;
	char name[MAGNET_NAME_MAX + 16];
	unsigned int i, nhead, nstep, n = r->u.corr.nsteps;

	magnet_rec_fields(r, &nhead);
	magnet_corr_step_fields(&nstep);
	nhead--;			/* nsteps: the array's length */
	fill_rec(st, 0, r, nhead);
	set_uint(st, nhead, n);
	arr = bt_field_structure_borrow_member_field_by_index(st, nhead + 1);
	if (bt_field_array_dynamic_set_length(arr, n))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (magnet_rec_corr_step(dec, r, i, &s))
			memset(&s, 0, sizeof(s));
		e = bt_field_array_borrow_element_field_by_index(arr, i);
		fill_step(e, &s);
		if (set_str(e, nstep,
			    s.event ? magnet_decoder_event_name(dec, s.event, name,
								 sizeof(name)) :
				      ""))
			return -ENOMEM;
	}
	return 0;
}

int mbt_meta_fill(const struct mbt_meta *m, bt_event *ev,
		  const struct magnet_rec *r,
		  const struct magnet_decoder *dec)
{
	bt_field *cc = bt_event_borrow_common_context_field(ev);
	bt_field *st = bt_event_borrow_payload_field(ev);
	unsigned int n;

	(void)m;
	set_uint(cc, 0, r->hdr.abstract_id);
	set_uint(cc, 1, r->hdr.pid);
	set_uint(cc, 2, r->hdr.tgid);
	switch (r->kind) {
	case MAGNET_REC_NET:
		magnet_rec_fields(r, &n);
		fill_rec(st, 0, r, n);
		if (r->u.net.flags & MAGNET_NET_F_ERROR)
			set_uint(st, 4, 0);	/* err shares gso_size's bytes */
		set_int(st, n,
			r->u.net.flags & MAGNET_NET_F_ERROR ? r->u.net.err : 0);
		return 0;
	case MAGNET_REC_FIELDS:
		return fill_fields(st, r);
	case MAGNET_REC_SYNTH:
		magnet_rec_fields(r, &n);
		return fill_rec(st, 0, r, n);
	case MAGNET_REC_CORR:
		return fill_corr(st, r, dec);
	case MAGNET_REC_APP:
		if (set_str(st, 0, magnet_app_call_name(r->u.app.call)))
			return -ENOMEM;
		magnet_rec_fields(r, &n);
		return fill_rec(st, 1, r, n);
	default:
		return fill_bytes(st, 0, r->payload, r->payload_len);
	}
}
