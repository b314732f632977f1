// SPDX-License-Identifier: GPL-2.0
/*
 * Instrumentation points created at run time over netlink
 * (MAGNET_CMD_KPROBE_NEW / MAGNET_CMD_KPROBE_DEL): a kprobe on
 * SYMBOL+OFFSET or a kretprobe on SYMBOL that records up to six function
 * arguments and, for a kretprobe, the return value
 * (struct magnet_kprobe_payload).  Each is an ordinary point, registered
 * through magnet_point_register(): it gets an event ID, shows up in the
 * probe list and the EVENTDEF catalog, and is attached only while it is
 * enabled.
 *
 * At creation the kprobe is registered once and removed again, so that a
 * symbol that does not exist or cannot be probed (blacklisted, not on an
 * instruction boundary, not a function entry for a kretprobe) is refused
 * at once with a message saying why.
 *
 * No kernel address leaves the kernel: an argument or return value that
 * lies in the upper half of the address space is replaced by a keyed
 * hash of it (siphash, key random per boot of the module) and flagged in
 * @hashed, so equal pointers still compare equal within a trace.  Values
 * in the top 64 KiB (-1 .. -65536: error codes, AT_FDCWD) are kept.
 *
 * Requests run side by side (the family is parallel_ops): the list of
 * run-time points, their count and the hash key are under mkp_lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/security.h>
#include <linux/ptrace.h>
#include <linux/slab.h>
#include <linux/siphash.h>
#include <linux/random.h>
#include <linux/kallsyms.h>
#include <linux/cpumask.h>
#include <linux/minmax.h>
#include <net/genetlink.h>
#include "internal.h"
#include "compat.h"

#define MKP_MAXACTIVE	256
#define MKP_SYM_MAX	128	/* KSYM_NAME_LEN of 6.1; 6.12 allows 512 */

struct mkp {
	struct list_head node;			/* mkp_list */
	struct magnet_point_desc desc;
	char name[MAGNET_NAME_MAX];
	char symbol[MKP_SYM_MAX];
	char hook[MKP_SYM_MAX + 32];
	u32 offset;
	bool retprobe;
	u16 args;				/* bit i: record argument i */
	struct magnet_point *pt;
	unsigned long missed;			/* misses folded so far */
	unsigned int krp_seen;			/* krp.nmissed folded */
	union {
		struct kprobe kp;
		struct kretprobe krp;
	};
};

static LIST_HEAD(mkp_list);
static DEFINE_MUTEX(mkp_lock);
static unsigned int mkp_count;
static siphash_key_t mkp_key;
static bool mkp_key_set;

const struct nla_policy magnet_kprobe_policy[MAGNET_KPROBE_A_MAX + 1] = {
	[MAGNET_KPROBE_A_NAME]		= { .type = NLA_NUL_STRING, .len = MAGNET_NAME_MAX - 1 },
	[MAGNET_KPROBE_A_SYMBOL]	= { .type = NLA_NUL_STRING, .len = MKP_SYM_MAX - 1 },
	[MAGNET_KPROBE_A_OFFSET]	= { .type = NLA_U32 },
	[MAGNET_KPROBE_A_RETPROBE]	= { .type = NLA_FLAG },
	[MAGNET_KPROBE_A_ARGS]		= NLA_POLICY_MAX(NLA_U32, (1 << MAGNET_KPROBE_NARGS) - 1),
};

/* ---- handlers: any context, no locks, bounded ------------------------- */

/*
 * A value that may be a kernel address: anything in the upper half of the
 * 64-bit space (x86-64 kernel addresses start at 0xffff800000000000 with
 * 4-level page tables, 0xff00000000000000 with 5-level ones; the rest of
 * the upper half is not canonical and hashing it costs nothing), except
 * the top 64 KiB where small negative numbers live.
 */
static __always_inline bool mkp_kernel_value(u64 v)
{
	return (s64)v < 0 && v < (u64)-65536;
}

static __always_inline void mkp_put(struct magnet_kprobe_payload *p,
				    u64 *slot, u64 v, u16 bit)
{
	if (mkp_kernel_value(v)) {
		v = siphash_1u64(v, &mkp_key);
		p->hashed |= bit;
	}
	*slot = v;
	p->valid |= bit;
}

static __always_inline void mkp_args(const struct mkp *k, struct pt_regs *regs,
				     u64 *vals)
{
	unsigned int i;

	for (i = 0; i < MAGNET_KPROBE_NARGS; i++)
		vals[i] = k->args & BIT(i) ? regs_get_kernel_argument(regs, i) : 0;
}

