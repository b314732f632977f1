// SPDX-License-Identifier: GPL-2.0
/*
 * The "magnet" generic netlink family: the control plane.  Requests that
 * change the instrumentation database need CAP_NET_ADMIN and are carried
 * out by magnetk; every rejection carries an extack message.  See
 * docs/NETLINK.md.
 *
 * What a caller without CAP_NET_ADMIN may read (docs/THREATS.md): the
 * status, streams, correlators and the probe catalog, without the symbols
 * of run-time kprobes; not synthesizer values nor filters (synth_nl.c,
 * filter_nl.c), which single out processes, cgroups and sockets; not the
 * "probes" multicast group.
 */
#include <net/genetlink.h>
#include <linux/cgroup.h>
#include <linux/cpumask.h>
#include "internal.h"
#include "filter_core.h"
#include "compat.h"

static struct genl_family magnet_genl_family;

static const struct nla_policy magnet_policy[MAGNET_A_MAX + 1] = {
	[MAGNET_A_PROBE_ID]		= NLA_POLICY_MAX(NLA_U32, MAGNET_EVENT_MAX),
	[MAGNET_A_PROBE_NAME]		= { .type = NLA_NUL_STRING, .len = MAGNET_NAME_MAX - 1 },
	[MAGNET_A_STREAM_NAME]		= { .type = NLA_NUL_STRING, .len = MAGNET_NAME_MAX - 1 },
	[MAGNET_A_STREAM_SUBBUF_SIZE]	= { .type = NLA_U32 },
	[MAGNET_A_STREAM_SUBBUF_COUNT]	= { .type = NLA_U32 },
	[MAGNET_A_FILTER]		= _NLA_POLICY_NESTED(MAGNET_FILTER_A_MAX,
							     magnet_filter_policy),
	[MAGNET_A_KPROBE]		= _NLA_POLICY_NESTED(MAGNET_KPROBE_A_MAX,
							     magnet_kprobe_policy),
	[MAGNET_A_SYNTH]		= _NLA_POLICY_NESTED(MAGNET_SYNTH_A_MAX,
							     magnet_synth_policy),
	[MAGNET_A_CORR]			= _NLA_POLICY_NESTED(MAGNET_CORR_A_MAX,
							     magnet_corr_policy),
	[MAGNET_A_STREAM_APP_WRITE]	= NLA_POLICY_MAX(NLA_U8, 1),
	/* values checked by do_stream_new()/snapshot with a message each */
	[MAGNET_A_STREAM_MODE]		= { .type = NLA_U32 },
	[MAGNET_A_STREAM_CLOCK]		=
		NLA_POLICY_RANGE(NLA_U32, MAGNET_CLOCK_MONOTONIC,
				 __MAGNET_CLOCK_MAX - 1),
	[MAGNET_A_STREAM_SNAPSHOT]	= { .type = NLA_U32 },
};

enum {
	MAGNET_MCGRP_PROBES_ID,
};

/* notifications carry run-time kprobes' symbols: admin only */
static const struct genl_multicast_group magnet_mcgrps[] = {
	[MAGNET_MCGRP_PROBES_ID] = { .name = MAGNET_MCGRP_PROBES,
				     .flags = GENL_MCAST_CAP_NET_ADMIN },
};

/* ---- message builders ------------------------------------------------ */

/*
 * A point's attributes.  Without @all a run-time kprobe's (a point of
 * this module, kprobe_dyn.c) goes without its hook: the symbol root
 * probes is root's business; probe modules' hooks are in their source.
 */
static int __put_point(struct sk_buff *skb, struct magnet_point *pt,
		       bool all)
{
	struct magnet_stream *s = rcu_dereference_protected(pt->stream,
				lockdep_is_held(&magnet_db.lock));
	bool hook = all || pt->owner != THIS_MODULE;

	if (nla_put_u32(skb, MAGNET_A_PROBE_ID, pt->id) ||
	    nla_put_string(skb, MAGNET_A_PROBE_NAME, pt->desc->name) ||
	    nla_put_u32(skb, MAGNET_A_PROBE_LAYER, pt->desc->layer) ||
	    nla_put_u32(skb, MAGNET_A_PROBE_PAYLOAD, pt->desc->payload) ||
	    nla_put_u8(skb, MAGNET_A_PROBE_ENABLED, !!s) ||
	    (hook &&
	     nla_put_string(skb, MAGNET_A_PROBE_HOOK, pt->desc->hook ?: "")) ||
	    nla_put_string(skb, MAGNET_A_PROBE_MODULE,
			   pt->owner ? module_name(pt->owner) : "") ||
	    nla_put_u64_64bit(skb, MAGNET_A_PROBE_HITS, magnet_point_hits(pt),
			      MAGNET_A_PAD))
		return -EMSGSIZE;
	if (s && nla_put_string(skb, MAGNET_A_STREAM_NAME, s->name))
		return -EMSGSIZE;
	return 0;
}

