// SPDX-License-Identifier: GPL-2.0
/*
 * Per-socket statistics for the socket's owner (docs/SOCKSTAT.md).
 *
 * The file "sockstat" (mode 0444, in magnetfs and in debugfs) is a
 * client: each open file watches sockets named by a descriptor of the
 * caller's own file table (sockfd_lookup() runs in the ioctl, in the
 * caller's context), reads their figures and may subscribe to one of
 * them.  Root may read a watched socket by its abstract ID.
 *
 * The first watch of a socket creates seven internal synthesizers
 * (kmod/synth.c) matching its abstract ID (the socket inode): bytes and
 * calls of the successful sock_send events, intervals between them, the
 * failed ones (MAGNET_NET_F_ERROR), bytes and frames at dev_send; and on
 * the receive side bytes and calls of the successful sock_recv events,
 * the failed ones, bytes and frames at dev_recv (whose events carry the
 * receiving socket's ID, probes/rx_sock.c).  They have no stream, so they
 * write no record; a period longer than any uptime keeps one open period
 * whose moments are the whole watch.  The last watch gone removes them,
 * and the points' hooks are detached when nothing else uses them.
 * However many clients watch a socket, its synthesizers exist once.
 *
 * Subscriptions: a delayed work per file computes one summary per
 * period into a small queue and wakes the readers; the tracing path
 * never wakes anyone.
 *
 * What an unprivileged user can cost the machine (docs/THREATS.md): a
 * file opened without CAP_NET_ADMIN belongs to its opener's real uid (in
 * a user namespace: the uid that created the outermost one), whose
 * watches over all its files are at most MAGNET_SOCK_WATCH_USER_MAX
 * (EDQUOT) and whose watches that reach magnetk are paced (a burst of
 * SS_PACE_BURST, then one per SS_PACE_IVAL; the caller sleeps).  Every
 * other request that reaches magnetk undoes one such watch (UNWATCH,
 * close), so the control work a user causes is bounded; requests that
 * change nothing (watching again, unwatching what is not watched,
 * closing a file that watches nothing) are answered without magnetk.
 * What a watch allocates is allocated in the caller's context, charged
 * to its memory cgroup (__GFP_ACCOUNT), and handed to magnetk.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/net.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/user_namespace.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <net/sock.h>
#include <net/tcp.h>
#include "synth.h"
#include "corr_core.h"
#include "sockstat.h"
#include "compat.h"

enum { SS_BYTES, SS_IVAL, SS_DEV, SS_ERR, SS_RBYTES, SS_RERR, SS_RDEV, SS_NR };

/* each synthesizer's point and which of its events it counts */
enum { SS_ALL, SS_OK, SS_FAILED };
static const struct {
	const char *point;
	u8 which;
} ss_syn[SS_NR] = {
	[SS_BYTES]	= { "sock_send", SS_OK },
	[SS_IVAL]	= { "sock_send", SS_OK },
	[SS_DEV]	= { "dev_send", SS_ALL },
	[SS_ERR]	= { "sock_send", SS_FAILED },
	[SS_RBYTES]	= { "sock_recv", SS_OK },
	[SS_RERR]	= { "sock_recv", SS_FAILED },
	[SS_RDEV]	= { "dev_recv", SS_ALL },
};

/* the two layer correlators: the send path and the receive path */
enum { SS_TX, SS_RX, SS_DIRS };

/* One watched socket; db.lock. */
struct ss_sock {
	struct list_head node;		/* ss_socks */
	u64 id;				/* socket inode */
	struct sock *sk;		/* sock_hold()ed */
	unsigned int refs;		/* files watching it */
	struct magnet_synth *sy[SS_NR];	/* NULL once its point left */
	u64 start;
	bool gone;
	/* layer times from the correlators' complete chains, per direction */
	u64 chains[SS_DIRS], chains_partial[SS_DIRS];
	u64 lsum[SS_DIRS][MAGNET_SOCK_LAYERS];
	u64 llast[SS_DIRS][MAGNET_SOCK_LAYERS];
};

struct ss_watch {
	struct list_head node;		/* ss_file.watches, db.lock */
	struct ss_sock *ss;
};

#define SS_QLEN	16

/*
 * A user (real uid, or a user namespace's creator: ss_user_uid()) of
 * files opened without CAP_NET_ADMIN: its watches
 * and its pacing.  Kept after its last file closed until its pacing
 * budget is full again, so that reopening does not refill it.
 */
struct ss_user {
	struct list_head node;		/* ss_users */
	kuid_t uid;
	unsigned int files;		/* open files */
	unsigned int watches;		/* over all its files */
	unsigned long tat;		/* jiffies: pacing (GCRA) */
};

static LIST_HEAD(ss_users);
static DEFINE_MUTEX(ss_users_lock);	/* ss_users and their fields */

/* 16 watches at once, then 10 per second: an application never waits */
#define SS_PACE_BURST	16
#define SS_PACE_IVAL	(HZ / 10 ?: 1)
#define SS_PACE_TOL	((SS_PACE_BURST - 1) * SS_PACE_IVAL)

struct ss_file {
	struct mutex lock;		/* ioctls, subscription changes */
	struct list_head watches;	/* db.lock */
	unsigned int nr_watches;	/* @lock */
	struct ss_user *user;		/* NULL: opened with CAP_NET_ADMIN */

