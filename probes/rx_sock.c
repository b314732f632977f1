// SPDX-License-Identifier: GPL-2.0
/*
 * MAGNET network probes: the receiving socket of a packet at the device
 * and IP layers.
 *
 * A received packet meets its socket only in the transport layer; before
 * that (netif_receive_skb, ip_rcv) dev_recv and ip_recv look it up
 * themselves, the way the stack will: the IPv4/IPv6 header and the ports
 * (skb_header_pointer(), nothing pulled or written), then the kernel's
 * own tables: TCP established (and time-wait, request) sockets, then TCP
 * listeners, then UDP sockets, in the namespace of the receiving device.
 * The lookup runs under the caller's RCU read side; an established TCP
 * socket comes back with a reference, which the caller drops once the
 * event is recorded (sock_gen_put(), as the stack does), listeners and
 * UDP sockets are RCU-freed and come back without one.  No lock, no
 * allocation, bounded work: a hash and one chain walk per table.
 *
 * What it cannot know: a UDP socket chosen by a reuseport BPF program
 * (it needs the packet at the UDP header; the hash choice is used
 * instead), a BPF sk_lookup redirection, a socket bound to an L3 master
 * device (sdif is 0), a packet that netfilter rewrites or drops later
 * (the ID then names the socket it was addressed to).  The transport and
 * socket layers' events carry the socket the stack really chose.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <net/inet_hashtables.h>
#include <net/inet6_hashtables.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/sock.h>
#include <net/udp.h>

#include "compat.h"
#include "rx_sock.h"

struct rx_ports {
	__be16 sport;
	__be16 dport;
};

static struct sock *rx_sk4(struct net *net, const struct sk_buff *skb,
			   int dif, bool *refcounted)
{
	struct inet_hashinfo *hinfo = net->ipv4.tcp_death_row.hashinfo;
	const struct rx_ports *pp;
	const struct iphdr *iph;
	struct rx_ports ports;
	struct iphdr ih;
	struct sock *sk;

	iph = skb_header_pointer(skb, 0, sizeof(ih), &ih);
	if (!iph || iph->version != 4 || iph->ihl < 5 ||
	    (iph->frag_off & htons(IP_OFFSET)))
		return NULL;
	if (iph->protocol != IPPROTO_TCP && iph->protocol != IPPROTO_UDP)
		return NULL;
	pp = skb_header_pointer(skb, iph->ihl * 4, sizeof(ports), &ports);
	if (!pp)
		return NULL;
	if (iph->protocol == IPPROTO_UDP)
		return __udp4_lib_lookup(net, iph->saddr, pp->sport,
					 iph->daddr, pp->dport, dif, 0,
					 mnet_udp_table(net), NULL);
	sk = __inet_lookup_established(net, hinfo, iph->saddr, pp->sport,
				       iph->daddr, ntohs(pp->dport), dif, 0);
	if (sk) {
		*refcounted = true;
		return sk;
	}
	return __inet_lookup_listener(net, hinfo, NULL, 0, iph->saddr,
				      pp->sport, iph->daddr, ntohs(pp->dport),
				      dif, 0);
}

#if IS_ENABLED(CONFIG_IPV6)
static struct sock *rx_sk6(struct net *net, const struct sk_buff *skb,
			   int dif, bool *refcounted)
{
	struct inet_hashinfo *hinfo = net->ipv4.tcp_death_row.hashinfo;
	const struct ipv6hdr *ip6;
	const struct rx_ports *pp;
	struct rx_ports ports;
	struct ipv6hdr ih;
	struct sock *sk;

	ip6 = skb_header_pointer(skb, 0, sizeof(ih), &ih);
	/* extension headers are not walked: TCP or UDP right after */
	if (!ip6 || ip6->version != 6 ||
	    (ip6->nexthdr != IPPROTO_TCP && ip6->nexthdr != IPPROTO_UDP))
		return NULL;
	pp = skb_header_pointer(skb, sizeof(*ip6), sizeof(ports), &ports);
	if (!pp)
		return NULL;
	if (ip6->nexthdr == IPPROTO_UDP)
		return __udp6_lib_lookup(net, &ip6->saddr, pp->sport,
					 &ip6->daddr, pp->dport, dif, 0,
					 mnet_udp_table(net), NULL);
	sk = __inet6_lookup_established(net, hinfo, &ip6->saddr, pp->sport,
					&ip6->daddr, ntohs(pp->dport), dif, 0);
	if (sk) {
		*refcounted = true;
		return sk;
	}
	return inet6_lookup_listener(net, hinfo, NULL, 0, &ip6->saddr,
				     pp->sport, &ip6->daddr, ntohs(pp->dport),
				     dif, 0);
}
#endif

struct sock *mnet_rx_sock(const struct sk_buff *skb,
			  const struct net_device *dev, __be16 proto,
			  bool *refcounted)
{
	struct net *net;

	*refcounted = false;
	if (!dev)
		return NULL;
	net = dev_net(dev);
	if (proto == htons(ETH_P_IP))
		return rx_sk4(net, skb, dev->ifindex, refcounted);
#if IS_ENABLED(CONFIG_IPV6)
	if (proto == htons(ETH_P_IPV6))
		return rx_sk6(net, skb, dev->ifindex, refcounted);
#endif
	return NULL;
}