static __always_inline void mkp_emit(const struct mkp *k, const u64 *vals,
				     bool has_ret, u64 ret)
{
	struct magnet_point *pt = READ_ONCE(k->pt);
	struct magnet_kprobe_payload p = {};
	unsigned int i;

	/* the trial attach of KPROBE_NEW runs before there is a point */
	if (!pt)
		return;
	for (i = 0; i < MAGNET_KPROBE_NARGS; i++)
		if (k->args & BIT(i))
			mkp_put(&p, &p.arg[i], vals[i], BIT(i));
	if (has_ret)
		mkp_put(&p, &p.ret, ret, MAGNET_KPROBE_V_RET);
	magnet_add(pt, 0, &p, sizeof(p));
}

static int mkp_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct mkp *k = container_of(kp, struct mkp, kp);
	u64 vals[MAGNET_KPROBE_NARGS];

	mkp_args(k, regs, vals);
	mkp_emit(k, vals, false, 0);
	return 0;
}

/* kretprobe entry: keep the arguments for the return handler */
static int mkp_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kretprobe *rp = get_kretprobe(ri);

	if (!rp)
		return 1;
	mkp_args(container_of(rp, struct mkp, krp), regs, (u64 *)ri->data);
	return 0;
}

static int mkp_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kretprobe *rp = get_kretprobe(ri);

	if (rp)
		mkp_emit(container_of(rp, struct mkp, krp), (u64 *)ri->data,
			 true, regs_return_value(regs));
	return 0;
}

/* ---- attach / detach -------------------------------------------------- */

/*
 * Register the probe.  A @trial registration is disabled: the kernel
 * checks the symbol, the offset and the blacklist, but never arms it, so
 * nothing is patched and no handler runs.
 */
static int mkp_attach(struct mkp *k, bool trial)
{
	u32 flags = trial ? KPROBE_FLAG_DISABLED : 0;

	if (k->retprobe) {
		memset(&k->krp, 0, sizeof(k->krp));
		k->krp.kp.symbol_name = k->symbol;
		k->krp.kp.flags = flags;
		k->krp.entry_handler = mkp_entry;
		k->krp.handler = mkp_ret;
		k->krp.data_size = sizeof(u64) * MAGNET_KPROBE_NARGS;
		k->krp.maxactive = max_t(int, MKP_MAXACTIVE,
					 4 * num_possible_cpus());
		return register_kretprobe(&k->krp);
	}
	memset(&k->kp, 0, sizeof(k->kp));
	k->kp.symbol_name = k->symbol;
	k->kp.offset = k->offset;
	k->kp.flags = flags;
	k->kp.pre_handler = mkp_pre;
	return register_kprobe(&k->kp);
}

static void mkp_detach(struct mkp *k)
{
	/* the arming's misses go to the running total (mkp_missed()) */
	if (k->retprobe) {
		unregister_kretprobe(&k->krp);	/* waits for handlers */
		magnet_missed_fold32(&k->missed, &k->krp_seen,
				     k->krp.nmissed);
		k->missed += k->krp.kp.nmissed;
		k->krp.nmissed = 0;
		k->krp.kp.nmissed = 0;
		k->krp_seen = 0;
	} else {
		unregister_kprobe(&k->kp);
		k->missed += k->kp.nmissed;
		k->kp.nmissed = 0;
	}
}

static int mkp_enable(struct magnet_point *pt)
{
	struct mkp *k = pt->priv;
	int err;

	/*
	 * At each arming, not only at creation: lockdown may have been
	 * raised since (tracefs' kprobe_events checks at each registration)
	 */
	err = security_locked_down(LOCKDOWN_KPROBES);
	if (err)
		return err;
	WRITE_ONCE(k->pt, pt);
	return mkp_attach(k, false);
}

static void mkp_disable(struct magnet_point *pt)
{
	mkp_detach(pt->priv);
}

/*
 * Calls the probe missed (recursion, no free kretprobe instance), over all
 * its armings: past ones in k->missed, the current one in the kprobe's own
 * counts.  The core reports the growth as lost (db.c).  Read under db.lock,
 * as attach and detach run.
 */
static unsigned long mkp_missed(struct magnet_point *pt)
{
	struct mkp *k = pt->priv;

	/* a kretprobe counts in an int, which wraps: folded at each read */
	if (k->retprobe) {
		magnet_missed_fold32(&k->missed, &k->krp_seen,
				     READ_ONCE(k->krp.nmissed));
		return k->missed + READ_ONCE(k->krp.kp.nmissed);
	}
	return k->missed + READ_ONCE(k->kp.nmissed);
}

