// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/magnet/status: the paper's /proc/net/magnet.  A
 * human-readable view of the database; tools use netlink instead.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include "internal.h"
#include "sockstat.h"

static int magnet_status_show(struct seq_file *m, void *unused)
{
	struct magnet_point *pt;
	struct magnet_stream *s;

	mutex_lock(&magnet_db.lock);
	seq_printf(m, "magnet %s abi %u\n", MAGNET_VERSION, MAGNET_ABI_VERSION);
	seq_printf(m, "streams %u probes %u\n", magnet_db.nr_streams,
		   magnet_db.nr_points);
	magnet_sockstat_status(m);
	seq_puts(m, "\nstream\tsubbuf_size\tsubbuf_count\tproduced\twritten\tlost\tread\tbytes\tswitches\tfill\treaders\tprobes\tmode\tfrozen\toverwritten\tfrozen_lost\n");
	list_for_each_entry(s, &magnet_db.streams, node) {
		struct magnet_stream_stats st;

		magnet_stream_stats(s, &st);
		seq_printf(m, "%s\t%u\t%u\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%d\t%u\t0x%x\t%d\t%llu\t%llu\n",
			   s->name, s->rings.size, s->rings.count,
			   st.produced, st.written, st.lost, st.read, st.bytes,
			   st.switches, st.fill, atomic_read(&s->readers),
			   s->nr_probes, s->rings.mode, READ_ONCE(s->rings.frozen),
			   st.overwritten, st.frozen_lost);
	}
	seq_puts(m, "\nid\tprobe\tlayer\tenabled\tstream\thits\thook\tusers\n");
	list_for_each_entry(pt, &magnet_db.points, node) {
		struct magnet_stream *ps = rcu_dereference_protected(pt->stream,
					lockdep_is_held(&magnet_db.lock));

		/* users: consumers (stream, synthesizers, taps); 0: detached */
		seq_printf(m, "%u\t%s\t%u\t%d\t%s\t%llu\t%s\t%u\n", pt->id,
			   pt->desc->name, pt->desc->layer, !!ps,
			   ps ? ps->name : "-", magnet_point_hits(pt),
			   pt->desc->hook ?: "-", pt->users);
	}
	mutex_unlock(&magnet_db.lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(magnet_status);

int magnet_status_init(struct dentry *dir)
{
	struct dentry *d;

	if (!dir)		/* no debugfs */
		return 0;
	d = debugfs_create_file("status", 0444, dir, NULL, &magnet_status_fops);
	return PTR_ERR_OR_ZERO(d);
}