	/* subscription */
	struct ss_sock *sub;		/* @lock; the work reads it */
	unsigned long period;		/* jiffies */
	unsigned long next;		/* jiffies: the running period's end */
	u64 seq;
	struct delayed_work work;
	spinlock_t qlock;		/* @q, @head, @count, @dropped */
	wait_queue_head_t wq;
	struct magnet_sock_stats q[SS_QLEN];
	unsigned int head, count;
	u64 dropped;
};

static LIST_HEAD(ss_socks);		/* db.lock */
static unsigned int ss_nr_socks;
/*
 * One correlator per direction for every watched socket, while any is
 * watched and ss_corr_linger after the last watch went: a loop of watches
 * and unwatches does not attach and detach their hooks (code patching on
 * every CPU) each time.  The linger starts at 2 s and doubles, up to 64 s,
 * each time watches come back within 64 s of the correlators' end; after
 * 64 s without one it is 2 s again.  A loop that waits out the linger
 * each time thus makes the hooks attach and detach at most once per 64 s
 * or so, after six cycles.  Only magnetk changes them.
 */
static struct magnet_corr *ss_corr[SS_DIRS];	/* db.lock */
static unsigned long ss_corr_expire;	/* jiffies, while no socket is */
#define SS_CORR_LINGER_MIN	(2 * HZ)
#define SS_CORR_LINGER_MAX	(64 * HZ)
static unsigned long ss_corr_linger = SS_CORR_LINGER_MIN;	/* db.lock */
static unsigned long ss_corr_ended;	/* jiffies: the last linger's end */
static bool ss_corr_did_end;		/* ss_corr_ended is set */

#define SS_CORR_WINDOW	(50 * NSEC_PER_MSEC)
static const char *const ss_chain[][MAGNET_CORR_ALTS_MAX + 1] = {
	{ "tcp_send", "udp_send", NULL },
	{ "ip_send", NULL },
	{ "dev_send", NULL },
	{ "sock_send", NULL },
};

static const char *const ss_rx_chain[][MAGNET_CORR_ALTS_MAX + 1] = {
	{ "dev_recv", NULL },
	{ "ip_recv", NULL },
	{ "udp_recv", "tcp_recv", NULL },
	{ "sock_recv", NULL },
};

static const char *const ss_corr_name[SS_DIRS] = { ".sockstat", ".sockstat_rx" };
static_assert(ARRAY_SIZE(ss_chain) == MAGNET_SOCK_LAYERS + 1);
static_assert(ARRAY_SIZE(ss_rx_chain) == MAGNET_SOCK_RX_LAYERS + 1);
static_assert(MAGNET_SOCK_RX_LAYERS == MAGNET_SOCK_LAYERS);
static_assert(sizeof(struct magnet_sock_stats) == MAGNET_SOCK_STATS_SIZE_V2);

/* ---- synthesizers (magnetk, db.lock) ----------------------------------- */

static void ss_synth_gone(struct magnet_synth *sy)
{
	struct ss_sock *ss = sy->priv;
	int i;

	for (i = 0; i < SS_NR; i++)
		if (ss->sy[i] == sy) {
			ss->sy[i] = NULL;
			ss->gone = true;
		}
}

/* Fill @sy, allocated by the caller, as @ss's synthesizer @i. */
static int ss_synth_prep(struct ss_sock *ss, int i, struct magnet_synth *sy)
{
	struct magnet_point *pt = magnet_db_find_point(ss_syn[i].point, 0);

	if (!pt)
		return -ENODEV;		/* magnet_net not loaded */
	/* '.' never starts a user's name: no clash, invisible to lookups */
	snprintf(sy->name, sizeof(sy->name), ".sock%llu.%d", ss->id, i);
	sy->pt = pt;
	sy->match.mask = MAGNET_FK_AID;
	sy->match.abstract_id = ss->id;
	sy->owner = ss->sk;		/* the inode number alone can repeat */
	sy->group = 0;			/* one key: the socket */
	if (i == SS_IVAL) {
		sy->quantity = MAGNET_SYNTH_Q_INTERVAL;
	} else {
		sy->quantity = MAGNET_SYNTH_Q_FIELD;
		sy->off = offsetof(struct magnet_net_payload, len);
		sy->width = 4;
	}
	if (ss_syn[i].which != SS_ALL) {
		sy->flag_off = offsetof(struct magnet_net_payload, flags);
		sy->flag_mask = MAGNET_NET_F_ERROR;
		sy->flag_want = ss_syn[i].which == SS_FAILED ?
				MAGNET_NET_F_ERROR : 0;
	}
	/* one period for the whole watch: nothing harvested */
	sy->period = 1ull << 62;
	sy->gone = ss_synth_gone;
	sy->priv = ss;
	return 0;
}

/*
 * Insert the SS_NR synthesizers of @sys (the caller's until then) as
 * @ss's, all at once: one grace period per watch, not one each.
 */
static int ss_synths_add(struct ss_sock *ss, struct magnet_synth **sys)
{
	int i, err = 0;

	for (i = 0; i < SS_NR && !err; i++)
		err = ss_synth_prep(ss, i, sys[i]);
	if (!err)
		err = magnet_synth_insert_many(sys, SS_NR, NULL);
	if (err)
		return err;		/* none inserted: the caller frees them */
	for (i = 0; i < SS_NR; i++) {
		ss->sy[i] = sys[i];
		sys[i] = NULL;
	}
	/* one start for all: from here on, all of them count */
	ss->start = ss->sy[0]->start;
	return 0;
}

