// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Control plane: requests to the "magnet" generic netlink family with
 * libnl-3, with the kernel's extended-ack message kept for the caller.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>

#include "internal.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

struct magnet_ctl {
	struct nl_sock *sk;
	int family;
	bool extack;
	char errmsg[MAGNET_ERRMSG_LEN];
};

/* Attribute types: libnl checks lengths and NUL-termination for us. */
static struct nla_policy magnet_policy[MAGNET_A_MAX + 1] = {
	[MAGNET_A_VERSION]		= { .type = NLA_STRING },
	[MAGNET_A_ABI_VERSION]		= { .type = NLA_U32 },
	[MAGNET_A_NR_CPUS]		= { .type = NLA_U32 },
	[MAGNET_A_NR_PROBES]		= { .type = NLA_U32 },
	[MAGNET_A_NR_STREAMS]		= { .type = NLA_U32 },
	[MAGNET_A_PROBE_ID]		= { .type = NLA_U32 },
	[MAGNET_A_PROBE_NAME]		= { .type = NLA_STRING },
	[MAGNET_A_PROBE_LAYER]		= { .type = NLA_U32 },
	[MAGNET_A_PROBE_PAYLOAD]	= { .type = NLA_U32 },
	[MAGNET_A_PROBE_ENABLED]	= { .type = NLA_U8 },
	[MAGNET_A_PROBE_HOOK]		= { .type = NLA_STRING },
	[MAGNET_A_PROBE_MODULE]		= { .type = NLA_STRING },
	[MAGNET_A_PROBE_HITS]		= { .type = NLA_U64 },
	[MAGNET_A_STREAM_NAME]		= { .type = NLA_STRING },
	[MAGNET_A_STREAM_PATH]		= { .type = NLA_STRING },
	[MAGNET_A_STREAM_SUBBUF_SIZE]	= { .type = NLA_U32 },
	[MAGNET_A_STREAM_SUBBUF_COUNT]	= { .type = NLA_U32 },
	[MAGNET_A_STREAM_PRODUCED]	= { .type = NLA_U64 },
	[MAGNET_A_STREAM_WRITTEN]	= { .type = NLA_U64 },
	[MAGNET_A_STREAM_LOST]		= { .type = NLA_U64 },
	[MAGNET_A_STREAM_READ]		= { .type = NLA_U64 },
	[MAGNET_A_STREAM_BYTES]		= { .type = NLA_U64 },
	[MAGNET_A_STREAM_READERS]	= { .type = NLA_U32 },
	[MAGNET_A_STREAM_PROBES]	= { .type = NLA_U32 },
	[MAGNET_A_FILTER]		= { .type = NLA_NESTED },
	[MAGNET_A_CORR]			= { .type = NLA_NESTED },
	[MAGNET_A_STREAM_APP_WRITE]	= { .type = NLA_U8 },
	[MAGNET_A_STREAM_APP_EVENTS]	= { .type = NLA_U64 },
	[MAGNET_A_STREAM_APP_REJECTED]	= { .type = NLA_U64 },
};

typedef int (*parse_fn)(struct nlattr **tb, void *arg);

struct nl_req {
	struct magnet_ctl *h;
	parse_fn parse;
	void *arg;
	unsigned int seq;
	bool dump;
	bool want_ack;
	bool done;
	bool stopped;		/* parse asked to stop: drain silently */
	int err;		/* -errno from the kernel or parse */
};

/* libnl error codes back to errno, for callers that speak errno. */
static int nlerr_to_errno(int e)
{
	switch (e < 0 ? -e : e) {
	case NLE_NOMEM:		return ENOMEM;
	case NLE_PERM:
	case NLE_NOACCESS:	return EPERM;
	case NLE_OBJ_NOTFOUND:	return ENOENT;
	case NLE_AGAIN:		return EAGAIN;
	case NLE_INTR:
	case NLE_DUMP_INTR:	return EINTR;
	case NLE_EXIST:		return EEXIST;
	case NLE_INVAL:		return EINVAL;
	case NLE_RANGE:		return ERANGE;
	case NLE_MSGSIZE:	return EMSGSIZE;
	case NLE_OPNOTSUPP:	return EOPNOTSUPP;
	case NLE_BUSY:		return EBUSY;
	case NLE_BAD_SOCK:	return EBADF;
	case NLE_NODEV:		return ENODEV;
	case NLE_AF_NOSUPPORT:	return EAFNOSUPPORT;
	default:		return EIO;
	}
}

