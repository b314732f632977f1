// SPDX-License-Identifier: GPL-2.0-only
/*
 * The message iterator of source.magnet.trace: libmagnet's sorted reader
 * hands out the records of every input in time order (magnet_rec_time());
 * each becomes messages on the stream of its CPU:
 *
 *   SYSINFO   the first one makes the trace IR (meta.c); later ones (more
 *             inputs) must use the same clock
 *   EVENTDEF  names event IDs (the decoder keeps them)
 *   LOST      ends the CPU's packet and reserves a place in the queue for
 *             a discarded events message; the CPU's next event fills it, in
 *             a packet of its own: CTF 1.8 counts discarded events per
 *             packet, and sink.ctf.fs wants a discarded events message to
 *             span from one packet's end to the next one's end
 *             (babeltrace2-sink.ctf.fs(7)), while babeltrace2's muxer wants
 *             the message at its beginning's place in time.  No messages
 *             leave the queue past a reserved place.  The packet is not
 *             empty: Trace Compass stops reading a CTF stream at an empty
 *             packet that is not its first, silently.  A CPU with no event
 *             after the LOST record within MBT_LOST_WAIT queued messages,
 *             or before the end, gets an empty packet then.
 *   others    an event message, after the stream's beginning and its first
 *             packet's beginning when they are the CPU's first record
 *
 * At the end every open packet and stream ends at the time of the last
 * record.  A corrupt or truncated input keeps its records before the bad
 * one: they are all delivered, then the iterator fails with the
 * decoder's message ("FILE: offset N: ..."), as magnetctl dump does.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "mbt.h"

struct mbt_cpu {
	bt_stream *stream;
	bt_packet *packet;		/* open packet, or NULL */
	bool had_packet;		/* a packet was opened on the stream */
	uint64_t end_ts;		/* the last packet's end */
	uint64_t lost;			/* discarded, their message's place: */
	uint64_t lost_seq;		/* its sequence number in the queue */
	uint64_t lost_ts;		/* from the packet end before them */
};

/* queued messages after a LOST record's place before it is given up */
#define MBT_LOST_WAIT	65536

struct mbt_iter {
	struct mbt_comp *comp;
	bt_self_message_iterator *self;
	struct mbt_meta meta;
	bool have_meta;
	struct mbt_cpu *cpus;
	unsigned int nr_cpus;
	uint64_t last_ts;
	/*
	 * messages made and not yet handed out (FIFO); NULL: a place kept
	 * for a discarded events message; @qseq numbers the head
	 */
	const bt_message **q;
	size_t qhead, qlen, qcap;
	uint64_t qseq;
	bool ended;			/* no more records */
	int bad;			/* the reader's error at the end */
};