static struct ss_sock *ss_find(u64 id)
{
	struct ss_sock *ss;

	list_for_each_entry(ss, &ss_socks, node)
		if (ss->id == id)
			return ss;
	return NULL;
}

/* A closed chain of any socket (magnetk, db.lock): a watched one's? */
static void ss_corr_emit(void *arg, const struct mcc_chain *ch, u32 reached,
			 u32 flags)
{
	struct ss_sock *ss = ss_find(ch->key);
	int dir = arg == &ss_corr[SS_RX] ? SS_RX : SS_TX;
	int i;

	/* chains of its watch only: counting starts at the first watch */
	if (!ss || ch->ts[0] < ss->start)
		return;
	if (flags) {
		ss->chains_partial[dir]++;
		return;
	}
	for (i = 0; i < MAGNET_SOCK_LAYERS; i++) {
		u64 d = ch->ts[i + 1] - ch->ts[i];

		ss->lsum[dir][i] += d;
		ss->llast[dir][i] = d;
	}
	ss->chains[dir]++;
}

/*
 * magnetk, db.lock: correlators are made again.  Soon after the last ones
 * lingered out (a watch loop that waits for it): linger twice as long.
 */
static void ss_corr_back(void)
{
	if (ss_corr[SS_TX] || ss_corr[SS_RX] || !ss_corr_did_end)
		return;
	ss_corr_did_end = false;
	if (time_before(jiffies, ss_corr_ended + SS_CORR_LINGER_MAX))
		ss_corr_linger = min_t(unsigned long, 2 * ss_corr_linger,
				       SS_CORR_LINGER_MAX);
	else
		ss_corr_linger = SS_CORR_LINGER_MIN;
}

/* magnetk, db.lock: the direction's correlator, if it is not there yet */
static void ss_corr_make(int dir)
{
	struct magnet_corr *c;

	if (ss_corr[dir])
		return;
	c = magnet_corr_kernel_new(ss_corr_name[dir],
				   dir == SS_RX ? ss_rx_chain : ss_chain,
				   MAGNET_SOCK_LAYERS + 1, SS_CORR_WINDOW,
				   ss_corr_emit, &ss_corr[dir]);
	if (IS_ERR(c)) {
		/* without it, no layer times (flag LAYERS / RX_LAYERS clear) */
		pr_warn_ratelimited("magnet: sockstat: no %s layer times (%ld)\n",
				    dir == SS_RX ? "receive" : "send", PTR_ERR(c));
		return;
	}
	ss_corr[dir] = c;
}

static void ss_sock_free(struct ss_sock *ss)
{
	struct magnet_synth *sys[SS_NR];
	int i, n = 0;

	/* those still there (a point that left took its own), at once */
	for (i = 0; i < SS_NR; i++)
		if (ss->sy[i])
			sys[n++] = ss->sy[i];
	magnet_synth_remove_many(sys, n);	/* clears ss->sy[] */
	list_del(&ss->node);
	ss_nr_socks--;
	/* the correlator lingers; magnet_sockstat_tick() deletes it */
	if (!ss_nr_socks)
		ss_corr_expire = jiffies + ss_corr_linger;
	sock_put(ss->sk);
	kfree(ss);
}

/* db.lock, magnetk; their flushed chains find no socket: nothing to count */
static void ss_corr_drop(void)
{
	int dir;

	for (dir = 0; dir < SS_DIRS; dir++) {
		if (ss_corr[dir]) {
			magnet_corr_kernel_del(ss_corr[dir]);
			ss_corr[dir] = NULL;
		}
	}
}

/* magnetk's periodic work: the lingering correlator's end; jiffies to it */
long magnet_sockstat_tick(void)
{
	long left = MAX_SCHEDULE_TIMEOUT;

	/* only magnetk, which runs us, sets them */
	if (!READ_ONCE(ss_corr[SS_TX]) && !READ_ONCE(ss_corr[SS_RX]))
		return left;
	mutex_lock(&magnet_db.lock);
	if ((ss_corr[SS_TX] || ss_corr[SS_RX]) && !ss_nr_socks) {
		left = (long)(ss_corr_expire - jiffies);
		if (left <= 0) {
			ss_corr_drop();
			ss_corr_ended = jiffies;
			ss_corr_did_end = true;
			left = MAX_SCHEDULE_TIMEOUT;
		}
	}
	mutex_unlock(&magnet_db.lock);
	return left;
}

/*
 * The status file (db.lock): sockets watched, the correlators' state and
 * the linger the next last unwatch starts (the last one a watch set).
 */
void magnet_sockstat_status(struct seq_file *m)
{
	lockdep_assert_held(&magnet_db.lock);
	seq_printf(m, "sockstat sockets %u correlators %s linger_ms %u\n",
		   ss_nr_socks,
		   !ss_corr[SS_TX] && !ss_corr[SS_RX] ? "none" :
		   ss_nr_socks ? "attached" : "lingering",
		   jiffies_to_msecs(ss_corr_linger));
}

