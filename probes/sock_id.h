/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The abstract ID of network events: the inode number of the socket, what
 * fstat() on the socket shows its application, never a kernel pointer.
 */
#ifndef _MAGNET_PROBES_SOCK_ID_H
#define _MAGNET_PROBES_SOCK_ID_H

#include <linux/net.h>
#include <net/sock.h>

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
 * The owner of an event about @sk for magnet_add_owned(): the socket when
 * it is a full one (a time-wait or request socket has no cgroup), else
 * NULL.
 */
static __always_inline const struct sock *magnet_sock_owner(const struct sock *sk)
{
	return sk && sk_fullsock(sk) ? sk : NULL;
}

#endif /* _MAGNET_PROBES_SOCK_ID_H */