static int put_point(struct sk_buff *skb, void *obj)
{
	return __put_point(skb, obj, true);
}

/* for callers without CAP_NET_ADMIN */
static int put_point_public(struct sk_buff *skb, void *obj)
{
	return __put_point(skb, obj, false);
}

static int put_stream(struct sk_buff *skb, void *obj)
{
	struct magnet_stream *s = obj;
	struct magnet_stream_stats st;
	char path[96];

	magnet_stream_stats(s, &st);
	magnetfs_stream_path(s, path, sizeof(path));
	if (nla_put_string(skb, MAGNET_A_STREAM_NAME, s->name) ||
	    nla_put_string(skb, MAGNET_A_STREAM_PATH, path) ||
	    nla_put_u32(skb, MAGNET_A_STREAM_SUBBUF_SIZE, s->rings.size) ||
	    nla_put_u32(skb, MAGNET_A_STREAM_SUBBUF_COUNT, s->rings.count) ||
	    nla_put_u64_64bit(skb, MAGNET_A_STREAM_PRODUCED, st.produced, MAGNET_A_PAD) ||
	    nla_put_u64_64bit(skb, MAGNET_A_STREAM_WRITTEN, st.written, MAGNET_A_PAD) ||
	    nla_put_u64_64bit(skb, MAGNET_A_STREAM_LOST, st.lost, MAGNET_A_PAD) ||
	    nla_put_u64_64bit(skb, MAGNET_A_STREAM_READ, st.read, MAGNET_A_PAD) ||
	    nla_put_u64_64bit(skb, MAGNET_A_STREAM_BYTES, st.bytes, MAGNET_A_PAD) ||
	    nla_put_u32(skb, MAGNET_A_STREAM_READERS, atomic_read(&s->readers)) ||
	    nla_put_u32(skb, MAGNET_A_STREAM_PROBES, s->nr_probes) ||
	    nla_put_u32(skb, MAGNET_A_STREAM_MODE, s->rings.mode) ||
	    nla_put_u32(skb, MAGNET_A_STREAM_CLOCK, s->rings.clock) ||
	    nla_put_u8(skb, MAGNET_A_STREAM_FROZEN, READ_ONCE(s->rings.frozen)) ||
	    nla_put_u64_64bit(skb, MAGNET_A_STREAM_OVERWRITTEN, st.overwritten,
			      MAGNET_A_PAD) ||
	    nla_put_u64_64bit(skb, MAGNET_A_STREAM_OVERWRITTEN_BYTES,
			      st.overwritten_bytes, MAGNET_A_PAD) ||
	    nla_put_u64_64bit(skb, MAGNET_A_STREAM_FROZEN_LOST, st.frozen_lost,
			      MAGNET_A_PAD))
		return -EMSGSIZE;
	if (nla_put_u8(skb, MAGNET_A_STREAM_APP_WRITE, s->app_write) ||
	    nla_put_u64_64bit(skb, MAGNET_A_STREAM_APP_EVENTS,
			      atomic64_read(&s->app_events), MAGNET_A_PAD) ||
	    nla_put_u64_64bit(skb, MAGNET_A_STREAM_APP_REJECTED,
			      atomic64_read(&s->app_rejected), MAGNET_A_PAD))
		return -EMSGSIZE;
	return 0;
}

typedef int (*put_fn)(struct sk_buff *skb, void *obj);