/*
 * A point leaves (db.c, magnetk, db.lock): a lingering correlator goes
 * too, so that the next watch builds one on the points then present.
 */
void magnet_sockstat_point_gone(struct magnet_point *pt)
{
	lockdep_assert_held(&magnet_db.lock);
	if (!ss_nr_socks)
		ss_corr_drop();
}

static struct ss_watch *ss_file_find(struct ss_file *f, u64 id)
{
	struct ss_watch *w;

	list_for_each_entry(w, &f->watches, node)
		if (w->ss->id == id)
			return w;
	return NULL;
}

/*
 * A watch: what it may need is allocated by the caller, in its own
 * context (charged to its memory cgroup), and what magnetk uses is taken
 * out of the request (the pointer cleared); the caller frees the rest.
 */
struct ss_req {
	struct ss_file *f;
	struct sock *sk;
	u64 id;
	struct ss_watch *w;
	struct ss_sock *ss;		/* NULL: not allocated */
	struct magnet_synth *sy[SS_NR];
};

static int ss_do_watch(void *arg)
{
	struct ss_req *r = arg;
	struct ss_sock *ss;
	struct ss_watch *w;
	int err = 0;

	mutex_lock(&magnet_db.lock);
	if (ss_file_find(r->f, r->id))
		goto out;		/* watching already */
	ss = ss_find(r->id);
	if (ss && ss->sk != r->sk) {
		/* a closed socket's inode number, reused: still watched */
		err = -EBUSY;
		goto out;
	}
	if (!ss) {
		if (ss_nr_socks >= MAGNET_SOCK_WATCH_MAX) {
			err = -ENOSPC;
			goto out;
		}
		if (!r->ss) {
			/* watched when the caller looked, gone since */
			err = -EAGAIN;
			goto out;
		}
		ss = r->ss;
		r->ss = NULL;
		ss->id = r->id;
		ss->sk = r->sk;
		sock_hold(ss->sk);
		list_add_tail(&ss->node, &ss_socks);
		ss_nr_socks++;
		err = ss_synths_add(ss, r->sy);
		if (err) {
			ss_sock_free(ss);
			goto out;
		}
		ss_corr_back();
		ss_corr_make(SS_TX);
		ss_corr_make(SS_RX);
	}
	ss->refs++;
	w = r->w;
	r->w = NULL;
	w->ss = ss;
	list_add_tail(&w->node, &r->f->watches);
out:
	mutex_unlock(&magnet_db.lock);
	return err;
}

static void ss_watch_drop(struct ss_watch *w)
{
	struct ss_sock *ss = w->ss;

	list_del(&w->node);
	kfree(w);
	if (!--ss->refs)
		ss_sock_free(ss);
}

static int ss_do_unwatch(void *arg)
{
	struct ss_req *r = arg;
	struct ss_watch *w;
	int err = 0;

	mutex_lock(&magnet_db.lock);
	w = ss_file_find(r->f, r->id);
	if (w)
		ss_watch_drop(w);
	else
		err = -ENOENT;
	mutex_unlock(&magnet_db.lock);
	return err;
}

static int ss_do_unwatch_all(void *arg)
{
	struct ss_file *f = arg;
	struct ss_watch *w, *tmp;

	mutex_lock(&magnet_db.lock);
	list_for_each_entry_safe(w, tmp, &f->watches, node)
		ss_watch_drop(w);
	mutex_unlock(&magnet_db.lock);
	return 0;
}

/* ---- figures ----------------------------------------------------------- */

/* Key 0 of @sy (the socket's), or false if it saw no event yet. */
static bool ss_key(struct magnet_synth *sy, struct magnet_synth_key *kv)
{
	u64 open_start;

	if (!sy || !magnet_synth_nr_keys(sy))
		return false;
	magnet_synth_key_values(sy, 0, kv, &open_start);
	return true;
}

static u64 ss_missed(struct magnet_synth *sy)
{
	struct magnet_synth_cnt c;

	if (!sy)
		return 0;
	magnet_synth_read_cnt(sy, &c);
	return c.nmi + c.overflow + c.reordered + c.shrt + c.missed;
}

