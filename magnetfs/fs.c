// SPDX-License-Identifier: GPL-2.0
/*
 * magnetfs, the file system type.  The module registers it and makes its
 * mount point, /sys/kernel/magnet (as tracefs has /sys/kernel/tracing);
 * mounting is user space's, as for tracefs and bpffs: the packaged
 * sys-kernel-magnet.mount unit, magnetctl on first use as root
 * (magnetctl/main.c, mc_magnetfs_mount()), or by hand with
 * "mount -t magnetfs magnetfs DIR".  It shows one file per stream, with
 * the same operations as the debugfs files /sys/kernel/debug/magnet/<stream>
 * (magnetfs_stream_fops), so streams can be read where debugfs is disabled
 * or locked down.
 *
 * One superblock shared by every mount (get_tree_single, as tracefs and
 * debugfs do): all mounts show the same files.  @magnetfs_sb and each
 * stream's mfs_dentry are protected by magnet_db.lock, which stream
 * creation and deletion already hold; fill_super and kill_sb take it
 * (s_umount -> db.lock; the stream hooks take the root's i_rwsem inside
 * db.lock and never s_umount).  Files are created in the superblock when a
 * stream is created, and all existing streams are populated by fill_super;
 * a deleted stream's inode loses i_private (magnetfs_forget_inode()),
 * exactly like its debugfs inode, so open() through either path finds the
 * stream or ENOENT.
 *
 * Options uid=, gid=, mode= (octal, permission bits) set the owner and
 * mode of every stream file (default root:root 0400); the root directory
 * gets the same owner and the mode plus search bits wherever read is
 * granted (0400 -> 0500, 0440 -> 0550).  A remount, or a new mount of the
 * existing superblock, changes only the options it names, on every
 * existing file too.
 *
 * A mounted superblock holds a reference to this module (the file system
 * type's owner): rmmod magnet fails with EBUSY until every mount is gone.
 */
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/fs_parser.h>
#include <linux/fsnotify.h>
#include <linux/kobject.h>
#include <linux/namei.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include "../kmod/internal.h"
#include "../kmod/compat.h"
#include "../kmod/sockstat.h"
#include "magnetfs.h"

#define MAGNETFS_DEFAULT_MODE	0400

struct magnetfs_opts {
	kuid_t uid;
	kgid_t gid;
	umode_t mode;
	unsigned int set;	/* BIT(Opt_*) given on this mount/remount */
};

enum { Opt_uid, Opt_gid, Opt_mode };

static const struct fs_parameter_spec magnetfs_params[] = {
	fsparam_u32("uid", Opt_uid),
	fsparam_u32("gid", Opt_gid),
	fsparam_u32oct("mode", Opt_mode),
	{}
};

static struct super_block *magnetfs_sb;	/* magnet_db.lock */
static bool magnetfs_mountpoint;	/* /sys/kernel/magnet created */

/*
 * Search bits where read is granted, and search (not read) for everyone:
 * the sockstat file (0444) is open to any user (docs/SOCKSTAT.md).
 */
static umode_t magnetfs_dir_mode(umode_t mode)
{
	return S_IFDIR | mode | ((mode & 0444) >> 2) | 0111;
}

/* A stream open to application events is writable by anyone. */
static umode_t magnetfs_file_mode(struct magnetfs_opts *o,
				  struct magnet_stream *s)
{
	return S_IFREG | o->mode | (s->app_write ? 0222 : 0);
}

/*
 * The root directory: the mount's mode plus search bits where read is
 * granted, and search for everybody while some stream takes application
 * events, so that its writers can reach it.  db.lock held.
 */
static void magnetfs_root_mode(struct super_block *sb)
{
	struct magnetfs_opts *o = sb->s_fs_info;
	umode_t mode = magnetfs_dir_mode(o->mode);
	struct magnet_stream *s;

	list_for_each_entry(s, &magnet_db.streams, node)
		if (s->app_write && s->mfs_dentry && s->mfs_dentry->d_sb == sb)
			mode |= 0111;
	d_inode(sb->s_root)->i_mode = mode;
}