/* A failure without kernel explanation: the message is strerror(). */
static int set_error(struct magnet_ctl *h, int err)
{
	h->extack = false;
	snprintf(h->errmsg, sizeof(h->errmsg), "%s", strerror(-err));
	return err;
}

const char *magnet_ctl_errmsg(const struct magnet_ctl *h)
{
	return h->errmsg;
}

bool magnet_ctl_has_extack(const struct magnet_ctl *h)
{
	return h->extack;
}

int magnet_ctl_open(struct magnet_ctl **out)
{
	if (!out)
		return -EINVAL;
	return magnet_ctl_open_family(MAGNET_GENL_NAME, out);
}

int magnet_ctl_open_family(const char *family, struct magnet_ctl **out)
{
	struct magnet_ctl *h;
	int one = 1;
	int err;

	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->sk = nl_socket_alloc();
	if (!h->sk) {
		err = -ENOMEM;
		goto fail;
	}
	err = genl_connect(h->sk);
	if (err < 0) {
		err = -nlerr_to_errno(err);
		goto fail;
	}
	nl_socket_disable_auto_ack(h->sk);
	/* Best effort: without it errors still arrive, just unexplained. */
	setsockopt(nl_socket_get_fd(h->sk), SOL_NETLINK, NETLINK_EXT_ACK,
		   &one, sizeof(one));
	h->family = genl_ctrl_resolve(h->sk, family);
	if (h->family < 0) {
		err = -nlerr_to_errno(h->family);
		goto fail;
	}
	*out = h;
	return 0;
fail:
	magnet_ctl_close(h);
	return err;
}

void magnet_ctl_close(struct magnet_ctl *h)
{
	if (!h)
		return;
	nl_socket_free(h->sk);
	free(h);
}

/*
 * struct nlmsgerr is followed by the request (unless NLM_F_CAPPED) and,
 * with NLM_F_ACK_TLVS, by NLMSGERR_ATTR_* attributes.  @e must be the
 * payload of a complete NLMSG_ERROR message.  Copies NLMSGERR_ATTR_MSG to
 * @buf; returns whether there was one.
 */
bool magnet_parse_extack(const struct nlmsgerr *e, char *buf, size_t len)
{
	const struct nlmsghdr *nlh = (const void *)((const char *)e - NLMSG_HDRLEN);
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	size_t total, off = sizeof(*e);

	buf[0] = '\0';
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return false;
	if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(*e))
		return false;
	total = nlh->nlmsg_len - NLMSG_HDRLEN;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
		if (e->msg.nlmsg_len < NLMSG_HDRLEN)
			return false;
		off += e->msg.nlmsg_len - NLMSG_HDRLEN;
	}
	off = NLMSG_ALIGN(off);
	if (off >= total)
		return false;
	if (nla_parse(tb, NLMSGERR_ATTR_MAX,
		      (struct nlattr *)((char *)e + off), total - off, NULL) < 0)
		return false;
	if (!tb[NLMSGERR_ATTR_MSG] || nla_len(tb[NLMSGERR_ATTR_MSG]) < 1)
		return false;
	nla_strlcpy(buf, tb[NLMSGERR_ATTR_MSG], len);
	return buf[0] != '\0';
}

/*
 * NLMSG_DONE of a dump carries the dump's error as an int (negative when
 * the dump failed, e.g. at its first call: a filter naming nothing) and,
 * with NLM_F_ACK_TLVS, NLMSGERR_ATTR_* attributes after it.  Returns that
 * error (0 when the message has none) and copies NLMSGERR_ATTR_MSG to @buf
 * ("" without one).
 */
int magnet_parse_done(const struct nlmsghdr *nlh, char *buf, size_t len)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	size_t off = NLMSG_ALIGN(sizeof(int));
	int err;

	buf[0] = '\0';
	if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(int))
		return 0;
	memcpy(&err, NLMSG_DATA(nlh), sizeof(err));
	if (err >= 0)
		return 0;
	if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) &&
	    nlh->nlmsg_len > NLMSG_HDRLEN + off &&
	    nla_parse(tb, NLMSGERR_ATTR_MAX,
		      (struct nlattr *)((char *)NLMSG_DATA(nlh) + off),
		      nlh->nlmsg_len - NLMSG_HDRLEN - off, NULL) >= 0 &&
	    tb[NLMSGERR_ATTR_MSG] && nla_len(tb[NLMSGERR_ATTR_MSG]) >= 1)
		nla_strlcpy(buf, tb[NLMSGERR_ATTR_MSG], len);
	return err;
}

