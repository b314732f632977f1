/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoint-backed instrumentation points for the MAGNET probe library
 * (magnet_sched.ko, magnet_mm.ko, magnet_tcpip.ko): a table of struct
 * mtp_hook, each one point attached to one kernel tracepoint while it is
 * enabled.  Everything is static inline so that each probe module carries
 * its own copy: a module is one .c file plus this header.
 *
 *	static struct mtp_hook my_hooks[] = {
 *		MTP_HOOK("sched_fork", SCHED, SCHED_PROC, "sched",
 *			 "sched_process_fork", my_fork_handler),
 *	};
 *	init:  return mtp_register(my_hooks, ARRAY_SIZE(my_hooks), THIS_MODULE);
 *	exit:  mtp_unregister(my_hooks, ARRAY_SIZE(my_hooks));
 *
 * The handler gets the struct mtp_hook as its first (data) argument and
 * calls magnet_add(h->pt, ...).
 */
#ifndef _MAGNET_PROBES_MTP_H
#define _MAGNET_PROBES_MTP_H

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/string.h>
#include <linux/err.h>
#include <linux/tracepoint.h>
#include <magnet/magnet.h>

struct mtp_hook {
	struct magnet_point_desc desc;
	const char *target;		/* tracepoint name */
	void *probe;			/* handler, TP_PROTO with data first */
	/* runtime */
	struct magnet_point *pt;
	struct tracepoint *tp;
};

struct mtp_lookup {
	const char *name;
	struct tracepoint *tp;
};

static inline void mtp_match(struct tracepoint *tp, void *priv)
{
	struct mtp_lookup *l = priv;

	if (!l->tp && !strcmp(tp->name, l->name))
		l->tp = tp;
}

static inline int mtp_enable(struct magnet_point *pt)
{
	struct mtp_hook *h = pt->priv;
	struct mtp_lookup l = { .name = h->target };
	int ret;

	WRITE_ONCE(h->pt, pt);	/* enable may come before register returns */
	for_each_kernel_tracepoint(mtp_match, &l);
	if (!l.tp) {
		pr_warn("%s: no tracepoint %s in this kernel\n", h->desc.name,
			h->target);
		return -ENOENT;
	}
	h->tp = l.tp;
	ret = tracepoint_probe_register(h->tp, h->probe, h);
	if (ret)
		pr_warn("%s: cannot attach to %s: %d\n", h->desc.name,
			h->desc.hook, ret);
	return ret;
}

static inline void mtp_disable(struct magnet_point *pt)
{
	struct mtp_hook *h = pt->priv;
	int ret = tracepoint_probe_unregister(h->tp, h->probe, h);

	if (ret)
		pr_warn("%s: detaching from %s: %d\n", h->desc.name,
			h->target, ret);
	/* no handler may run once disable returns */
	tracepoint_synchronize_unregister();
}

static const struct magnet_point_ops mtp_ops = {
	.enable = mtp_enable,
	.disable = mtp_disable,
};

#define MTP_HOOK(_name, _layer, _payload, _sys, _tp, _fn)		\
	{								\
		.desc = {						\
			.name = _name,					\
			.layer = MAGNET_LAYER_##_layer,			\
			.payload = MAGNET_PAYLOAD_##_payload,		\
			.hook = "tracepoint:" _sys ":" _tp,		\
			.ops = &mtp_ops,				\
		},							\
		.target = _tp,						\
		.probe = (void *)_fn,					\
	}

static inline void mtp_unregister(struct mtp_hook *h, unsigned int n)
{
	/* unregister disables first, which detaches the tracepoint */
	while (n--) {
		magnet_point_unregister(h[n].pt);
		h[n].pt = NULL;
	}
}

static inline int mtp_register(struct mtp_hook *h, unsigned int n,
			       struct module *owner)
{
	struct magnet_point *pt;
	unsigned int i;

	for (i = 0; i < n; i++) {
		pt = magnet_point_register(&h[i].desc, owner, &h[i]);
		if (IS_ERR(pt)) {
			pr_err("registering %s: %ld\n", h[i].desc.name,
			       PTR_ERR(pt));
			mtp_unregister(h, i);
			return PTR_ERR(pt);
		}
		h[i].pt = pt;
	}
	return 0;
}

#endif /* _MAGNET_PROBES_MTP_H */
