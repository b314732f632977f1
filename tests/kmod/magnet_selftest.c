// SPDX-License-Identifier: GPL-2.0
/*
 * magnet_selftest: a probe module for tests.  While its point "selftest"
 * is enabled, a kthread bound to each online CPU calls magnet_add() @count
 * times as fast as it can (task context) while a pinned hrtimer on the
 * same CPU adds an event every @period_us (hardirq context, also on
 * PREEMPT_RT: the timer is HARD, not moved to the softirq thread), so
 * the per-CPU rings see nested writers and a reader that cannot keep up.
 * Each payload carries a per-CPU, per-context sequence number; the
 * abstract ID is the CPU.  It calls magnet_wants() first, so events a
 * filter refuses early take no sequence number.
 *
 * Parameters: count, period_us; dup_name registers a second point with
 * that name (to test that a duplicate name is refused); running (read
 * only) is the number of producer threads still at work; produced (read
 * only) has a line "CPU TASK IRQ" per CPU a producer ran on: the events
 * each context handed to magnet_add() since the last enable, which its
 * stream wrote or counted lost (read it once running is 0).
 */
#include <linux/module.h>
#include <linux/kthread.h>
#include <linux/hrtimer.h>
#include <linux/percpu.h>
#include <linux/cpumask.h>
#include <linux/cpu.h>
#include <linux/sched.h>
#include <linux/atomic.h>
#include <magnet/magnet.h>

static unsigned long count = 200000;
module_param(count, ulong, 0444);
static unsigned int period_us = 50;
module_param(period_us, uint, 0444);
static char *dup_name;
module_param(dup_name, charp, 0444);
static atomic_t running = ATOMIC_INIT(0);
static int running_get(char *buf, const struct kernel_param *kp)
{
	return sprintf(buf, "%d\n", atomic_read(&running));
}
static const struct kernel_param_ops running_ops = { .get = running_get };
module_param_cb(running, &running_ops, NULL, 0444);

static int produced_get(char *buf, const struct kernel_param *kp);
static const struct kernel_param_ops produced_ops = { .get = produced_get };
module_param_cb(produced, &produced_ops, NULL, 0444);

struct st_payload {
	u64 seq;
	u32 cpu;
	u32 irq;	/* 1: from the hrtimer */
};

struct st_cpu {
	struct task_struct *task;
	struct hrtimer timer;
	u64 seq_task;
	u64 seq_irq;
	bool ran;		/* a producer ran here since the last enable */
};

static DEFINE_PER_CPU(struct st_cpu, st_cpus);

static int produced_get(char *buf, const struct kernel_param *kp)
{
	int cpu, n = 0;

	for_each_possible_cpu(cpu) {
		struct st_cpu *c = per_cpu_ptr(&st_cpus, cpu);

		if (READ_ONCE(c->ran))
			n += scnprintf(buf + n, PAGE_SIZE - n, "%d %llu %llu\n",
				       cpu, READ_ONCE(c->seq_task),
				       READ_ONCE(c->seq_irq));
	}
	return n;
}

static struct magnet_point *st_point;
static struct magnet_point *st_dup;

static void st_emit(u64 *seq, int irq)
{
	struct st_payload p;

	/* the early exit: a refused event costs no payload, no sequence number */
	if (!magnet_wants(st_point, raw_smp_processor_id()))
		return;
	p.seq = (*seq)++;
	p.cpu = raw_smp_processor_id();
	p.irq = irq;
	magnet_add(st_point, p.cpu, &p, sizeof(p));
}

static enum hrtimer_restart st_timer_fn(struct hrtimer *t)
{
	struct st_cpu *c = container_of(t, struct st_cpu, timer);

	st_emit(&c->seq_irq, 1);
	hrtimer_forward_now(t, ns_to_ktime((u64)period_us * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static int st_thread(void *arg)
{
	struct st_cpu *c = arg;
	unsigned long i;

	hrtimer_start(&c->timer, ns_to_ktime((u64)period_us * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_PINNED_HARD);
	for (i = 0; i < count && !kthread_should_stop(); i++) {
		preempt_disable();
		st_emit(&c->seq_task, 0);
		preempt_enable();
		if (i % 256 == 0)
			cond_resched();
	}
	hrtimer_cancel(&c->timer);
	atomic_dec(&running);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(HZ / 10);
	return 0;
}

static void st_stop_all(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct st_cpu *c = per_cpu_ptr(&st_cpus, cpu);

		if (c->task) {
			kthread_stop(c->task);
			c->task = NULL;
		}
	}
}

static int st_enable(struct magnet_point *pt)
{
	int cpu;

	for_each_possible_cpu(cpu)
		WRITE_ONCE(per_cpu_ptr(&st_cpus, cpu)->ran, false);
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		struct st_cpu *c = per_cpu_ptr(&st_cpus, cpu);
		struct task_struct *t;

		c->seq_task = 0;
		c->seq_irq = 0;
		WRITE_ONCE(c->ran, true);
		hrtimer_init(&c->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
		c->timer.function = st_timer_fn;
		t = kthread_create_on_cpu(st_thread, c, cpu, "magnet_st/%u");
		if (IS_ERR(t)) {
			cpus_read_unlock();
			st_stop_all();
			return PTR_ERR(t);
		}
		c->task = t;
		atomic_inc(&running);
		wake_up_process(t);
	}
	cpus_read_unlock();
	return 0;
}

static void st_disable(struct magnet_point *pt)
{
	st_stop_all();
	atomic_set(&running, 0);
}

static const struct magnet_point_ops st_ops = {
	.enable = st_enable,
	.disable = st_disable,
};

static const struct magnet_point_desc st_desc = {
	.name = "selftest",
	.layer = MAGNET_LAYER_CORE,
	.payload = MAGNET_PAYLOAD_RAW,
	.hook = "kthread+hrtimer",
	.ops = &st_ops,
};

static struct magnet_point_desc st_dup_desc = {
	.layer = MAGNET_LAYER_CORE,
	.payload = MAGNET_PAYLOAD_RAW,
	.hook = "none",
	.ops = &st_ops,
};

static int __init st_init(void)
{
	st_point = magnet_point_register(&st_desc, THIS_MODULE, NULL);
	if (IS_ERR(st_point))
		return PTR_ERR(st_point);
	if (dup_name) {
		st_dup_desc.name = dup_name;
		st_dup = magnet_point_register(&st_dup_desc, THIS_MODULE, NULL);
		if (IS_ERR(st_dup)) {
			int err = PTR_ERR(st_dup);

			pr_info("magnet_selftest: registering '%s': %d\n",
				dup_name, err);
			magnet_point_unregister(st_point);
			return err;
		}
	}
	return 0;
}

static void __exit st_exit(void)
{
	magnet_point_unregister(st_dup);
	magnet_point_unregister(st_point);
}

module_init(st_init);
module_exit(st_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("MAGNET self-test probe: task and hardirq load on every CPU");