static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct nl_req *req = arg;

	(void)nla;
	req->err = e->error < 0 ? e->error : -EIO;
	req->h->extack = magnet_parse_extack(e, req->h->errmsg,
					     sizeof(req->h->errmsg));
	req->done = true;
	return NL_STOP;
}

static int on_seq_check(struct nl_msg *msg, void *arg)
{
	struct nl_req *req = arg;

	return nlmsg_hdr(msg)->nlmsg_seq == req->seq ? NL_OK : NL_SKIP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	struct nl_req *req = arg;

	(void)msg;
	req->done = true;
	return NL_STOP;
}

static int on_finish(struct nl_msg *msg, void *arg)
{
	struct nl_req *req = arg;
	char buf[MAGNET_ERRMSG_LEN];
	int err = magnet_parse_done(nlmsg_hdr(msg), buf, sizeof(buf));

	/* a dump the kernel refused: its error and message, not an empty list */
	if (err < 0 && !req->err) {
		req->err = err;
		req->h->extack = buf[0] != '\0';
		snprintf(req->h->errmsg, sizeof(req->h->errmsg), "%s",
			 buf[0] ? buf : strerror(-err));
	}
	req->done = true;
	return NL_STOP;
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct nl_req *req = arg;
	struct nlattr *tb[MAGNET_A_MAX + 1];
	int err;

	if (!req->dump && !req->want_ack)
		req->done = true;
	if (req->stopped || !req->parse)
		return NL_OK;
	err = genlmsg_parse(nlmsg_hdr(msg), 0, tb, MAGNET_A_MAX, magnet_policy);
	if (err < 0) {
		req->err = -EPROTO;
		req->stopped = true;
		return NL_OK;
	}
	err = req->parse(tb, req->arg);
	if (err) {
		req->stopped = true;
		if (err < 0)
			req->err = err;
	}
	return NL_OK;
}

static struct nl_msg *req_new(struct magnet_ctl *h, __u8 cmd, int flags)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, h->family, 0, flags,
			 cmd, MAGNET_GENL_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static struct nl_cb *req_callbacks(struct nl_req *req)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);

	if (!cb)
		return NULL;
	nl_cb_set(cb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, on_seq_check, req);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, req);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_finish, req);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, req);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, req);
	return cb;
}

/* Send @msg (consumed) and process replies until done/ACK/error. */
static int req_run(struct magnet_ctl *h, struct nl_msg *msg, parse_fn parse,
		   void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct nl_req req = {
		.h = h, .parse = parse, .arg = arg,
		.dump = nlh->nlmsg_flags & NLM_F_DUMP,
		.want_ack = nlh->nlmsg_flags & NLM_F_ACK,
	};
	struct nl_cb *cb;
	int ret;

	h->errmsg[0] = '\0';
	h->extack = false;
	cb = req_callbacks(&req);
	if (!cb) {
		nlmsg_free(msg);
		return set_error(h, -ENOMEM);
	}
	ret = nl_send_auto(h->sk, msg);
	req.seq = nlh->nlmsg_seq;
	nlmsg_free(msg);
	while (ret >= 0 && !req.done)
		ret = nl_recvmsgs(h->sk, cb);
	nl_cb_put(cb);
	if (req.err)
		return h->extack ? req.err : set_error(h, req.err);
	if (ret < 0)
		return set_error(h, -nlerr_to_errno(ret));
	return 0;
}

struct nl_msg *magnet_nl_req_new(struct magnet_ctl *h, __u8 cmd, int flags)
{
	return req_new(h, cmd, flags);
}

int magnet_nl_req_run(struct magnet_ctl *h, struct nl_msg *msg,
		      magnet_nl_parse_fn parse, void *arg)
{
	return req_run(h, msg, parse, arg);
}

int magnet_nl_set_error(struct magnet_ctl *h, int err)
{
	return set_error(h, err);
}

int magnet_nl_dump(struct magnet_ctl *h, __u8 cmd, magnet_nl_parse_fn parse,
		   void *arg)
{
	struct nl_msg *msg = req_new(h, cmd, NLM_F_DUMP);

	if (!msg)
		return set_error(h, -ENOMEM);
	return req_run(h, msg, parse, arg);
}

