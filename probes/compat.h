/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-version differences of the MAGNET network probes, all in one
 * place (lttng-modules wrapper style): the .c files test no version, they
 * use the macros and inlines below.
 *
 * Supported: Linux 6.1 (Debian 6.1.0-56) and 6.12 (Debian 6.12.95+deb12).
 */
#ifndef _MAGNET_PROBES_COMPAT_H
#define _MAGNET_PROBES_COMPAT_H

#include <linux/version.h>
#include <linux/ptrace.h>
#include <linux/kprobes.h>
#include <linux/skbuff.h>
#include <net/dst.h>
#include <trace/events/net.h>
#include <trace/events/sock.h>

/*
 * sock:sock_send_length / sock:sock_recv_length (v6.3) fire in
 * sock_sendmsg_nosec() / sock_recvmsg_nosec() after the protocol's
 * sendmsg/recvmsg with its result, on every path (write, send*, read,
 * recv*, recvmmsg, io_uring, kernel users).  In 6.12 __sock_sendmsg() is
 * inlined into its callers, so a kprobe on sock_sendmsg() would miss
 * write()/send(): the tracepoints are the hook.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define MAGNET_HAVE_SOCK_LENGTH_TP	1
#endif

#ifdef MAGNET_HAVE_SOCK_LENGTH_TP

#define MNET_SOCK_SEND_HOOK						\
	MNET_TRACEPOINT("sock_send", SOCKET, "sock", "sock_send_length",	\
			mnet_sock_send_tp)
#define MNET_SOCK_RECV_HOOK						\
	MNET_TRACEPOINT("sock_recv", SOCKET, "sock", "sock_recv_length",	\
			mnet_sock_recv_tp)
/* the same tracepoint, its failures only */
#define MNET_SOCK_SEND_FAIL_HOOK					\
	MNET_TRACEPOINT("sock_send_fail", SOCKET, "sock",		\
			"sock_send_length", mnet_sock_send_fail_tp)

/* Probe prototypes must match TP_PROTO: checked at compile time. */
#define mnet_check_sock_tp_types()					\
	do {								\
		check_trace_callback_type_sock_send_length(mnet_sock_send_tp); \
		check_trace_callback_type_sock_recv_length(mnet_sock_recv_tp); \
		check_trace_callback_type_sock_send_length(mnet_sock_send_fail_tp); \
	} while (0)

#else /* !MAGNET_HAVE_SOCK_LENGTH_TP */

/*
 * 6.1 has no length tracepoints.  Send and receive: a kretprobe on the
 * function that holds the tracepoint in 6.12, recording what the call
 * returned (bytes moved or -errno) when it returns, as the tracepoints
 * do: a send's sock_send event comes after its transport, IP and device
 * events on both kernels (docs/CORRELATE.md).
 *
 * Send: 6.1.57 backported "net: prevent rewrite of msg_name in
 * sock_sendmsg()", after which write(), send(), sendto() and sendmsg()
 * call the static __sock_sendmsg() directly and sock_sendmsg() is only
 * reached from io_uring and kernel_sendmsg().  In Debian 6.1.0-56
 * (6.1.192) __sock_sendmsg() is out of line (checked in the disassembly:
 * called from sock_write_iter, __sys_sendto, ____sys_sendmsg and
 * sock_sendmsg), so a kprobe on sock_sendmsg() would miss every user
 * space send: probe __sock_sendmsg().  Before 6.1.57, sock_sendmsg().
 *
 * Receive: sock_recvmsg() stays out of line, called from read(),
 * recvfrom(), recvmsg(), io_uring and kernel_recvmsg().  recvmmsg() calls
 * sock_recvmsg_nosec() for its 2nd..nth message, which is not seen.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 1, 57)
#define MNET_SOCK_SENDMSG_SYM	"__sock_sendmsg"
#else
#define MNET_SOCK_SENDMSG_SYM	"sock_sendmsg"
#endif

#define MNET_SOCK_SEND_HOOK						\
	MNET_KRETPROBE("sock_send", SOCKET, MNET_SOCK_SENDMSG_SYM,	\
		       mnet_sock_entry, mnet_sock_send_ret,		\
		       sizeof(struct sock *))
#define MNET_SOCK_RECV_HOOK						\
	MNET_KRETPROBE("sock_recv", SOCKET, "sock_recvmsg",		\
		       mnet_sock_entry, mnet_sock_recv_ret,		\
		       sizeof(struct sock *))
/* failed sends: the same return, its failures only */
#define MNET_SOCK_SEND_FAIL_HOOK					\
	MNET_KRETPROBE("sock_send_fail", SOCKET, MNET_SOCK_SENDMSG_SYM,	\
		       mnet_sock_entry, mnet_send_fail_ret,		\
		       sizeof(struct sock *))

