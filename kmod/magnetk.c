// SPDX-License-Identifier: GPL-2.0
/*
 * magnetk: the control thread.  Every change to the instrumentation
 * database (registration of points by probe modules, enable/disable and
 * stream management requested over netlink) runs here, one at a time, in
 * the order it was asked for.  Callers sleep until their request is done
 * and get its result.  Between requests it runs the periodic work: the
 * synthesizers' emission of SYNTH records (kmod/synth.c) and the
 * correlators (kmod/corr.c), which traverse their streams with the kernel
 * reader (magnetfs/kreader.c).
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
	long a = magnet_synth_tick();
	long b = magnet_corrs_tick();
	long c = magnet_sockstat_tick();

	return min3(a, b, c);
}

/*
 * Requests and periodic work interleave: each round takes the requests
 * queued so far (later ones wait for the next round) and, between two of
 * them, runs the periodic work once it is due.  Callers that keep
 * queueing requests (a loop of sockstat watches, docs/SOCKSTAT.md) thus
 * delay a synthesizer's period or a correlator's drain by at most one
 * request, never indefinitely.
 */
static int magnetk_thread(void *unused)
{
	long timeout = MAX_SCHEDULE_TIMEOUT;
	struct magnetk_req *req, *tmp;
	unsigned long due;
	LIST_HEAD(batch);

	while (!kthread_should_stop()) {
		/* sleeps until a request comes or a synthesizer's period ends */
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
		/* a request may have added a synthesizer: recompute */
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

int magnetk_start(void)
{
	magnetk_task = kthread_run(magnetk_thread, NULL, "magnetk");
	return PTR_ERR_OR_ZERO(magnetk_task);
}

void magnetk_stop(void)
{
	struct magnetk_req *req;

	kthread_stop(magnetk_task);
	/* nobody can queue now: module exit runs after all users are gone */
	while ((req = magnetk_dequeue())) {
		req->ret = req->fn(req->arg);
		complete(&req->done);
	}
}
