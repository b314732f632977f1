/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MAGNET core internals: the instrumentation database (points and
 * streams), the magnetk control thread and the glue between them.
 */
#ifndef _MAGNET_INTERNAL_H
#define _MAGNET_INTERNAL_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/wait.h>
#include <linux/timer.h>
#include <linux/spinlock.h>
#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/percpu.h>
#include <linux/netlink.h>
#include <net/netlink.h>
#include <magnet/magnet.h>
#include "../ring/rings.h"

/* scripts/version.sh's, passed by Kbuild */
#ifndef MAGNET_VERSION
#define MAGNET_VERSION "unknown"
#endif

struct dentry;
struct genl_info;
struct netlink_callback;
struct sk_buff;
struct sock;
struct magnet_fkey;

struct magnet_stream {
	char name[MAGNET_NAME_MAX];
	struct list_head node;		/* db.streams, db.lock */
	struct kref ref;		/* db list + open files */
	/* the rings in the stream's buffer mode (ring/rings.h) */
	struct magnet_rings rings;
	unsigned int nr_probes;		/* db.lock */
	bool dead;			/* deleted; readers drain then EOF */
	bool closing;			/* being deleted: write(2) refused */

	struct mutex read_lock;		/* serializes readers */
	wait_queue_head_t wq;
	int waiting;			/* a reader is armed; @lock */
	/* runs while a reader is armed: evaluates rules (magnetfs_notify()) */
	struct timer_list read_timer;
	spinlock_t lock;		/* @files, readers' notify bits; irq */
	struct list_head files;		/* open files (magnetfs readers) */
	atomic_t readers;
	bool kreader;			/* a kernel reader has it; @lock */
	struct dentry *dentry;		/* debugfs file */
	struct dentry *mfs_dentry;	/* magnetfs file (fs.c), db.lock */

	/* application events written by user space (magnetfs/stream_write.c) */
	bool app_write;			/* files writable by anyone; db.lock */
	atomic64_t app_events;		/* APP records accepted */
	atomic64_t app_rejected;	/* write() calls refused */
};

/*
 * In-kernel consumers of a point (correlators' internal streams): an
 * immutable array replaced under db.lock and read under RCU-sched by
 * __magnet_add().
 */
struct magnet_taps {
	struct rcu_head rcu;
	unsigned int n;
	struct magnet_stream *s[];
};

/* The instrumentation database.  Mutated only by magnetk, under @lock. */
struct magnet_db {
	struct mutex lock;
	struct list_head points;
	struct list_head streams;
	unsigned int nr_points;
	unsigned int nr_streams;
	unsigned long catalog_gen;	/* bumped on (un)registration */
	struct dentry *dir;		/* debugfs magnet/ */
};

extern struct magnet_db magnet_db;

/* db.c: everything takes db.lock itself unless named _locked */
struct magnet_point *magnet_db_find_point(const char *name, u32 id);
struct magnet_stream *magnet_db_find_stream(const char *name);
int magnet_db_stream_new(const char *name, u32 size, u32 count, u32 mode,
			 u32 clock, struct netlink_ext_ack *extack);
int magnet_db_stream_del(const char *name, struct netlink_ext_ack *extack);
int magnet_db_point_enable(struct magnet_point *pt, struct magnet_stream *s,
			   struct netlink_ext_ack *extack);
void magnet_db_point_disable(struct magnet_point *pt);
int magnet_db_point_tap(struct magnet_point *pt, struct magnet_stream *s,
			struct netlink_ext_ack *extack);
void magnet_db_point_untap(struct magnet_point *pt, struct magnet_stream *s);
void magnet_db_teardown(void);
int magnet_name_valid(const char *name);

/* stream.c */
struct magnet_stream *magnet_stream_alloc(const char *name, u32 size,
					  u32 count, u32 mode, u32 clock);
int magnet_stream_snapshot(struct magnet_stream *s, u32 op,
			   struct netlink_ext_ack *extack);

/* The rings of @s: the global one, or every possible CPU's. */
#define magnet_stream_ring(s, cpu)	magnet_rings_ring(&(s)->rings, cpu)
#define magnet_stream_nr_rings(s)	magnet_rings_nr(&(s)->rings)
#define magnet_stream_for_each_ring(s, cpu, r)				\
	magnet_rings_for_each(&(s)->rings, cpu, r)

