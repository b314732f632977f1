/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MAGNET network probes: the point table entry and the hook handlers.
 *
 * Every instrumentation point owns one hook (a tracepoint probe, an
 * ftrace callback at a function's entry, a kprobe where ftrace cannot
 * pass arguments, or a kretprobe), attached by ops->enable and detached by
 * ops->disable, so a disabled point costs nothing and enabling one point
 * never slows down another.
 */
#ifndef _MAGNET_PROBES_MNET_H
#define _MAGNET_PROBES_MNET_H

#include <linux/kprobes.h>
#include <linux/ftrace.h>
#include <linux/tracepoint.h>
#include <magnet/magnet.h>

enum mnet_kind {
	MNET_KIND_FTRACE,
	MNET_KIND_KPROBE,
	MNET_KIND_KRETPROBE,
	MNET_KIND_TRACEPOINT,
};

struct mnet_hook;
/* A function-entry handler: the function's arguments are in @regs. */
typedef void (*mnet_entry_fn)(struct mnet_hook *h, struct pt_regs *regs);

/*
 * An entry handler and its ftrace callback (compat.h,
 * MNET_FTRACE_CALLBACK(), defined beside the handler in net_hooks.c).
 */
#define MNET_DECLARE_ENTRY(fn)						\
	void fn(struct mnet_hook *h, struct pt_regs *regs);		\
	void fn##_ftrace(unsigned long ip, unsigned long pip,		\
			 struct ftrace_ops *op, struct ftrace_regs *fregs)

struct mnet_hook {
	struct magnet_point_desc desc;
	enum mnet_kind kind;
	const char *target;		/* function or tracepoint name */
	mnet_entry_fn entry;		/* ftrace and kprobe kinds */
	ftrace_func_t ftrace_entry;	/* entry's ftrace callback */
	kretprobe_handler_t krp_entry;
	kretprobe_handler_t krp_handler;
	size_t krp_data_size;
	void *tp_probe;
	/*
	 * The same event's IPv6 function (ip6_output for ip_output, ...):
	 * attached and detached with this hook, recording into its point.
	 * Absent from a kernel without IPv6, where this hook works alone.
	 */
	struct mnet_hook *v6;
	/* runtime state, owned by net.c */
	struct magnet_point *pt;
	bool v6_on;			/* v6 is attached */
	struct tracepoint *tp;
	unsigned long missed;		/* kprobe/kretprobe misses so far */
	unsigned int krp_seen;		/* krp.nmissed folded into missed */
	atomic_long_t recursed;		/* ftrace callback calls refused */
	union {
		struct ftrace_ops fops;
		struct kprobe kp;
		struct kretprobe krp;
	};
};

/*
 * Instances of a socket-layer kretprobe: a call blocked in send or
 * receive holds one, calls beyond are missed (counted in nmissed).
 * At least this many, or 4 per possible CPU.
 */
#define MNET_KRETPROBE_MAXACTIVE	256

extern const struct magnet_point_ops mnet_ops;

#define MNET_DESC(_name, _layer, _hook)					\
	.desc = {							\
		.name = _name,						\
		.layer = MAGNET_LAYER_##_layer,				\
		.payload = MAGNET_PAYLOAD_NET,				\
		.hook = _hook,						\
		.ops = &mnet_ops,					\
	}

/*
 * A function's entry: an ftrace callback (the cheapest hook there is, no
 * trap, no kprobe bookkeeping, only the argument registers saved) where
 * ftrace passes the arguments (x86-64 since 5.11, both supported kernels),
 * else a kprobe (compat.h, MNET_ENTRY_KIND): the hook fields of the three
 * forms below.
 */
#define MNET_ENTRY_HOOK(_sym, _fn)					\
		.kind = MNET_ENTRY_KIND,				\
		.target = _sym,						\
		.entry = _fn,						\
		.ftrace_entry = MNET_FTRACE_FN(_fn)

#define MNET_ENTRY(_name, _layer, _sym, _fn)				\
	{								\
		MNET_DESC(_name, _layer, MNET_ENTRY_PREFIX _sym),	\
		MNET_ENTRY_HOOK(_sym, _fn),				\
	}

/*
 * An event hooked at the entries of an IPv4 function and of its IPv6
 * counterpart @_v6 (an MNET_ENTRY6 of mnet_hooks6[]).
 */