/* Reply to a do request with one object. */
static int reply_obj(struct genl_info *info, u8 cmd, put_fn put, void *obj)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &magnet_genl_family, 0, cmd);
	if (!hdr || put(msg, obj)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/*
 * The family is registered: module exit unregisters it first (no request
 * is running after that), then tears down the run-time kprobes, whose
 * points would announce their removal on a family that is gone (its
 * group offset may already belong to another family).
 */
static bool magnet_genl_live;

void magnet_genl_notify_point(struct magnet_point *pt, bool added)
{
	struct sk_buff *msg;
	void *hdr;

	if (!READ_ONCE(magnet_genl_live) ||
	    !genl_has_listeners(&magnet_genl_family, &init_net,
				MAGNET_MCGRP_PROBES_ID))
		return;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &magnet_genl_family, 0,
			  added ? MAGNET_CMD_PROBE_NEW_NTF :
				  MAGNET_CMD_PROBE_DEL_NTF);
	if (!hdr || put_point(msg, pt)) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_end(msg, hdr);
	genlmsg_multicast(&magnet_genl_family, msg, 0, MAGNET_MCGRP_PROBES_ID,
			  GFP_KERNEL);
}

/* ---- status ---------------------------------------------------------- */

static int put_status(struct sk_buff *skb, void *unused)
{
	if (nla_put_string(skb, MAGNET_A_VERSION, MAGNET_VERSION) ||
	    nla_put_u32(skb, MAGNET_A_ABI_VERSION, MAGNET_ABI_VERSION) ||
	    nla_put_u32(skb, MAGNET_A_NR_CPUS, num_possible_cpus()) ||
	    nla_put_u32(skb, MAGNET_A_NR_PROBES, magnet_db.nr_points) ||
	    nla_put_u32(skb, MAGNET_A_NR_STREAMS, magnet_db.nr_streams))
		return -EMSGSIZE;
	return 0;
}

static int magnet_nl_status(struct sk_buff *skb, struct genl_info *info)
{
	int err;

	mutex_lock(&magnet_db.lock);
	err = reply_obj(info, MAGNET_CMD_STATUS_GET, put_status, NULL);
	mutex_unlock(&magnet_db.lock);
	return err;
}

/* ---- lookups with extack ----------------------------------------------- */

/*
 * The point named by a name and/or an ID attribute (of any attribute set);
 * both given must agree.  @where is pointed at when neither is given.
 */
struct magnet_point *magnet_nl_find_point(struct netlink_ext_ack *extack,
					  struct nlattr *na, struct nlattr *ni,
					  struct nlattr *where)
{
	struct magnet_point *pt;

	if (!na && !ni) {
		magnet_set_err(extack, where, "a probe name or ID is required");
		return ERR_PTR(-EINVAL);
	}
	pt = na ? magnet_db_find_point(nla_data(na), 0) :
		  magnet_db_find_point(NULL, nla_get_u32(ni));
	if (!pt) {
		if (na)
			magnet_set_err(extack, na, "no probe named '%s'",
				       (char *)nla_data(na));
		else
			magnet_set_err(extack, ni, "no probe with ID %u",
				       nla_get_u32(ni));
		return ERR_PTR(-ENOENT);
	}
	if (na && ni && pt->id != nla_get_u32(ni)) {
		magnet_set_err(extack, ni,
			       "probe '%s' has ID %u, not %u", pt->desc->name,
			       pt->id, nla_get_u32(ni));
		return ERR_PTR(-EINVAL);
	}
	return pt;
}

/*
 * A cgroup key: a cgroup v2 that exists (its ID is what stat() shows for
 * its directory), matched with its whole subtree.  Its depth is kept: an
 * event's ancestor at that depth is compared with it.  A cgroup removed
 * later matches nothing more (cgroup IDs are never reused).
 */
static int parse_cgroup(const struct nlattr *na, struct magnet_fkey *k,
			struct netlink_ext_ack *extack)
{
#ifdef CONFIG_CGROUPS
	u64 id = nla_get_u64(na);
	struct cgroup *cgrp = cgroup_get_from_id(id);

	if (IS_ERR_OR_NULL(cgrp)) {
		magnet_set_err(extack, na, "no cgroup v2 with ID %llu", id);
		return -ENOENT;
	}
	k->mask |= MAGNET_FK_CGROUP;
	k->cgroup = id;
	k->cg_level = cgrp->level;
	cgroup_put(cgrp);
	return 0;
#else
	magnet_set_err(extack, na, "the kernel has no cgroups");
	return -EOPNOTSUPP;
#endif
}