/* The synthesizers' figures of @ss into @st; db.lock held. */
static void ss_fill(struct ss_sock *ss, struct magnet_sock_stats *st)
{
	struct magnet_synth_key kv;
	u64 var;
	int i;

	st->abstract_id = ss->id;
	st->start_ns = ss->start;
	st->now_ns = ktime_get_mono_fast_ns();
	if (ss->gone)
		st->flags |= MAGNET_SOCK_F_GONE;
	if (ss_key(ss->sy[SS_BYTES], &kv)) {
		st->sock_calls = kv.total_count;
		st->sock_bytes = kv.total_sum_lo;
	}
	if (ss_key(ss->sy[SS_DEV], &kv)) {
		st->dev_frames = kv.total_count;
		st->dev_bytes = kv.total_sum_lo;
	}
	if (ss_key(ss->sy[SS_ERR], &kv))
		st->sock_errors = kv.total_count;
	if (ss_key(ss->sy[SS_RBYTES], &kv)) {
		st->rx_sock_calls = kv.total_count;
		st->rx_sock_bytes = kv.total_sum_lo;
	}
	if (ss_key(ss->sy[SS_RERR], &kv))
		st->rx_sock_errors = kv.total_count;
	if (ss_key(ss->sy[SS_RDEV], &kv)) {
		st->rx_dev_frames = kv.total_count;
		st->rx_dev_bytes = kv.total_sum_lo;
	}
	if (ss_key(ss->sy[SS_IVAL], &kv) && kv.cur.count) {
		st->ival_count = kv.cur.count;
		st->ival_min = kv.cur.min;
		st->ival_max = kv.cur.max;
		magnet_moments_derive(&kv.cur, &st->ival_mean, &var, NULL,
				      NULL);
		st->ival_var = var;
	}
	for (i = 0; i < SS_NR; i++)
		st->missed += ss_missed(ss->sy[i]);
	if (ss_corr[SS_TX])
		st->flags |= MAGNET_SOCK_F_LAYERS;
	if (ss_corr[SS_RX])
		st->flags |= MAGNET_SOCK_F_RX_LAYERS;
	st->chains = ss->chains[SS_TX];
	st->chains_partial = ss->chains_partial[SS_TX];
	st->rx_chains = ss->chains[SS_RX];
	st->rx_chains_partial = ss->chains_partial[SS_RX];
	for (i = 0; i < MAGNET_SOCK_LAYERS; i++) {
		st->layer_mean[i] = ss->chains[SS_TX] ?
			div64_u64(ss->lsum[SS_TX][i], ss->chains[SS_TX]) : 0;
		st->layer_last[i] = ss->llast[SS_TX][i];
		st->rx_layer_mean[i] = ss->chains[SS_RX] ?
			div64_u64(ss->lsum[SS_RX][i], ss->chains[SS_RX]) : 0;
		st->rx_layer_last[i] = ss->llast[SS_RX][i];
	}
}

/* State read from the socket itself, as tcp_get_info() does; may sleep. */
static void ss_fill_sock(struct sock *sk, struct magnet_sock_stats *st)
{
	lock_sock(sk);
	if (!sk->sk_socket)
		st->flags |= MAGNET_SOCK_F_CLOSED;
	if (sk_fullsock(sk) && sk->sk_type == SOCK_STREAM &&
	    sk->sk_protocol == IPPROTO_TCP &&
	    (sk->sk_family == AF_INET || sk->sk_family == AF_INET6)) {
		const struct tcp_sock *tp = tcp_sk(sk);

		st->flags |= MAGNET_SOCK_F_TCP;
		st->tcp_state = sk->sk_state;
		st->srtt_us = tp->srtt_us >> 3;
		st->rttvar_us = tp->mdev_us >> 2;
		st->snd_cwnd = tcp_snd_cwnd(tp);
		st->mss = tp->mss_cache;
		st->total_retrans = tp->total_retrans;
		st->unsent = (u32)(READ_ONCE(tp->write_seq) - tp->snd_nxt);
		st->unacked = (u32)(tp->snd_nxt - tp->snd_una);
	}
	st->wmem_queued = READ_ONCE(sk->sk_wmem_queued);
	st->sndbuf = READ_ONCE(sk->sk_sndbuf);
	release_sock(sk);
}

static void ss_init_stats(struct magnet_sock_stats *st, s32 fd)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->version = MAGNET_SOCK_STATS_VERSION;
	st->fd = fd;
}

/* ---- subscription -------------------------------------------------------- */

static void ss_work(struct work_struct *work)
{
	struct ss_file *f = container_of(to_delayed_work(work), struct ss_file,
					 work);
	struct magnet_sock_stats st;
	struct ss_sock *ss = f->sub;	/* watched by @f while subscribed */
	unsigned long now;

	ss_init_stats(&st, -1);
	mutex_lock(&magnet_db.lock);
	ss_fill(ss, &st);
	mutex_unlock(&magnet_db.lock);
	ss_fill_sock(ss->sk, &st);

	spin_lock_irq(&f->qlock);
	st.seq = ++f->seq;
	if (f->count == SS_QLEN) {
		/* the oldest goes; counted in every later summary */
		f->head = (f->head + 1) % SS_QLEN;
		f->count--;
		f->dropped++;
	}
	st.sub_dropped = f->dropped;
	f->q[(f->head + f->count) % SS_QLEN] = st;
	f->count++;
	spin_unlock_irq(&f->qlock);
	wake_up_interruptible(&f->wq);

	/* the next period's end, on the grid of the first: no drift */
	now = jiffies;
	f->next += f->period;
	while (time_before_eq(f->next, now))
		f->next += f->period;
	queue_delayed_work(system_wq, &f->work, f->next - now);
}

/* @f->lock held */
static void ss_unsubscribe(struct ss_file *f)
{
	if (!f->sub)
		return;
	cancel_delayed_work_sync(&f->work);
	f->sub = NULL;
	spin_lock_irq(&f->qlock);
	f->head = 0;
	f->count = 0;
	spin_unlock_irq(&f->qlock);
	wake_up_interruptible(&f->wq);
}

/* ---- ioctls ------------------------------------------------------------- */

/* The socket of @fd in the caller's own table: its inode and sock. */
static struct socket *ss_lookup(int fd, u64 *id, int *err)
{
	struct socket *sock = sockfd_lookup(fd, err);

	if (!sock)
		return NULL;
	if (!sock->sk) {
		sockfd_put(sock);
		*err = -ENOTCONN;
		return NULL;
	}
	*id = SOCK_INODE(sock)->i_ino;
	return sock;
}