#define mnet_check_sock_tp_types()	do { } while (0)

#endif /* MAGNET_HAVE_SOCK_LENGTH_TP */

/*
 * Function-entry hooks (MNET_ENTRY): an ftrace callback where ftrace
 * saves the argument registers for every callback
 * (CONFIG_HAVE_DYNAMIC_FTRACE_WITH_ARGS, x86-64 since 5.11), else a
 * kprobe.  The registers are in a pt_regs inside struct ftrace_regs: 6.1
 * has the field, 6.12 the arch_ftrace_regs() accessor
 * (linux/ftrace_regs.h); only the argument registers (and ip, sp) are
 * valid without FTRACE_OPS_FL_SAVE_REGS, which is all mnet_arg() reads.
 */
#include <linux/ftrace.h>
#if defined(CONFIG_DYNAMIC_FTRACE) && defined(CONFIG_HAVE_DYNAMIC_FTRACE_WITH_ARGS)
#define MNET_HAVE_FTRACE_ENTRY	1
#define MNET_ENTRY_KIND		MNET_KIND_FTRACE
#define MNET_ENTRY_PREFIX	"ftrace:"

static __always_inline struct pt_regs *mnet_fregs_args(struct ftrace_regs *fregs)
{
#ifdef arch_ftrace_regs
	return &arch_ftrace_regs(fregs)->regs;
#else
	return &fregs->regs;
#endif
}

#include <linux/trace_recursion.h>
/*
 * The ftrace callback of entry handler @fn (net_hooks.c), one per
 * handler: the hooked function's trampoline calls it directly and it
 * calls @fn directly, with no indirect call in between (each one a
 * retpoline where Spectre v2 mitigations are on, as in Debian's kernels
 * under TCG).  Registered without FTRACE_OPS_FL_RECURSION, so that ftrace
 * adds no helper call, it runs with neither recursion protection nor
 * preemption disabled (Documentation/trace/ftrace-uses.rst): the
 * recursion trylock gives both.  A call that recursed into a hook in the
 * same context is not recorded; it is counted (h->recursed) and reported
 * as lost when the point is disabled.
 */
#define MNET_FTRACE_CALLBACK(fn)					\
void notrace fn##_ftrace(unsigned long ip, unsigned long pip,		\
			 struct ftrace_ops *op, struct ftrace_regs *fregs)	\
{									\
	struct mnet_hook *h = container_of(op, struct mnet_hook, fops);	\
	int bit = ftrace_test_recursion_trylock(ip, pip);		\
									\
	if (unlikely(bit < 0)) {					\
		atomic_long_inc(&h->recursed);				\
		return;							\
	}								\
	fn(h, mnet_fregs_args(fregs));					\
	ftrace_test_recursion_unlock(bit);				\
}
#define MNET_FTRACE_FN(fn)	fn##_ftrace
#else
#define MNET_ENTRY_KIND		MNET_KIND_KPROBE
#define MNET_ENTRY_PREFIX	"kprobe:"
#define MNET_FTRACE_CALLBACK(fn)
#define MNET_FTRACE_FN(fn)	NULL
#endif

/* Argument @n (0-based) of the probed function, at its entry. */
static __always_inline unsigned long mnet_arg(struct pt_regs *regs,
					      unsigned int n)
{
	return regs_get_kernel_argument(regs, n);
}

/* Return value of the probed function, in a kretprobe handler. */
static __always_inline long mnet_retval(struct pt_regs *regs)
{
	return (long)regs_return_value(regs);
}

/*
 * Output device of an skb's route.  Caller holds rcu_read_lock().
 * dst->dev_rcu and dst_dev_rcu() are in both supported kernels (stable
 * backports to 6.1.y and 6.12.y); older point releases would read dst->dev.
 */
static __always_inline struct net_device *mnet_skb_dst_dev(const struct sk_buff *skb)
{
	struct dst_entry *dst = skb_dst(skb);

	return dst ? dst_dev_rcu(dst) : NULL;
}

/*
 * The UDP socket table a namespace's lookups use (rx_sock.c): one global
 * table in 6.1, a table per namespace (net->ipv4.udp_table, for IPv6
 * too) since 6.2.
 */
#include <net/udp.h>
static __always_inline struct udp_table *mnet_udp_table(struct net *net)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	return net->ipv4.udp_table;
#else
	return &udp_table;
#endif
}

#endif /* _MAGNET_PROBES_COMPAT_H */