static const struct magnet_point_ops mkp_ops = {
	.enable = mkp_enable,
	.disable = mkp_disable,
	.missed = mkp_missed,
};

/* ---- netlink ---------------------------------------------------------- */

static const char *mkp_why(int err)
{
	switch (err) {
	case -ENOENT:
		return "no such symbol, or not a function entry";
	case -EINVAL:
		return "the kernel does not allow probing it (blacklisted, __kprobes, notrace or a bad address)";
	case -EILSEQ:
		return "the offset is not on an instruction boundary";
	case -EBUSY:
		return "already probed in a way that conflicts";
	case -EOPNOTSUPP:
		return "not supported here";
	default:
		return "register_kprobe failed";
	}
}

static int mkp_put_reply(struct sk_buff *skb, void *obj)
{
	struct mkp *k = obj;

	if (nla_put_u32(skb, MAGNET_A_PROBE_ID, k->pt->id) ||
	    nla_put_string(skb, MAGNET_A_PROBE_NAME, k->name) ||
	    nla_put_string(skb, MAGNET_A_PROBE_HOOK, k->hook))
		return -EMSGSIZE;
	return 0;
}

static struct mkp *mkp_find(const char *name)
{
	struct mkp *k;

	lockdep_assert_held(&mkp_lock);
	list_for_each_entry(k, &mkp_list, node)
		if (!strcmp(k->name, name))
			return k;
	return NULL;
}

static int mkp_parse(struct genl_info *info, struct nlattr **tb)
{
	struct nlattr *nest = info->attrs[MAGNET_A_KPROBE];

	if (!nest) {
		NL_SET_ERR_MSG(info->extack,
			       "the kprobe attributes (MAGNET_A_KPROBE nest) are required");
		return -EINVAL;
	}
	return nla_parse_nested(tb, MAGNET_KPROBE_A_MAX, nest,
				magnet_kprobe_policy, info->extack);
}

