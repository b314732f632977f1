/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The process an event about a socket names when it happens in interrupt
 * context: the socket's last user.
 *
 * The kernel keeps no process with a socket (it may be shared after fork
 * or passed over SCM_RIGHTS), and a packet received in softirq runs on
 * whatever task it interrupted.  So the fast path remembers, per socket,
 * the task of the last event about it made in task context (the process's
 * own send or receive call, at any enabled point), and an event about the
 * same socket in interrupt context names that task (docs/PROBES.md,
 * "Which process an event names").  A bcc tool such as tcplife keeps the
 * same kind of table, keyed by socket, filled where the task is known.
 *
 * The table is fixed (MAGNET_SOCK_USERS slots, chosen by a hash of the
 * socket's abstract ID, its inode number: unique while the socket lives,
 * not reused by the next socket at the same address) and lock-free: each
 * slot is a tiny sequence lock.  A writer that finds the slot being
 * written, and a reader that sees it change under it, give up: the event
 * then names no task (0), as every interrupt-context event did before.
 * Two sockets in one slot take turns; the key check means a reader never
 * takes one socket's task for another's.  Bounded work, no allocation,
 * no wait: callable with interrupts off from any probe.  Inline in
 * __magnet_add() (notrace, NOKPROBE_SYMBOL like the rest of the write
 * path), so that an event's path spans no code page of its own for it.
 * No kernel address is stored.
 */
#ifndef _MAGNET_SOCK_USER_H
#define _MAGNET_SOCK_USER_H

#include <linux/compiler.h>
#include <linux/hash.h>
#include <linux/sched.h>
#include <asm/barrier.h>
#include <asm/cmpxchg.h>

#define MAGNET_SOCK_USERS_BITS	12
#define MAGNET_SOCK_USERS	(1u << MAGNET_SOCK_USERS_BITS)

struct magnet_sock_user {
	u32 seq;		/* odd while a writer fills the slot */
	u32 pid;
	u32 tgid;
	u64 id;			/* the socket's abstract ID; 0: empty */
};

/* sock_user.c */
extern struct magnet_sock_user magnet_sock_users[MAGNET_SOCK_USERS];

static __always_inline struct magnet_sock_user *magnet_sock_user_slot(u64 id)
{
	return &magnet_sock_users[hash_64(id, MAGNET_SOCK_USERS_BITS)];
}

/* Task context: the current task is socket @id's last user. */
static __always_inline void magnet_sock_user_note(u64 id)
{
	struct magnet_sock_user *u = magnet_sock_user_slot(id);
	u32 seq;

	/* the common case, the same task again: only reads */
	if (READ_ONCE(u->id) == id && READ_ONCE(u->pid) == current->pid &&
	    READ_ONCE(u->tgid) == current->tgid)
		return;
	seq = READ_ONCE(u->seq);
	if ((seq & 1) || cmpxchg(&u->seq, seq, seq + 1) != seq)
		return;		/* another writer has it: let it win */
	/* cmpxchg() is a full barrier: the odd count is seen first */
	WRITE_ONCE(u->id, id);
	WRITE_ONCE(u->pid, current->pid);
	WRITE_ONCE(u->tgid, current->tgid);
	/* the slot's fields before the even count: pairs with find()'s acquire */
	smp_store_release(&u->seq, seq + 2);
}

/* Socket @id's last user into @who (pid, tgid); false if not known. */
static __always_inline bool magnet_sock_user_find(u64 id, u32 *who)
{
	struct magnet_sock_user *u = magnet_sock_user_slot(id);
	u32 seq, pid, tgid;
	u64 key;

	/* the count before the fields: pairs with note()'s release */
	seq = smp_load_acquire(&u->seq);
	if (seq & 1)
		return false;
	key = READ_ONCE(u->id);
	pid = READ_ONCE(u->pid);
	tgid = READ_ONCE(u->tgid);
	/* the fields before the count's second read: a writer between shows */
	smp_rmb();
	if (READ_ONCE(u->seq) != seq || key != id || !tgid)
		return false;
	who[0] = pid;
	who[1] = tgid;
	return true;
}

#endif /* _MAGNET_SOCK_USER_H */
