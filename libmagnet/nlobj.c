// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Requests on the named objects whose attributes are nested in one
 * attribute: filters, synthesizers and correlators all name themselves
 * in the nest and take NEW, DEL and GET on that name.
 */
#include <errno.h>
#include <string.h>
#include <netlink/netlink.h>
#include <netlink/genl/genl.h>

#include "internal.h"

/* Unlike nl.c's put_name(), "" is refused: an object always has a name. */
int magnet_nl_put_str(struct nl_msg *msg, int type, const char *s)
{
	if (!s || !s[0] || strlen(s) >= MAGNET_NAME_MAX)
		return -EINVAL;
	return nla_put_string(msg, type, s) < 0 ? -EMSGSIZE : 0;
}

struct nl_msg *magnet_nl_obj_req(struct magnet_ctl *h,
				 const struct magnet_nl_obj *o, __u8 cmd,
				 int flags, const char *name,
				 struct nlattr **nest, int *err)
{
	struct nl_msg *msg = magnet_nl_req_new(h, cmd, flags);

	*err = -ENOMEM;
	if (!msg)
		return NULL;
	*nest = nla_nest_start(msg, o->nest);
	*err = *nest ? magnet_nl_put_str(msg, o->name, name) : -EMSGSIZE;
	if (*err) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

int magnet_nl_obj_add(struct magnet_ctl *h, const struct magnet_nl_obj *o,
		      const char *name, magnet_nl_put_fn put, const void *info)
{
	struct nlattr *nest;
	int err;
	struct nl_msg *msg = magnet_nl_obj_req(h, o, o->cmd_new, NLM_F_ACK,
					       name, &nest, &err);

	if (!msg)
		return magnet_nl_set_error(h, err);
	err = put(msg, info);
	if (err) {
		nlmsg_free(msg);
		return magnet_nl_set_error(h, err);
	}
	nla_nest_end(msg, nest);
	return magnet_nl_req_run(h, msg, NULL, NULL);
}

int magnet_nl_obj_del(struct magnet_ctl *h, const struct magnet_nl_obj *o,
		      const char *name)
{
	struct nlattr *nest;
	int err;
	struct nl_msg *msg = magnet_nl_obj_req(h, o, o->cmd_del, NLM_F_ACK,
					       name, &nest, &err);

	if (!msg)
		return magnet_nl_set_error(h, err);
	nla_nest_end(msg, nest);
	return magnet_nl_req_run(h, msg, NULL, NULL);
}

int magnet_nl_obj_get(struct magnet_ctl *h, const struct magnet_nl_obj *o,
		      const char *name, magnet_nl_parse_fn parse, void *out,
		      size_t size)
{
	struct nlattr *nest;
	int err;
	struct nl_msg *msg = magnet_nl_obj_req(h, o, o->cmd_get, 0, name,
					       &nest, &err);

	if (!msg)
		return magnet_nl_set_error(h, err);
	nla_nest_end(msg, nest);
	memset(out, 0, size);
	return magnet_nl_req_run(h, msg, parse, out);
}
