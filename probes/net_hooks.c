// SPDX-License-Identifier: GPL-2.0
/*
 * MAGNET network probes: hook handlers.
 *
 * Each handler reads a few fields of its arguments, fills a
 * struct magnet_net_payload and calls magnet_add().  They run with
 * preemption disabled (ftrace callbacks, kprobes) or in the RCU-sched
 * read side of the tracepoint, never sleep, never allocate and do
 * bounded work.
 *
 * The abstract ID is the socket's inode number, what fstat() shows user
 * space for the socket fd, never a pointer.  sk->sk_socket is cleared by
 * sock_orphan() and the socket inode is freed after an RCU grace period
 * (sockfs ->free_inode), so reading it here, inside an RCU read side, is
 * safe without a lock; sock_i_ino() would take sk_callback_lock.
 */
#include <linux/kernel.h>
#include <linux/err.h>
#include <linux/minmax.h>
#include <linux/net.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/socket.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <net/sock.h>

#include "mnet.h"
#include "compat.h"
#include "sock_id.h"
#include "rx_sock.h"

/*
 * @sk, when set, is the local socket the event is about: in interrupt
 * context its cgroup is the event's for cgroup keys (magnet_add_sock()).
 */
static __always_inline void mnet_emit(struct mnet_hook *h,
				      const struct sock *sk, u32 len,
				      u32 ifindex, u16 proto, u16 flags)
{
	struct magnet_net_payload p = {
		.len = len,
		.ifindex = ifindex,
		.proto = proto,
		.flags = flags,
	};

	magnet_add_sock(READ_ONCE(h->pt), sk, &p, sizeof(p));
}

/* The same for a packet: its length and, for GSO packets, the segments. */
static __always_inline void mnet_emit_skb(struct mnet_hook *h,
					  const struct sock *sk,
					  const struct sk_buff *skb,
					  u32 ifindex, u16 proto, u16 flags)
{
	const struct skb_shared_info *si = skb_shinfo(skb);
	struct magnet_net_payload p = {
		.len = skb->len,
		.ifindex = ifindex,
		.proto = proto,
		.flags = flags,
	};

	if (skb_is_gso(skb)) {
		p.gso_size = si->gso_size;
		p.gso_segs = si->gso_segs;
	}
	magnet_add_sock(READ_ONCE(h->pt), sk, &p, sizeof(p));
}

static __always_inline u32 mnet_len(size_t len)
{
	return min_t(size_t, len, U32_MAX);
}

/*
 * A socket call's result: @ret bytes moved, or a failure (-errno) with
 * MAGNET_NET_F_ERROR, len 0 and the negated errno in @err.  A call that
 * moved nothing (ret 0: end of file, an empty datagram) is not recorded.
 */
static __always_inline void mnet_emit_ret(struct mnet_hook *h,
					  const struct sock *sk, int ret,
					  u16 flags)
{
	struct magnet_net_payload p = {
		.proto = sk->sk_protocol,
		.flags = flags,
	};

	if (ret > 0) {
		p.len = ret;
	} else {
		p.flags |= MAGNET_NET_F_ERROR;
		p.err = max(ret, -MAX_ERRNO);
	}
	magnet_add_sock(READ_ONCE(h->pt), sk, &p, sizeof(p));
}

/* --- socket layer ------------------------------------------------- */

/* sock:sock_send_length, after the send: @ret bytes sent or -errno. */
void mnet_sock_send_tp(void *data, struct sock *sk, int ret, int flags)
{
	if (!ret || !sk)
		return;
	mnet_emit_ret(data, sk, ret, MAGNET_NET_F_TX);
}

/* sock:sock_recv_length, after the receive: @ret bytes or -errno. */
void mnet_sock_recv_tp(void *data, struct sock *sk, int ret, int flags)
{
	if (!ret || !sk)
		return;
	mnet_emit_ret(data, sk, ret, MAGNET_NET_F_RX);
}

/*
 * Where there is no sock_send_length / sock_recv_length tracepoint, a
 * kretprobe on __sock_sendmsg() / sock_sendmsg() / sock_recvmsg(): the
 * entry, (struct socket *sock, ...), remembers the sock for the return
 * handler.
 */
