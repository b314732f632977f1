// SPDX-License-Identifier: GPL-2.0
/*
 * magnet_tcpip.ko: extended TCP and IP data (the papers' magnet_tcp and
 * magnet_ip modules), from tracepoints only:
 *
 *  tcp_state     a segment arrives on an established connection
 *                (tcp:tcp_probe in tcp_rcv_established): the connection's
 *                windows, RTT, RTO, in-flight and retransmitted packets,
 *                sequence numbers and the segment's flags
 *  tcp_state_tx  the same when a TCP packet of a local socket reaches the
 *                device (net:net_dev_start_xmit)
 *  ip_hdr_send   IPv4 or IPv6 header fields of a packet handed to the
 *                device (net:net_dev_start_xmit)
 *  ip_hdr_recv   IPv4 or IPv6 header fields of a packet received
 *                (net:netif_receive_skb)
 *
 * hdr_bytes=N (0..64, default 0) appends the first N bytes of the packet
 * from its IP header on to ip_hdr_* records.  The abstract ID is the
 * inode number of the local full socket the packet belongs to (skb->sk),
 * else 0.  At ip_hdr_recv that is not the receiving socket: ip_rcv() has
 * not orphaned the packet yet, so one sent by a local socket over a veth
 * pair still names its sender (the same ID as its ip_hdr_send), one from a
 * real device or over loopback (which orphans it) none.  Handlers read with skb_header_pointer() (non-linear skbs), take no
 * lock: the TCP fields are a racy but consistent-enough snapshot on the
 * transmit side, where the socket lock is not held.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/skbuff.h>
#include <linux/netdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <net/dsfield.h>
#include <linux/tcp.h>
#include <linux/if_ether.h>
#include <linux/jiffies.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <net/inet_connection_sock.h>
#include <trace/events/tcp.h>
#include <trace/events/net.h>

#include "mtp.h"
#include "sock_id.h"

#define MTCPIP_HDR_BYTES_MAX	64

static unsigned int hdr_bytes;
module_param(hdr_bytes, uint, 0444);
MODULE_PARM_DESC(hdr_bytes, "bytes of each packet from its IP header on recorded by ip_hdr_send/ip_hdr_recv (0..64)");

static __always_inline void mtcpip_tcp(struct mtp_hook *h, struct sock *sk,
				       u8 tcp_flags, u32 len)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	const struct inet_connection_sock *icsk = inet_csk(sk);
	const struct inet_sock *inet = inet_sk(sk);
	struct magnet_tcp_payload p = {
		.sport = ntohs(inet->inet_sport),
		.dport = ntohs(inet->inet_dport),
		.family = sk->sk_family,
		.state = READ_ONCE(sk->sk_state),
		.ca_state = icsk->icsk_ca_state,
		.tcp_flags = tcp_flags,
		.len = len,
		.snd_wnd = READ_ONCE(tp->snd_wnd),
		.rcv_wnd = READ_ONCE(tp->rcv_wnd),
		.snd_cwnd = tcp_snd_cwnd(tp),
		.snd_ssthresh = READ_ONCE(tp->snd_ssthresh),
		.srtt_us = READ_ONCE(tp->srtt_us) >> 3,
		.rto_us = jiffies_to_usecs(READ_ONCE(icsk->icsk_rto)),
		.packets_out = READ_ONCE(tp->packets_out),
		.retrans_out = READ_ONCE(tp->retrans_out),
		.write_seq = READ_ONCE(tp->write_seq),
		.copied_seq = READ_ONCE(tp->copied_seq),
		.snd_nxt = READ_ONCE(tp->snd_nxt),
		.snd_una = READ_ONCE(tp->snd_una),
		.rcv_nxt = READ_ONCE(tp->rcv_nxt),
		.mss_cache = READ_ONCE(tp->mss_cache),
	};

	magnet_add_sock(READ_ONCE(h->pt), sk, &p, sizeof(p));
}

/* tcp:tcp_probe, socket locked, TCP header at tcp_hdr(skb) */
static void mtcpip_tcp_probe(void *data, struct sock *sk, struct sk_buff *skb)
{
	const struct tcphdr *th = tcp_hdr(skb);

	mtcpip_tcp(data, sk, tcp_flag_byte(th), skb->len - __tcp_hdrlen(th));
}

/* net:net_dev_start_xmit for the packets of a local TCP socket */
static void mtcpip_tcp_tx(void *data, const struct sk_buff *skb,
			  const struct net_device *dev)
{
	struct sock *sk = skb->sk;
	struct tcphdr _th;
	const struct tcphdr *th;
	unsigned int off;

	if (!sk || !sk_fullsock(sk) || sk->sk_protocol != IPPROTO_TCP ||
	    sk->sk_type != SOCK_STREAM || !skb_transport_header_was_set(skb))
		return;
	off = skb_transport_offset(skb);
	th = skb_header_pointer(skb, off, sizeof(_th), &_th);
	if (!th)
		return;
	off += __tcp_hdrlen(th);
	mtcpip_tcp(data, sk, tcp_flag_byte(th),
		   skb->len > off ? skb->len - off : 0);
}

struct mtcpip_ip_rec {
	struct magnet_ip_payload p;
	u8 bytes[MTCPIP_HDR_BYTES_MAX];
};

