// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Record decoding: validates the framing of a buffer of records, handles
 * the writer's byte order (from SYSINFO) and keeps the EVENTDEF table of
 * event names.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <byteswap.h>

#include "internal.h"

static const char *const core_names[] = {
	[MAGNET_EVENT_SYSINFO]	= "SYSINFO",
	[MAGNET_EVENT_LOST]	= "LOST",
	[MAGNET_EVENT_EVENTDEF]	= "EVENTDEF",
	[MAGNET_EVENT_SYNTH]	= "SYNTH",
	[MAGNET_EVENT_CORR]	= "CORR",
	[MAGNET_EVENT_APP]	= "APP",
};

struct magnet_decoder *magnet_decoder_new(void)
{
	return calloc(1, sizeof(struct magnet_decoder));
}

void magnet_decoder_free(struct magnet_decoder *d)
{
	free(d);
}

void magnet_decoder_reset(struct magnet_decoder *d)
{
	memset(d, 0, sizeof(*d));
}

const char *magnet_decoder_errmsg(const struct magnet_decoder *d)
{
	return d->errmsg;
}

bool magnet_decoder_swapped(const struct magnet_decoder *d)
{
	return d->swapped;
}

__attribute__((format(printf, 3, 4)))
static int corrupt(struct magnet_decoder *d, size_t off, const char *fmt, ...)
{
	char reason[MAGNET_ERRMSG_LEN - 32];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	snprintf(d->errmsg, sizeof(d->errmsg), "offset %llu: %s",
		 d->base + off, reason);
	return -EBADMSG;
}

static __u16 fix16(const struct magnet_decoder *d, __u16 v)
{
	return d->swapped ? bswap_16(v) : v;
}

static __u32 fix32(const struct magnet_decoder *d, __u32 v)
{
	return d->swapped ? bswap_32(v) : v;
}

static __u64 fix64(const struct magnet_decoder *d, __u64 v)
{
	return d->swapped ? bswap_64(v) : v;
}

const char *magnet_decoder_event_name(const struct magnet_decoder *d,
				      __u16 id, char *buf, size_t len)
{
	if (id < sizeof(core_names) / sizeof(core_names[0]) && core_names[id])
		snprintf(buf, len, "%s", core_names[id]);
	else if (id <= MAGNET_EVENT_MAX && d->ev[id].name[0])
		snprintf(buf, len, "%s", d->ev[id].name);
	else
		snprintf(buf, len, "event%u", id);
	return buf;
}

/* Byte order of the trace, from the payload of its first SYSINFO. */
static int detect_order(struct magnet_decoder *d, const unsigned char *rec,
			size_t left, size_t off)
{
	struct magnet_rec_hdr hdr;
	__u32 magic;

	if (left < MAGNET_REC_HDR_SIZE + sizeof(magic))
		return corrupt(d, off, "not a MAGNET trace: %zu bytes, too short for a SYSINFO record",
			       left);
	memcpy(&hdr, rec, sizeof(hdr));
	memcpy(&magic, rec + MAGNET_REC_HDR_SIZE, sizeof(magic));
	if (hdr.event != MAGNET_EVENT_SYSINFO)
		return corrupt(d, off, "first record is not SYSINFO (event %u): not a MAGNET trace",
			       hdr.event);
	if (magic == MAGNET_ENDIAN_MAGIC)
		d->swapped = false;
	else if (magic == MAGNET_ENDIAN_SWAPPED)
		d->swapped = true;
	else
		return corrupt(d, off, "not a MAGNET trace: bad endian magic 0x%08x in SYSINFO",
			       magic);
	return 0;
}

static int check_frame(struct magnet_decoder *d, const struct magnet_rec_hdr *h,
		       size_t left, size_t off)
{
	if (h->size < MAGNET_REC_HDR_SIZE)
		return corrupt(d, off, "record size %u < %u", h->size,
			       MAGNET_REC_HDR_SIZE);
	if (h->size % MAGNET_REC_ALIGN)
		return corrupt(d, off, "record size %u not a multiple of %u",
			       h->size, MAGNET_REC_ALIGN);
	if (h->size > MAGNET_REC_MAX)
		return corrupt(d, off, "record size %u > %u", h->size,
			       MAGNET_REC_MAX);
	if (h->size > left)
		return corrupt(d, off, "truncated record: needs %u bytes, %zu left",
			       h->size, left);
	if (h->event > MAGNET_EVENT_MAX)
		return corrupt(d, off, "event ID %u > %u", h->event,
			       MAGNET_EVENT_MAX);
	return 0;
}

