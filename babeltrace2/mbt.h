/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The babeltrace2 source component class source.magnet.trace: MAGNET
 * trace files (magnetctl record's output) as babeltrace2 messages.
 *
 *   plugin.c  the plugin, the component (parameters) and its queries
 *   meta.c    the trace IR: clock class from SYSINFO, a stream per CPU,
 *             an event class per event ID and its fields
 *   iter.c    the message iterator: records in time order to messages
 */
#ifndef MBT_H
#define MBT_H

#include <stdbool.h>
#include <stdint.h>
#include <babeltrace2/babeltrace.h>
#include <magnet/libmagnet.h>

#define MBT_NR_EVENTS	(MAGNET_EVENT_MAX + 1)
#define MBT_MAX_CPUS	65536	/* a stream per CPU below this */

/* What the component holds between its initialization and its iterator. */
struct mbt_comp {
	bt_self_component *self;
	struct magnet_sorted *st;	/* the inputs, read and sorted */
	char *first_input;		/* for messages */
	bool iterated;			/* one iterator per component */
};

/* The trace IR of one component's trace, made from its SYSINFO records. */
struct mbt_meta {
	bt_trace_class *tc;
	bt_trace *trace;
	bt_stream_class *sc;
	bt_clock_class *cc;
	__u32 clock_id;
	bt_event_class *ec[MBT_NR_EVENTS];
	unsigned char ec_kind[MBT_NR_EVENTS];	/* enum magnet_rec_kind */
	unsigned short ec_payload[MBT_NR_EVENTS];
};

/* iter.c: the message iterator's methods */
bt_message_iterator_class_next_method_status
mbt_iter_next(bt_self_message_iterator *self, bt_message_array_const msgs,
	      uint64_t capacity, uint64_t *count);
bt_message_iterator_class_initialize_method_status
mbt_iter_init(bt_self_message_iterator *self,
	      bt_self_message_iterator_configuration *config,
	      bt_self_component_port_output *port);
void mbt_iter_fini(bt_self_message_iterator *self);

/* meta.c: 0, or -ENOMEM / -EINVAL with *why set (a static string). */
int mbt_meta_init(struct mbt_meta *m, bt_self_component *self,
		  const struct magnet_sysinfo *si, const char **why);
void mbt_meta_fini(struct mbt_meta *m);
/* The event class of @r's event ID, made at its first record. */
bt_event_class *mbt_meta_event_class(struct mbt_meta *m,
				     const struct magnet_rec *r,
				     const char **why);
/* Set the fields of @ev (the event of record @r). 0 or -ENOMEM. */
int mbt_meta_fill(const struct mbt_meta *m, bt_event *ev,
		  const struct magnet_rec *r,
		  const struct magnet_decoder *dec);
/* The name of clock @id ("monotonic", "local"). */
const char *mbt_clock_name(__u32 id);

#endif