/* Put a string attribute, -EINVAL (not truncation) when too long. */
static int put_name(struct nl_msg *msg, int type, const char *s)
{
	if (!s || strlen(s) >= MAGNET_NAME_MAX)
		return -EINVAL;
	return nla_put_string(msg, type, s) < 0 ? -EMSGSIZE : 0;
}

/* A request with up to two string attributes, sent with NLM_F_ACK. */
static int req_simple(struct magnet_ctl *h, __u8 cmd, int t1, const char *s1,
		      int t2, const char *s2)
{
	struct nl_msg *msg = req_new(h, cmd, NLM_F_ACK);
	int err;

	if (!msg)
		return set_error(h, -ENOMEM);
	err = put_name(msg, t1, s1);
	if (!err && t2)
		err = put_name(msg, t2, s2);
	if (err) {
		nlmsg_free(msg);
		return set_error(h, err);
	}
	return req_run(h, msg, NULL, NULL);
}

/* A GET of the object @name names (attribute @attr) into *@out. */
static int req_get(struct magnet_ctl *h, __u8 cmd, int attr, const char *name,
		   parse_fn parse, void *out, size_t size)
{
	struct nl_msg *msg = req_new(h, cmd, 0);

	if (!msg)
		return set_error(h, -ENOMEM);
	if (put_name(msg, attr, name)) {
		nlmsg_free(msg);
		return set_error(h, -EINVAL);
	}
	memset(out, 0, size);
	return req_run(h, msg, parse, out);
}

/* Tests only: one raw attribute, to provoke kernel extack messages. */
int magnet_ctl_request_raw(struct magnet_ctl *h, __u8 cmd, int flags,
			   int attr, const void *data, size_t len)
{
	struct nl_msg *msg = req_new(h, cmd, flags);

	if (!msg)
		return set_error(h, -ENOMEM);
	if (nla_put(msg, attr, len, data) < 0) {
		nlmsg_free(msg);
		return set_error(h, -EMSGSIZE);
	}
	return req_run(h, msg, NULL, NULL);
}

/* ---- status ---- */

/* Attributes the kernel left out read as 0 or "". */
__u32 magnet_nl_u32(struct nlattr **tb, int type)
{
	return tb[type] ? nla_get_u32(tb[type]) : 0;
}

__u64 magnet_nl_u64(struct nlattr **tb, int type)
{
	return tb[type] ? nla_get_u64(tb[type]) : 0;
}

void magnet_nl_str(struct nlattr **tb, int type, char *dst, size_t len)
{
	dst[0] = '\0';
	if (tb[type])
		nla_strlcpy(dst, tb[type], len);
}

static int parse_status(struct nlattr **tb, void *arg)
{
	struct magnet_status *st = arg;

	magnet_nl_str(tb, MAGNET_A_VERSION, st->version, sizeof(st->version));
	st->abi = magnet_nl_u32(tb, MAGNET_A_ABI_VERSION);
	st->nr_cpus = magnet_nl_u32(tb, MAGNET_A_NR_CPUS);
	st->nr_probes = magnet_nl_u32(tb, MAGNET_A_NR_PROBES);
	st->nr_streams = magnet_nl_u32(tb, MAGNET_A_NR_STREAMS);
	return 0;
}

int magnet_status_get(struct magnet_ctl *h, struct magnet_status *st)
{
	struct nl_msg *msg = req_new(h, MAGNET_CMD_STATUS_GET, 0);

	if (!msg)
		return set_error(h, -ENOMEM);
	memset(st, 0, sizeof(*st));
	return req_run(h, msg, parse_status, st);
}

/* ---- probes ---- */

static void parse_probe_info(struct nlattr **tb, struct magnet_probe_info *p)
{
	memset(p, 0, sizeof(*p));
	p->id = magnet_nl_u32(tb, MAGNET_A_PROBE_ID);
	magnet_nl_str(tb, MAGNET_A_PROBE_NAME, p->name, sizeof(p->name));
	p->layer = magnet_nl_u32(tb, MAGNET_A_PROBE_LAYER);
	p->payload = magnet_nl_u32(tb, MAGNET_A_PROBE_PAYLOAD);
	p->enabled = tb[MAGNET_A_PROBE_ENABLED] &&
		     nla_get_u8(tb[MAGNET_A_PROBE_ENABLED]);
	magnet_nl_str(tb, MAGNET_A_PROBE_HOOK, p->hook, sizeof(p->hook));
	magnet_nl_str(tb, MAGNET_A_PROBE_MODULE, p->module, sizeof(p->module));
	p->hits = magnet_nl_u64(tb, MAGNET_A_PROBE_HITS);
	magnet_nl_str(tb, MAGNET_A_STREAM_NAME, p->stream, sizeof(p->stream));
}

