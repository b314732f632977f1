// SPDX-License-Identifier: GPL-2.0
/*
 * MAGNET network probes: the instrumentation points of the socket,
 * transport, network and device layers, and the attach/detach of their
 * hooks.  Kernel-version differences live in compat.h, the handlers in
 * net_hooks.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/err.h>
#include <linux/string.h>
#include <linux/kprobes.h>
#include <linux/ftrace.h>
#include <linux/tracepoint.h>
#include <linux/cpumask.h>
#include <linux/minmax.h>

#include "mnet.h"
#include "compat.h"

/* --- ftrace: a function's entry ----------------------------------- */

#ifdef MNET_HAVE_FTRACE_ENTRY
static int mnet_ftrace_attach(struct mnet_hook *h)
{
	int ret;

	memset(&h->fops, 0, sizeof(h->fops));
	/* the handler's own callback (compat.h, MNET_FTRACE_CALLBACK()) */
	h->fops.func = h->ftrace_entry;
	/* -EINVAL when no traceable function has that name */
	ret = ftrace_set_filter(&h->fops, (unsigned char *)h->target,
				strlen(h->target), 1);
	if (!ret)
		ret = register_ftrace_function(&h->fops);
	if (ret)
		ftrace_free_filter(&h->fops);
	return ret;
}

static void mnet_ftrace_detach(struct mnet_hook *h)
{
	/* waits until no callback runs (the ops is a module's: dynamic) */
	unregister_ftrace_function(&h->fops);
	ftrace_free_filter(&h->fops);
	/* calls refused for recursion: missed, as a kprobe's */
	h->missed += atomic_long_xchg(&h->recursed, 0);
}
#else
static int mnet_ftrace_attach(struct mnet_hook *h)
{
	return -EOPNOTSUPP;
}

static void mnet_ftrace_detach(struct mnet_hook *h)
{
}
#endif

/* --- kprobe / kretprobe ------------------------------------------- */

static int mnet_kprobe_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct mnet_hook *h = container_of(kp, struct mnet_hook, kp);

	h->entry(h, regs);
	return 0;
}

/* A kprobe cannot be registered twice as is: start from a clean one. */
static int mnet_kprobe_attach(struct mnet_hook *h)
{
	memset(&h->kp, 0, sizeof(h->kp));
	h->kp.symbol_name = h->target;
	h->kp.pre_handler = mnet_kprobe_pre;
	return register_kprobe(&h->kp);
}

static void mnet_kprobe_detach(struct mnet_hook *h)
{
	unregister_kprobe(&h->kp);	/* waits for running handlers */
	h->missed += h->kp.nmissed;
	h->kp.nmissed = 0;		/* in h->missed now */
}

static int mnet_kretprobe_attach(struct mnet_hook *h)
{
	memset(&h->krp, 0, sizeof(h->krp));
	h->krp.kp.symbol_name = h->target;
	h->krp.entry_handler = h->krp_entry;
	h->krp.handler = h->krp_handler;
	h->krp.data_size = h->krp_data_size;
	h->krp.maxactive = max_t(int, MNET_KRETPROBE_MAXACTIVE,
				 4 * num_possible_cpus());
	return register_kretprobe(&h->krp);
}

static void mnet_kretprobe_detach(struct mnet_hook *h)
{
	unregister_kretprobe(&h->krp);	/* waits for running handlers */
	/*
	 * nmissed: calls not seen for lack of a free instance (maxactive);
	 * an int, which wraps (magnet_missed_fold32())
	 */
	magnet_missed_fold32(&h->missed, &h->krp_seen, h->krp.nmissed);
	h->missed += h->krp.kp.nmissed;
	h->krp.nmissed = 0;		/* in h->missed now */
	h->krp.kp.nmissed = 0;
	h->krp_seen = 0;
}

/* --- tracepoint ---------------------------------------------------- */

struct mnet_tp_lookup {
	const char *name;
	struct tracepoint *tp;
};

static void mnet_tp_match(struct tracepoint *tp, void *priv)
{
	struct mnet_tp_lookup *l = priv;

	if (!l->tp && !strcmp(tp->name, l->name))
		l->tp = tp;
}

static int mnet_tp_attach(struct mnet_hook *h)
{
	struct mnet_tp_lookup l = { .name = h->target };

	for_each_kernel_tracepoint(mnet_tp_match, &l);
	if (!l.tp)
		return -ENOENT;
	h->tp = l.tp;
	return tracepoint_probe_register(h->tp, h->tp_probe, h);
}

