// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Payloads described field by field, so that every consumer (magnetctl
 * dump -j, the Perfetto converter, the babeltrace2 plugin) handles them by
 * name from one table: a table per MAGNET_PAYLOAD_* type of the probe
 * library and per decoded struct (net, app, synth, corr and its steps) of
 * (name, offset, size, kind), built from the UAPI structs with
 * offsetof/sizeof.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <byteswap.h>

#include "internal.h"

#define F(type, member, k)						\
	{ #member, offsetof(type, member),				\
	  sizeof(((type *)0)->member), MAGNET_FIELD_##k }
#define FN(name, type, member, k)					\
	{ name, offsetof(type, member),					\
	  sizeof(((type *)0)->member), MAGNET_FIELD_##k }

#define SW struct magnet_sched_switch_payload
static const struct magnet_field sched_switch_fields[] = {
	F(SW, prev_pid, UINT), F(SW, prev_tgid, UINT),
	F(SW, next_pid, UINT), F(SW, next_tgid, UINT),
	F(SW, prev_state, UINT), F(SW, prev_prio, INT),
	F(SW, next_prio, INT), F(SW, cpu, UINT),
	F(SW, prev_comm, STR), F(SW, next_comm, STR),
};

#define SWE struct magnet_sched_switch_end_payload
static const struct magnet_field sched_switch_end_fields[] = {
	F(SWE, switch_ns, UINT), F(SWE, prev_pid, UINT),
	F(SWE, prev_tgid, UINT), F(SWE, next_pid, UINT),
	F(SWE, next_tgid, UINT), F(SWE, cpu, UINT),
};

#define SP struct magnet_sched_proc_payload
static const struct magnet_field sched_proc_fields[] = {
	F(SP, pid, UINT), F(SP, tgid, UINT), F(SP, ppid, UINT),
	F(SP, ptgid, UINT), F(SP, exit_code, INT), F(SP, flags, HEX),
	F(SP, comm, STR),
};

#define SE struct magnet_sched_exec_payload
static const struct magnet_field sched_exec_fields[] = {
	F(SE, pid, UINT), F(SE, tgid, UINT), F(SE, old_pid, UINT),
	F(SE, comm, STR), F(SE, filename, STR),
};

#define FA struct magnet_fault_payload
static const struct magnet_field fault_fields[] = {
	F(FA, address, HEX), F(FA, ip, HEX), F(FA, error_code, HEX),
	F(FA, flags, HEX),
};

#define PG struct magnet_page_payload
static const struct magnet_field page_fields[] = {
	F(PG, order, UINT), F(PG, gfp_flags, HEX), F(PG, migratetype, INT),
	F(PG, node, INT), F(PG, flags, HEX),
};

#define TC struct magnet_tcp_payload
static const struct magnet_field tcp_fields[] = {
	F(TC, sport, UINT), F(TC, dport, UINT), F(TC, family, UINT),
	F(TC, state, UINT), F(TC, ca_state, UINT), F(TC, tcp_flags, HEX),
	F(TC, len, UINT), F(TC, snd_wnd, UINT), F(TC, rcv_wnd, UINT),
	F(TC, snd_cwnd, UINT), F(TC, snd_ssthresh, UINT),
	F(TC, srtt_us, UINT), F(TC, rto_us, UINT), F(TC, packets_out, UINT),
	F(TC, retrans_out, UINT), F(TC, write_seq, UINT),
	F(TC, copied_seq, UINT), F(TC, snd_nxt, UINT), F(TC, snd_una, UINT),
	F(TC, rcv_nxt, UINT), F(TC, mss_cache, UINT),
};

#define IP struct magnet_ip_payload
static const struct magnet_field ip_fields[] = {
	F(IP, version, UINT), F(IP, ihl, UINT), F(IP, tos, HEX),
	F(IP, ttl, UINT), F(IP, protocol, UINT), F(IP, frag_flags, HEX),
	F(IP, frag_off, UINT), F(IP, id, UINT), F(IP, tot_len, UINT),
	F(IP, ifindex, UINT), F(IP, len, UINT), F(IP, hdr_len, UINT),
	F(IP, flags, HEX),
};

#define KP struct magnet_kprobe_payload
static const struct magnet_field kprobe_fields[] = {
	F(KP, valid, HEX), F(KP, hashed, HEX),
	FN("arg0", KP, arg[0], HEX), FN("arg1", KP, arg[1], HEX),
	FN("arg2", KP, arg[2], HEX), FN("arg3", KP, arg[3], HEX),
	FN("arg4", KP, arg[4], HEX), FN("arg5", KP, arg[5], HEX),
	F(KP, ret, HEX),
};

/* Payloads decoded into a struct of struct magnet_rec's u, by record kind */
#define NP struct magnet_net_payload
static const struct magnet_field net_fields[] = {
	F(NP, len, UINT), F(NP, ifindex, UINT), F(NP, proto, HEX),
	F(NP, flags, HEX), F(NP, gso_size, UINT), F(NP, gso_segs, UINT),
};

#define AP struct magnet_app_payload
static const struct magnet_field app_fields[] = {
	F(AP, fd, INT), F(AP, req, UINT), F(AP, ret, INT),
	F(AP, entry_ns, UINT), F(AP, exit_ns, UINT), F(AP, flags, HEX),
	F(AP, msg_flags, HEX),
};

#define SY struct magnet_synth_payload
static const struct magnet_field synth_fields[] = {
	F(SY, name, STR), F(SY, period_start, UINT), F(SY, period_end, UINT),
	F(SY, count, UINT), F(SY, min, UINT), F(SY, max, UINT),
	F(SY, sum_lo, UINT), F(SY, sum_hi, UINT), F(SY, sumsq_lo, UINT),
	F(SY, sumsq_hi, UINT), F(SY, mean, UINT), F(SY, variance, UINT),
	F(SY, cgroup, UINT), F(SY, abstract_id, UINT), F(SY, event, UINT),
	F(SY, cpu, UINT), F(SY, pid, UINT), F(SY, tgid, UINT),
	F(SY, group, HEX), F(SY, flags, HEX), F(SY, quantity, UINT),
};

/* nsteps last: the length of the steps that follow */
#define CR struct magnet_corr_rec
static const struct magnet_field corr_fields[] = {
	F(CR, corr_id, UINT), F(CR, reached, UINT), F(CR, flags, HEX),
	F(CR, start, UINT), F(CR, nsteps, UINT),
};

#define CS struct magnet_corr_step
static const struct magnet_field step_fields[] = {
	F(CS, event, UINT), F(CS, delta_ns, UINT), F(CS, count, UINT),
	F(CS, bytes, UINT),
};

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

struct field_table {
	const struct magnet_field *f;
	unsigned int n;
	size_t size;		/* the payload struct: shorter is left raw */
};

#define T(type, arr) { arr, sizeof(arr) / sizeof(arr[0]), sizeof(type) }

static const struct field_table tables[] = {
	[MAGNET_PAYLOAD_SCHED_SWITCH]	= T(SW, sched_switch_fields),
	[MAGNET_PAYLOAD_SCHED_PROC]	= T(SP, sched_proc_fields),
	[MAGNET_PAYLOAD_SCHED_EXEC]	= T(SE, sched_exec_fields),
	[MAGNET_PAYLOAD_FAULT]		= T(FA, fault_fields),
	[MAGNET_PAYLOAD_PAGE]		= T(PG, page_fields),
	[MAGNET_PAYLOAD_TCP]		= T(TC, tcp_fields),
	[MAGNET_PAYLOAD_IP]		= T(IP, ip_fields),
	[MAGNET_PAYLOAD_KPROBE]		= T(KP, kprobe_fields),
	[MAGNET_PAYLOAD_SCHED_SWITCH_END] = T(SWE, sched_switch_end_fields),
};

#define NTABLES (sizeof(tables) / sizeof(tables[0]))

const struct magnet_field *magnet_payload_fields(__u32 payload,
						 unsigned int *nr)
{
	if (payload >= NTABLES || !tables[payload].f) {
		if (nr)
			*nr = 0;
		return NULL;
	}
	if (nr)
		*nr = tables[payload].n;
	return tables[payload].f;
}

const struct magnet_field *magnet_rec_fields(const struct magnet_rec *r,
					     unsigned int *nr)
{
	const struct magnet_field *f = NULL;
	unsigned int n = 0;

	switch (r->kind) {
	case MAGNET_REC_NET:
		f = net_fields, n = NELEM(net_fields);
		break;
	case MAGNET_REC_APP:
		f = app_fields, n = NELEM(app_fields);
		break;
	case MAGNET_REC_SYNTH:
		f = synth_fields, n = NELEM(synth_fields);
		break;
	case MAGNET_REC_CORR:
		f = corr_fields, n = NELEM(corr_fields);
		break;
	case MAGNET_REC_FIELDS:
		f = magnet_payload_fields(r->payload_type, &n);
		if (n > MAGNET_REC_FIELDS_MAX)
			f = NULL, n = 0;
		break;
	default:
		break;
	}
	if (nr)
		*nr = n;
	return f;
}

const struct magnet_field *magnet_corr_step_fields(unsigned int *nr)
{
	if (nr)
		*nr = NELEM(step_fields);
	return step_fields;
}

/*
 * Field @f of the struct at @base: its bytes, byte-swapped if @swap,
 * signed ones sign-extended; 0 for a string (read with
 * magnet_rec_field_str()).
 */
static __u64 field_read(const void *base, const struct magnet_field *f,
			bool swap)
{
	const unsigned char *p = (const unsigned char *)base + f->offset;
	bool sgn = f->kind == MAGNET_FIELD_INT;
	__u8 v8;
	__u16 v16;
	__u32 v32;
	__u64 v64;

	switch (f->kind == MAGNET_FIELD_STR ? 0 : f->size) {
	case 1:
		memcpy(&v8, p, 1);
		return sgn ? (__u64)(__s8)v8 : v8;
	case 2:
		memcpy(&v16, p, 2);
		if (swap)
			v16 = bswap_16(v16);
		return sgn ? (__u64)(__s16)v16 : v16;
	case 4:
		memcpy(&v32, p, 4);
		if (swap)
			v32 = bswap_32(v32);
		return sgn ? (__u64)(__s32)v32 : v32;
	case 8:
		memcpy(&v64, p, 8);
		return swap ? bswap_64(v64) : v64;
	default:
		return 0;
	}
}

__u64 magnet_field_get(const void *base, const struct magnet_field *f)
{
	return field_read(base, f, false);
}

__u64 magnet_rec_field_value(const struct magnet_rec *r, unsigned int i)
{
	const struct magnet_field *f;
	unsigned int n;

	f = magnet_rec_fields(r, &n);
	if (!f || i >= n)
		return 0;
	if (r->kind == MAGNET_REC_FIELDS)
		return r->u.fields[i];
	return magnet_field_get(&r->u, &f[i]);
}

/*
 * Fill r->u.fields from the raw payload of a table-described type.  Returns
 * false (record left raw) for other types or a payload too short.
 */
bool magnet_decode_fields(const struct magnet_decoder *d, struct magnet_rec *r)
{
	const struct field_table *t;
	const unsigned char *p = r->payload;
	unsigned int i;

	if (r->payload_type >= NTABLES || !tables[r->payload_type].f)
		return false;
	t = &tables[r->payload_type];
	if (r->payload_len < t->size || t->n > MAGNET_REC_FIELDS_MAX)
		return false;
	for (i = 0; i < t->n; i++)
		r->u.fields[i] = field_read(p, &t->f[i], d->swapped);
	r->kind = MAGNET_REC_FIELDS;
	return true;
}

/*
 * Copy string field @f of @r into buf (NUL-terminated, at most len-1): from
 * the raw payload of a MAGNET_REC_FIELDS record, from the decoded struct
 * of the other kinds magnet_rec_fields() describes.
 */
const char *magnet_rec_field_str(const struct magnet_rec *r,
				 const struct magnet_field *f, char *buf,
				 size_t len)
{
	const char *base;
	size_t n, room;

	if (!len)
		return buf;
	buf[0] = '\0';
	if (f->kind != MAGNET_FIELD_STR)
		return buf;
	if (r->kind == MAGNET_REC_FIELDS) {
		base = r->payload;
		room = r->payload_len;
	} else {
		base = (const char *)&r->u;
		room = sizeof(r->u);
	}
	if ((size_t)f->offset + f->size > room)
		return buf;
	n = strnlen(base + f->offset, f->size);
	if (n >= len)
		n = len - 1;
	memcpy(buf, base + f->offset, n);
	buf[n] = '\0';
	return buf;
}