/* Match keys of filters and synthesizers: absent attributes are wildcards. */
int magnet_nl_parse_fkey(const struct magnet_fkey_attrs *a,
			 struct magnet_fkey *k, struct netlink_ext_ack *extack)
{
	if (a->event) {
		k->mask |= MAGNET_FK_EVENT;
		k->event = nla_get_u32(a->event);
	}
	if (a->cpu) {
		k->mask |= MAGNET_FK_CPU;
		k->cpu = nla_get_u32(a->cpu);
		if (k->cpu >= nr_cpu_ids) {
			magnet_set_err(extack, a->cpu,
				       "cpu %u: must be below %u", k->cpu,
				       nr_cpu_ids);
			return -EINVAL;
		}
	}
	if (a->abstract_id) {
		k->mask |= MAGNET_FK_AID;
		k->abstract_id = nla_get_u64(a->abstract_id);
	}
	if (a->pid) {
		k->mask |= MAGNET_FK_PID;
		k->pid = nla_get_u32(a->pid);
	}
	if (a->tgid) {
		k->mask |= MAGNET_FK_TGID;
		k->tgid = nla_get_u32(a->tgid);
	}
	if (a->cgroup)
		return parse_cgroup(a->cgroup, k, extack);
	return 0;
}

static struct magnet_point *lookup_point(struct genl_info *info)
{
	return magnet_nl_find_point(info->extack,
				    info->attrs[MAGNET_A_PROBE_NAME],
				    info->attrs[MAGNET_A_PROBE_ID], NULL);
}

static struct magnet_stream *lookup_stream(struct genl_info *info)
{
	struct nlattr *na = info->attrs[MAGNET_A_STREAM_NAME];
	struct magnet_stream *s;

	if (!na) {
		NL_SET_ERR_MSG(info->extack, "a stream name is required");
		return ERR_PTR(-EINVAL);
	}
	s = magnet_db_find_stream(nla_data(na));
	if (!s) {
		magnet_set_err(info->extack, na, "no stream named '%s'",
			       (char *)nla_data(na));
		return ERR_PTR(-ENOENT);
	}
	return s;
}

/* ---- requests run by magnetk ----------------------------------------- */

static int do_probe_get(struct sk_buff *skb, struct genl_info *info)
{
	struct magnet_point *pt = lookup_point(info);

	if (IS_ERR(pt))
		return PTR_ERR(pt);
	return reply_obj(info, MAGNET_CMD_PROBE_GET,
			 netlink_capable(skb, CAP_NET_ADMIN) ?
			 put_point : put_point_public, pt);
}

static int do_probe_enable(struct genl_info *info)
{
	struct magnet_point *pt = lookup_point(info);
	struct magnet_stream *s;

	if (IS_ERR(pt))
		return PTR_ERR(pt);
	s = lookup_stream(info);
	if (IS_ERR(s))
		return PTR_ERR(s);
	return magnet_db_point_enable(pt, s, info->extack);
}

static int do_probe_disable(struct genl_info *info)
{
	struct magnet_point *pt = lookup_point(info);

	if (IS_ERR(pt))
		return PTR_ERR(pt);
	magnet_db_point_disable(pt);
	return 0;
}

static int check_geometry(struct genl_info *info, u32 *size, u32 *count)
{
	struct nlattr *ns = info->attrs[MAGNET_A_STREAM_SUBBUF_SIZE];
	struct nlattr *nc = info->attrs[MAGNET_A_STREAM_SUBBUF_COUNT];

	*size = ns ? nla_get_u32(ns) : MAGNET_SUBBUF_SIZE_DEFAULT;
	*count = nc ? nla_get_u32(nc) : MAGNET_SUBBUF_COUNT_DEFAULT;
	if (*size < MAGNET_SUBBUF_SIZE_MIN || *size > MAGNET_SUBBUF_SIZE_MAX ||
	    *size % MAGNET_SUBBUF_SIZE_MIN) {
		magnet_set_err(info->extack, ns,
			       "sub-buffer size %u: must be a multiple of %u between %u and %u bytes",
			       *size, MAGNET_SUBBUF_SIZE_MIN,
			       MAGNET_SUBBUF_SIZE_MIN, MAGNET_SUBBUF_SIZE_MAX);
		return -EINVAL;
	}
	if (*count < MAGNET_SUBBUF_COUNT_MIN ||
	    *count > MAGNET_SUBBUF_COUNT_MAX) {
		magnet_set_err(info->extack, nc,
			       "sub-buffer count %u: must be between %u and %u",
			       *count, MAGNET_SUBBUF_COUNT_MIN,
			       MAGNET_SUBBUF_COUNT_MAX);
		return -EINVAL;
	}
	if ((u64)*size * *count > MAGNET_STREAM_BYTES_MAX) {
		magnet_set_err(info->extack, ns,
			       "%u sub-buffers of %u bytes exceed %u MiB per CPU",
			       *count, *size, MAGNET_STREAM_BYTES_MAX >> 20);
		return -EINVAL;
	}
	return 0;
}

