/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Synthesizers: statistics of a point's events per key and per period,
 * computed on the fast path (kmod/synth.c), emitted by magnetk as SYNTH
 * records, controlled over netlink (kmod/synth_nl.c).  docs/SYNTH.md.
 */
#ifndef _MAGNET_SYNTH_H
#define _MAGNET_SYNTH_H

#include <linux/list.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include "filter_core.h"
#include "synth_core.h"
#include "internal.h"

/*
 * One key's state.  The key fields are written once, before the slot
 * that points here is published; everything else under @lock.
 */
struct magnet_synth_key {
	raw_spinlock_t lock;
	struct magnet_fkey key;		/* group fields, the others 0 */
	u64 last_ts;			/* interval: the key's last event */
	bool has_last;
	bool done_valid;		/* @done waits for magnetk */
	u64 cp;				/* period of @cur */
	u64 dp_first, dp_last;		/* periods of @done */
	struct magnet_moments cur;
	struct magnet_moments done;
	u64 total_count;		/* samples since creation */
	u64 total_sum_lo, total_sum_hi;
};

struct magnet_synth_cnt {
	u64 matched;
	u64 overflow;
	u64 shrt;
	u64 nmi;
	u64 reordered;
	u64 late;
	u64 missed;	/* the hook's misses, nested events: magnet_add_lost() */
};

struct magnet_synth {
	/* pt->synths, or with @owner the owners' hash (synth.c); RCU */
	struct hlist_node pnode;
	struct list_head node;		/* magnet_synths, db.lock */
	char name[MAGNET_NAME_MAX];
	struct magnet_point *pt;
	struct magnet_fkey match;	/* match keys (no EVENT) */
	u32 group;			/* MAGNET_SYNTH_K_* */
	u32 quantity;
	u32 off, width;
	u64 period;
	u64 start;			/* ns: period 0 starts here */
	u64 end;			/* ns: events from here on ignored */
	u64 next_due;			/* ns: harvest when now >= this */
	struct magnet_stream *stream;	/* holds a reference */
	u32 max_keys;
	u32 hmask;
	u32 *slots;			/* 0 empty, else key index + 1 */
	struct magnet_synth_key *keys;
	u32 nr_keys;			/* under ins_lock; read acquire */
	raw_spinlock_t ins_lock;
	struct magnet_synth_cnt __percpu *cnt;
	u64 records;			/* db.lock */
	u64 records_lost;
	/*
	 * Internal synthesizers (kmod/sockstat.c): no @stream (records go
	 * nowhere, not listed, not counted toward MAGNET_SYNTHS_MAX);
	 * @gone, if set, is called under db.lock just before @sy is freed.
	 */
	void (*gone)(struct magnet_synth *sy);
	void *priv;
	/*
	 * Internal too: with @flag_mask, only the events whose u16 payload
	 * field at @flag_off, masked, equals @flag_want (sockstat: the
	 * successful calls apart from the failed ones, MAGNET_NET_F_ERROR).
	 */
	u16 flag_off, flag_mask, flag_want;
	/*
	 * Internal too: with @owner, only the events magnet_add_owned() says
	 * are about that socket (sockstat: a watched socket's inode number
	 * can repeat on a busy machine, its struct sock cannot while the
	 * watch holds it).  A pointer compared, never read.  Such
	 * synthesizers are found by owner, not on pt->synths: an event
	 * checks those of its own socket only, however many sockets are
	 * watched (docs/SYNTH.md, "Fast path and cost").
	 */
	const struct sock *owner;
};

extern struct list_head magnet_synths;

/* synth.c; db.lock held */
struct magnet_synth *magnet_synth_alloc(u32 max_keys);
/* no lock needed: also in a sockstat caller's own context */
struct magnet_synth *magnet_synth_alloc_gfp(u32 max_keys, gfp_t gfp);
void magnet_synth_free(struct magnet_synth *sy);
struct magnet_synth *magnet_synth_find(const char *name);
unsigned int magnet_synth_count(void);
int magnet_synth_insert(struct magnet_synth *sy,
			struct netlink_ext_ack *extack);
/* several at once: one grace period to insert, two to remove */
int magnet_synth_insert_many(struct magnet_synth *const *sys, unsigned int n,
			     struct netlink_ext_ack *extack);
void magnet_synth_remove(struct magnet_synth *sy);
void magnet_synth_remove_many(struct magnet_synth *const *sys, unsigned int n);
void magnet_synth_read_cnt(struct magnet_synth *sy,
			   struct magnet_synth_cnt *sum);
u32 magnet_synth_nr_keys(struct magnet_synth *sy);
/* the open period's values of key @i (false: nothing to report) */
void magnet_synth_key_values(struct magnet_synth *sy, u32 i,
			     struct magnet_synth_key *out, u64 *open_start);
int magnet_synth_key_find(struct magnet_synth *sy,
			  const struct magnet_fkey *k);

#endif /* _MAGNET_SYNTH_H */
