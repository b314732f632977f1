// SPDX-License-Identifier: GPL-2.0
/*
 * magnet_sched.ko: scheduler instrumentation points (the papers'
 * context-switch monitoring): process creation, exec, exit and every
 * context switch, from the sched tracepoints, and the end of every switch.
 *
 * With sched_switch one can compute, per CPU, how long each task ran
 * (time between the switch that put it on the CPU and the one that took it
 * off: the run time).  How long the switch itself takes is
 * sched_switch_end's: a second probe on sched:sched_switch notes the
 * start per CPU, an ftrace callback at the entry of finish_task_switch()
 * (the first thing the new task runs, also after a fork) records the
 * time since, on the same CPU, with interrupts off in between, from
 * sched_clock(): the raw scheduler clock (the TSC), which local_clock()
 * filters so that it stalls within a tick where the TSC is not trusted
 * (the 6.1 guests: durations of 0).  Handlers
 * run with the runqueue lock held (sched_switch, finish_task_switch) or
 * in the task's own context: no sleeping, no allocation, no locks;
 * magnet_add() defers reader wake-ups to irq_work.
 *
 * Task IDs are the global thread/process IDs (task->pid / task->tgid).
 * The four tracepoints have the same prototypes in 6.1 and 6.12 (checked
 * at compile time below), so there is nothing for compat.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/binfmts.h>
#include <linux/ftrace.h>
#include <linux/trace_recursion.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched/clock.h>
#include <trace/events/sched.h>

#include "mtp.h"

static __always_inline void msched_comm(char *dst, const struct task_struct *t)
{
	/* comm may change under us (prctl); a torn name is acceptable */
	memcpy(dst, t->comm, MAGNET_COMM_LEN);
	dst[MAGNET_COMM_LEN - 1] = '\0';
}

/* sched:sched_switch */
static void msched_switch(void *data, bool preempt, struct task_struct *prev,
			  struct task_struct *next, unsigned int prev_state)
{
	struct mtp_hook *h = data;
	struct magnet_sched_switch_payload p = {
		.prev_pid = prev->pid,
		.prev_tgid = prev->tgid,
		.next_pid = next->pid,
		.next_tgid = next->tgid,
		.prev_state = preempt ? 0 : prev_state,
		.prev_prio = prev->prio,
		.next_prio = next->prio,
		.cpu = raw_smp_processor_id(),
	};

	msched_comm(p.prev_comm, prev);
	msched_comm(p.next_comm, next);
	magnet_add(READ_ONCE(h->pt), next->pid, &p, sizeof(p));
}

/* sched:sched_process_fork, in the parent after the child is set up */
static void msched_fork(void *data, struct task_struct *parent,
			struct task_struct *child)
{
	struct mtp_hook *h = data;
	struct magnet_sched_proc_payload p = {
		.pid = child->pid,
		.tgid = child->tgid,
		.ppid = parent->pid,
		.ptgid = parent->tgid,
		.flags = child->tgid == parent->tgid ? MAGNET_SCHED_F_THREAD : 0,
	};

	msched_comm(p.comm, child);
	magnet_add(READ_ONCE(h->pt), child->pid, &p, sizeof(p));
}

/* sched:sched_process_exit, in the exiting task, exit_code set */
static void msched_exit(void *data, struct task_struct *t)
{
	struct mtp_hook *h = data;
	struct magnet_sched_proc_payload p = {
		.pid = t->pid,
		.tgid = t->tgid,
		.exit_code = t->exit_code,
	};
	struct task_struct *parent;

	rcu_read_lock();
	parent = rcu_dereference(t->real_parent);
	if (parent) {
		p.ppid = parent->pid;
		p.ptgid = parent->tgid;
	}
	rcu_read_unlock();
	msched_comm(p.comm, t);
	magnet_add(READ_ONCE(h->pt), t->pid, &p, sizeof(p));
}