static struct inode *magnetfs_new_inode(struct super_block *sb, umode_t mode)
{
	struct magnetfs_opts *o = sb->s_fs_info;
	struct inode *inode = new_inode(sb);

	if (!inode)
		return NULL;
	inode->i_ino = get_next_ino();
	inode->i_mode = mode;
	inode->i_uid = o->uid;
	inode->i_gid = o->gid;
	magnet_inode_init_ts(inode);
	return inode;
}

/* Create @s's file in @sb; db.lock held. */
static int magnetfs_sb_add(struct super_block *sb, struct magnet_stream *s)
{
	struct magnetfs_opts *o = sb->s_fs_info;
	struct dentry *root = sb->s_root, *d;
	struct inode *inode;
	int err = 0;

	lockdep_assert_held(&magnet_db.lock);
	inode_lock(d_inode(root));
	d = lookup_one_len(s->name, root, strlen(s->name));
	if (IS_ERR(d)) {
		err = PTR_ERR(d);
		goto out;
	}
	if (d_really_is_positive(d)) {
		dput(d);
		err = -EEXIST;
		goto out;
	}
	inode = magnetfs_new_inode(sb, magnetfs_file_mode(o, s));
	if (!inode) {
		dput(d);
		err = -ENOMEM;
		goto out;
	}
	inode->i_fop = &magnetfs_stream_fops;
	inode->i_private = s;
	d_instantiate(d, inode);
	fsnotify_create(d_inode(root), d);
	/* the lookup's reference pins the dentry until removal or kill_sb */
	s->mfs_dentry = d;
out:
	inode_unlock(d_inode(root));
	if (!err && s->app_write)
		magnetfs_root_mode(sb);
	return err;
}

/*
 * The per-socket statistics file, 0444 root:root whatever the mount's
 * options: it gives each caller only its own sockets (kmod/sockstat.c).
 */
static int magnetfs_sockstat_add(struct super_block *sb)
{
	struct dentry *root = sb->s_root, *d;
	struct inode *inode;
	int err = 0;

	inode_lock(d_inode(root));
	d = lookup_one_len(MAGNET_SOCKSTAT_NAME, root,
			   strlen(MAGNET_SOCKSTAT_NAME));
	if (IS_ERR(d)) {
		err = PTR_ERR(d);
		goto out;
	}
	inode = magnetfs_new_inode(sb, S_IFREG | 0444);
	if (!inode) {
		dput(d);
		err = -ENOMEM;
		goto out;
	}
	inode->i_uid = GLOBAL_ROOT_UID;
	inode->i_gid = GLOBAL_ROOT_GID;
	inode->i_fop = &magnet_sockstat_fops;
	d_instantiate(d, inode);
	/* the lookup's reference pins the dentry until kill_sb */
out:
	inode_unlock(d_inode(root));
	return err;
}

/* @s was opened to application events: its file and the root; db.lock held. */
void magnetfs_fs_stream_mode(struct magnet_stream *s)
{
	struct dentry *d = s->mfs_dentry;

	lockdep_assert_held(&magnet_db.lock);
	if (!d)
		return;
	d_inode(d)->i_mode = magnetfs_file_mode(d->d_sb->s_fs_info, s);
	magnetfs_root_mode(d->d_sb);
}

int magnetfs_fs_add_stream(struct magnet_stream *s)
{
	lockdep_assert_held(&magnet_db.lock);
	if (!magnetfs_sb)
		return 0;
	return magnetfs_sb_add(magnetfs_sb, s);
}