int magnet_nl_kprobe_new(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *tb[MAGNET_KPROBE_A_MAX + 1];
	struct magnet_point *pt;
	unsigned long addr;
	struct mkp *k;
	int err;

	err = mkp_parse(info, tb);
	if (err)
		return err;
	/* as perf and the tracefs kprobe_events do under lockdown */
	err = security_locked_down(LOCKDOWN_KPROBES);
	if (err) {
		NL_SET_ERR_MSG(info->extack,
			       "the kernel is locked down (lockdown=confidentiality): run-time kprobes are refused");
		return err;
	}
	if (!tb[MAGNET_KPROBE_A_NAME] || !tb[MAGNET_KPROBE_A_SYMBOL]) {
		NL_SET_ERR_MSG(info->extack,
			       "a run-time kprobe needs a name and a symbol");
		return -EINVAL;
	}
	if (!magnet_name_valid(nla_data(tb[MAGNET_KPROBE_A_NAME]))) {
		magnet_set_err(info->extack, tb[MAGNET_KPROBE_A_NAME],
			       "bad probe name '%s': use 1-31 of [A-Za-z0-9_.-], not starting with '.' or '-'",
			       (char *)nla_data(tb[MAGNET_KPROBE_A_NAME]));
		return -EINVAL;
	}
	if (tb[MAGNET_KPROBE_A_RETPROBE] && tb[MAGNET_KPROBE_A_OFFSET] &&
	    nla_get_u32(tb[MAGNET_KPROBE_A_OFFSET])) {
		magnet_set_err(info->extack, tb[MAGNET_KPROBE_A_OFFSET],
			       "a kretprobe attaches at the function entry: no offset");
		return -EINVAL;
	}

	k = kzalloc(sizeof(*k), GFP_KERNEL);
	if (!k)
		return -ENOMEM;
	strscpy(k->name, nla_data(tb[MAGNET_KPROBE_A_NAME]), sizeof(k->name));
	strscpy(k->symbol, nla_data(tb[MAGNET_KPROBE_A_SYMBOL]),
		sizeof(k->symbol));
	k->retprobe = !!tb[MAGNET_KPROBE_A_RETPROBE];
	if (tb[MAGNET_KPROBE_A_OFFSET])
		k->offset = nla_get_u32(tb[MAGNET_KPROBE_A_OFFSET]);
	if (tb[MAGNET_KPROBE_A_ARGS])
		k->args = nla_get_u32(tb[MAGNET_KPROBE_A_ARGS]);
	if (k->retprobe)
		snprintf(k->hook, sizeof(k->hook), "kretprobe:%s", k->symbol);
	else if (k->offset)
		snprintf(k->hook, sizeof(k->hook), "kprobe:%s+%u", k->symbol,
			 k->offset);
	else
		snprintf(k->hook, sizeof(k->hook), "kprobe:%s", k->symbol);
	k->desc.name = k->name;
	k->desc.layer = MAGNET_LAYER_OTHER;
	k->desc.payload = MAGNET_PAYLOAD_KPROBE;
	k->desc.hook = k->hook;
	k->desc.ops = &mkp_ops;

	mutex_lock(&mkp_lock);
	if (mkp_count >= MAGNET_KPROBES_MAX) {
		magnet_set_err(info->extack, NULL,
			       "too many run-time kprobes (at most %u)",
			       MAGNET_KPROBES_MAX);
		err = -ENOSPC;
		goto out_free;
	}
	if (!mkp_key_set) {
		get_random_bytes(&mkp_key, sizeof(mkp_key));
		mkp_key_set = true;
	}
	/* can it be probed at all?  Register disabled, unregister at once. */
	err = mkp_attach(k, true);
	if (err) {
		magnet_set_err(info->extack, tb[MAGNET_KPROBE_A_SYMBOL],
			       "cannot attach %.80s: %s (%d)", k->hook,
			       mkp_why(err), err);
		goto out_free;
	}
	addr = (unsigned long)(k->retprobe ? k->krp.kp.addr : k->kp.addr);
	mkp_detach(k);
	/*
	 * The core records the events: a probe anywhere in it (its write
	 * path is NOKPROBE_SYMBOL, but also its filters, synthesizers,
	 * control code) could re-enter what it interrupted.
	 */
	if (within_module(addr, THIS_MODULE)) {
		magnet_set_err(info->extack, tb[MAGNET_KPROBE_A_SYMBOL],
			       "cannot attach %.80s: it is in MAGNET's core (magnet.ko), which a probe must not re-enter",
			       k->hook);
		err = -EINVAL;
		goto out_free;
	}

	pt = magnet_point_register(&k->desc, THIS_MODULE, k);
	if (IS_ERR(pt)) {
		err = PTR_ERR(pt);
		if (err == -EEXIST)
			magnet_set_err(info->extack, tb[MAGNET_KPROBE_A_NAME],
				       "a probe named '%s' already exists",
				       k->name);
		else if (err == -ENOSPC)
			magnet_set_err(info->extack, NULL, "no free event ID");
		goto out_free;
	}
	WRITE_ONCE(k->pt, pt);
	list_add_tail(&k->node, &mkp_list);
	mkp_count++;
	pr_info("run-time probe %s (event %u) on %s\n", k->name, pt->id,
		k->hook);
	/* under mkp_lock: a KPROBE_DEL running beside us frees @k */
	err = magnet_nl_reply(info, MAGNET_CMD_KPROBE_NEW, mkp_put_reply, k);
	mutex_unlock(&mkp_lock);
	return err;

out_free:
	mutex_unlock(&mkp_lock);
	kfree(k);
	return err;
}

static void mkp_free(struct mkp *k)
{
	lockdep_assert_held(&mkp_lock);
	list_del(&k->node);
	mkp_count--;
	magnet_point_unregister(k->pt);		/* disables (detaches) first */
	kfree(k);
}

int magnet_nl_kprobe_del(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *tb[MAGNET_KPROBE_A_MAX + 1];
	struct nlattr *na;
	struct mkp *k;
	int err;

	err = mkp_parse(info, tb);
	if (err)
		return err;
	na = tb[MAGNET_KPROBE_A_NAME];
	if (!na) {
		NL_SET_ERR_MSG(info->extack, "the run-time kprobe's name is required");
		return -EINVAL;
	}
	mutex_lock(&mkp_lock);
	k = mkp_find(nla_data(na));
	if (!k) {
		magnet_set_err(info->extack, na,
			       "no run-time kprobe named '%s'",
			       (char *)nla_data(na));
		mutex_unlock(&mkp_lock);
		return -ENOENT;
	}
	mkp_free(k);
	mutex_unlock(&mkp_lock);
	return 0;
}

/* Core module exit, after the netlink family is gone. */
void magnet_kprobe_teardown(void)
{
	struct mkp *k, *tmp;

	mutex_lock(&mkp_lock);
	list_for_each_entry_safe(k, tmp, &mkp_list, node)
		mkp_free(k);
	mutex_unlock(&mkp_lock);
}