struct probe_walk {
	magnet_probe_cb cb;
	void *ctx;
};

static int parse_probe_walk(struct nlattr **tb, void *arg)
{
	struct probe_walk *w = arg;
	struct magnet_probe_info p;

	parse_probe_info(tb, &p);
	return w->cb(&p, w->ctx);
}

int magnet_probe_list(struct magnet_ctl *h, magnet_probe_cb cb, void *ctx)
{
	struct probe_walk w = { .cb = cb, .ctx = ctx };

	if (!cb)
		return set_error(h, -EINVAL);
	return magnet_nl_dump(h, MAGNET_CMD_PROBE_GET, parse_probe_walk, &w);
}

static int parse_probe_one(struct nlattr **tb, void *arg)
{
	parse_probe_info(tb, arg);
	return 0;
}

int magnet_probe_get(struct magnet_ctl *h, const char *name,
		     struct magnet_probe_info *p)
{
	return req_get(h, MAGNET_CMD_PROBE_GET, MAGNET_A_PROBE_NAME,
		       name, parse_probe_one, p, sizeof(*p));
}

int magnet_probe_enable(struct magnet_ctl *h, const char *name,
			const char *stream)
{
	return req_simple(h, MAGNET_CMD_PROBE_ENABLE, MAGNET_A_PROBE_NAME, name,
			  MAGNET_A_STREAM_NAME, stream);
}

int magnet_probe_disable(struct magnet_ctl *h, const char *name)
{
	return req_simple(h, MAGNET_CMD_PROBE_DISABLE, MAGNET_A_PROBE_NAME,
			  name, 0, NULL);
}

static int req_probe_id(struct magnet_ctl *h, __u8 cmd, __u32 id,
			const char *stream)
{
	struct nl_msg *msg = req_new(h, cmd, NLM_F_ACK);
	int err = 0;

	if (!msg)
		return set_error(h, -ENOMEM);
	if (nla_put_u32(msg, MAGNET_A_PROBE_ID, id) < 0)
		err = -EMSGSIZE;
	if (!err && stream)
		err = put_name(msg, MAGNET_A_STREAM_NAME, stream);
	if (err) {
		nlmsg_free(msg);
		return set_error(h, err);
	}
	return req_run(h, msg, NULL, NULL);
}

int magnet_probe_enable_id(struct magnet_ctl *h, __u32 id, const char *stream)
{
	if (!stream)
		return set_error(h, -EINVAL);
	return req_probe_id(h, MAGNET_CMD_PROBE_ENABLE, id, stream);
}

int magnet_probe_disable_id(struct magnet_ctl *h, __u32 id)
{
	return req_probe_id(h, MAGNET_CMD_PROBE_DISABLE, id, NULL);
}

/* ---- run-time kprobes: attributes nested in MAGNET_A_KPROBE ---- */

int magnet_kprobe_add(struct magnet_ctl *h, const struct magnet_kprobe_spec *k,
		      __u32 *id)
{
	struct nl_msg *msg;
	struct magnet_probe_info p;
	struct nlattr *nest;
	int err = 0, ret;

	if (!k || !k->name || !k->symbol || !k->symbol[0] ||
	    k->args >= 1u << MAGNET_KPROBE_NARGS)
		return set_error(h, -EINVAL);
	msg = req_new(h, MAGNET_CMD_KPROBE_NEW, 0);
	if (!msg)
		return set_error(h, -ENOMEM);
	nest = nla_nest_start(msg, MAGNET_A_KPROBE);
	if (!nest)
		err = -EMSGSIZE;
	if (!err)
		err = put_name(msg, MAGNET_KPROBE_A_NAME, k->name);
	if (!err && (strlen(k->symbol) >= 128 ||
		     nla_put_string(msg, MAGNET_KPROBE_A_SYMBOL, k->symbol) < 0))
		err = -EINVAL;
	if (!err && k->offset &&
	    nla_put_u32(msg, MAGNET_KPROBE_A_OFFSET, k->offset) < 0)
		err = -EMSGSIZE;
	if (!err && k->retprobe && nla_put_flag(msg, MAGNET_KPROBE_A_RETPROBE) < 0)
		err = -EMSGSIZE;
	if (!err && nla_put_u32(msg, MAGNET_KPROBE_A_ARGS, k->args) < 0)
		err = -EMSGSIZE;
	if (err) {
		nlmsg_free(msg);
		return set_error(h, err);
	}
	nla_nest_end(msg, nest);
	ret = req_run(h, msg, parse_probe_one, &p);
	if (!ret && id)
		*id = p.id;
	return ret;
}