/* ---- what an unprivileged user may cost --------------------------------- */

/*
 * The uid an unprivileged opener is charged to: its real uid in the
 * initial user namespace; in any other, the uid that created the
 * outermost user namespace of its chain (the child of init_user_ns), as
 * the kernel charges a namespace's ucounts to its creator.  Otherwise a
 * user with a range of subordinate uids (or a namespace root made for
 * it) could open the file under each of them and take a quota per uid.
 */
static kuid_t ss_user_uid(const struct cred *cred)
{
	const struct user_namespace *ns = cred->user_ns;

	if (ns == &init_user_ns)
		return cred->uid;
	while (ns->parent != &init_user_ns)
		ns = ns->parent;
	return ns->owner;
}

/* The user of @uid, created if needed; ss_users_lock held. */
static struct ss_user *ss_user_get(kuid_t uid, struct ss_user *new)
{
	struct ss_user *u, *tmp, *found = NULL;
	unsigned long now = jiffies;

	list_for_each_entry_safe(u, tmp, &ss_users, node) {
		if (uid_eq(u->uid, uid)) {
			found = u;
		} else if (!u->files && time_after_eq(now, u->tat)) {
			/* no file, budget full again: forget it */
			list_del(&u->node);
			kfree(u);
		}
	}
	if (!found && new) {
		found = new;
		found->uid = uid;
		found->tat = now;
		list_add_tail(&found->node, &ss_users);
	}
	if (found)
		found->files++;
	return found;
}

/* One watch of @u's quota, or -EDQUOT. */
static int ss_quota_take(struct ss_user *u)
{
	int err = 0;

	mutex_lock(&ss_users_lock);
	if (u->watches >= MAGNET_SOCK_WATCH_USER_MAX)
		err = -EDQUOT;
	else
		u->watches++;
	mutex_unlock(&ss_users_lock);
	return err;
}

static void ss_quota_put(struct ss_user *u, unsigned int n)
{
	mutex_lock(&ss_users_lock);
	u->watches -= n;
	mutex_unlock(&ss_users_lock);
}

/*
 * Pace @u's watches that reach magnetk (GCRA): SS_PACE_BURST at once,
 * then one per SS_PACE_IVAL.  The caller sleeps (interruptibly) until its
 * turn; nothing is done yet, so a signal restarts the call.
 */
static int ss_pace(struct ss_user *u)
{
	unsigned long now;
	long wait;

	for (;;) {
		mutex_lock(&ss_users_lock);
		now = jiffies;
		if (time_before(u->tat, now))
			u->tat = now;
		wait = (long)(u->tat - now) - SS_PACE_TOL;
		if (wait <= 0)
			u->tat += SS_PACE_IVAL;
		mutex_unlock(&ss_users_lock);
		if (wait <= 0)
			return 0;
		schedule_timeout_interruptible(wait);
		if (signal_pending(current))
			return -ERESTARTSYS;
	}
}

static void ss_req_free(struct ss_req *r)
{
	int i;

	kfree(r->w);
	kfree(r->ss);
	for (i = 0; i < SS_NR; i++)
		magnet_synth_free(r->sy[i]);
}

/* What a new socket's watch needs, charged to the caller's memcg. */
static int ss_req_alloc_sock(struct ss_req *r, gfp_t gfp)
{
	int i;

	r->ss = kzalloc(sizeof(*r->ss), gfp);
	if (!r->ss)
		return -ENOMEM;
	for (i = 0; i < SS_NR; i++) {
		r->sy[i] = magnet_synth_alloc_gfp(1, gfp);
		if (!r->sy[i])
			return -ENOMEM;
	}
	return 0;
}

/* @f->lock held: this file's watches change only here and at release. */
static long ss_do_watch_call(struct ss_file *f, struct ss_req *r)
{
	gfp_t gfp = f->user ? GFP_KERNEL_ACCOUNT : GFP_KERNEL;
	bool watched, mine;
	int err;

	mutex_lock(&magnet_db.lock);
	mine = ss_file_find(f, r->id);
	watched = ss_find(r->id);
	mutex_unlock(&magnet_db.lock);
	if (mine)
		return 0;		/* watching already: nothing to do */
	if (f->user) {
		err = ss_quota_take(f->user);
		if (err)
			return err;
		err = ss_pace(f->user);
		if (err) {
			ss_quota_put(f->user, 1);
			return err;
		}
	}
	r->w = kzalloc(sizeof(*r->w), gfp);
	err = r->w ? 0 : -ENOMEM;
	if (!err && !watched)
		err = ss_req_alloc_sock(r, gfp);
	if (!err)
		err = magnetk_call(ss_do_watch, r);
	if (err == -EAGAIN) {
		/* its last watch went meanwhile: now with everything */
		err = ss_req_alloc_sock(r, gfp);
		if (!err)
			err = magnetk_call(ss_do_watch, r);
	}
	ss_req_free(r);
	if (!err)
		f->nr_watches++;
	else if (f->user)
		ss_quota_put(f->user, 1);
	return err;
}