static void read_hdr(const struct magnet_decoder *d, const void *p,
		     struct magnet_rec_hdr *h)
{
	memcpy(h, p, sizeof(*h));
	h->size = fix16(d, h->size);
	h->event = fix16(d, h->event);
	h->cpu = fix32(d, h->cpu);
	h->abstract_id = fix64(d, h->abstract_id);
	h->timestamp = fix64(d, h->timestamp);
	h->pid = fix32(d, h->pid);
	h->tgid = fix32(d, h->tgid);
}

static int decode_sysinfo(struct magnet_decoder *d, struct magnet_rec *r,
			  size_t off)
{
	struct magnet_sysinfo *si = &r->u.sysinfo;

	if (r->payload_len < sizeof(*si))
		return corrupt(d, off, "SYSINFO payload %zu bytes < %zu",
			       r->payload_len, sizeof(*si));
	memcpy(si, r->payload, sizeof(*si));
	si->endian = fix32(d, si->endian);
	if (si->endian != MAGNET_ENDIAN_MAGIC)
		return corrupt(d, off, "SYSINFO with bad endian magic 0x%08x",
			       si->endian);
	si->format_major = fix16(d, si->format_major);
	si->format_minor = fix16(d, si->format_minor);
	si->abi_version = fix32(d, si->abi_version);
	si->clock_id = fix32(d, si->clock_id);
	si->clock_hz = fix64(d, si->clock_hz);
	si->wall_ns_at_zero = fix64(d, si->wall_ns_at_zero);
	si->nr_cpus = fix32(d, si->nr_cpus);
	si->ptr_size = fix32(d, si->ptr_size);
	si->page_size = fix32(d, si->page_size);
	si->subbuf_size = fix32(d, si->subbuf_size);
	si->subbuf_count = fix32(d, si->subbuf_count);
	si->flags = fix32(d, si->flags);
	si->stream[sizeof(si->stream) - 1] = '\0';
	si->release[sizeof(si->release) - 1] = '\0';
	r->kind = MAGNET_REC_SYSINFO;
	return 0;
}

static int decode_lost(struct magnet_decoder *d, struct magnet_rec *r,
		       size_t off)
{
	if (r->payload_len < sizeof(r->u.lost))
		return corrupt(d, off, "LOST payload %zu bytes < %zu",
			       r->payload_len, sizeof(r->u.lost));
	memcpy(&r->u.lost, r->payload, sizeof(r->u.lost));
	r->u.lost.count = fix64(d, r->u.lost.count);
	r->kind = MAGNET_REC_LOST;
	return 0;
}

static int decode_eventdef(struct magnet_decoder *d, struct magnet_rec *r,
			   size_t off)
{
	struct magnet_eventdef *ed = &r->u.eventdef;
	struct magnet_evinfo *ev;

	if (r->payload_len < sizeof(*ed))
		return corrupt(d, off, "EVENTDEF payload %zu bytes < %zu",
			       r->payload_len, sizeof(*ed));
	memcpy(ed, r->payload, sizeof(*ed));
	ed->id = fix16(d, ed->id);
	ed->layer = fix16(d, ed->layer);
	ed->payload = fix16(d, ed->payload);
	ed->reserved = fix16(d, ed->reserved);
	ed->name[sizeof(ed->name) - 1] = '\0';
	if (ed->id > MAGNET_EVENT_MAX)
		return corrupt(d, off, "EVENTDEF for event ID %u > %u", ed->id,
			       MAGNET_EVENT_MAX);
	ev = &d->ev[ed->id];
	memcpy(ev->name, ed->name, sizeof(ev->name));
	ev->layer = ed->layer;
	ev->payload = ed->payload;
	r->kind = MAGNET_REC_EVENTDEF;
	return 0;
}