/* db.lock held: no open finds the stream once i_private is cleared. */
void magnetfs_fs_remove_stream(struct magnet_stream *s)
{
	struct dentry *d = s->mfs_dentry;
	struct inode *dir;

	lockdep_assert_held(&magnet_db.lock);
	if (!d)
		return;
	s->mfs_dentry = NULL;
	magnetfs_forget_inode(d_inode(d));
	dir = d_inode(d->d_parent);
	inode_lock(dir);
	if (simple_positive(d)) {
		dget(d);
		fsnotify_unlink(dir, d);	/* while still positive */
		simple_unlink(dir, d);		/* drops the pin */
		d_delete(d);
		dput(d);
	}
	inode_unlock(dir);
	if (s->app_write)
		magnetfs_root_mode(dir->i_sb);
}

/* Apply the options given in @o to the superblock and every file. */
static void magnetfs_apply(struct super_block *sb, struct magnetfs_opts *o)
{
	struct magnetfs_opts *cur = sb->s_fs_info;
	struct inode *root = d_inode(sb->s_root);
	struct magnet_stream *s;

	mutex_lock(&magnet_db.lock);
	if (o->set & BIT(Opt_uid))
		cur->uid = o->uid;
	if (o->set & BIT(Opt_gid))
		cur->gid = o->gid;
	if (o->set & BIT(Opt_mode))
		cur->mode = o->mode;
	root->i_uid = cur->uid;
	root->i_gid = cur->gid;
	magnetfs_root_mode(sb);
	list_for_each_entry(s, &magnet_db.streams, node) {
		struct inode *inode;

		if (!s->mfs_dentry || s->mfs_dentry->d_sb != sb)
			continue;
		inode = d_inode(s->mfs_dentry);
		inode->i_uid = cur->uid;
		inode->i_gid = cur->gid;
		inode->i_mode = magnetfs_file_mode(cur, s);
	}
	mutex_unlock(&magnet_db.lock);
}

static int magnetfs_show_options(struct seq_file *m, struct dentry *root)
{
	struct magnetfs_opts *o = root->d_sb->s_fs_info;

	if (!uid_eq(o->uid, GLOBAL_ROOT_UID))
		seq_printf(m, ",uid=%u", from_kuid_munged(&init_user_ns, o->uid));
	if (!gid_eq(o->gid, GLOBAL_ROOT_GID))
		seq_printf(m, ",gid=%u", from_kgid_munged(&init_user_ns, o->gid));
	if (o->mode != MAGNETFS_DEFAULT_MODE)
		seq_printf(m, ",mode=%o", o->mode);
	return 0;
}

static const struct super_operations magnetfs_sops = {
	.statfs		= simple_statfs,
	.drop_inode	= generic_delete_inode,
	.show_options	= magnetfs_show_options,
};

static int magnetfs_fill_super(struct super_block *sb, struct fs_context *fc)
{
	struct magnetfs_opts *o = sb->s_fs_info;	/* sget_fc moved it */
	struct magnet_stream *s;
	struct inode *root;
	int err = 0;

	sb->s_maxbytes = MAX_LFS_FILESIZE;
	sb->s_blocksize = PAGE_SIZE;
	sb->s_blocksize_bits = PAGE_SHIFT;
	sb->s_magic = MAGNETFS_MAGIC;
	sb->s_op = &magnetfs_sops;
	sb->s_time_gran = 1;

	root = magnetfs_new_inode(sb, magnetfs_dir_mode(o->mode));
	if (!root)
		return -ENOMEM;
	root->i_op = &simple_dir_inode_operations;
	root->i_fop = &simple_dir_operations;
	set_nlink(root, 2);
	sb->s_root = d_make_root(root);
	if (!sb->s_root)
		return -ENOMEM;
	err = magnetfs_sockstat_add(sb);
	if (err)
		return err;

	mutex_lock(&magnet_db.lock);
	list_for_each_entry(s, &magnet_db.streams, node) {
		err = magnetfs_sb_add(sb, s);
		if (err)
			break;
	}
	if (!err)
		magnetfs_sb = sb;
	mutex_unlock(&magnet_db.lock);
	/* on error kill_sb forgets the files made so far */
	return err;
}