#define MNET_ENTRY46(_name, _layer, _sym, _fn, _sym6, _v6)		\
	{								\
		MNET_DESC(_name, _layer,				\
			  MNET_ENTRY_PREFIX _sym "+" _sym6),		\
		MNET_ENTRY_HOOK(_sym, _fn),				\
		.v6 = _v6,						\
	}

/* The IPv6 half of an MNET_ENTRY46: not a point of its own. */
#define MNET_ENTRY6(_name, _sym, _fn)					\
	{								\
		.desc = { .name = _name },				\
		MNET_ENTRY_HOOK(_sym, _fn),				\
	}

/* The hook fields of a kretprobe at @_sym (the three forms below). */
#define MNET_KRETPROBE_HOOK(_sym, _entry, _ret, _size)			\
		.kind = MNET_KIND_KRETPROBE,				\
		.target = _sym,						\
		.krp_entry = _entry,					\
		.krp_handler = _ret,					\
		.krp_data_size = _size

#define MNET_KRETPROBE(_name, _layer, _sym, _entry, _ret, _size)	\
	{								\
		MNET_DESC(_name, _layer, "kretprobe:" _sym),		\
		MNET_KRETPROBE_HOOK(_sym, _entry, _ret, _size),		\
	}

/* A kretprobe at an IPv4 function and at its IPv6 twin @_v6. */
#define MNET_KRETPROBE46(_name, _layer, _sym, _entry, _ret, _size,	\
			 _sym6, _v6)					\
	{								\
		MNET_DESC(_name, _layer, "kretprobe:" _sym "+" _sym6),	\
		MNET_KRETPROBE_HOOK(_sym, _entry, _ret, _size),		\
		.v6 = _v6,						\
	}

/* The IPv6 half of an MNET_KRETPROBE46. */
#define MNET_KRETPROBE6(_name, _sym, _entry, _ret, _size)		\
	{								\
		.desc = { .name = _name },				\
		MNET_KRETPROBE_HOOK(_sym, _entry, _ret, _size),		\
	}

#define MNET_TRACEPOINT(_name, _layer, _sys, _tp, _fn)			\
	{								\
		MNET_DESC(_name, _layer, "tracepoint:" _sys ":" _tp),	\
		.kind = MNET_KIND_TRACEPOINT,				\
		.target = _tp,						\
		.tp_probe = _fn,					\
	}

struct sock;
struct sk_buff;
struct net_device;

/*
 * Hook handlers (net_hooks.c).  They run with preemption disabled
 * (ftrace, kprobes) or inside the tracepoint's RCU-sched read side: they never
 * sleep, allocate or take locks.  All variants are built on every kernel
 * so that each is compile-tested; compat.h picks the ones to attach.
 */
void mnet_sock_send_tp(void *data, struct sock *sk, int ret, int flags);
void mnet_sock_recv_tp(void *data, struct sock *sk, int ret, int flags);
int mnet_sock_entry(struct kretprobe_instance *ri, struct pt_regs *regs);
int mnet_sock_send_ret(struct kretprobe_instance *ri, struct pt_regs *regs);
int mnet_sock_recv_ret(struct kretprobe_instance *ri, struct pt_regs *regs);
void mnet_sock_send_fail_tp(void *data, struct sock *sk, int ret, int flags);
int mnet_l4_entry(struct kretprobe_instance *ri, struct pt_regs *regs);
int mnet_send_fail_ret(struct kretprobe_instance *ri, struct pt_regs *regs);
MNET_DECLARE_ENTRY(mnet_tcp_send_entry);
MNET_DECLARE_ENTRY(mnet_udp_send_entry);
MNET_DECLARE_ENTRY(mnet_tcp_recv_entry);
MNET_DECLARE_ENTRY(mnet_udp_recv_entry);
MNET_DECLARE_ENTRY(mnet_ip_send_entry);
MNET_DECLARE_ENTRY(mnet_ip_recv_entry);
MNET_DECLARE_ENTRY(mnet_ip6_send_entry);
MNET_DECLARE_ENTRY(mnet_ip6_recv_entry);
void mnet_dev_send_tp(void *data, const struct sk_buff *skb,
		      const struct net_device *dev);
void mnet_dev_recv_tp(void *data, struct sk_buff *skb);

#endif /* _MAGNET_PROBES_MNET_H */