int mnet_sock_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct socket *sock = (struct socket *)mnet_arg(regs, 0);
	struct sock *sk = sock ? READ_ONCE(sock->sk) : NULL;

	if (!sk)
		return 1;	/* no return hook for this call */
	*(struct sock **)ri->data = sk;
	return 0;
}

/* Return: bytes moved or -errno; the caller holds the socket meanwhile. */
static __always_inline void mnet_sock_ret(struct kretprobe_instance *ri,
					  struct pt_regs *regs, u16 flags)
{
	struct kretprobe *rp = get_kretprobe(ri);
	struct sock *sk = *(struct sock **)ri->data;
	int ret = (int)mnet_retval(regs);

	if (!ret || !rp)
		return;
	mnet_emit_ret(container_of(rp, struct mnet_hook, krp), sk, ret, flags);
}

/* after the send, as mnet_sock_send_tp(): @ret bytes sent or -errno */
int mnet_sock_send_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	mnet_sock_ret(ri, regs, MAGNET_NET_F_TX);
	return 0;
}

int mnet_sock_recv_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	mnet_sock_ret(ri, regs, MAGNET_NET_F_RX);
	return 0;
}

/* --- failed sends (the *_send_fail events) ------------------------- */

/*
 * A send's failure, where the entry hook of the event without _fail
 * cannot see it: the return of the same function, recorded only when it
 * returns -errno.  Opt-in events, so that the send path pays for a return
 * hook only when failures are asked for.
 */

/* sock:sock_send_length: the failed sends only */
void mnet_sock_send_fail_tp(void *data, struct sock *sk, int ret, int flags)
{
	if (ret >= 0 || !sk)
		return;
	mnet_emit_ret(data, sk, ret, MAGNET_NET_F_TX);
}

/*
 * Entry of tcp_sendmsg / udp_sendmsg / udpv6_sendmsg (struct sock *sk,
 * ...): remember the sock for the return handler.
 */
int mnet_l4_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct sock *sk = (struct sock *)mnet_arg(regs, 0);

	if (!sk)
		return 1;	/* no return hook for this call */
	*(struct sock **)ri->data = sk;
	return 0;
}

/* Return of a send: recorded only if it failed (-errno). */
int mnet_send_fail_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	if ((int)mnet_retval(regs) < 0)
		mnet_sock_ret(ri, regs, MAGNET_NET_F_TX);
	return 0;
}

/* --- transport layer ---------------------------------------------- */

/*
 * tcp_sendmsg (IPv4 and IPv6) / udp_sendmsg / udpv6_sendmsg
 * (struct sock *sk, struct msghdr *msg, size_t len)
 */
static __always_inline void mnet_l4_send(struct mnet_hook *h,
					 struct pt_regs *regs, u16 proto)
{
	struct sock *sk = (struct sock *)mnet_arg(regs, 0);
	size_t len = mnet_arg(regs, 2);

	mnet_emit(h, sk, mnet_len(len), 0, proto, MAGNET_NET_F_TX);
}

/*
 * tcp_v4_do_rcv / tcp_v6_do_rcv / __udp_enqueue_schedule_skb
 * (struct sock *, struct sk_buff *)
 */
static __always_inline void mnet_l4_recv(struct mnet_hook *h,
					 struct pt_regs *regs, u16 proto)
{
	struct sock *sk = (struct sock *)mnet_arg(regs, 0);
	struct sk_buff *skb = (struct sk_buff *)mnet_arg(regs, 1);

	if (!skb)
		return;
	mnet_emit_skb(h, sk, skb, skb->skb_iif, proto, MAGNET_NET_F_RX);
}

void mnet_tcp_send_entry(struct mnet_hook *h, struct pt_regs *regs)
{
	mnet_l4_send(h, regs, IPPROTO_TCP);
}
MNET_FTRACE_CALLBACK(mnet_tcp_send_entry)

void mnet_udp_send_entry(struct mnet_hook *h, struct pt_regs *regs)
{
	mnet_l4_send(h, regs, IPPROTO_UDP);
}
MNET_FTRACE_CALLBACK(mnet_udp_send_entry)

void mnet_tcp_recv_entry(struct mnet_hook *h, struct pt_regs *regs)
{
	mnet_l4_recv(h, regs, IPPROTO_TCP);
}
MNET_FTRACE_CALLBACK(mnet_tcp_recv_entry)

