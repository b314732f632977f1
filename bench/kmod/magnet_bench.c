// SPDX-License-Identifier: GPL-2.0
/*
 * magnet_bench: micro-benchmarks of the MAGNET fast path, for bench/run.sh.
 * Never needed in production; never used by the tests.
 *
 * It registers one point, "bench" (no hook: enabling it only points it at
 * a stream), and is driven through two module parameters:
 *
 *   echo "time MODE LEN N" > /sys/module/magnet_bench/parameters/cmd
 *	Times N calls on the writer's CPU, in batches of BATCH calls with
 *	preemption off (interrupts on), with local_clock() and get_cycles()
 *	around each batch.  MODE:
 *	  empty   the timing loop alone (what the other numbers include)
 *	  off     magnet_add() on the point while it is disabled
 *	  magnet  magnet_add() with LEN payload bytes (enable "bench" first)
 *	  ftrace  the kernel's ftrace ring buffer (ring_buffer_lock_reserve,
 *	          a 24-byte header like MAGNET's minus the timestamp that
 *	          ftrace adds itself, LEN payload bytes, unlock_commit), a
 *	          private buffer of 32 MiB per CPU in overwrite mode
 *	  clock-mono, clock-local, clock-tsc
 *	          one read of a clock a stream can record (LEN ignored):
 *	          ktime_get_mono_fast_ns() (MAGNET_CLOCK_MONOTONIC),
 *	          local_clock() (MAGNET_CLOCK_LOCAL), and the x86 TSC as
 *	          ftrace's "x86-tsc" clock reads it (rdtsc_ordered())
 *   echo "produce LEN MS CPU [RATE]" > .../cmd
 *	A kthread bound to CPU calls magnet_add() with LEN bytes as fast as it
 *	can for MS milliseconds (cond_resched every 64 calls), or, with RATE
 *	events per second, in bursts of 64 paced to that rate (it spins
 *	between bursts, so it takes its CPU either way).
 *
 *   echo "memcpy MB" > .../cmd
 *	memcpy() of MB MiB in total between two 16 MiB vmalloc buffers (larger
 *	than a ring's worth of sub-buffers), on the writer's CPU: the copy
 *	bandwidth that a drain of whole sub-buffers into a file is measured
 *	against (bench/guest.sh, part drain).
 *
 *   cat /sys/module/magnet_bench/parameters/result
 *	one line of key=value: per-call ns (median, p10, p90 over batches),
 *	TSC cycles (median), events and elapsed ns of a produce run.
 */
#include <linux/module.h>
#include <linux/kthread.h>
#include <linux/completion.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/math64.h>
#include <linux/ring_buffer.h>
#include <linux/timex.h>
#include <linux/sort.h>
#include <linux/slab.h>
#include <linux/mutex.h>
#include <linux/version.h>
#include <linux/vmalloc.h>
#include <linux/timekeeping.h>
#ifdef CONFIG_X86
#include <asm/msr.h>
#endif
#include <magnet/magnet.h>

#define BATCH		200
#define MAX_BATCHES	1000
#define BENCH_BUF_MAX	4096
#define FTRACE_RB_SIZE	(32ul << 20)

static char result[256] = "none\n";
static DEFINE_MUTEX(bench_lock);
static struct magnet_point *bench_pt;
static struct trace_buffer *bench_rb;
static u8 payload[BENCH_BUF_MAX];
static u64 *batch_ns, *batch_cyc;

struct bench_rec {		/* what MAGNET's header has besides the time */
	u16 size, event;
	u32 cpu;
	u64 abstract_id;
	u32 pid, tgid;
};