static void decode_net(struct magnet_decoder *d, struct magnet_rec *r)
{
	struct magnet_net_payload *np = &r->u.net;

	if (r->payload_len < sizeof(*np))
		return;		/* shorter than declared: leave it raw */
	memcpy(np, r->payload, sizeof(*np));
	np->len = fix32(d, np->len);
	np->ifindex = fix32(d, np->ifindex);
	np->proto = fix16(d, np->proto);
	np->flags = fix16(d, np->flags);
	np->gso_size = fix16(d, np->gso_size);
	np->gso_segs = fix16(d, np->gso_segs);
	r->kind = MAGNET_REC_NET;
}

static int decode_synth(struct magnet_decoder *d, struct magnet_rec *r,
			size_t off)
{
	struct magnet_synth_payload *sp = &r->u.synth;

	if (r->payload_len < sizeof(*sp))
		return corrupt(d, off, "SYNTH payload %zu bytes < %zu",
			       r->payload_len, sizeof(*sp));
	memcpy(sp, r->payload, sizeof(*sp));
	sp->name[sizeof(sp->name) - 1] = '\0';
	sp->period_start = fix64(d, sp->period_start);
	sp->period_end = fix64(d, sp->period_end);
	sp->count = fix64(d, sp->count);
	sp->min = fix64(d, sp->min);
	sp->max = fix64(d, sp->max);
	sp->sum_lo = fix64(d, sp->sum_lo);
	sp->sum_hi = fix64(d, sp->sum_hi);
	sp->sumsq_lo = fix64(d, sp->sumsq_lo);
	sp->sumsq_hi = fix64(d, sp->sumsq_hi);
	sp->mean = fix64(d, sp->mean);
	sp->variance = fix64(d, sp->variance);
	sp->cgroup = fix64(d, sp->cgroup);
	sp->abstract_id = fix64(d, sp->abstract_id);
	sp->event = fix32(d, sp->event);
	sp->cpu = fix32(d, sp->cpu);
	sp->pid = fix32(d, sp->pid);
	sp->tgid = fix32(d, sp->tgid);
	sp->group = fix32(d, sp->group);
	sp->flags = fix32(d, sp->flags);
	sp->quantity = fix32(d, sp->quantity);
	sp->reserved = fix32(d, sp->reserved);
	r->kind = MAGNET_REC_SYNTH;
	return 0;
}

static int decode_corr(struct magnet_decoder *d, struct magnet_rec *r,
		       size_t off)
{
	struct magnet_corr_rec *c = &r->u.corr;

	if (r->payload_len < sizeof(*c))
		return corrupt(d, off, "CORR payload %zu bytes < %zu",
			       r->payload_len, sizeof(*c));
	memcpy(c, r->payload, sizeof(*c));
	c->corr_id = fix32(d, c->corr_id);
	c->nsteps = fix16(d, c->nsteps);
	c->reached = fix16(d, c->reached);
	c->flags = fix32(d, c->flags);
	c->reserved = fix32(d, c->reserved);
	c->start = fix64(d, c->start);
	if (c->nsteps > MAGNET_CORR_STEPS_MAX || c->reached > c->nsteps ||
	    r->payload_len < sizeof(*c) +
			     c->nsteps * sizeof(struct magnet_corr_step))
		return corrupt(d, off, "CORR with %u steps (%u reached) in %zu payload bytes",
			       c->nsteps, c->reached, r->payload_len);
	r->kind = MAGNET_REC_CORR;
	return 0;
}

int magnet_rec_corr_step(const struct magnet_decoder *d,
			 const struct magnet_rec *r, unsigned int i,
			 struct magnet_corr_step *out)
{
	if (r->kind != MAGNET_REC_CORR || i >= r->u.corr.nsteps)
		return -EINVAL;
	memcpy(out, (const char *)r->payload + sizeof(struct magnet_corr_rec) +
		    i * sizeof(*out), sizeof(*out));
	out->delta_ns = fix64(d, out->delta_ns);
	out->count = fix32(d, out->count);
	out->bytes = fix32(d, out->bytes);
	out->event = fix16(d, out->event);
	return 0;
}

static const char *const app_call_names[] = {
	[MAGNET_APP_SEND]	= "send",
	[MAGNET_APP_SENDTO]	= "sendto",
	[MAGNET_APP_SENDMSG]	= "sendmsg",
	[MAGNET_APP_WRITE]	= "write",
	[MAGNET_APP_WRITEV]	= "writev",
	[MAGNET_APP_RECV]	= "recv",
	[MAGNET_APP_RECVFROM]	= "recvfrom",
	[MAGNET_APP_RECVMSG]	= "recvmsg",
	[MAGNET_APP_READ]	= "read",
	[MAGNET_APP_READV]	= "readv",
};