static long ss_watch(struct ss_file *f, int fd, bool watch)
{
	struct ss_req r = { .f = f };
	struct socket *sock;
	bool mine;
	int err;

	sock = ss_lookup(fd, &r.id, &err);
	if (!sock)
		return err;
	r.sk = sock->sk;
	if (watch) {
		err = ss_do_watch_call(f, &r);
	} else {
		mutex_lock(&magnet_db.lock);
		mine = ss_file_find(f, r.id);
		mutex_unlock(&magnet_db.lock);
		if (!mine) {
			err = -ENOENT;	/* not watched through this file */
		} else {
			if (f->sub && f->sub->id == r.id)
				ss_unsubscribe(f);
			err = magnetk_call(ss_do_unwatch, &r);
		}
		if (!err) {
			f->nr_watches--;
			if (f->user)
				ss_quota_put(f->user, 1);
		}
	}
	sockfd_put(sock);
	return err;
}

static long ss_stats(struct ss_file *f, unsigned int cmd, void __user *arg,
		     bool by_id)
{
	size_t usize = _IOC_SIZE(cmd);
	struct magnet_sock_stats in, st;
	struct socket *sock = NULL;
	struct sock *sk = NULL;
	struct ss_watch *w;
	struct ss_sock *ss;
	u64 id = 0;
	int err = 0;

	if (usize < MAGNET_SOCK_STATS_SIZE_V1)
		return -EINVAL;
	memset(&in, 0, sizeof(in));
	if (copy_from_user(&in, arg, min(usize, sizeof(in))))
		return -EFAULT;
	if (by_id) {
		if (!capable(CAP_NET_ADMIN) && !capable(CAP_SYS_ADMIN))
			return -EPERM;
		id = in.abstract_id;
	} else {
		sock = ss_lookup(in.fd, &id, &err);
		if (!sock)
			return err;
	}
	ss_init_stats(&st, by_id ? -1 : in.fd);
	mutex_lock(&magnet_db.lock);
	if (by_id) {
		ss = ss_find(id);
	} else {
		w = ss_file_find(f, id);
		ss = w ? w->ss : NULL;
	}
	if (ss) {
		ss_fill(ss, &st);
		sk = ss->sk;
		sock_hold(sk);
	} else {
		err = -ENOENT;		/* not watched (through this file) */
	}
	mutex_unlock(&magnet_db.lock);
	if (sk) {
		ss_fill_sock(sk, &st);
		sock_put(sk);
	}
	if (sock)
		sockfd_put(sock);
	if (err)
		return err;
	/* an older, smaller struct: what fits, and @size says so */
	st.size = min(usize, sizeof(st));
	if (copy_to_user(arg, &st, st.size))
		return -EFAULT;
	if (usize > sizeof(st) &&
	    clear_user((char __user *)arg + sizeof(st), usize - sizeof(st)))
		return -EFAULT;
	return 0;
}

static long ss_subscribe(struct ss_file *f, void __user *arg)
{
	struct magnet_sock_sub sub;
	struct socket *sock;
	struct ss_watch *w;
	u64 id;
	int err = 0;

	if (copy_from_user(&sub, arg, sizeof(sub)))
		return -EFAULT;
	if (!sub.period_ms) {
		ss_unsubscribe(f);
		return 0;
	}
	if (sub.period_ms < MAGNET_SOCK_PERIOD_MIN_MS ||
	    sub.period_ms > MAGNET_SOCK_PERIOD_MAX_MS)
		return -ERANGE;
	sock = ss_lookup(sub.fd, &id, &err);
	if (!sock)
		return err;
	sockfd_put(sock);
	ss_unsubscribe(f);
	mutex_lock(&magnet_db.lock);
	w = ss_file_find(f, id);
	mutex_unlock(&magnet_db.lock);
	/* @w cannot go: unwatching takes f->lock, which we hold */
	if (!w)
		return -ENOENT;
	spin_lock_irq(&f->qlock);
	f->seq = 0;
	f->dropped = 0;
	spin_unlock_irq(&f->qlock);
	f->sub = w->ss;
	f->period = max(1ul, msecs_to_jiffies(sub.period_ms));
	f->next = jiffies + f->period;
	queue_delayed_work(system_wq, &f->work, f->period);
	return 0;
}

static long ss_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct ss_file *f = file->private_data;
	void __user *uarg = (void __user *)arg;
	s32 fd;
	long ret;

	if (_IOC_TYPE(cmd) != MAGNET_IOC_MAGIC)
		return -ENOTTY;
	mutex_lock(&f->lock);
	switch (_IOC_NR(cmd)) {
	case _IOC_NR(MAGNET_IOC_SOCK_WATCH):
	case _IOC_NR(MAGNET_IOC_SOCK_UNWATCH):
		if (cmd != MAGNET_IOC_SOCK_WATCH &&
		    cmd != MAGNET_IOC_SOCK_UNWATCH) {
			ret = -ENOTTY;
			break;
		}
		if (get_user(fd, (s32 __user *)uarg)) {
			ret = -EFAULT;
			break;
		}
		ret = ss_watch(f, fd, cmd == MAGNET_IOC_SOCK_WATCH);
		break;
	case _IOC_NR(MAGNET_IOC_SOCK_STATS):
	case _IOC_NR(MAGNET_IOC_SOCK_STATS_BY_ID):
		if (_IOC_DIR(cmd) != (_IOC_READ | _IOC_WRITE)) {
			ret = -ENOTTY;
			break;
		}
		ret = ss_stats(f, cmd, uarg, _IOC_NR(cmd) ==
			       _IOC_NR(MAGNET_IOC_SOCK_STATS_BY_ID));
		break;
	case _IOC_NR(MAGNET_IOC_SOCK_SUBSCRIBE):
		if (cmd != MAGNET_IOC_SOCK_SUBSCRIBE) {
			ret = -ENOTTY;
			break;
		}
		ret = ss_subscribe(f, uarg);
		break;
	default:
		ret = -ENOTTY;
	}
	mutex_unlock(&f->lock);
	return ret;
}