static int do_stream_new(struct genl_info *info)
{
	struct nlattr *na = info->attrs[MAGNET_A_STREAM_NAME];
	struct nlattr *aw, *nm, *nc;
	u32 size, count, mode, clock;
	int err;

	if (!na) {
		NL_SET_ERR_MSG(info->extack, "a stream name is required");
		return -EINVAL;
	}
	if (!magnet_name_valid(nla_data(na)) ||
	    !strcmp(nla_data(na), "status")) {
		magnet_set_err(info->extack, na,
			       "bad stream name '%s': use 1-31 of [A-Za-z0-9_.-], not starting with '.' or '-', not 'status'",
			       (char *)nla_data(na));
		return -EINVAL;
	}
	err = check_geometry(info, &size, &count);
	if (err)
		return err;
	nm = info->attrs[MAGNET_A_STREAM_MODE];
	mode = nm ? nla_get_u32(nm) : 0;
	if (mode & ~MAGNET_STREAM_F_ALL) {
		magnet_set_err(info->extack, nm,
			       "stream mode 0x%x: unknown bits 0x%x (known: 0x%x global, 0x%x overwrite)",
			       mode, mode & ~MAGNET_STREAM_F_ALL,
			       MAGNET_STREAM_F_GLOBAL, MAGNET_STREAM_F_OVERWRITE);
		return -EINVAL;
	}
	/* application events from anyone (docs/INTERPOSER.md) */
	aw = info->attrs[MAGNET_A_STREAM_APP_WRITE];
	nc = info->attrs[MAGNET_A_STREAM_CLOCK];
	clock = nc ? nla_get_u32(nc) : MAGNET_CLOCK_MONOTONIC;
	if (clock == MAGNET_CLOCK_LOCAL && aw && nla_get_u8(aw)) {
		magnet_set_err(info->extack, nc,
			       "application events carry CLOCK_MONOTONIC times: a stream with the local clock cannot take them");
		return -EINVAL;
	}
	err = magnet_db_stream_new(nla_data(na), size, count, mode, clock,
				   info->extack);
	if (!err && aw && nla_get_u8(aw))
		magnetfs_stream_allow_app_write(magnet_db_find_stream(nla_data(na)));
	return err;
}

static int do_stream_del(struct genl_info *info)
{
	struct magnet_stream *s = lookup_stream(info);

	if (IS_ERR(s))
		return PTR_ERR(s);
	return magnet_db_stream_del(s->name, info->extack);
}

static int do_stream_get(struct genl_info *info)
{
	struct magnet_stream *s = lookup_stream(info);

	if (IS_ERR(s))
		return PTR_ERR(s);
	return reply_obj(info, MAGNET_CMD_STREAM_GET, put_stream, s);
}

static int do_stream_flush(struct genl_info *info)
{
	struct magnet_stream *s = lookup_stream(info);

	if (IS_ERR(s))
		return PTR_ERR(s);
	magnet_stream_flush(s);
	return 0;
}

struct nl_req {
	int (*fn)(struct genl_info *info);
	struct genl_info *info;
};

static int nl_req_run(void *arg)
{
	struct nl_req *req = arg;
	int err;

	mutex_lock(&magnet_db.lock);
	err = req->fn(req->info);
	mutex_unlock(&magnet_db.lock);
	return err;
}

/* Changes go through magnetk, which owns the database. */
static int run_locked(int (*fn)(struct genl_info *info),
		      struct genl_info *info)
{
	struct nl_req req = { .fn = fn, .info = info };

	return magnetk_call(nl_req_run, &req);
}

#define MAGNET_DOIT(name, fn)						\
static int magnet_nl_##name(struct sk_buff *skb, struct genl_info *info) \
{									\
	return run_locked(fn, info);					\
}

