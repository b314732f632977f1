/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-version differences of the core, in one place.  Feature tests,
 * not scattered version checks: each block names what it papers over.
 */
#ifndef _MAGNET_COMPAT_H
#define _MAGNET_COMPAT_H

#include <linux/netlink.h>

/*
 * Formatted extack messages: NL_SET_ERR_MSG_FMT arrived in 6.2 and caps
 * messages at 80 bytes.  On every kernel the message is formatted by
 * kmod/extack.c into a string kept once and never rewritten: the ack
 * reads it after the handler, while other requests run (the family is
 * parallel_ops).  Not for dumps: they use constant messages (NL_SET_ERR_MSG).
 */
#define MAGNET_EXTACK_LEN	192
const char *magnet_extack_fmt(const char *fmt, ...) __printf(1, 2);
void magnet_extack_exit(void);

#define magnet_set_err(extack, attr, fmt, args...) do {		\
	struct netlink_ext_ack *__ext = (extack);			\
	if (__ext) {							\
		__ext->_msg = magnet_extack_fmt(fmt, ##args);		\
		NL_SET_BAD_ATTR(__ext, attr);				\
	}								\
} while (0)

/*
 * The first buffer of a user-backed iov_iter (read_iter of stream files
 * copies whole records to one user buffer).  iter_iov_addr() and
 * iter_iov_len() arrived in 6.4, which also made ITER_UBUF part of
 * iter_iov(); 6.1 has ->ubuf and ->iov.  NULL for kernel iterators.
 */
#include <linux/uio.h>

static inline void __user *magnet_iter_ubuf(const struct iov_iter *i,
					    size_t *len)
{
	if (!user_backed_iter(i))
		return NULL;
#ifdef iter_iov_addr
	*len = min(iov_iter_count(i), (size_t)iter_iov_len(i));
	return iter_iov_addr(i);
#else
	if (iter_is_ubuf(i)) {
		*len = iov_iter_count(i);
		return i->ubuf + i->iov_offset;
	}
	*len = min(iov_iter_count(i), i->iov->iov_len - i->iov_offset);
	return i->iov->iov_base + i->iov_offset;
#endif
}

/*
 * Inode times of a new magnetfs inode: 6.6 hid i_atime/i_mtime/i_ctime
 * behind accessors and added simple_inode_init_ts(); 6.1 has the fields.
 */
#include <linux/fs.h>
#include <linux/version.h>

static inline void magnet_inode_init_ts(struct inode *inode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
	simple_inode_init_ts(inode);
#else
	inode->i_atime = inode->i_mtime = inode->i_ctime = current_time(inode);
#endif
}

/*
 * The parsed attributes of a dump request: 6.2 moved them from
 * genl_dumpit_info.attrs into an embedded struct genl_info.
 */
#include <net/genetlink.h>

static inline struct nlattr **magnet_dump_attrs(struct netlink_callback *cb)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	return genl_dumpit_info(cb)->info.attrs;
#else
	return genl_dumpit_info(cb)->attrs;
#endif
}

/*
 * A stream file's mapping of a ring stays read-only (no mprotect() to
 * write): 6.3 made vma->vm_flags private behind vm_flags_mod().
 */
#include <linux/mm.h>

static inline void magnet_vma_set_ro(struct vm_area_struct *vma)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_mod(vma, VM_DONTEXPAND | VM_DONTDUMP, VM_MAYWRITE);
#else
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	vma->vm_flags &= ~VM_MAYWRITE;
#endif
}

#endif /* _MAGNET_COMPAT_H */