/* The IPv4 header's fields. */
static __always_inline bool mtcpip_ip4(struct magnet_ip_payload *p,
				       const struct sk_buff *skb, int off)
{
	struct iphdr _iph;
	const struct iphdr *iph;
	u16 frag;

	iph = skb_header_pointer(skb, off, sizeof(_iph), &_iph);
	if (!iph)
		return false;
	frag = ntohs(iph->frag_off);
	p->version = iph->version;
	p->ihl = iph->ihl;
	p->tos = iph->tos;
	p->ttl = iph->ttl;
	p->protocol = iph->protocol;
	p->frag_flags = (frag & IP_DF ? 0x2 : 0) | (frag & IP_MF ? 0x1 : 0);
	p->frag_off = frag & IP_OFFSET;
	p->id = ntohs(iph->id);
	p->tot_len = ntohs(iph->tot_len);
	return true;
}

/*
 * The IPv6 fixed header in the same fields (docs/PROBES.md): ihl 10 (40
 * bytes), tos the traffic class, ttl the hop limit, protocol the next
 * header, tot_len 40 + the payload length; no id or fragment fields
 * (fragmentation is an extension header, not decoded).
 */
static __always_inline bool mtcpip_ip6(struct magnet_ip_payload *p,
				       const struct sk_buff *skb, int off)
{
	struct ipv6hdr _ip6;
	const struct ipv6hdr *ip6;

	ip6 = skb_header_pointer(skb, off, sizeof(_ip6), &_ip6);
	if (!ip6)
		return false;
	p->version = ip6->version;
	p->ihl = sizeof(*ip6) / 4;
	p->tos = ipv6_get_dsfield(ip6);
	p->ttl = ip6->hop_limit;
	p->protocol = ip6->nexthdr;
	p->tot_len = sizeof(*ip6) + ntohs(ip6->payload_len);
	return true;
}

static __always_inline void mtcpip_ip(struct mtp_hook *h,
				      const struct sk_buff *skb, int off,
				      u32 ifindex, u16 dir)
{
	struct mtcpip_ip_rec r;
	unsigned int n = min_t(unsigned int, READ_ONCE(hdr_bytes),
			       MTCPIP_HDR_BYTES_MAX);
	bool ok;

	if (off < 0 || off >= skb->len)
		return;
	memset(&r.p, 0, sizeof(r.p));
	if (skb->protocol == htons(ETH_P_IP))
		ok = mtcpip_ip4(&r.p, skb, off);
	else if (skb->protocol == htons(ETH_P_IPV6))
		ok = mtcpip_ip6(&r.p, skb, off);
	else
		ok = false;
	if (!ok)
		return;
	r.p.ifindex = ifindex;
	r.p.len = skb->len;
	r.p.flags = dir;
	if (n > skb->len - off)
		n = skb->len - off;
	if (n && skb_copy_bits(skb, off, r.bytes, n))
		n = 0;
	r.p.hdr_len = n;
	magnet_add_sock(READ_ONCE(h->pt), skb->sk, &r, sizeof(r.p) + n);
}

/* net:net_dev_start_xmit: skb->data at the link header */
static void mtcpip_ip_tx(void *data, const struct sk_buff *skb,
			 const struct net_device *dev)
{
	mtcpip_ip(data, skb, skb_network_offset(skb), dev->ifindex,
		  MAGNET_NET_F_TX);
}

/*
 * net:netif_receive_skb: link header pulled, skb->data at the IP header;
 * skb->sk still the sender's if a veth pair carried it from a local socket
 */
static void mtcpip_ip_rx(void *data, struct sk_buff *skb)
{
	mtcpip_ip(data, skb, 0, skb->dev ? skb->dev->ifindex : 0,
		  MAGNET_NET_F_RX);
}

static struct mtp_hook mtcpip_hooks[] = {
	MTP_HOOK("tcp_state", TRANSPORT, TCP, "tcp", "tcp_probe",
		 mtcpip_tcp_probe),
	MTP_HOOK("tcp_state_tx", TRANSPORT, TCP, "net", "net_dev_start_xmit",
		 mtcpip_tcp_tx),
	MTP_HOOK("ip_hdr_send", NETWORK, IP, "net", "net_dev_start_xmit",
		 mtcpip_ip_tx),
	MTP_HOOK("ip_hdr_recv", NETWORK, IP, "net", "netif_receive_skb",
		 mtcpip_ip_rx),
};

/* Never called: the handlers must match TP_PROTO of the kernel's headers. */
static inline void __maybe_unused mtcpip_check_types(void)
{
	check_trace_callback_type_tcp_probe(mtcpip_tcp_probe);
	check_trace_callback_type_net_dev_start_xmit(mtcpip_tcp_tx);
	check_trace_callback_type_net_dev_start_xmit(mtcpip_ip_tx);
	check_trace_callback_type_netif_receive_skb(mtcpip_ip_rx);
}

static int __init mtcpip_init(void)
{
	if (hdr_bytes > MTCPIP_HDR_BYTES_MAX) {
		pr_err("hdr_bytes=%u: at most %u\n", hdr_bytes,
		       MTCPIP_HDR_BYTES_MAX);
		return -EINVAL;
	}
	return mtp_register(mtcpip_hooks, ARRAY_SIZE(mtcpip_hooks),
			    THIS_MODULE);
}

static void __exit mtcpip_exit(void)
{
	mtp_unregister(mtcpip_hooks, ARRAY_SIZE(mtcpip_hooks));
}

module_init(mtcpip_init);
module_exit(mtcpip_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("MAGNET");
MODULE_DESCRIPTION("MAGNET extended TCP and IP instrumentation points");