int magnet_kprobe_del(struct magnet_ctl *h, const char *name)
{
	struct nl_msg *msg = req_new(h, MAGNET_CMD_KPROBE_DEL, NLM_F_ACK);
	struct nlattr *nest;

	if (!msg)
		return set_error(h, -ENOMEM);
	nest = nla_nest_start(msg, MAGNET_A_KPROBE);
	if (!nest || put_name(msg, MAGNET_KPROBE_A_NAME, name)) {
		nlmsg_free(msg);
		return set_error(h, -EINVAL);
	}
	nla_nest_end(msg, nest);
	return req_run(h, msg, NULL, NULL);
}

/* ---- streams ---- */

int magnet_stream_create(struct magnet_ctl *h, const char *name,
			 __u32 subbuf_size, __u32 subbuf_count)
{
	struct magnet_stream_opts o = {
		.sz = sizeof(o),
		.subbuf_size = subbuf_size,
		.subbuf_count = subbuf_count,
	};

	return magnet_stream_create_opts(h, name, &o);
}

/* Option @field is inside the caller's struct of @sz bytes. */
#define OPT_HAS(o, field) ((o)->sz >= offsetof(__typeof__(*(o)), field) + sizeof((o)->field))

int magnet_stream_create_opts(struct magnet_ctl *h, const char *name,
			      const struct magnet_stream_opts *opts)
{
	struct nl_msg *msg;
	__u32 subbuf_size, subbuf_count, mode, clock;
	bool app_write;
	int err;

	if (!h)
		return -EINVAL;
	if (!opts || opts->sz < offsetof(struct magnet_stream_opts, subbuf_size))
		return set_error(h, -EINVAL);
	subbuf_size = OPT_HAS(opts, subbuf_size) ? opts->subbuf_size : 0;
	subbuf_count = OPT_HAS(opts, subbuf_count) ? opts->subbuf_count : 0;
	mode = OPT_HAS(opts, mode) ? opts->mode : 0;
	app_write = OPT_HAS(opts, app_write) ? opts->app_write : false;
	clock = OPT_HAS(opts, clock) ? opts->clock : 0;
	msg = req_new(h, MAGNET_CMD_STREAM_NEW, NLM_F_ACK);

	if (!msg)
		return set_error(h, -ENOMEM);
	err = put_name(msg, MAGNET_A_STREAM_NAME, name);
	if (!err && subbuf_size &&
	    nla_put_u32(msg, MAGNET_A_STREAM_SUBBUF_SIZE, subbuf_size) < 0)
		err = -EMSGSIZE;
	if (!err && subbuf_count &&
	    nla_put_u32(msg, MAGNET_A_STREAM_SUBBUF_COUNT, subbuf_count) < 0)
		err = -EMSGSIZE;
	/* mode 0 is the default: older kernels take such a request too */
	if (!err && mode &&
	    nla_put_u32(msg, MAGNET_A_STREAM_MODE, mode) < 0)
		err = -EMSGSIZE;
	if (!err && app_write &&
	    nla_put_u8(msg, MAGNET_A_STREAM_APP_WRITE, 1) < 0)
		err = -EMSGSIZE;
	/* likewise the default clock */
	if (!err && clock && nla_put_u32(msg, MAGNET_A_STREAM_CLOCK, clock) < 0)
		err = -EMSGSIZE;
	if (err) {
		nlmsg_free(msg);
		return set_error(h, err);
	}
	return req_run(h, msg, NULL, NULL);
}

int magnet_stream_delete(struct magnet_ctl *h, const char *name)
{
	return req_simple(h, MAGNET_CMD_STREAM_DEL, MAGNET_A_STREAM_NAME, name,
			  0, NULL);
}