#define ERR(it, fmt, ...)						\
	bt_current_thread_error_append_cause_from_message_iterator(	\
		(it)->self, __FILE__, __LINE__, fmt, ##__VA_ARGS__)

/* Queue @msg, or keep a place (@msg NULL, @place set). */
static int __push(struct mbt_iter *it, const bt_message *msg, bool place)
{
	const bt_message **nq;
	size_t i, cap;

	if (!msg && !place)
		return -ENOMEM;
	if (it->qlen == it->qcap) {
		cap = it->qcap ? it->qcap * 2 : 16;
		nq = malloc(cap * sizeof(*nq));
		if (!nq) {
			bt_message_put_ref(msg);
			return -ENOMEM;
		}
		for (i = 0; i < it->qlen; i++)
			nq[i] = it->q[(it->qhead + i) % it->qcap];
		free(it->q);
		it->q = nq;
		it->qcap = cap;
		it->qhead = 0;
	}
	it->q[(it->qhead + it->qlen) % it->qcap] = msg;
	it->qlen++;
	return 0;
}

static int push(struct mbt_iter *it, const bt_message *msg)
{
	return __push(it, msg, false);
}

static const bt_message *pop(struct mbt_iter *it)
{
	const bt_message *msg = it->q[it->qhead];

	it->qhead = (it->qhead + 1) % it->qcap;
	it->qlen--;
	it->qseq++;
	return msg;
}

/* The stream of CPU @cpu, begun (its first message queued) on first use. */
static struct mbt_cpu *cpu_stream(struct mbt_iter *it, unsigned int cpu)
{
	struct mbt_cpu *c;
	char name[32];

	if (cpu >= it->nr_cpus) {
		unsigned int n = cpu + 1;

		c = realloc(it->cpus, n * sizeof(*c));
		if (!c)
			return NULL;
		memset(c + it->nr_cpus, 0, (n - it->nr_cpus) * sizeof(*c));
		it->cpus = c;
		it->nr_cpus = n;
	}
	c = &it->cpus[cpu];
	if (c->stream)
		return c;
	c->stream = bt_stream_create_with_id(it->meta.sc, it->meta.trace, cpu);
	if (!c->stream)
		return NULL;
	snprintf(name, sizeof(name), "cpu%u", cpu);
	if (bt_stream_set_name(c->stream, name) ||
	    push(it, bt_message_stream_beginning_create(it->self, c->stream)))
		return NULL;
	return c;
}

static int packet_begin(struct mbt_iter *it, struct mbt_cpu *c,
			unsigned int cpu, uint64_t ts)
{
	bt_field *ctx;

	c->packet = bt_packet_create(c->stream);
	if (!c->packet)
		return -ENOMEM;
	c->had_packet = true;
	ctx = bt_packet_borrow_context_field(c->packet);
	bt_field_integer_unsigned_set_value(
		bt_field_structure_borrow_member_field_by_index(ctx, 0), cpu);
	return push(it, bt_message_packet_beginning_create_with_default_clock_snapshot(
			it->self, c->packet, ts));
}

static int packet_end(struct mbt_iter *it, struct mbt_cpu *c, uint64_t ts)
{
	int err = push(it, bt_message_packet_end_create_with_default_clock_snapshot(
			       it->self, c->packet, ts));

	bt_packet_put_ref(c->packet);
	c->packet = NULL;
	c->end_ts = ts;
	return err;
}

/*
 * A LOST record ends CPU @cpu's packet (a first packet, possibly empty,
 * if it had none: the discarded events need a packet before them) and
 * keeps the place of their message until the CPU's next event
 * (lost_flush()); a second one before it adds its count.
 */
static int on_lost(struct mbt_iter *it, const struct magnet_rec *r,
		   uint64_t ts)
{
	unsigned int cpu = r->hdr.cpu;
	struct mbt_cpu *c = cpu_stream(it, cpu);

	if (!c)
		return -ENOMEM;
	if (!c->had_packet && packet_begin(it, c, cpu, ts))
		return -ENOMEM;
	if (c->packet && packet_end(it, c, ts))
		return -ENOMEM;
	if (!c->lost) {
		if (__push(it, NULL, true))
			return -ENOMEM;
		c->lost_seq = it->qseq + it->qlen - 1;
		/* sink.ctf.fs: from the end of the packet before the loss */
		c->lost_ts = c->end_ts;
	}
	c->lost += r->u.lost.count;
	return 0;
}

/*
 * The discarded events of @c, into their kept place, spanning to @ts,
 * then a packet begun at @ts: the packet whose end (@ts: it holds the
 * next event alone, or nothing) the message spans to, as sink.ctf.fs
 * wants.
 */
static int lost_flush(struct mbt_iter *it, struct mbt_cpu *c, unsigned int cpu,
		      uint64_t ts)
{
	bt_message *de = bt_message_discarded_events_create_with_default_clock_snapshots(
		it->self, c->stream, c->lost_ts, ts);

	if (!de)
		return -ENOMEM;
	bt_message_discarded_events_set_count(de, c->lost);
	it->q[(it->qhead + (c->lost_seq - it->qseq)) % it->qcap] = de;
	c->lost = 0;
	return packet_begin(it, c, cpu, ts);
}

/*
 * The queue's head waits for a CPU's next event too long (or the input
 * ended): that CPU's discarded events end now, in an empty packet.
 */
static int lost_give_up(struct mbt_iter *it)
{
	unsigned int i;

	for (i = 0; i < it->nr_cpus; i++) {
		struct mbt_cpu *c = &it->cpus[i];

		if (c->lost && c->lost_seq == it->qseq)
			return lost_flush(it, c, i, it->last_ts) ?:
			       packet_end(it, c, it->last_ts);
	}
	return -EINVAL;		/* not reached: a place has its CPU */
}

static int on_event(struct mbt_iter *it, const struct magnet_rec *r,
		    uint64_t ts)
{
	const char *why = "out of memory";
	bt_event_class *ec = mbt_meta_event_class(&it->meta, r, &why);
	struct mbt_cpu *c;
	bt_message *msg;
	uint64_t lost;

	if (!ec) {
		ERR(it, "%s: event %u (%s): %s", it->comp->first_input,
		    r->hdr.event, r->name, why);
		return -EINVAL;
	}
	c = cpu_stream(it, r->hdr.cpu);
	if (!c)
		return -ENOMEM;
	lost = c->lost;
	if (lost ? lost_flush(it, c, r->hdr.cpu, ts) :
	    !c->packet && packet_begin(it, c, r->hdr.cpu, ts))
		return -ENOMEM;
	msg = bt_message_event_create_with_packet_and_default_clock_snapshot(
		it->self, ec, c->packet, ts);
	if (!msg)
		return -ENOMEM;
	if (mbt_meta_fill(&it->meta, bt_message_event_borrow_event(msg), r,
			  magnet_sorted_decoder(it->comp->st))) {
		bt_message_put_ref(msg);
		return -ENOMEM;
	}
	/* the packet after a loss holds this event alone (on_lost()) */
	return push(it, msg) ?: lost ? packet_end(it, c, ts) : 0;
}

static int on_sysinfo(struct mbt_iter *it, const struct magnet_sysinfo *si)
{
	bt_self_component *self =
		bt_self_message_iterator_borrow_component(it->self);
	const char *why;

	if (it->have_meta) {
		if (si->clock_id == it->meta.clock_id)
			return 0;
		ERR(it, "inputs with different clocks (%s and %s) cannot share one trace",
		    mbt_clock_name(it->meta.clock_id),
		    mbt_clock_name(si->clock_id));
		return -EINVAL;
	}
	if (mbt_meta_init(&it->meta, self, si, &why)) {
		mbt_meta_fini(&it->meta);	/* what was made before the failure */
		ERR(it, "%s", why);
		return -ENOMEM;
	}
	it->have_meta = true;
	return 0;
}

/* Every open packet and stream ends at the last record's time. */
static int end_all(struct mbt_iter *it)
{
	unsigned int i;

	for (i = 0; i < it->nr_cpus; i++) {
		struct mbt_cpu *c = &it->cpus[i];

		if (!c->stream)
			continue;
		/* a loss after the CPU's last event: an empty last packet */
		if (c->lost && lost_flush(it, c, i, it->last_ts))
			return -ENOMEM;
		if ((c->packet && packet_end(it, c, it->last_ts)) ||
		    push(it, bt_message_stream_end_create(it->self, c->stream)))
			return -ENOMEM;
		bt_stream_put_ref(c->stream);
		c->stream = NULL;
	}
	return 0;
}

/* Queue the messages of the next record (or the end). 0 or -errno. */
static int advance(struct mbt_iter *it)
{
	const struct magnet_rec *r;
	uint64_t ts;
	int ret = magnet_sorted_next(it->comp->st, &r);

	if (ret <= 0) {
		it->ended = true;
		it->bad = ret;
		return end_all(it);
	}
	if (r->kind == MAGNET_REC_SYSINFO)
		return on_sysinfo(it, &r->u.sysinfo);
	if (r->kind == MAGNET_REC_EVENTDEF)
		return 0;
	/* nr_cpu_ids is below this; a larger CPU is a corrupt record */
	if (r->hdr.cpu >= MBT_MAX_CPUS) {
		ERR(it, "%s: record of event %u on CPU %u: not a CPU (corrupt trace)",
		    it->comp->first_input, r->hdr.event, r->hdr.cpu);
		return -EINVAL;
	}
	/* the reader sorts by time; never let a message go back in time */
	ts = magnet_rec_time(r);
	if (ts < it->last_ts)
		ts = it->last_ts;
	it->last_ts = ts;
	if (r->kind == MAGNET_REC_LOST)
		return on_lost(it, r, ts);
	return on_event(it, r, ts);
}

bt_message_iterator_class_next_method_status
mbt_iter_next(bt_self_message_iterator *self, bt_message_array_const msgs,
	      uint64_t capacity, uint64_t *count)
{
	struct mbt_iter *it = bt_self_message_iterator_get_data(self);
	int err;

	*count = 0;
	while (*count < capacity) {
		if (it->qlen && it->q[it->qhead]) {
			msgs[(*count)++] = pop(it);
			continue;
		}
		/* end_all() fills every kept place: ended, the head is a message */
		if (it->ended)
			break;
		if (it->qlen >= MBT_LOST_WAIT)
			err = lost_give_up(it);
		else
			err = advance(it);
		if (err)
			goto fail;
	}
	if (*count)
		return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_OK;
	if (it->bad) {
		ERR(it, "%s", magnet_sorted_errmsg(it->comp->st));
		return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_ERROR;
	}
	return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_END;
fail:
	/* an error hands out no message */
	while (*count)
		bt_message_put_ref(msgs[--*count]);
	if (err != -ENOMEM)
		return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_ERROR;
	ERR(it, "out of memory");
	return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_MEMORY_ERROR;
}

bt_message_iterator_class_initialize_method_status
mbt_iter_init(bt_self_message_iterator *self,
	      bt_self_message_iterator_configuration *config,
	      bt_self_component_port_output *port)
{
	bt_self_component *comp = bt_self_message_iterator_borrow_component(self);
	struct mbt_comp *mc = bt_self_component_get_data(comp);
	struct mbt_iter *it;

	(void)config;
	(void)port;
	if (mc->iterated) {
		bt_current_thread_error_append_cause_from_message_iterator(self,
			__FILE__, __LINE__,
			"source.magnet.trace reads its inputs once: one message iterator per component");
		return BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
	}
	it = calloc(1, sizeof(*it));
	if (!it)
		return BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
	it->comp = mc;
	it->self = self;
	mc->iterated = true;
	bt_self_message_iterator_set_data(self, it);
	return BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

void mbt_iter_fini(bt_self_message_iterator *self)
{
	struct mbt_iter *it = bt_self_message_iterator_get_data(self);
	unsigned int i;

	if (!it)
		return;
	while (it->qlen)
		bt_message_put_ref(pop(it));
	free(it->q);
	for (i = 0; i < it->nr_cpus; i++) {
		bt_packet_put_ref(it->cpus[i].packet);
		bt_stream_put_ref(it->cpus[i].stream);
	}
	free(it->cpus);
	if (it->have_meta)
		mbt_meta_fini(&it->meta);
	free(it);
}
