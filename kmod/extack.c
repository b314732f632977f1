// SPDX-License-Identifier: GPL-2.0
/*
 * Formatted extack messages that no other request can change.
 *
 * netlink_ack() reads a request's message after the handler has
 * returned: twice (strlen() to size the reply,
 * then the copy, which WARNs if the string grew), in the sending task,
 * while other tasks' requests run.  A buffer shared by all requests
 * would hand one caller another's message (root's kprobe symbol to an
 * unprivileged PROBE_GET) or change under the copy.  NL_SET_ERR_MSG_FMT
 * (6.2) formats into the request's own extack, but caps messages at 80
 * bytes and 6.1 lacks it.  So each distinct message is kept once,
 * immutable, until the module goes (genl_unregister_family() waits for
 * every request in flight, acks included): a request points at its own
 * text, which nothing rewrites.  At most MAGNET_EXTACK_MSGS of them
 * (about 200 KiB), the last MAGNET_EXTACK_MSGS_ADMIN only for callers
 * with CAP_NET_ADMIN (the request runs in the sender's task), so that
 * users who send unknown names cannot use up root's; past that a request
 * gets its format string, the message's shape without its values (the
 * caller knows the values it sent).
 */
#include <linux/hashtable.h>
#include <linux/jhash.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/capability.h>
#include <linux/user_namespace.h>
#include "compat.h"

#define MAGNET_EXTACK_MSGS	1024
#define MAGNET_EXTACK_MSGS_ADMIN	256

struct magnet_extack_msg {
	struct hlist_node node;
	u32 hash;
	char text[];
};

static DEFINE_MUTEX(msgs_lock);
static DEFINE_HASHTABLE(msgs, 8);
static unsigned int msgs_nr;

const char *magnet_extack_fmt(const char *fmt, ...)
{
	struct magnet_extack_msg *m;
	char buf[MAGNET_EXTACK_LEN];
	const char *ret = fmt;
	va_list ap;
	size_t len;
	u32 hash;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	len = strlen(buf);
	hash = jhash(buf, len, 0);

	mutex_lock(&msgs_lock);
	hash_for_each_possible(msgs, m, node, hash) {
		if (m->hash == hash && !strcmp(m->text, buf)) {
			ret = m->text;
			goto out;
		}
	}
	if (msgs_nr >= MAGNET_EXTACK_MSGS ||
	    (msgs_nr >= MAGNET_EXTACK_MSGS - MAGNET_EXTACK_MSGS_ADMIN &&
	     !ns_capable_noaudit(&init_user_ns, CAP_NET_ADMIN)))
		goto out;
	m = kmalloc(struct_size(m, text, len + 1), GFP_KERNEL);
	if (!m)
		goto out;
	m->hash = hash;
	memcpy(m->text, buf, len + 1);
	hash_add(msgs, &m->node, hash);
	msgs_nr++;
	ret = m->text;
out:
	mutex_unlock(&msgs_lock);
	return ret;
}

/* Module exit, after the family is unregistered: no ack reads them. */
void magnet_extack_exit(void)
{
	struct magnet_extack_msg *m;
	struct hlist_node *tmp;
	int bkt;

	hash_for_each_safe(msgs, bkt, tmp, m, node) {
		hash_del(&m->node);
		kfree(m);
	}
	msgs_nr = 0;
}