/* sched:sched_process_exec, after the new image is in place */
static void msched_exec(void *data, struct task_struct *t, pid_t old_pid,
			struct linux_binprm *bprm)
{
	struct mtp_hook *h = data;
	struct magnet_sched_exec_payload p = {
		.pid = t->pid,
		.tgid = t->tgid,
		.old_pid = old_pid,
	};
	const char *fn = bprm->filename;
	size_t n = fn ? strnlen(fn, PATH_MAX) : 0;

	/* keep the tail of a long path: the program name */
	if (n >= sizeof(p.filename))
		fn += n - (sizeof(p.filename) - 1);
	if (fn)
		strscpy(p.filename, fn, sizeof(p.filename));
	msched_comm(p.comm, t);
	magnet_add(READ_ONCE(h->pt), t->pid, &p, sizeof(p));
}

static struct mtp_hook msched_hooks[] = {
	MTP_HOOK("sched_switch", SCHED, SCHED_SWITCH, "sched", "sched_switch",
		 msched_switch),
	MTP_HOOK("sched_fork", SCHED, SCHED_PROC, "sched",
		 "sched_process_fork", msched_fork),
	MTP_HOOK("sched_exec", SCHED, SCHED_EXEC, "sched",
		 "sched_process_exec", msched_exec),
	MTP_HOOK("sched_exit", SCHED, SCHED_PROC, "sched",
		 "sched_process_exit", msched_exit),
};

/* ---- sched_switch_end: the switch's duration ------------------------------ */

/* The switch under way on this CPU, noted at sched:sched_switch. */
struct mcs_start {
	u64 t;				/* sched_clock(); 0: none noted */
	u32 prev_pid, prev_tgid, next_pid, next_tgid;
};

static DEFINE_PER_CPU(struct mcs_start, mcs_start);

static struct {
	struct magnet_point *pt;
	struct tracepoint *tp;
#ifdef CONFIG_DYNAMIC_FTRACE
	struct ftrace_ops fops;
#endif
} mcs;

/* sched:sched_switch, a probe of its own: the start, in the old task */
static void notrace mcs_switch(void *data, bool preempt,
			       struct task_struct *prev,
			       struct task_struct *next,
			       unsigned int prev_state)
{
	struct mcs_start *s = this_cpu_ptr(&mcs_start);

	s->prev_pid = prev->pid;
	s->prev_tgid = prev->tgid;
	s->next_pid = next->pid;
	s->next_tgid = next->tgid;
	s->t = sched_clock();
}

#ifdef CONFIG_DYNAMIC_FTRACE
/*
 * finish_task_switch() entry, in the new task (rq lock held, interrupts
 * off since the start): the end.  A start of another task (the callback
 * attached mid-switch) is dropped, not paired.
 */
static void notrace mcs_end(unsigned long ip, unsigned long pip,
			    struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	struct mcs_start *s = this_cpu_ptr(&mcs_start);
	u64 now = sched_clock();
	struct magnet_sched_switch_end_payload p;
	int bit;

	if (!s->t || s->next_pid != current->pid) {
		s->t = 0;
		return;
	}
	/*
	 * Registered without FTRACE_OPS_FL_RECURSION (no helper call),
	 * ftrace leaves recursion protection to the callback
	 * (Documentation/trace/ftrace-uses.rst); interrupts are off here.
	 */
	bit = ftrace_test_recursion_trylock(ip, pip);
	if (bit < 0) {
		s->t = 0;
		magnet_add_lost(READ_ONCE(mcs.pt), 1);
		return;
	}
	p = (struct magnet_sched_switch_end_payload) {
		.switch_ns = now - s->t,
		.prev_pid = s->prev_pid,
		.prev_tgid = s->prev_tgid,
		.next_pid = s->next_pid,
		.next_tgid = s->next_tgid,
		.cpu = raw_smp_processor_id(),
	};
	s->t = 0;
	magnet_add(READ_ONCE(mcs.pt), p.next_pid, &p, sizeof(p));
	ftrace_test_recursion_unlock(bit);
}

/* "finish_task_switch" or a compiler's clone of it (".isra.0") */
#define MCS_TARGET "finish_task_switch*"