MAGNET_DOIT(probe_enable, do_probe_enable)
MAGNET_DOIT(probe_disable, do_probe_disable)
MAGNET_DOIT(stream_new, do_stream_new)
MAGNET_DOIT(stream_del, do_stream_del)
MAGNET_DOIT(stream_flush, do_stream_flush)

/*
 * Freeze or resume an overwrite stream.  Not in magnetk under db.lock:
 * freezing waits for the stream's readers and for an RCU grace period.
 * The reference keeps the stream while a deletion runs meanwhile.
 */
static int magnet_nl_stream_snapshot(struct sk_buff *skb,
				     struct genl_info *info)
{
	struct nlattr *nop = info->attrs[MAGNET_A_STREAM_SNAPSHOT];
	struct magnet_stream *s;
	u32 op;
	int err;

	if (!nop) {
		NL_SET_ERR_MSG(info->extack,
			       "a snapshot operation (MAGNET_A_STREAM_SNAPSHOT: 1 freeze, 2 resume) is required");
		return -EINVAL;
	}
	op = nla_get_u32(nop);
	if (op != MAGNET_SNAPSHOT_FREEZE && op != MAGNET_SNAPSHOT_RESUME) {
		magnet_set_err(info->extack, nop,
			       "snapshot operation %u: must be %u (freeze) or %u (resume)",
			       op, MAGNET_SNAPSHOT_FREEZE,
			       MAGNET_SNAPSHOT_RESUME);
		return -EINVAL;
	}
	mutex_lock(&magnet_db.lock);
	s = lookup_stream(info);
	if (!IS_ERR(s))
		magnet_stream_get(s);
	mutex_unlock(&magnet_db.lock);
	if (IS_ERR(s))
		return PTR_ERR(s);
	err = magnet_stream_snapshot(s, op, info->extack);
	magnet_stream_put(s);
	return err;
}

static int magnet_nl_probe_get(struct sk_buff *skb, struct genl_info *info)
{
	int err;

	mutex_lock(&magnet_db.lock);
	err = do_probe_get(skb, info);
	mutex_unlock(&magnet_db.lock);
	return err;
}

static int magnet_nl_stream_get(struct sk_buff *skb, struct genl_info *info)
{
	int err;

	mutex_lock(&magnet_db.lock);
	err = do_stream_get(info);
	mutex_unlock(&magnet_db.lock);
	return err;
}

/* For the object files (filter_nl.c, ...): same helpers as above. */
int magnet_nl_run(int (*fn)(struct genl_info *info), struct genl_info *info)
{
	return run_locked(fn, info);
}

int magnet_nl_reply(struct genl_info *info, u8 cmd, magnet_put_fn put,
		    void *obj)
{
	return reply_obj(info, cmd, put, obj);
}

/* ---- dumps: cb->args[0] is the index of the next object ------------- */

static int dump_one(struct sk_buff *skb, struct netlink_callback *cb, u8 cmd,
		    put_fn put, void *obj)
{
	void *hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				cb->nlh->nlmsg_seq, &magnet_genl_family,
				NLM_F_MULTI, cmd);

	if (!hdr)
		return -EMSGSIZE;
	if (put(skb, obj)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

int magnet_nl_dump_one(struct sk_buff *skb, struct netlink_callback *cb,
		       u8 cmd, magnet_put_fn put, void *obj)
{
	return dump_one(skb, cb, cmd, put, obj);
}

static int magnet_nl_probe_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	put_fn put = netlink_capable(cb->skb, CAP_NET_ADMIN) ?
		     put_point : put_point_public;
	struct magnet_point *pt;
	long idx = 0;

	mutex_lock(&magnet_db.lock);
	list_for_each_entry(pt, &magnet_db.points, node) {
		if (idx++ < cb->args[0])
			continue;
		if (dump_one(skb, cb, MAGNET_CMD_PROBE_GET, put, pt)) {
			idx--;
			break;
		}
	}
	mutex_unlock(&magnet_db.lock);
	cb->args[0] = idx;
	return skb->len;
}

static int magnet_nl_stream_dump(struct sk_buff *skb,
				 struct netlink_callback *cb)
{
	struct magnet_stream *s;
	long idx = 0;