static void mnet_tp_detach(struct mnet_hook *h)
{
	int ret = tracepoint_probe_unregister(h->tp, h->tp_probe, h);

	if (ret)
		pr_warn("%s: detaching from %s: %d\n", h->desc.name,
			h->target, ret);
	/* no probe call may be running once disable returns */
	tracepoint_synchronize_unregister();
}

/* --- point ops ----------------------------------------------------- */

static int mnet_attach(struct mnet_hook *h)
{
	int ret;

	switch (h->kind) {
	case MNET_KIND_FTRACE:
		ret = mnet_ftrace_attach(h);
		break;
	case MNET_KIND_KPROBE:
		ret = mnet_kprobe_attach(h);
		break;
	case MNET_KIND_KRETPROBE:
		ret = mnet_kretprobe_attach(h);
		break;
	case MNET_KIND_TRACEPOINT:
		ret = mnet_tp_attach(h);
		break;
	default:
		ret = -EINVAL;
		break;
	}
	return ret;
}

static void mnet_detach(struct mnet_hook *h)
{
	switch (h->kind) {
	case MNET_KIND_FTRACE:
		mnet_ftrace_detach(h);
		break;
	case MNET_KIND_KPROBE:
		mnet_kprobe_detach(h);
		break;
	case MNET_KIND_KRETPROBE:
		mnet_kretprobe_detach(h);
		break;
	case MNET_KIND_TRACEPOINT:
		mnet_tp_detach(h);
		break;
	}
}

/*
 * Attach the point's hook and, where it has one, its IPv6 half.  A
 * kernel without IPv6 has no such function (ftrace: -EINVAL, kprobe:
 * -ENOENT): the IPv4 hook then works alone.
 */
static int mnet_enable(struct magnet_point *pt)
{
	struct mnet_hook *h = pt->priv;
	int ret;

	h->pt = pt;
	ret = mnet_attach(h);
	if (ret) {
		pr_warn("%s: cannot attach to %s: %d\n", h->desc.name,
			h->target, ret);
		return ret;
	}
	h->v6_on = false;
	if (!h->v6)
		return 0;
	h->v6->pt = pt;
	ret = mnet_attach(h->v6);
	if (!ret) {
		h->v6_on = true;
	} else if (ret != -EINVAL && ret != -ENOENT) {
		pr_warn("%s: cannot attach to %s: %d\n", h->desc.name,
			h->v6->target, ret);
		mnet_detach(h);
		return ret;
	}
	return 0;
}

static void mnet_disable(struct magnet_point *pt)
{
	struct mnet_hook *h = pt->priv;

	mnet_detach(h);
	if (h->v6_on)
		mnet_detach(h->v6);
	h->v6_on = false;
}

/*
 * @h's misses: those of past armings, and the attached hook's so far.
 * db.lock held (ops->missed), as attach and detach.
 */
static unsigned long mnet_hook_missed(struct mnet_hook *h)
{
	unsigned long n = READ_ONCE(h->missed);

	switch (h->kind) {
	case MNET_KIND_FTRACE:
		return n + atomic_long_read(&h->recursed);
	case MNET_KIND_KPROBE:
		return n + READ_ONCE(h->kp.nmissed);
	case MNET_KIND_KRETPROBE:
		magnet_missed_fold32(&h->missed, &h->krp_seen,
				     READ_ONCE(h->krp.nmissed));
		return h->missed + READ_ONCE(h->krp.kp.nmissed);
	default:
		return n;
	}
}

/*
 * Calls the hooks never saw (recursion, no free kretprobe instance): the
 * core reports them as lost events (kmod/db.c), however many armings.
 */
static unsigned long mnet_missed(struct magnet_point *pt)
{
	struct mnet_hook *h = pt->priv;

	return mnet_hook_missed(h) + (h->v6 ? mnet_hook_missed(h->v6) : 0);
}

const struct magnet_point_ops mnet_ops = {
	.enable = mnet_enable,
	.disable = mnet_disable,
	.missed = mnet_missed,
};

/* --- the points ---------------------------------------------------- */

/*
 * The IPv6 halves of the events whose IPv4 function has an IPv6 twin
 * with the same arguments.  tcp_sendmsg, __udp_enqueue_schedule_skb,
 * the socket layer and the device layer serve both families already.
 */
