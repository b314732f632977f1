/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MAGNET in-kernel API for probe modules.
 *
 * A probe module describes each instrumentation point it offers with a
 * struct magnet_point_desc and registers it with the core, which returns
 * a struct magnet_point carrying a unique event ID.  The core calls the
 * point's ops->enable() when user space enables it into a stream and
 * ops->disable() when it is disabled, so a probe attaches its kprobe or
 * tracepoint only while somebody listens: a disabled point costs nothing.
 *
 * From the hook, the probe calls magnet_add().  It may be called in any
 * context (process, softirq, hardirq; NMI events are counted as lost),
 * never sleeps, takes no lock and does bounded work.
 */
#ifndef _MAGNET_MAGNET_H
#define _MAGNET_MAGNET_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/rcupdate.h>
#include <linux/compiler.h>
#include "../uapi/magnet.h"
#include "missed.h"

struct magnet_stream;
struct magnet_point;
struct magnet_taps;
struct module;
struct sock;

struct magnet_point_ops {
	/* Attach the hook.  Process context, may sleep.  0 or -errno. */
	int (*enable)(struct magnet_point *pt);
	/* Detach the hook; when it returns no handler may still run. */
	void (*disable)(struct magnet_point *pt);
	/*
	 * Optional: the calls the hook has missed so far (a kprobe's nmissed:
	 * recursion, no free kretprobe instance), best a running total over
	 * every arming, which reads before the first ->enable() (0) and right
	 * after ->disable().  The core (db.lock held, may sleep) reports its
	 * growth past the last count reported as lost events to every
	 * consumer of the point: about once a second, when a consumer joins
	 * or leaves, and at disable (docs/PROBES.md).  A count that steps back
	 * (kprobes' nmissed++ races) is no news until it passes that count
	 * again; one that restarts at 0 at each arming works too, but misses
	 * between ->enable() and the core's first read then go unreported.
	 */
	unsigned long (*missed)(struct magnet_point *pt);
};

struct magnet_point_desc {
	const char *name;		/* unique, < MAGNET_NAME_MAX, [a-z0-9_] */
	enum magnet_layer layer;
	enum magnet_payload_type payload;
	const char *hook;		/* what it attaches to, for probe list */
	const struct magnet_point_ops *ops;
};

/*
 * The core owns every field; probe modules only pass the pointer around
 * and may read @priv, which the core never touches.
 */
struct magnet_point {
	struct magnet_stream __rcu *stream;	/* NULL while disabled */
	u16 id;
	const struct magnet_point_desc *desc;
	struct module *owner;
	void *priv;
	/* core-private below */
	struct list_head node;
	u64 __percpu *hits;		/* events offered while enabled */
	struct hlist_head synths;	/* synthesizers fed by it (RCU) */
	unsigned int owned;		/* and those of one socket (kmod/synth.c) */
	/* in-kernel consumers (correlators): also fed, with or without @stream */
	struct magnet_taps __rcu *taps;
	unsigned int users;		/* stream, synthesizers, taps: hook on */
	unsigned long missed_seen;	/* ops->missed() reported; db.lock */
};

/*
 * Register an instrumentation point.  Returns the point (its event ID in
 * pt->id) or ERR_PTR: -EINVAL bad descriptor, -EEXIST name taken,
 * -ENOSPC no free event ID, -ENOMEM.
 */
struct magnet_point *magnet_point_register(const struct magnet_point_desc *desc,
					   struct module *owner, void *priv);
/* Disable (if enabled) and unregister; the event ID becomes free. */
void magnet_point_unregister(struct magnet_point *pt);

/*
 * Record an event.  @abstract_id says what the event is about (for
 * network events the socket inode number), @payload/@len is copied into
 * the record (len <= MAGNET_PAYLOAD_MAX).  Drops are counted, never lost
 * silently.  @owner (or NULL) is the local full socket the event is about:
 * in interrupt context, where no task is the event's, filters' and
 * synthesizers' cgroup keys see the socket's cgroup (docs/FILTERS.md).
 */
void __magnet_add(struct magnet_point *pt, struct magnet_stream *s,
		  u64 abstract_id, const void *payload, u16 len,
		  const struct sock *owner);

/*
 * Account @n events of @pt that its hook could not deliver (e.g. a call
 * it refused as recursive).  They count as produced and lost, and a LOST
 * record reports them, in the point's stream and in each correlator tap
 * reading it; each synthesizer reading it counts them as missed.  Any
 * context.  Call it while the point is enabled, at the latest from its
 * ops->disable(); a count the hook keeps goes through ops->missed.
 */
void magnet_add_lost(struct magnet_point *pt, u64 n);

/*
 * Consumers inside the kernel read the point, with or without a stream: a
 * synthesizer (docs/SYNTH.md) or a correlator's tap (docs/CORRELATE.md).
 */
static __always_inline bool magnet_point_synth(const struct magnet_point *pt)
{
	return !hlist_empty(&pt->synths) || READ_ONCE(pt->owned);
}

static __always_inline bool magnet_point_internal(const struct magnet_point *pt)
{
	return magnet_point_synth(pt) || rcu_access_pointer(pt->taps) != NULL;
}

static __always_inline bool magnet_point_enabled(const struct magnet_point *pt)
{
	return rcu_access_pointer(pt->stream) != NULL ||
	       unlikely(magnet_point_internal(pt));
}

/*
 * magnet_add_owned(): an event about the local socket @owner (a full
 * socket, or NULL) whose inode number is @abstract_id.  In interrupt
 * context the event is attributed to the socket: its cgroup, and its last
 * user, the task of its last event in task context (kmod/sock_user.c),
 * which an event here in task context makes the current task.
 * @s may be NULL when only in-kernel consumers read the point.
 */
static __always_inline void magnet_add_owned(struct magnet_point *pt,
					     u64 abstract_id,
					     const void *payload, u16 len,
					     const struct sock *owner)
{
	struct magnet_stream *s;

	rcu_read_lock_sched_notrace();
	s = rcu_dereference_sched(pt->stream);
	if (s || unlikely(magnet_point_internal(pt)))
		__magnet_add(pt, s, abstract_id, payload, len, owner);
	rcu_read_unlock_sched_notrace();
}

static __always_inline void magnet_add(struct magnet_point *pt, u64 abstract_id,
				       const void *payload, u16 len)
{
	magnet_add_owned(pt, abstract_id, payload, len, NULL);
}

/*
 * Cheap early exit for a hook, before it gathers its payload: false when
 * the point is disabled or a filter would certainly refuse the event
 * (a drop filter, or a time-sampling filter whose period has not run
 * out; the refusal is counted).  When it returns true, call magnet_add().
 * 1-in-N count sampling is decided by magnet_add() only.  It knows no
 * owner: a probe whose events are attributed to a socket in interrupt
 * context (magnet_add_owned()) calls magnet_add_owned() alone.
 */
extern int magnet_filters_active;
bool __magnet_wants(struct magnet_point *pt, u64 abstract_id);

static __always_inline bool magnet_wants(struct magnet_point *pt,
					 u64 abstract_id)
{
	if (!magnet_point_enabled(pt))
		return false;
	/* synthesizers and taps see every event: filters decide in magnet_add() */
	if (likely(!READ_ONCE(magnet_filters_active)) ||
	    unlikely(magnet_point_internal(pt)))
		return true;
	return __magnet_wants(pt, abstract_id);
}

#endif /* _MAGNET_MAGNET_H */