void mnet_udp_recv_entry(struct mnet_hook *h, struct pt_regs *regs)
{
	mnet_l4_recv(h, regs, IPPROTO_UDP);
}
MNET_FTRACE_CALLBACK(mnet_udp_recv_entry)

/* --- network layer ------------------------------------------------ */

/*
 * ip_output() / ip6_output(struct net *net, struct sock *sk,
 * struct sk_buff *skb)
 */
static __always_inline void mnet_l3_send(struct mnet_hook *h,
					 struct pt_regs *regs, u16 proto)
{
	struct sk_buff *skb = (struct sk_buff *)mnet_arg(regs, 2);
	struct net_device *dev;
	u32 ifindex;

	if (!skb)
		return;
	rcu_read_lock();
	dev = mnet_skb_dst_dev(skb) ?: skb->dev;
	ifindex = dev ? READ_ONCE(dev->ifindex) : 0;
	rcu_read_unlock();
	mnet_emit_skb(h, skb->sk, skb, ifindex, proto, MAGNET_NET_F_TX);
}

void mnet_ip_send_entry(struct mnet_hook *h, struct pt_regs *regs)
{
	mnet_l3_send(h, regs, ETH_P_IP);
}
MNET_FTRACE_CALLBACK(mnet_ip_send_entry)

void mnet_ip6_send_entry(struct mnet_hook *h, struct pt_regs *regs)
{
	mnet_l3_send(h, regs, ETH_P_IPV6);
}
MNET_FTRACE_CALLBACK(mnet_ip6_send_entry)

/*
 * A received packet at the device or IP layer: the local socket it is for
 * is looked up (rx_sock.c) and held while the event is recorded, so that
 * its ID and its cgroup are the event's; ID 0 when no socket takes it.
 */
static __always_inline void mnet_emit_rx(struct mnet_hook *h,
					 const struct sk_buff *skb,
					 const struct net_device *dev,
					 __be16 proto)
{
	bool refcounted = false;
	struct sock *sk;

	rcu_read_lock();
	sk = mnet_rx_sock(skb, dev, proto, &refcounted);
	mnet_emit_skb(h, sk, skb, dev ? dev->ifindex : 0, ntohs(proto),
		      MAGNET_NET_F_RX);
	if (refcounted)
		sock_gen_put(sk);
	rcu_read_unlock();
}

/* ip_rcv(struct sk_buff *skb, struct net_device *dev, ...) */
static __always_inline void mnet_l3_recv(struct mnet_hook *h,
					 struct pt_regs *regs, u16 proto)
{
	struct sk_buff *skb = (struct sk_buff *)mnet_arg(regs, 0);
	struct net_device *dev = (struct net_device *)mnet_arg(regs, 1);

	if (!skb)
		return;
	mnet_emit_rx(h, skb, dev, htons(proto));
}

void mnet_ip_recv_entry(struct mnet_hook *h, struct pt_regs *regs)
{
	mnet_l3_recv(h, regs, ETH_P_IP);
}
MNET_FTRACE_CALLBACK(mnet_ip_recv_entry)

/* ipv6_rcv(struct sk_buff *skb, struct net_device *dev, ...) */
void mnet_ip6_recv_entry(struct mnet_hook *h, struct pt_regs *regs)
{
	mnet_l3_recv(h, regs, ETH_P_IPV6);
}
MNET_FTRACE_CALLBACK(mnet_ip6_recv_entry)

/* --- device layer ------------------------------------------------- */

/* net:net_dev_start_xmit */
void mnet_dev_send_tp(void *data, const struct sk_buff *skb,
		      const struct net_device *dev)
{
	mnet_emit_skb(data, skb->sk, skb, dev->ifindex, ntohs(skb->protocol),
		      MAGNET_NET_F_TX);
}

/* net:netif_receive_skb: the receiving socket as for ip_recv */
void mnet_dev_recv_tp(void *data, struct sk_buff *skb)
{
	mnet_emit_rx(data, skb, skb->dev, skb->protocol);
}

/*
 * Never called: makes the compiler check each tracepoint probe against
 * the TP_PROTO of the running kernel's headers.
 */
static inline void mnet_check_tp_types(void)
{
	check_trace_callback_type_net_dev_start_xmit(mnet_dev_send_tp);
	check_trace_callback_type_netif_receive_skb(mnet_dev_recv_tp);
	mnet_check_sock_tp_types();
}