int magnet_stream_flush(struct magnet_ctl *h, const char *name)
{
	return req_simple(h, MAGNET_CMD_STREAM_FLUSH, MAGNET_A_STREAM_NAME,
			  name, 0, NULL);
}

static void parse_stream_info(struct nlattr **tb, struct magnet_stream_info *s)
{
	memset(s, 0, sizeof(*s));
	magnet_nl_str(tb, MAGNET_A_STREAM_NAME, s->name, sizeof(s->name));
	magnet_nl_str(tb, MAGNET_A_STREAM_PATH, s->path, sizeof(s->path));
	s->subbuf_size = magnet_nl_u32(tb, MAGNET_A_STREAM_SUBBUF_SIZE);
	s->subbuf_count = magnet_nl_u32(tb, MAGNET_A_STREAM_SUBBUF_COUNT);
	s->produced = magnet_nl_u64(tb, MAGNET_A_STREAM_PRODUCED);
	s->written = magnet_nl_u64(tb, MAGNET_A_STREAM_WRITTEN);
	s->lost = magnet_nl_u64(tb, MAGNET_A_STREAM_LOST);
	s->read = magnet_nl_u64(tb, MAGNET_A_STREAM_READ);
	s->bytes = magnet_nl_u64(tb, MAGNET_A_STREAM_BYTES);
	s->readers = magnet_nl_u32(tb, MAGNET_A_STREAM_READERS);
	s->probes = magnet_nl_u32(tb, MAGNET_A_STREAM_PROBES);
	s->app_write = tb[MAGNET_A_STREAM_APP_WRITE] &&
		       nla_get_u8(tb[MAGNET_A_STREAM_APP_WRITE]);
	s->app_events = magnet_nl_u64(tb, MAGNET_A_STREAM_APP_EVENTS);
	s->app_rejected = magnet_nl_u64(tb, MAGNET_A_STREAM_APP_REJECTED);
}

struct stream_walk {
	magnet_stream_cb cb;
	void *ctx;
};

static int parse_stream_walk(struct nlattr **tb, void *arg)
{
	struct stream_walk *w = arg;
	struct magnet_stream_info s;

	parse_stream_info(tb, &s);
	return w->cb(&s, w->ctx);
}

int magnet_stream_list(struct magnet_ctl *h, magnet_stream_cb cb, void *ctx)
{
	struct stream_walk w = { .cb = cb, .ctx = ctx };

	if (!cb)
		return set_error(h, -EINVAL);
	return magnet_nl_dump(h, MAGNET_CMD_STREAM_GET, parse_stream_walk, &w);
}

static int parse_stream_one(struct nlattr **tb, void *arg)
{
	parse_stream_info(tb, arg);
	return 0;
}

int magnet_stream_get(struct magnet_ctl *h, const char *name,
		      struct magnet_stream_info *s)
{
	return req_get(h, MAGNET_CMD_STREAM_GET, MAGNET_A_STREAM_NAME,
		       name, parse_stream_one, s, sizeof(*s));
}

/* ---- buffer modes ---- */

static int parse_stream_mode(struct nlattr **tb, void *arg)
{
	struct magnet_stream_mode_info *m = arg;

	m->mode = magnet_nl_u32(tb, MAGNET_A_STREAM_MODE);
	m->frozen = tb[MAGNET_A_STREAM_FROZEN] ?
		    nla_get_u8(tb[MAGNET_A_STREAM_FROZEN]) : 0;
	m->overwritten = magnet_nl_u64(tb, MAGNET_A_STREAM_OVERWRITTEN);
	m->overwritten_bytes = magnet_nl_u64(tb,
					     MAGNET_A_STREAM_OVERWRITTEN_BYTES);
	m->frozen_lost = magnet_nl_u64(tb, MAGNET_A_STREAM_FROZEN_LOST);
	return 0;
}

int magnet_stream_get_mode(struct magnet_ctl *h, const char *name,
			   struct magnet_stream_mode_info *m)
{
	return req_get(h, MAGNET_CMD_STREAM_GET, MAGNET_A_STREAM_NAME,
		       name, parse_stream_mode, m, sizeof(*m));
}

static int parse_stream_clock(struct nlattr **tb, void *out)
{
	__u32 *clock = out;

	*clock = tb[MAGNET_A_STREAM_CLOCK] ?
		 nla_get_u32(tb[MAGNET_A_STREAM_CLOCK]) :
		 MAGNET_CLOCK_MONOTONIC;
	return 0;
}