const char *magnet_app_call_name(__u32 call)
{
	return call < __MAGNET_APP_CALL_MAX ? app_call_names[call] : "?";
}

__u64 magnet_rec_time(const struct magnet_rec *r)
{
	return r->kind == MAGNET_REC_APP ? r->u.app.entry_ns : r->hdr.timestamp;
}

/* The kernel checked it when it was written; a trace file may be damaged. */
static int decode_app(struct magnet_decoder *d, struct magnet_rec *r,
		      size_t off)
{
	struct magnet_app_payload *a = &r->u.app;

	if (r->payload_len < sizeof(*a))
		return corrupt(d, off, "APP payload %zu bytes < %zu",
			       r->payload_len, sizeof(*a));
	memcpy(a, r->payload, sizeof(*a));
	a->entry_ns = fix64(d, a->entry_ns);
	a->exit_ns = fix64(d, a->exit_ns);
	a->ret = (__s64)fix64(d, (__u64)a->ret);
	a->req = fix64(d, a->req);
	a->fd = (__s32)fix32(d, (__u32)a->fd);
	a->call = fix16(d, a->call);
	a->flags = fix16(d, a->flags);
	a->msg_flags = fix32(d, a->msg_flags);
	a->reserved = fix32(d, a->reserved);
	if (a->call >= __MAGNET_APP_CALL_MAX)
		return corrupt(d, off, "APP record with unknown call %u", a->call);
	if (a->entry_ns > a->exit_ns)
		return corrupt(d, off, "APP record exits (%llu) before it enters (%llu)",
			       (unsigned long long)a->exit_ns,
			       (unsigned long long)a->entry_ns);
	r->kind = MAGNET_REC_APP;
	return 0;
}

static int decode_payload(struct magnet_decoder *d, struct magnet_rec *r,
			  size_t off)
{
	const struct magnet_evinfo *ev;

	switch (r->hdr.event) {
	case MAGNET_EVENT_SYSINFO:
		return decode_sysinfo(d, r, off);
	case MAGNET_EVENT_LOST:
		return decode_lost(d, r, off);
	case MAGNET_EVENT_EVENTDEF:
		return decode_eventdef(d, r, off);
	case MAGNET_EVENT_SYNTH:
		return decode_synth(d, r, off);
	case MAGNET_EVENT_CORR:
		return decode_corr(d, r, off);
	case MAGNET_EVENT_APP:
		return decode_app(d, r, off);
	}
	ev = &d->ev[r->hdr.event];
	r->layer = ev->layer;
	r->payload_type = ev->payload;
	if (ev->name[0] && ev->payload == MAGNET_PAYLOAD_NET)
		decode_net(d, r);
	else if (ev->name[0])
		magnet_decode_fields(d, r);
	return 0;
}

int magnet_rec_next(struct magnet_decoder *d, const void *buf, size_t len,
		    size_t *off, struct magnet_rec *out)
{
	const unsigned char *rec;
	size_t left;
	int err;

	if (*off >= len)
		return 0;
	rec = (const unsigned char *)buf + *off;
	left = len - *off;
	if (!d->started) {
		err = detect_order(d, rec, left, *off);
		if (err)
			return err;
	}
	if (left < MAGNET_REC_HDR_SIZE)
		return corrupt(d, *off, "truncated record: needs %u bytes, %zu left",
			       MAGNET_REC_HDR_SIZE, left);

	memset(out, 0, sizeof(*out));
	read_hdr(d, rec, &out->hdr);
	err = check_frame(d, &out->hdr, left, *off);
	if (err)
		return err;
	out->payload = rec + MAGNET_REC_HDR_SIZE;
	out->payload_len = out->hdr.size - MAGNET_REC_HDR_SIZE;
	err = decode_payload(d, out, *off);
	if (err)
		return err;
	magnet_decoder_event_name(d, out->hdr.event, out->name,
				  sizeof(out->name));
	d->started = true;
	d->errmsg[0] = '\0';
	*off += out->hdr.size;
	return 1;
}