enum {
	MNET6_UDP_SEND, MNET6_TCP_RECV, MNET6_IP_SEND, MNET6_IP_RECV,
	MNET6_UDP_SEND_FAIL,
};
static struct mnet_hook mnet_hooks6[] = {
	[MNET6_UDP_SEND] = MNET_ENTRY6("udp_send", "udpv6_sendmsg",
				       mnet_udp_send_entry),
	[MNET6_TCP_RECV] = MNET_ENTRY6("tcp_recv", "tcp_v6_do_rcv",
				       mnet_tcp_recv_entry),
	[MNET6_IP_SEND] = MNET_ENTRY6("ip_send", "ip6_output",
				      mnet_ip6_send_entry),
	[MNET6_IP_RECV] = MNET_ENTRY6("ip_recv", "ipv6_rcv",
				      mnet_ip6_recv_entry),
	[MNET6_UDP_SEND_FAIL] = MNET_KRETPROBE6("udp_send_fail",
						"udpv6_sendmsg", mnet_l4_entry,
						mnet_send_fail_ret,
						sizeof(struct sock *)),
};

static struct mnet_hook mnet_hooks[] = {
	MNET_SOCK_SEND_HOOK,
	MNET_SOCK_RECV_HOOK,
	MNET_ENTRY("tcp_send", TRANSPORT, "tcp_sendmsg", mnet_tcp_send_entry),
	MNET_ENTRY46("udp_send", TRANSPORT, "udp_sendmsg", mnet_udp_send_entry,
		     "udpv6_sendmsg", &mnet_hooks6[MNET6_UDP_SEND]),
	MNET_ENTRY46("tcp_recv", TRANSPORT, "tcp_v4_do_rcv",
		     mnet_tcp_recv_entry, "tcp_v6_do_rcv",
		     &mnet_hooks6[MNET6_TCP_RECV]),
	MNET_ENTRY("udp_recv", TRANSPORT, "__udp_enqueue_schedule_skb",
		   mnet_udp_recv_entry),
	MNET_ENTRY46("ip_send", NETWORK, "ip_output", mnet_ip_send_entry,
		     "ip6_output", &mnet_hooks6[MNET6_IP_SEND]),
	MNET_ENTRY46("ip_recv", NETWORK, "ip_rcv", mnet_ip_recv_entry,
		     "ipv6_rcv", &mnet_hooks6[MNET6_IP_RECV]),
	MNET_TRACEPOINT("dev_send", DEVICE, "net", "net_dev_start_xmit",
			mnet_dev_send_tp),
	MNET_TRACEPOINT("dev_recv", DEVICE, "net", "netif_receive_skb",
			mnet_dev_recv_tp),
	/*
	 * Failed sends (opt-in: a return hook where the events above have
	 * an entry hook, which cannot see the result)
	 */
	MNET_SOCK_SEND_FAIL_HOOK,
	MNET_KRETPROBE("tcp_send_fail", TRANSPORT, "tcp_sendmsg",
		       mnet_l4_entry, mnet_send_fail_ret,
		       sizeof(struct sock *)),
	MNET_KRETPROBE46("udp_send_fail", TRANSPORT, "udp_sendmsg",
			 mnet_l4_entry, mnet_send_fail_ret,
			 sizeof(struct sock *), "udpv6_sendmsg",
			 &mnet_hooks6[MNET6_UDP_SEND_FAIL]),
};

static int __init mnet_init(void)
{
	struct magnet_point *pt;
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(mnet_hooks); i++) {
		pt = magnet_point_register(&mnet_hooks[i].desc, THIS_MODULE,
					   &mnet_hooks[i]);
		if (IS_ERR(pt)) {
			ret = PTR_ERR(pt);
			pr_err("registering %s: %d\n", mnet_hooks[i].desc.name,
			       ret);
			goto err_unregister;
		}
		mnet_hooks[i].pt = pt;
	}
	return 0;

err_unregister:
	while (i--)
		magnet_point_unregister(mnet_hooks[i].pt);
	return ret;
}

static void __exit mnet_exit(void)
{
	unsigned int i = ARRAY_SIZE(mnet_hooks);

	/* unregister disables first, which detaches the hook */
	while (i--)
		magnet_point_unregister(mnet_hooks[i].pt);
}

module_init(mnet_init);
module_exit(mnet_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("MAGNET");
MODULE_DESCRIPTION("MAGNET network instrumentation points");
