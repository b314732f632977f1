// SPDX-License-Identifier: GPL-2.0
/*
 * magnetk: the control thread.  Every change to the instrumentation
 * database (registration of points by probe modules, enable/disable and
 * stream management requested over netlink) runs here, one at a time, in
 * the order it was asked for.  Callers sleep until their request is done
 * and get its result.  Between requests it runs the periodic work of the
 * correlators (kmod/corr.c), which traverse their streams with the kernel
 * reader (magnetfs/kreader.c), and of sockstat (kmod/sockstat.c).
 *
 * magnetk-synth, a second thread, emits the synthesizers' SYNTH records
 * when their periods end (magnet_synth_tick(), kmod/synth.c).  It never
 * waits for magnetk: a request may hold magnetk for seconds (a correlator
 * attaching or detaching its hooks) and the periods still come on time.
 */
#include <linux/kthread.h>
#include <linux/completion.h>
#include <linux/jiffies.h>
#include <linux/spinlock.h>
#include <linux/list.h>
#include <linux/sched.h>
#include "internal.h"
#include "sockstat.h"

struct magnetk_req {
	struct list_head node;
	int (*fn)(void *arg);
	void *arg;
	int ret;
	struct completion done;
};

static struct task_struct *magnetk_task;
static LIST_HEAD(magnetk_queue);
static DEFINE_SPINLOCK(magnetk_lock);
static DECLARE_WAIT_QUEUE_HEAD(magnetk_wq);

static struct task_struct *synth_task;
static DECLARE_WAIT_QUEUE_HEAD(synth_wq);
static bool synth_kicked;

static struct magnetk_req *magnetk_dequeue(void)
{
	struct magnetk_req *req;

	spin_lock(&magnetk_lock);
	req = list_first_entry_or_null(&magnetk_queue, struct magnetk_req,
				       node);
	if (req)
		list_del(&req->node);
	spin_unlock(&magnetk_lock);
	return req;
}

/* The periodic work; jiffies until it is due again. */
static long magnetk_periodic(void)
{
	long a = magnet_corrs_tick();
	long b = magnet_sockstat_tick();
	long c = magnet_db_missed_tick();

	return min3(a, b, c);
}

/*
 * Requests and periodic work interleave: each round takes the requests
 * queued so far (later ones wait for the next round) and, between two of
 * them, runs the periodic work once it is due.  Callers that keep
 * queueing requests (a loop of sockstat watches, docs/SOCKSTAT.md) thus
 * delay a correlator's drain by at most one request, never indefinitely.
 */
static int magnetk_thread(void *unused)
{
	long timeout = MAX_SCHEDULE_TIMEOUT;
	struct magnetk_req *req, *tmp;
	unsigned long due;
	LIST_HEAD(batch);

	while (!kthread_should_stop()) {
		/* sleeps until a request comes or a correlator is due */
		wait_event_interruptible_timeout(magnetk_wq,
						 !list_empty_careful(&magnetk_queue) ||
						 kthread_should_stop(), timeout);
		timeout = magnetk_periodic();
		due = jiffies + timeout;
		spin_lock(&magnetk_lock);
		list_splice_init(&magnetk_queue, &batch);
		spin_unlock(&magnetk_lock);
		list_for_each_entry_safe(req, tmp, &batch, node) {
			list_del(&req->node);
			req->ret = req->fn(req->arg);
			complete(&req->done);
			if (timeout != MAX_SCHEDULE_TIMEOUT &&
			    time_after_eq(jiffies, due)) {
				timeout = magnetk_periodic();
				due = jiffies + timeout;
			}
		}
		/* a request may have added a correlator: recompute */
		timeout = magnetk_periodic();
	}
	return 0;
}

int magnetk_call(int (*fn)(void *arg), void *arg)
{
	struct magnetk_req req = { .fn = fn, .arg = arg };

	/* magnetk may itself unregister nothing; never call it recursively */
	if (WARN_ON_ONCE(current == magnetk_task))
		return fn(arg);
	init_completion(&req.done);
	spin_lock(&magnetk_lock);
	list_add_tail(&req.node, &magnetk_queue);
	spin_unlock(&magnetk_lock);
	wake_up(&magnetk_wq);
	wait_for_completion(&req.done);
	return req.ret;
}

/* magnetk-synth: each synthesizer's periods, as they end */
static int magnetk_synth_thread(void *unused)
{
	long timeout = MAX_SCHEDULE_TIMEOUT;

	while (!kthread_should_stop()) {
		wait_event_interruptible_timeout(synth_wq,
						 READ_ONCE(synth_kicked) ||
						 kthread_should_stop(), timeout);
		WRITE_ONCE(synth_kicked, false);
		/*
		 * A kick from now on is seen by the next wait: the clear is
		 * ordered before the tick's reading of the list, which a
		 * kicker changed before setting the flag.
		 */
		smp_mb();
		timeout = magnet_synth_tick();
	}
	return 0;
}

void magnetk_synth_kick(void)
{
	WRITE_ONCE(synth_kicked, true);
	wake_up(&synth_wq);
}

int magnetk_start(void)
{
	magnetk_task = kthread_run(magnetk_thread, NULL, "magnetk");
	if (IS_ERR(magnetk_task))
		return PTR_ERR(magnetk_task);
	synth_task = kthread_run(magnetk_synth_thread, NULL, "magnetk-synth");
	if (IS_ERR(synth_task)) {
		kthread_stop(magnetk_task);
		return PTR_ERR(synth_task);
	}
	return 0;
}

void magnetk_stop(void)
{
	struct magnetk_req *req;

	/* every synthesizer is gone (magnet_db_teardown()) */
	kthread_stop(synth_task);
	kthread_stop(magnetk_task);
	/* nobody can queue now: module exit runs after all users are gone */
	while ((req = magnetk_dequeue())) {
		req->ret = req->fn(req->arg);
		complete(&req->done);
	}
}