static int magnetfs_get_tree(struct fs_context *fc)
{
	int err = get_tree_single(fc, magnetfs_fill_super);

	if (err)
		return err;
	/* the superblock existed: apply what this mount names (as tracefs) */
	if (fc->s_fs_info)
		magnetfs_apply(fc->root->d_sb, fc->s_fs_info);
	return 0;
}

static int magnetfs_reconfigure(struct fs_context *fc)
{
	magnetfs_apply(fc->root->d_sb, fc->s_fs_info);
	return 0;
}

static int magnetfs_parse_param(struct fs_context *fc,
				struct fs_parameter *param)
{
	struct magnetfs_opts *o = fc->s_fs_info;
	struct fs_parse_result r;
	int opt;

	opt = fs_parse(fc, magnetfs_params, param, &r);
	if (opt < 0)
		return opt;
	switch (opt) {
	case Opt_uid:
		o->uid = make_kuid(current_user_ns(), r.uint_32);
		if (!uid_valid(o->uid))
			return invalfc(fc, "uid %u is not mapped", r.uint_32);
		break;
	case Opt_gid:
		o->gid = make_kgid(current_user_ns(), r.uint_32);
		if (!gid_valid(o->gid))
			return invalfc(fc, "gid %u is not mapped", r.uint_32);
		break;
	case Opt_mode:
		if (r.uint_32 & ~0777u)
			return invalfc(fc, "mode %o: only permission bits (at most 0777)",
				       r.uint_32);
		o->mode = r.uint_32;
		break;
	}
	o->set |= BIT(opt);
	return 0;
}

static void magnetfs_free_fc(struct fs_context *fc)
{
	kfree(fc->s_fs_info);
}

static const struct fs_context_operations magnetfs_context_ops = {
	.free		= magnetfs_free_fc,
	.parse_param	= magnetfs_parse_param,
	.get_tree	= magnetfs_get_tree,
	.reconfigure	= magnetfs_reconfigure,
};

static int magnetfs_init_fs_context(struct fs_context *fc)
{
	struct magnetfs_opts *o = kzalloc(sizeof(*o), GFP_KERNEL);

	if (!o)
		return -ENOMEM;
	o->uid = GLOBAL_ROOT_UID;
	o->gid = GLOBAL_ROOT_GID;
	o->mode = MAGNETFS_DEFAULT_MODE;
	fc->s_fs_info = o;
	fc->ops = &magnetfs_context_ops;
	return 0;
}

static void magnetfs_kill_sb(struct super_block *sb)
{
	struct magnet_stream *s;

	mutex_lock(&magnet_db.lock);
	list_for_each_entry(s, &magnet_db.streams, node) {
		if (s->mfs_dentry && s->mfs_dentry->d_sb == sb)
			s->mfs_dentry = NULL;
	}
	if (magnetfs_sb == sb)
		magnetfs_sb = NULL;
	mutex_unlock(&magnet_db.lock);
	kill_litter_super(sb);		/* drops the pins */
	kfree(sb->s_fs_info);
}

static struct file_system_type magnetfs_type = {
	.owner			= THIS_MODULE,
	.name			= "magnetfs",
	.init_fs_context	= magnetfs_init_fs_context,
	.parameters		= magnetfs_params,
	.kill_sb		= magnetfs_kill_sb,
};
MODULE_ALIAS_FS("magnetfs");

int magnetfs_fs_init(void)
{
	int err;

	err = register_filesystem(&magnetfs_type);
	if (err)
		return err;
	/* /sys/kernel/magnet, where tracefs has /sys/kernel/tracing */
	err = sysfs_create_mount_point(kernel_kobj, "magnet");
	if (err)
		pr_warn("magnet: cannot create /sys/kernel/magnet (%d); mount magnetfs elsewhere\n",
			err);
	else
		magnetfs_mountpoint = true;
	return 0;
}

void magnetfs_fs_exit(void)
{
	/* nothing is mounted: a mount holds a module reference */
	if (magnetfs_mountpoint)
		sysfs_remove_mount_point(kernel_kobj, "magnet");
	magnetfs_mountpoint = false;
	unregister_filesystem(&magnetfs_type);
}
