/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-socket statistics (kmod/sockstat.c, docs/SOCKSTAT.md): the file
 * "sockstat" in debugfs and magnetfs.
 */
#ifndef _MAGNET_SOCKSTAT_H
#define _MAGNET_SOCKSTAT_H

#include <linux/fs.h>

struct dentry;

extern const struct file_operations magnet_sockstat_fops;
int magnet_sockstat_init(struct dentry *dir);
void magnet_sockstat_exit(void);
/* magnetk's periodic work; a point unregisters (db.lock) */
long magnet_sockstat_tick(void);
struct magnet_point;
void magnet_sockstat_point_gone(struct magnet_point *pt);
/* a line of the status file (db.lock) */
struct seq_file;
void magnet_sockstat_status(struct seq_file *m);

#endif /* _MAGNET_SOCKSTAT_H */