int magnet_stream_get_clock(struct magnet_ctl *h, const char *name,
			    __u32 *clock)
{
	return req_get(h, MAGNET_CMD_STREAM_GET, MAGNET_A_STREAM_NAME,
		       name, parse_stream_clock, clock, sizeof(*clock));
}

static int stream_snapshot_op(struct magnet_ctl *h, const char *name, __u32 op)
{
	struct nl_msg *msg = req_new(h, MAGNET_CMD_STREAM_SNAPSHOT, NLM_F_ACK);
	int err;

	if (!msg)
		return set_error(h, -ENOMEM);
	err = put_name(msg, MAGNET_A_STREAM_NAME, name);
	if (!err && nla_put_u32(msg, MAGNET_A_STREAM_SNAPSHOT, op) < 0)
		err = -EMSGSIZE;
	if (err) {
		nlmsg_free(msg);
		return set_error(h, err);
	}
	return req_run(h, msg, NULL, NULL);
}

int magnet_stream_freeze(struct magnet_ctl *h, const char *name)
{
	return stream_snapshot_op(h, name, MAGNET_SNAPSHOT_FREEZE);
}

int magnet_stream_resume(struct magnet_ctl *h, const char *name)
{
	return stream_snapshot_op(h, name, MAGNET_SNAPSHOT_RESUME);
}

/* Copy what the frozen stream file @path holds to @out_fd. */
static int snapshot_write(int out_fd, const void *p, size_t n, __u64 *bytes)
{
	ssize_t w;

	while (n) {
		w = write(out_fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p = (const char *)p + w;
		n -= (size_t)w;
		*bytes += (__u64)w;
	}
	return 0;
}

/* The frozen records by read(2): where spans are refused (lockdown). */
static int snapshot_read(int fd, int out_fd, __u64 *bytes)
{
	size_t cap = 1 << 20;
	char *buf = malloc(cap);
	int err = 0;
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	/* a frozen stream never blocks: its records, then 0 */
	while ((n = magnet_stream_read(fd, buf, cap)) > 0 &&
	       !(err = snapshot_write(out_fd, buf, (size_t)n, bytes)))
		;
	free(buf);
	return err ? err : n < 0 ? (int)n : 0;
}

/*
 * Copy a frozen stream in place, span by span (docs/IOCTL.md), to its
 * end (ENODATA); by read(2) where the file refuses spans.
 */
static int snapshot_copy(const char *path, int out_fd, __u64 *bytes)
{
	struct magnet_span_reader *sr = NULL;
	struct magnet_span_view v;
	bool first = true;
	int fd, err;

	fd = magnet_stream_open(path, true);
	if (fd < 0)
		return fd;
	err = magnet_span_reader_open(fd, &sr);
	while (!err && (err = magnet_span_reader_get(sr, true, &v)) > 0) {
		first = false;
		err = snapshot_write(out_fd, v.meta, v.meta_len, bytes);
		if (!err)
			err = snapshot_write(out_fd, v.data, v.len, bytes);
		if (!err && v.len)
			err = magnet_span_reader_put(sr);
	}
	magnet_span_reader_close(sr);
	close(fd);	/* gives back a span it could not map */
	if (first && (err == -ENOTTY || err == -EPERM || err == -EACCES)) {
		fd = magnet_stream_open(path, true);
		if (fd < 0)
			return fd;
		err = snapshot_read(fd, out_fd, bytes);
		close(fd);
	}
	return err;
}

int magnet_stream_snapshot(struct magnet_ctl *h, const char *name, int out_fd,
			   __u64 *bytes)
{
	struct magnet_stream_info si;
	__u64 done = 0;
	int err, err2;

	err = magnet_stream_get(h, name, &si);
	if (err)
		return err;
	err = magnet_stream_freeze(h, name);
	if (err)
		return err;
	err = snapshot_copy(si.path, out_fd, &done);
	if (bytes)
		*bytes = done;
	err2 = magnet_stream_resume(h, name);
	if (err) {
		h->extack = false;
		snprintf(h->errmsg, sizeof(h->errmsg), "copying %.*s: %s%s",
			 64, si.path, strerror(-err),
			 err2 ? " (and the resume failed)" : "");
		return err;
	}
	return err2;
}
