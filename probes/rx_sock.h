/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The local socket a received packet is for, found before the stack finds
 * it (rx_sock.c): what lets dev_recv and ip_recv carry the socket's
 * abstract ID and its owner, like every send-side event does.
 */
#ifndef _MAGNET_PROBES_RX_SOCK_H
#define _MAGNET_PROBES_RX_SOCK_H

#include <linux/types.h>

struct sk_buff;
struct net_device;
struct sock;

/*
 * The local TCP or UDP socket @skb (received on @dev, its data at the
 * network header, @proto its ETH_P_* in network order) is for; NULL when
 * there is none: not IPv4/IPv6, not TCP/UDP, a fragment after the first,
 * a forwarded packet or one no socket takes.  Call it inside
 * rcu_read_lock(); when *@refcounted comes back true the socket (maybe a
 * time-wait or request socket) is held: sock_gen_put() it.
 */
struct sock *mnet_rx_sock(const struct sk_buff *skb,
			  const struct net_device *dev, __be16 proto,
			  bool *refcounted);

#endif /* _MAGNET_PROBES_RX_SOCK_H */
