/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The abstract ID of network events: the inode number of the socket, what
 * fstat() on the socket shows its application, never a kernel pointer.
 */
#ifndef _MAGNET_PROBES_SOCK_ID_H
#define _MAGNET_PROBES_SOCK_ID_H

#include <linux/net.h>
#include <net/sock.h>
#include <magnet/magnet.h>

/*
 * Inode number of the socket @sk belongs to, 0 if none or not a full sk.
 * No lock (sock_i_ino() takes one): the socket and its inode are freed
 * after an RCU grace period, and hooks run inside an RCU read side.
 */
static __always_inline u64 magnet_sock_id(const struct sock *sk)
{
	struct socket *sock;

	if (!sk || !sk_fullsock(sk))
		return 0;
	sock = READ_ONCE(sk->sk_socket);
	return sock ? SOCK_INODE(sock)->i_ino : 0;
}

/*
 * Record an event about the socket @sk (or none): its inode number as the
 * abstract ID and, when it is a full socket, the socket itself as the
 * event's owner, whose cgroup is the event's in interrupt context
 * (magnet_add_owned()); a time-wait or request socket has no cgroup.
 */
static __always_inline void magnet_add_sock(struct magnet_point *pt,
					    const struct sock *sk,
					    const void *payload, u16 len)
{
	magnet_add_owned(pt, magnet_sock_id(sk), payload, len,
			 sk && sk_fullsock(sk) ? sk : NULL);
}

#endif /* _MAGNET_PROBES_SOCK_ID_H */