static inline void magnet_stream_stats(struct magnet_stream *s,
				       struct magnet_stream_stats *st)
{
	magnet_rings_stats(&s->rings, st);
}

/* Write every CPU's pending LOST record so that readers see all losses. */
static inline void magnet_stream_flush(struct magnet_stream *s)
{
	magnet_rings_flush(&s->rings);
}

static inline u64 magnet_stream_avail(struct magnet_stream *s, u64 *events)
{
	return magnet_rings_avail(&s->rings, events);
}

void magnet_stream_get(struct magnet_stream *s);
void magnet_stream_put(struct magnet_stream *s);
u64 magnet_point_hits(struct magnet_point *pt);

/*
 * What an event is about beyond its point and ID, worked out once per
 * event in __magnet_add(): @owner, the local socket (or NULL), whose
 * cgroup is the event's in interrupt context (magnet_event_cgroup()), and
 * @who, the pid and tgid its record, filters and synthesizers name
 * instead of the current task's when @named: in interrupt context, the
 * socket's last user (sock_user.h).
 */
struct magnet_who {
	const struct sock *owner;
	u32 who[2];
	bool named;
};

static inline const u32 *magnet_who_ids(const struct magnet_who *w)
{
	return w && w->named ? w->who : NULL;
}

/*
 * add.c: write one event into @s (no filtering), timestamp @now, naming
 * @who's task if it names one
 */
void magnet_write(struct magnet_point *pt, struct magnet_stream *s,
		  u64 abstract_id, const void *payload, u16 len, u64 now,
		  const struct magnet_who *w);
/*
 * a core record (SYNTH, CORR) from process context, its header naming
 * @pid/@tgid; false: ring full
 */
bool magnet_write_core(struct magnet_stream *s, u16 event, u64 abstract_id,
		       u32 pid, u32 tgid, const void *payload, u16 len);
/* filter.c; *@now CLOCK_MONOTONIC or 0, read there if a filter needs it */
bool magnet_filter_add(struct magnet_point *pt, struct magnet_stream *s,
		       u64 abstract_id, const void *payload, u16 len,
		       u64 *now, const struct magnet_who *w);
/* the task of an event for pid/tgid keys: the current one, or @w's in irq */
void magnet_event_task(struct magnet_fkey *ev, const struct magnet_who *w);
/* the cgroup of an event for cgroup keys: the task's, or @owner's in irq */
void magnet_event_cgroup(struct magnet_fkey *ev, const struct sock *owner);
void magnet_filters_stream_gone(struct magnet_stream *s);
void magnet_filters_teardown(void);

/* magnetfs/stream_file.c */
int magnetfs_init(void);
void magnetfs_exit(void);
int magnetfs_add_stream(struct magnet_stream *s);
void magnetfs_remove_stream(struct magnet_stream *s);
int magnetfs_stream_path(struct magnet_stream *s, char *buf, size_t len);
void magnetfs_notify(struct magnet_stream *s);

/* magnetk.c: run @fn in the magnetk thread and wait for its result */
int magnetk_start(void);
void magnetk_stop(void);
int magnetk_call(int (*fn)(void *arg), void *arg);
/* wake the synthesizers' emitter (magnetk-synth): one may be due earlier */
void magnetk_synth_kick(void);

/* netlink.c */
int magnet_genl_init(void);
void magnet_genl_exit(void);
void magnet_genl_notify_point(struct magnet_point *pt, bool added);

/* netlink.c helpers for the object files (filter_nl.c, ...) */
typedef int (*magnet_put_fn)(struct sk_buff *skb, void *obj);
int magnet_nl_run(int (*fn)(struct genl_info *info), struct genl_info *info);
int magnet_nl_reply(struct genl_info *info, u8 cmd, magnet_put_fn put,
		    void *obj);
int magnet_nl_dump_one(struct sk_buff *skb, struct netlink_callback *cb,
		       u8 cmd, magnet_put_fn put, void *obj);
struct magnet_point *magnet_nl_find_point(struct netlink_ext_ack *extack,
					  struct nlattr *name,
					  struct nlattr *id,
					  struct nlattr *where);

/* The match-key attributes of one attribute set; NULL: not given. */
struct magnet_fkey;
struct magnet_fkey_attrs {
	struct nlattr *event, *cpu, *abstract_id, *pid, *tgid, *cgroup;
};
int magnet_nl_parse_fkey(const struct magnet_fkey_attrs *a,
			 struct magnet_fkey *k,
			 struct netlink_ext_ack *extack);