static int mcs_enable(struct magnet_point *pt)
{
	struct mtp_lookup l = { .name = "sched_switch" };
	/* ftrace parses the glob in place: a writable copy */
	char glob[] = MCS_TARGET;
	int cpu, ret;

	WRITE_ONCE(mcs.pt, pt);
	for_each_possible_cpu(cpu)
		per_cpu_ptr(&mcs_start, cpu)->t = 0;
	for_each_kernel_tracepoint(mtp_match, &l);
	if (!l.tp)
		return -ENOENT;
	mcs.tp = l.tp;
	memset(&mcs.fops, 0, sizeof(mcs.fops));
	mcs.fops.func = mcs_end;
	/* -EINVAL: no traceable finish_task_switch in this kernel */
	ret = ftrace_set_filter(&mcs.fops, (unsigned char *)glob,
				strlen(glob), 1);
	if (ret) {
		pr_warn("sched_switch_end: no traceable %s: %d\n", MCS_TARGET,
			ret);
		goto free;
	}
	ret = tracepoint_probe_register(mcs.tp, mcs_switch, NULL);
	if (ret)
		goto free;
	ret = register_ftrace_function(&mcs.fops);
	if (ret) {
		tracepoint_probe_unregister(mcs.tp, mcs_switch, NULL);
		tracepoint_synchronize_unregister();
		goto free;
	}
	return 0;
free:
	ftrace_free_filter(&mcs.fops);
	return ret;
}

static void mcs_disable(struct magnet_point *pt)
{
	/* waits until no callback runs (the ops is a module's: dynamic) */
	unregister_ftrace_function(&mcs.fops);
	ftrace_free_filter(&mcs.fops);
	tracepoint_probe_unregister(mcs.tp, mcs_switch, NULL);
	tracepoint_synchronize_unregister();
}
#else
static int mcs_enable(struct magnet_point *pt)
{
	return -EOPNOTSUPP;	/* no ftrace: no hook at finish_task_switch() */
}

static void mcs_disable(struct magnet_point *pt)
{
}
#endif

static const struct magnet_point_ops mcs_ops = {
	.enable = mcs_enable,
	.disable = mcs_disable,
};

static struct magnet_point_desc mcs_desc = {
	.name = "sched_switch_end",
	.layer = MAGNET_LAYER_SCHED,
	.payload = MAGNET_PAYLOAD_SCHED_SWITCH_END,
	.hook = "tracepoint:sched:sched_switch+ftrace:finish_task_switch",
	.ops = &mcs_ops,
};

/* Never called: the handlers must match TP_PROTO of the kernel's headers. */
static inline void __maybe_unused msched_check_types(void)
{
	check_trace_callback_type_sched_switch(msched_switch);
	check_trace_callback_type_sched_switch(mcs_switch);
	check_trace_callback_type_sched_process_fork(msched_fork);
	check_trace_callback_type_sched_process_exec(msched_exec);
	check_trace_callback_type_sched_process_exit(msched_exit);
}

static int __init msched_init(void)
{
	struct magnet_point *pt;
	int ret;

	ret = mtp_register(msched_hooks, ARRAY_SIZE(msched_hooks),
			   THIS_MODULE);
	if (ret)
		return ret;
	pt = magnet_point_register(&mcs_desc, THIS_MODULE, &mcs);
	if (IS_ERR(pt)) {
		pr_err("registering sched_switch_end: %ld\n", PTR_ERR(pt));
		mtp_unregister(msched_hooks, ARRAY_SIZE(msched_hooks));
		return PTR_ERR(pt);
	}
	mcs.pt = pt;
	return 0;
}

static void __exit msched_exit_mod(void)
{
	/* unregister disables first, which detaches the hooks */
	magnet_point_unregister(mcs.pt);
	mtp_unregister(msched_hooks, ARRAY_SIZE(msched_hooks));
}

module_init(msched_init);
module_exit(msched_exit_mod);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("MAGNET");
MODULE_DESCRIPTION("MAGNET scheduler instrumentation points");
