/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The matching core of the correlators (docs/CORRELATE.md), shared by the
 * kernel (kmod/corr.c) and the user-space unit tests
 * (tests/unit/test_corr.c).  No locking, no allocation (the caller hands
 * in the chain table and the hash buckets), nothing kernel-specific: it
 * can be reused wherever events with an abstract ID must be paired along
 * a chain of points (e.g. per-socket layer times).
 *
 * Events are fed in timestamp order.  Per key (abstract ID) at most one
 * chain is open.  Rules, for an event of step j of the chain with key K
 * and timestamp t (steps 0..n-1):
 *
 *  0. Chains whose first event is more than @window ns before t are
 *     closed first, as EXPIRED.
 *  1. j == 0: an open chain of K is closed as RESTART; a new chain opens
 *     with this event (if the table is full: counted as overflow, and the
 *     key's later events are stray).
 *  2. j > 0 and no chain of K is open: the event is stray.
 *  3. j <= the chain's last reached step: the event joins that step
 *     (count and bytes grow; its time is not used): the rest of a
 *     segmented send (several IP packets or frames for one send).
 *  4. j == last reached + 1: step j is reached at t; if it is the last
 *     step the chain is complete and closed.
 *  5. j > last reached + 1: a step was skipped (e.g. TCP held the data
 *     back and sent it with a later write): the chain is closed as SKIP
 *     and the event is stray.
 *
 * Every closed chain is handed to @emit with the steps reached and its
 * flags (0: complete).  Nothing is dropped silently: every event is
 * counted as joining a chain, stray or overflow.
 */
#ifndef _MAGNET_CORR_CORE_H
#define _MAGNET_CORR_CORE_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#else
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <linux/types.h>
#ifndef _MAGNET_KTYPES
#define _MAGNET_KTYPES
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef int32_t s32;
typedef uint64_t u64;
#endif
#endif
#include "../include/uapi/magnet.h"

#define MCC_NONE	(-1)

struct mcc_chain {
	u64 key;
	u64 ts[MAGNET_CORR_STEPS_MAX];	/* first event of each step */
	u32 count[MAGNET_CORR_STEPS_MAX];
	u32 bytes[MAGNET_CORR_STEPS_MAX];
	u16 event[MAGNET_CORR_STEPS_MAX];
	u32 pid;
	u32 tgid;
	u32 cur;			/* last step reached */
	s32 hnext;			/* hash bucket chain */
	s32 prev, next;			/* open chains by start time; free list */
};

struct mcc_stats {
	u64 events;		/* events fed */
	u64 completed;
	u64 expired;
	u64 partial;		/* RESTART, SKIP, FLUSH */
	u64 overflow;		/* chains not opened: table full */
	u64 stray;		/* events that joined no chain */
	u64 late;		/* events older than one fed before */
};

/* @flags: MAGNET_CORR_F_*, 0 for a complete chain */
typedef void (*mcc_emit_fn)(void *arg, const struct mcc_chain *c,
			    u32 reached, u32 flags);

struct mcc {
	/* set by the caller before mcc_init() */
	u32 nsteps;
	u8 nalt[MAGNET_CORR_STEPS_MAX];
	u16 alt[MAGNET_CORR_STEPS_MAX][MAGNET_CORR_ALTS_MAX];
	u64 window;
	u32 cap;			/* entries of @c */
	struct mcc_chain *c;
	u32 nbuckets;			/* power of two, entries of @hash */
	s32 *hash;
	mcc_emit_fn emit;
	void *arg;
	/* state */
	s32 free, head, tail;
	u32 pending;
	u64 last_ts;
	struct mcc_stats st;
};

static inline void mcc_init(struct mcc *m)
{
	u32 i;

	for (i = 0; i < m->nbuckets; i++)
		m->hash[i] = MCC_NONE;
	for (i = 0; i < m->cap; i++)
		m->c[i].next = i + 1 < m->cap ? (s32)(i + 1) : MCC_NONE;
	m->free = m->cap ? 0 : MCC_NONE;
	m->head = m->tail = MCC_NONE;
	m->pending = 0;
	m->last_ts = 0;
	memset(&m->st, 0, sizeof(m->st));
}

/* The step @event makes, or -1. */
static inline int mcc_step_of(const struct mcc *m, u16 event)
{
	u32 i, k;

	for (i = 0; i < m->nsteps; i++)
		for (k = 0; k < m->nalt[i]; k++)
			if (m->alt[i][k] == event)
				return i;
	return -1;
}

static inline u32 mcc_bucket(const struct mcc *m, u64 key)
{
	return (u32)((key * 0x9E3779B97F4A7C15ull) >> 32) & (m->nbuckets - 1);
}

static inline s32 mcc_lookup(const struct mcc *m, u64 key)
{
	s32 i;

	for (i = m->hash[mcc_bucket(m, key)]; i != MCC_NONE; i = m->c[i].hnext)
		if (m->c[i].key == key)
			return i;
	return MCC_NONE;
}

static inline void mcc_close(struct mcc *m, s32 i, u32 flags)
{
	struct mcc_chain *c = &m->c[i];
	s32 *pp = &m->hash[mcc_bucket(m, c->key)];

	if (!flags)
		m->st.completed++;
	else if (flags & MAGNET_CORR_F_EXPIRED)
		m->st.expired++;
	else
		m->st.partial++;
	if (m->emit)
		m->emit(m->arg, c, c->cur + 1, flags);
	while (*pp != i)
		pp = &m->c[*pp].hnext;
	*pp = c->hnext;
	if (c->prev != MCC_NONE)
		m->c[c->prev].next = c->next;
	else
		m->head = c->next;
	if (c->next != MCC_NONE)
		m->c[c->next].prev = c->prev;
	else
		m->tail = c->prev;
	c->next = m->free;
	m->free = i;
	m->pending--;
}

static inline bool mcc_too_old(const struct mcc *m, u64 start, u64 now)
{
	return now > start && now - start > m->window;
}

/* Close the chains that can no longer complete at time @now. */
static inline void mcc_expire(struct mcc *m, u64 now)
{
	while (m->head != MCC_NONE && mcc_too_old(m, m->c[m->head].ts[0], now))
		mcc_close(m, m->head, MAGNET_CORR_F_EXPIRED);
}

/* Close every open chain, oldest first (deletion: MAGNET_CORR_F_FLUSH). */
static inline void mcc_flush(struct mcc *m, u32 flags)
{
	while (m->head != MCC_NONE)
		mcc_close(m, m->head, flags);
}

static inline void mcc_step_set(struct mcc_chain *c, u32 j, u16 event, u64 ts,
				u32 bytes)
{
	c->ts[j] = ts;
	c->count[j] = 1;
	c->bytes[j] = bytes;
	c->event[j] = event;
}

static inline void mcc_open(struct mcc *m, u16 event, u64 key, u64 ts,
			    u32 pid, u32 tgid, u32 bytes)
{
	struct mcc_chain *c;
	s32 i = m->free;
	u32 b;

	if (i == MCC_NONE) {
		m->st.overflow++;
		return;
	}
	c = &m->c[i];
	m->free = c->next;
	memset(c, 0, sizeof(*c));
	c->key = key;
	c->pid = pid;
	c->tgid = tgid;
	mcc_step_set(c, 0, event, ts, bytes);
	b = mcc_bucket(m, key);
	c->hnext = m->hash[b];
	m->hash[b] = i;
	c->prev = m->tail;
	c->next = MCC_NONE;
	if (m->tail != MCC_NONE)
		m->c[m->tail].next = i;
	else
		m->head = i;
	m->tail = i;
	m->pending++;
}

/* Feed one event (in timestamp order). */
static inline void mcc_event(struct mcc *m, u16 event, u64 key, u64 ts,
			     u32 pid, u32 tgid, u32 bytes)
{
	struct mcc_chain *c;
	int j = mcc_step_of(m, event);
	s32 i;

	m->st.events++;
	if (ts < m->last_ts)
		m->st.late++;
	else
		m->last_ts = ts;
	mcc_expire(m, ts);
	if (j < 0) {
		m->st.stray++;
		return;
	}
	i = mcc_lookup(m, key);
	if (j == 0) {
		if (i != MCC_NONE)
			mcc_close(m, i, MAGNET_CORR_F_RESTART);
		mcc_open(m, event, key, ts, pid, tgid, bytes);
		return;
	}
	if (i == MCC_NONE) {
		m->st.stray++;
		return;
	}
	c = &m->c[i];
	if ((u32)j <= c->cur) {
		c->count[j]++;
		c->bytes[j] = c->bytes[j] + bytes < c->bytes[j] ?
			      ~0u : c->bytes[j] + bytes;
		return;
	}
	if ((u32)j > c->cur + 1) {
		mcc_close(m, i, MAGNET_CORR_F_SKIP);
		m->st.stray++;
		return;
	}
	mcc_step_set(c, j, event, ts, bytes);
	c->cur = j;
	if ((u32)j == m->nsteps - 1)
		mcc_close(m, i, 0);
}

/*
 * The record payload of a closed chain: struct magnet_corr_rec and
 * @m->nsteps struct magnet_corr_step into @buf (mcc_rec_size() bytes).
 */
static inline u32 mcc_rec_size(const struct mcc *m)
{
	return sizeof(struct magnet_corr_rec) +
	       m->nsteps * sizeof(struct magnet_corr_step);
}

static inline void mcc_rec_fill(const struct mcc *m, u32 corr_id,
				const struct mcc_chain *c, u32 reached,
				u32 flags, void *buf)
{
	struct magnet_corr_rec *r = buf;
	struct magnet_corr_step *st = (void *)(r + 1);
	u32 i;

	memset(buf, 0, mcc_rec_size(m));
	r->corr_id = corr_id;
	r->nsteps = m->nsteps;
	r->reached = reached;
	r->flags = flags;
	r->start = c->ts[0];
	for (i = 0; i < reached && i < m->nsteps; i++) {
		st[i].delta_ns = i ? c->ts[i] - c->ts[i - 1] : 0;
		st[i].count = c->count[i];
		st[i].bytes = c->bytes[i];
		st[i].event = c->event[i];
	}
}

#endif /* _MAGNET_CORR_CORE_H */
