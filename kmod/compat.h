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
 * messages at 80 bytes.  We format into our own buffer on every kernel:
 * the family is not parallel_ops, so each request runs under genl_mutex
 * until its ack is built, and one static buffer is enough.
 */
#define MAGNET_EXTACK_LEN	192
extern char magnet_extack_buf[MAGNET_EXTACK_LEN];

#define magnet_set_err(extack, attr, fmt, args...) do {		\
	struct netlink_ext_ack *__ext = (extack);			\
	if (__ext) {							\
		snprintf(magnet_extack_buf, MAGNET_EXTACK_LEN,		\
			 fmt, ##args);					\
		__ext->_msg = magnet_extack_buf;			\
		NL_SET_BAD_ATTR(__ext, attr);				\
	}								\
} while (0)

#endif /* _MAGNET_COMPAT_H */
