// SPDX-License-Identifier: GPL-2.0
/*
 * magnet_example.ko: the smallest useful probe module (docs/WRITING_PROBES.md).
 * One point, "example_switch": every context switch, with the pids of the
 * task leaving and the task entering the CPU.
 */
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/tracepoint.h>
#include <trace/events/sched.h>
#include <magnet/magnet.h>

struct example_payload {		/* what a record carries after its header */
	__u32 prev_pid;
	__u32 next_pid;
};

static struct magnet_point *example_pt;
static struct tracepoint *example_tp;

/* The hook: any context, no sleeping, no locks, no allocation. */
static void example_switch(void *data, bool preempt, struct task_struct *prev,
			   struct task_struct *next, unsigned int prev_state)
{
	struct example_payload p = { .prev_pid = prev->pid, .next_pid = next->pid };

	magnet_add(data, next->pid, &p, sizeof(p));
}

static int example_enable(struct magnet_point *pt)	/* process context */
{
	return tracepoint_probe_register(example_tp, example_switch, pt);
}

static void example_disable(struct magnet_point *pt)
{
	tracepoint_probe_unregister(example_tp, example_switch, pt);
	tracepoint_synchronize_unregister();	/* no handler runs after this */
}

static const struct magnet_point_ops example_ops = {
	.enable = example_enable,
	.disable = example_disable,
};

static const struct magnet_point_desc example_desc = {
	.name = "example_switch",
	.layer = MAGNET_LAYER_SCHED,
	.payload = MAGNET_PAYLOAD_RAW,
	.hook = "tracepoint:sched:sched_switch",
	.ops = &example_ops,
};

static void example_find(struct tracepoint *tp, void *unused)
{
	if (!strcmp(tp->name, "sched_switch"))
		example_tp = tp;
}

static int __init example_init(void)
{
	for_each_kernel_tracepoint(example_find, NULL);
	if (!example_tp)
		return -ENOENT;
	example_pt = magnet_point_register(&example_desc, THIS_MODULE, NULL);
	return PTR_ERR_OR_ZERO(example_pt);
}

static void __exit example_exit(void)
{
	magnet_point_unregister(example_pt);	/* disables it first */
}

module_init(example_init);
module_exit(example_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("MAGNET example probe module: context switches");