/* ---- file --------------------------------------------------------------- */

static int ss_open(struct inode *inode, struct file *file)
{
	/* the opener's credentials decide: passing the file passes them */
	bool priv = ns_capable_noaudit(&init_user_ns, CAP_NET_ADMIN);
	gfp_t gfp = priv ? GFP_KERNEL : GFP_KERNEL_ACCOUNT;
	struct ss_user *new = NULL;
	struct ss_file *f;

	f = kzalloc(sizeof(*f), gfp);
	if (!f)
		return -ENOMEM;
	if (!priv) {
		new = kzalloc(sizeof(*new), gfp);
		if (!new) {
			kfree(f);
			return -ENOMEM;
		}
		mutex_lock(&ss_users_lock);
		f->user = ss_user_get(ss_user_uid(file->f_cred), new);
		mutex_unlock(&ss_users_lock);
		if (f->user != new)
			kfree(new);
	}
	mutex_init(&f->lock);
	INIT_LIST_HEAD(&f->watches);
	INIT_DELAYED_WORK(&f->work, ss_work);
	spin_lock_init(&f->qlock);
	init_waitqueue_head(&f->wq);
	file->private_data = f;
	return nonseekable_open(inode, file);
}

static int ss_release(struct inode *inode, struct file *file)
{
	struct ss_file *f = file->private_data;

	mutex_lock(&f->lock);
	ss_unsubscribe(f);
	mutex_unlock(&f->lock);
	/* no other call on @f is left: nr_watches is exact */
	if (f->nr_watches)
		magnetk_call(ss_do_unwatch_all, f);
	if (f->user) {
		mutex_lock(&ss_users_lock);
		f->user->watches -= f->nr_watches;
		f->user->files--;
		mutex_unlock(&ss_users_lock);
	}
	kfree(f);
	return 0;
}

static bool ss_readable(struct ss_file *f)
{
	bool r;

	spin_lock_irq(&f->qlock);
	r = f->count > 0;
	spin_unlock_irq(&f->qlock);
	return r;
}

/* One summary struct per elapsed period, as many as @len holds. */
static ssize_t ss_read(struct file *file, char __user *buf, size_t len,
		       loff_t *ppos)
{
	struct ss_file *f = file->private_data;
	struct magnet_sock_stats st;
	size_t done = 0, unit = sizeof(st);
	int err;

	if (len < MAGNET_SOCK_STATS_SIZE_V1)
		return -EINVAL;
	/* an older, smaller struct: one summary, what fits (@size says) */
	if (len < unit)
		unit = len;
	if (!READ_ONCE(f->sub))
		return -ENODATA;	/* no subscription */
	if (!ss_readable(f)) {
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		err = wait_event_interruptible(f->wq, ss_readable(f) ||
					       !READ_ONCE(f->sub));
		if (err)
			return err;
	}
	while (done + unit <= len) {
		spin_lock_irq(&f->qlock);
		if (!f->count) {
			spin_unlock_irq(&f->qlock);
			break;
		}
		st = f->q[f->head];
		f->head = (f->head + 1) % SS_QLEN;
		f->count--;
		spin_unlock_irq(&f->qlock);
		st.size = unit;
		if (copy_to_user(buf + done, &st, unit))
			return done ? done : -EFAULT;
		done += unit;
	}
	return done;
}

static __poll_t ss_poll(struct file *file, poll_table *wait)
{
	struct ss_file *f = file->private_data;

	poll_wait(file, &f->wq, wait);
	return ss_readable(f) ? EPOLLIN | EPOLLRDNORM : 0;
}

const struct file_operations magnet_sockstat_fops = {
	.owner		= THIS_MODULE,
	.open		= ss_open,
	.release	= ss_release,
	.read		= ss_read,
	.poll		= ss_poll,
	.unlocked_ioctl	= ss_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

static int ss_do_exit(void *unused)
{
	mutex_lock(&magnet_db.lock);
	ss_corr_drop();
	mutex_unlock(&magnet_db.lock);
	return 0;
}

/*
 * Module exit, before the database goes: every file is closed; the
 * lingering correlator goes, the users left wait for nothing.
 */
void magnet_sockstat_exit(void)
{
	struct ss_user *u, *tmp;

	magnetk_call(ss_do_exit, NULL);
	list_for_each_entry_safe(u, tmp, &ss_users, node) {
		list_del(&u->node);
		kfree(u);
	}
}

int magnet_sockstat_init(struct dentry *dir)
{
	struct dentry *d;

	if (!dir)		/* no debugfs: magnetfs has the file */
		return 0;
	d = debugfs_create_file(MAGNET_SOCKSTAT_NAME, 0444, dir, NULL,
				&magnet_sockstat_fops);
	return PTR_ERR_OR_ZERO(d);
}
