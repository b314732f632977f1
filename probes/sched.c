// SPDX-License-Identifier: GPL-2.0
/*
 * magnet_sched.ko: scheduler instrumentation points (the papers'
 * context-switch monitoring): process creation, exec, exit and every
 * context switch, from the sched tracepoints.
 *
 * With sched_switch one can compute, per CPU, how long each task ran
 * (time between the switch that put it on the CPU and the one that took it
 * off) and how long switches take.  Handlers run with the runqueue lock
 * held (sched_switch) or in the task's own context: no sleeping, no
 * allocation, no locks; magnet_add() defers reader wake-ups to irq_work.
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
#include <linux/rcupdate.h>
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

/* Never called: the handlers must match TP_PROTO of the kernel's headers. */
static inline void __maybe_unused msched_check_types(void)
{
	check_trace_callback_type_sched_switch(msched_switch);
	check_trace_callback_type_sched_process_fork(msched_fork);
	check_trace_callback_type_sched_process_exec(msched_exec);
	check_trace_callback_type_sched_process_exit(msched_exit);
}

static int __init msched_init(void)
{
	return mtp_register(msched_hooks, ARRAY_SIZE(msched_hooks),
			    THIS_MODULE);
}

static void __exit msched_exit_mod(void)
{
	mtp_unregister(msched_hooks, ARRAY_SIZE(msched_hooks));
}

module_init(msched_init);
module_exit(msched_exit_mod);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("MAGNET");
MODULE_DESCRIPTION("MAGNET scheduler instrumentation points");