static noinline void do_ftrace(u64 i, u16 len)
{
	struct ring_buffer_event *ev;
	struct bench_rec *h;

	ev = ring_buffer_lock_reserve(bench_rb, sizeof(*h) + len);
	if (!ev)
		return;
	h = ring_buffer_event_data(ev);
	h->size = sizeof(*h) + len;
	h->event = 1;
	h->cpu = raw_smp_processor_id();
	h->abstract_id = i;
	h->pid = current->pid;
	h->tgid = current->tgid;
	memcpy(h + 1, payload, len);
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	ring_buffer_unlock_commit(bench_rb);
#else
	ring_buffer_unlock_commit(bench_rb, ev);
#endif
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

enum { M_EMPTY, M_OFF, M_MAGNET, M_FTRACE, M_MONO, M_LOCAL, M_TSC };

static u64 clock_sink;	/* keeps the reads */

static const char *const mode_names[] = {
	[M_EMPTY] = "empty", [M_OFF] = "off", [M_MAGNET] = "magnet",
	[M_FTRACE] = "ftrace", [M_MONO] = "clock-mono",
	[M_LOCAL] = "clock-local", [M_TSC] = "clock-tsc",
};

static noinline u64 read_tsc_ordered(void)
{
#ifdef CONFIG_X86
	return rdtsc_ordered();
#else
	return get_cycles();
#endif
}

static int bench_time(const char *mode_s, unsigned int len, unsigned long n)
{
	unsigned long nb, b, i, k = 0;
	int mode;

	for (mode = 0; mode < ARRAY_SIZE(mode_names); mode++)
		if (!strcmp(mode_s, mode_names[mode]))
			break;
	if (mode == ARRAY_SIZE(mode_names))
		return -EINVAL;
	if (len > MAGNET_PAYLOAD_MAX || n < BATCH)
		return -EINVAL;
	if (mode == M_OFF && magnet_point_enabled(bench_pt))
		return -EBUSY;
	if (mode == M_MAGNET && !magnet_point_enabled(bench_pt))
		return -ENODEV;
	if (mode == M_FTRACE && !bench_rb) {
		bench_rb = ring_buffer_alloc(FTRACE_RB_SIZE, RB_FL_OVERWRITE);
		if (!bench_rb)
			return -ENOMEM;
	}
	nb = min_t(unsigned long, n / BATCH, MAX_BATCHES);
	for (b = 0; b < nb; b++) {
		u64 t0, t1, c0, c1;

		preempt_disable();
		c0 = get_cycles();
		t0 = local_clock();
		switch (mode) {
		case M_EMPTY:
			for (i = 0; i < BATCH; i++)
				barrier();
			break;
		case M_OFF:
		case M_MAGNET:
			for (i = 0; i < BATCH; i++)
				magnet_add(bench_pt, k++, payload, len);
			break;
		case M_FTRACE:
			for (i = 0; i < BATCH; i++)
				do_ftrace(k++, len);
			break;
		case M_MONO:
			for (i = 0; i < BATCH; i++)
				clock_sink += ktime_get_mono_fast_ns();
			break;
		case M_LOCAL:
			for (i = 0; i < BATCH; i++)
				clock_sink += local_clock();
			break;
		case M_TSC:
			for (i = 0; i < BATCH; i++)
				clock_sink += read_tsc_ordered();
			break;
		}
		t1 = local_clock();
		c1 = get_cycles();
		preempt_enable();
		batch_ns[b] = (t1 - t0) * 1000 / BATCH;	/* ns/1000 per call */
		batch_cyc[b] = (c1 - c0) * 1000 / BATCH;
		cond_resched();
	}
	sort(batch_ns, nb, sizeof(u64), cmp_u64, NULL);
	sort(batch_cyc, nb, sizeof(u64), cmp_u64, NULL);
#define MILLI(x) (unsigned long long)((x) / 1000), (unsigned long long)((x) % 1000)
	snprintf(result, sizeof(result),
		 "mode=%s len=%u calls=%lu batches=%lu ns_med=%llu.%03llu ns_p10=%llu.%03llu ns_p90=%llu.%03llu cyc_med=%llu.%03llu cpu=%d\n",
		 mode_s, len, nb * BATCH, nb, MILLI(batch_ns[nb / 2]),
		 MILLI(batch_ns[nb / 10]), MILLI(batch_ns[nb * 9 / 10]),
		 MILLI(batch_cyc[nb / 2]), raw_smp_processor_id());
	return 0;
}

struct produce_arg {
	unsigned int len;
	u64 ms, rate, events, ns;
	struct completion done;
};

static int produce_fn(void *data)
{
	struct produce_arg *a = data;
	u64 t0 = local_clock(), end = t0 + a->ms * NSEC_PER_MSEC, now, n = 0;

	do {
		int i;

		for (i = 0; i < 64; i++)
			magnet_add(bench_pt, n++, payload, a->len);
		cond_resched();
		now = local_clock();
		/* paced: the next burst is due when n events fit the rate */
		while (a->rate && now < end &&
		       now - t0 < div64_u64(n * NSEC_PER_SEC, a->rate)) {
			cond_resched();
			cpu_relax();
			now = local_clock();
		}
	} while (now < end);
	a->events = n;
	a->ns = now - t0;
	complete(&a->done);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(HZ / 10);
	return 0;
}

static int bench_produce(unsigned int len, unsigned long ms, unsigned int cpu,
			 unsigned long rate)
{
	struct produce_arg a = { .len = len, .ms = ms, .rate = rate };
	struct task_struct *t;

	if (len > MAGNET_PAYLOAD_MAX || !ms || ms > 600000 || cpu >= nr_cpu_ids ||
	    !cpu_online(cpu))
		return -EINVAL;
	if (!magnet_point_enabled(bench_pt))
		return -ENODEV;
	init_completion(&a.done);
	t = kthread_create_on_cpu(produce_fn, &a, cpu, "magnet_bench/%u");
	if (IS_ERR(t))
		return PTR_ERR(t);
	wake_up_process(t);
	wait_for_completion(&a.done);
	kthread_stop(t);
	snprintf(result, sizeof(result),
		 "mode=produce len=%u cpu=%u rate=%llu events=%llu ns=%llu\n",
		 len, cpu, a.rate, a.events, a.ns);
	return 0;
}

#define MEMCPY_BUF	(16ul << 20)

static int bench_memcpy(unsigned long mb)
{
	unsigned long done = 0, total = mb << 20;
	void *src, *dst;
	u64 t0, t1;

	if (!mb || mb > 65536)
		return -EINVAL;
	src = vmalloc(MEMCPY_BUF);
	dst = vmalloc(MEMCPY_BUF);
	if (!src || !dst) {
		vfree(src);
		vfree(dst);
		return -ENOMEM;
	}
	memset(src, 0x5a, MEMCPY_BUF);
	memset(dst, 0, MEMCPY_BUF);	/* fault nothing in the timed loop */
	t0 = local_clock();
	while (done < total) {
		unsigned long off;

		/* 1 MiB at a time, as a drain writes a sub-buffer at a time */
		for (off = 0; off < MEMCPY_BUF && done < total; off += 1ul << 20) {
			memcpy(dst + off, src + off, 1ul << 20);
			done += 1ul << 20;
		}
		cond_resched();
	}
	t1 = local_clock();
	vfree(src);
	vfree(dst);
	snprintf(result, sizeof(result), "mode=memcpy bytes=%lu ns=%llu MBps=%llu\n",
		 total, t1 - t0, div64_u64((u64)total * 1000, max_t(u64, t1 - t0, 1)));
	return 0;
}

static int cmd_set(const char *val, const struct kernel_param *kp)
{
	char mode[16], what[16];
	unsigned long n, ms, rate = 0;
	unsigned int len, cpu;
	int ret = -EINVAL;

	mutex_lock(&bench_lock);
	if (sscanf(val, "time %15s %u %lu", mode, &len, &n) == 3)
		ret = bench_time(mode, len, n);
	else if (sscanf(val, "%15s %u %lu %u %lu", what, &len, &ms, &cpu,
			&rate) >= 4 && !strcmp(what, "produce"))
		ret = bench_produce(len, ms, cpu, rate);
	else if (sscanf(val, "memcpy %lu", &n) == 1)
		ret = bench_memcpy(n);
	if (ret)
		snprintf(result, sizeof(result), "error=%d\n", ret);
	mutex_unlock(&bench_lock);
	return ret;
}

static int cmd_get(char *buf, const struct kernel_param *kp)
{
	return sprintf(buf, "time MODE LEN N | produce LEN MS CPU [RATE] | memcpy MB\n");
}

static const struct kernel_param_ops cmd_ops = { .set = cmd_set, .get = cmd_get };
module_param_cb(cmd, &cmd_ops, NULL, 0644);

static int result_get(char *buf, const struct kernel_param *kp)
{
	int n;

	mutex_lock(&bench_lock);
	n = sprintf(buf, "%s", result);
	mutex_unlock(&bench_lock);
	return n;
}

static const struct kernel_param_ops result_ops = { .get = result_get };
module_param_cb(result, &result_ops, NULL, 0444);

static int bench_enable(struct magnet_point *pt) { return 0; }
static void bench_disable(struct magnet_point *pt) { }

static const struct magnet_point_ops bench_ops = {
	.enable = bench_enable,
	.disable = bench_disable,
};

static const struct magnet_point_desc bench_desc = {
	.name = "bench",
	.layer = MAGNET_LAYER_CORE,
	.payload = MAGNET_PAYLOAD_RAW,
	.hook = "none (magnet_bench cmd)",
	.ops = &bench_ops,
};

static int __init bench_init(void)
{
	int i;

	for (i = 0; i < BENCH_BUF_MAX; i++)
		payload[i] = i;
	batch_ns = kcalloc(MAX_BATCHES, sizeof(u64), GFP_KERNEL);
	batch_cyc = kcalloc(MAX_BATCHES, sizeof(u64), GFP_KERNEL);
	if (!batch_ns || !batch_cyc)
		goto nomem;
	bench_pt = magnet_point_register(&bench_desc, THIS_MODULE, NULL);
	if (IS_ERR(bench_pt)) {
		kfree(batch_ns);
		kfree(batch_cyc);
		return PTR_ERR(bench_pt);
	}
	return 0;
nomem:
	kfree(batch_ns);
	kfree(batch_cyc);
	return -ENOMEM;
}

static void __exit bench_exit(void)
{
	magnet_point_unregister(bench_pt);
	if (bench_rb)
		ring_buffer_free(bench_rb);
	kfree(batch_ns);
	kfree(batch_cyc);
}

module_init(bench_init);
module_exit(bench_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("MAGNET micro-benchmarks: magnet_add() vs the ftrace ring buffer, event producer");