	mutex_lock(&magnet_db.lock);
	list_for_each_entry(s, &magnet_db.streams, node) {
		if (idx++ < cb->args[0])
			continue;
		if (dump_one(skb, cb, MAGNET_CMD_STREAM_GET, put_stream,
			     s)) {
			idx--;
			break;
		}
	}
	mutex_unlock(&magnet_db.lock);
	cb->args[0] = idx;
	return skb->len;
}

static const struct genl_small_ops magnet_genl_ops[] = {
	{
		.cmd	= MAGNET_CMD_STATUS_GET,
		.doit	= magnet_nl_status,
	},
	{
		.cmd	= MAGNET_CMD_PROBE_GET,
		.doit	= magnet_nl_probe_get,
		.dumpit	= magnet_nl_probe_dump,
	},
	{
		.cmd	= MAGNET_CMD_PROBE_ENABLE,
		.doit	= magnet_nl_probe_enable,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= MAGNET_CMD_PROBE_DISABLE,
		.doit	= magnet_nl_probe_disable,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= MAGNET_CMD_STREAM_NEW,
		.doit	= magnet_nl_stream_new,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= MAGNET_CMD_STREAM_DEL,
		.doit	= magnet_nl_stream_del,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= MAGNET_CMD_STREAM_GET,
		.doit	= magnet_nl_stream_get,
		.dumpit	= magnet_nl_stream_dump,
	},
	{
		.cmd	= MAGNET_CMD_STREAM_FLUSH,
		.doit	= magnet_nl_stream_flush,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= MAGNET_CMD_FILTER_NEW,
		.doit	= magnet_nl_filter_new,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= MAGNET_CMD_FILTER_DEL,
		.doit	= magnet_nl_filter_del,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= MAGNET_CMD_FILTER_GET,
		.doit	= magnet_nl_filter_get,
		.dumpit	= magnet_nl_filter_dump,
	},
	{
		.cmd	= MAGNET_CMD_SYNTH_NEW,
		.doit	= magnet_nl_synth_new,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= MAGNET_CMD_SYNTH_DEL,
		.doit	= magnet_nl_synth_del,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= MAGNET_CMD_SYNTH_GET,
		.doit	= magnet_nl_synth_get,
		.dumpit	= magnet_nl_synth_dump,
	},
	{
		.cmd	= MAGNET_CMD_CORR_NEW,
		.doit	= magnet_nl_corr_new,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= MAGNET_CMD_CORR_DEL,
		.doit	= magnet_nl_corr_del,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= MAGNET_CMD_CORR_GET,
		.doit	= magnet_nl_corr_get,
		.dumpit	= magnet_nl_corr_dump,
	},
	{
		.cmd	= MAGNET_CMD_KPROBE_NEW,
		.doit	= magnet_nl_kprobe_new,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= MAGNET_CMD_KPROBE_DEL,
		.doit	= magnet_nl_kprobe_del,
		.flags	= GENL_ADMIN_PERM,
	},
	{
		.cmd	= MAGNET_CMD_STREAM_SNAPSHOT,
		.doit	= magnet_nl_stream_snapshot,
		.flags	= GENL_ADMIN_PERM,
	},
};

static struct genl_family magnet_genl_family __ro_after_init = {
	.name		= MAGNET_GENL_NAME,
	.version	= MAGNET_GENL_VERSION,
	.maxattr	= MAGNET_A_MAX,
	.policy		= magnet_policy,
	.module		= THIS_MODULE,
	/*
	 * Not under genl_mutex: a request that waits (for magnetk, for a
	 * stream's read_lock) stalls MAGNET's requests only, not every
	 * other generic netlink family of the machine.  What requests
	 * share has its own lock: db.lock, magnetk's queue, mkp_lock,
	 * extack.c's msgs_lock; a dump takes db.lock at each call.
	 */
	.parallel_ops	= true,
	.small_ops	= magnet_genl_ops,
	.n_small_ops	= ARRAY_SIZE(magnet_genl_ops),
	.resv_start_op	= MAGNET_CMD_MAX + 1,
	.mcgrps		= magnet_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(magnet_mcgrps),
};

int magnet_genl_init(void)
{
	int err = genl_register_family(&magnet_genl_family);

	if (!err)
		WRITE_ONCE(magnet_genl_live, true);
	return err;
}

void magnet_genl_exit(void)
{
	WRITE_ONCE(magnet_genl_live, false);
	genl_unregister_family(&magnet_genl_family);
}
