/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Filters: the table consulted by magnet_add() (kmod/filter.c) and its
 * control (kmod/filter_nl.c).  docs/FILTERS.md.
 */
#ifndef _MAGNET_FILTER_H
#define _MAGNET_FILTER_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/rcupdate.h>
#include "filter_core.h"
#include "internal.h"

struct magnet_filter_cnt {
	u64 matched;
	u64 delivered;
	u64 dropped;
};

struct magnet_filter {
	struct hlist_node hnode;	/* table chain, RCU */
	struct list_head node;		/* magnet_filters, db.lock */
	char name[MAGNET_NAME_MAX];
	struct magnet_fkey key;
	s32 priority;
	u32 seq;			/* creation order */
	unsigned int spec;		/* keys given */
	u32 action;			/* enum magnet_filter_action */
	u32 every;			/* 1 in N; 0 or 1: all */
	u64 period;			/* ns; 0: no time sampling */
	atomic64_t seen;		/* count sampler */
	atomic64_t next_ns;		/* time sampler */
	unsigned int nr_streams;	/* 0: the point's own stream */
	struct magnet_stream *streams[MAGNET_FILTER_STREAMS_MAX];
	struct magnet_filter_cnt __percpu *cnt;
};

/* All filters, oldest first; db.lock. */
extern struct list_head magnet_filters;

/* filter.c; all with db.lock held except magnet_filter_add() */
struct magnet_filter *magnet_filter_alloc(void);
void magnet_filter_free(struct magnet_filter *f);
struct magnet_filter *magnet_filter_find(const char *name);
unsigned int magnet_filter_count(void);
void magnet_filter_insert(struct magnet_filter *f);
void magnet_filter_remove(struct magnet_filter *f);
void magnet_filter_read_cnt(struct magnet_filter *f,
			    struct magnet_filter_cnt *sum);

#endif /* _MAGNET_FILTER_H */