/* filter_nl.c */
extern const struct nla_policy magnet_filter_policy[MAGNET_FILTER_A_MAX + 1];
int magnet_nl_filter_new(struct sk_buff *skb, struct genl_info *info);
int magnet_nl_filter_del(struct sk_buff *skb, struct genl_info *info);
int magnet_nl_filter_get(struct sk_buff *skb, struct genl_info *info);
int magnet_nl_filter_dump(struct sk_buff *skb, struct netlink_callback *cb);

/* kprobe_dyn.c: run-time kprobes */
extern const struct nla_policy magnet_kprobe_policy[MAGNET_KPROBE_A_MAX + 1];
int magnet_nl_kprobe_new(struct sk_buff *skb, struct genl_info *info);
int magnet_nl_kprobe_del(struct sk_buff *skb, struct genl_info *info);
void magnet_kprobe_teardown(void);

/*
 * db.c: consumers of a point (a stream, synthesizers, taps); hook on
 * while > 0.  A hook that does not attach says why in @extack (or NULL).
 */
int magnet_db_point_get(struct magnet_point *pt,
			struct netlink_ext_ack *extack);
void magnet_db_point_put(struct magnet_point *pt);
/* before a consumer is linked: the misses so far go to those already on */
void magnet_db_point_join(struct magnet_point *pt);
/* magnetk: report the hooks' misses (ops->missed); jiffies to the next */
long magnet_db_missed_tick(void);

/* synth.c: synthesizers (docs/SYNTH.md) */
void magnet_synth_feed(struct magnet_point *pt, u64 abstract_id,
		       const void *payload, u16 len, u64 now,
		       const struct magnet_who *w);
/* @n events of @pt not fed to its synthesizers (any context) */
void magnet_synth_missed(struct magnet_point *pt, u64 n);
void magnet_synth_missed_one(struct magnet_point *pt,
			     const struct sock *owner);
long magnet_synth_tick(void);
void magnet_synths_stream_gone(struct magnet_stream *s);
void magnet_synths_point_gone(struct magnet_point *pt);
void magnet_synths_teardown(void);

/* synth_nl.c */
extern const struct nla_policy magnet_synth_policy[MAGNET_SYNTH_A_MAX + 1];
int magnet_nl_synth_new(struct sk_buff *skb, struct genl_info *info);
int magnet_nl_synth_del(struct sk_buff *skb, struct genl_info *info);
int magnet_nl_synth_get(struct sk_buff *skb, struct genl_info *info);
int magnet_nl_synth_dump(struct sk_buff *skb, struct netlink_callback *cb);
/* corr.c: correlators (docs/CORRELATE.md) */
extern const struct nla_policy magnet_corr_policy[MAGNET_CORR_A_MAX + 1];
int magnet_nl_corr_new(struct sk_buff *skb, struct genl_info *info);
int magnet_nl_corr_del(struct sk_buff *skb, struct genl_info *info);
int magnet_nl_corr_get(struct sk_buff *skb, struct genl_info *info);
int magnet_nl_corr_dump(struct sk_buff *skb, struct netlink_callback *cb);
void magnet_corrs_stream_gone(struct magnet_stream *s);
void magnet_corrs_point_gone(struct magnet_point *pt);
void magnet_corrs_teardown(void);
/* corr.c: internal correlators of kernel clients (kmod/sockstat.c) */
struct magnet_corr;
struct mcc_chain;
struct magnet_corr *magnet_corr_kernel_new(const char *name,
					   const char *const steps[][MAGNET_CORR_ALTS_MAX + 1],
					   unsigned int nsteps, u64 window,
					   void (*emit)(void *arg,
							const struct mcc_chain *ch,
							u32 reached, u32 flags),
					   void *arg);
void magnet_corr_kernel_del(struct magnet_corr *c);
/* magnetk: run the correlators; returns jiffies until the next run */
long magnet_corrs_tick(void);
/* magnetfs/stream_write.c: APP records written by user space */
ssize_t magnetfs_stream_write(struct magnet_stream *s, const char __user *ubuf,
			      size_t len);
void magnetfs_stream_allow_app_write(struct magnet_stream *s);

/* status.c */
int magnet_status_init(struct dentry *dir);

#endif /* _MAGNET_INTERNAL_H */
