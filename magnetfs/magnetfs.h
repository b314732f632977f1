/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Between the stream files (stream_file.c) and the magnetfs file system
 * type (fs.c).  Both stream hooks run with magnet_db.lock held.
 */
#ifndef _MAGNETFS_H
#define _MAGNETFS_H

#include <linux/fs.h>

struct magnet_stream;

/* stream_file.c: the same operations in debugfs and in magnetfs */
extern const struct file_operations magnetfs_stream_fops;
/* a deleted stream's file: no open() finds the stream any more */
void magnetfs_forget_inode(struct inode *inode);

/* fs.c */
int magnetfs_fs_init(void);
void magnetfs_fs_exit(void);
int magnetfs_fs_add_stream(struct magnet_stream *s);
void magnetfs_fs_remove_stream(struct magnet_stream *s);
/* the stream file's mode changed (app_write): apply it; db.lock held */
void magnetfs_fs_stream_mode(struct magnet_stream *s);

#endif /* _MAGNETFS_H */
