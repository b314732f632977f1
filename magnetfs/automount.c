// SPDX-License-Identifier: GPL-2.0
/*
 * Mounting magnetfs on /sys/kernel/magnet when magnet.ko loads.
 *
 * A module cannot attach a mount to a mount namespace itself: do_mount()
 * and path_mount() are internal, kern_mount() makes an invisible internal
 * mount, and sysfs has no automount points (tracefs reaches
 * /sys/kernel/debug/tracing through a debugfs automount, which needs the
 * very debugfs magnetfs exists to avoid).  So, as the kernel does for
 * modprobe(8) and core_pattern pipes, the module runs mount(8) as a
 * user-mode helper: as root, in the initial mount namespace, and waits
 * for it.  It is the last step of module init, when nothing can fail any
 * more: a mounted superblock holds a module reference, and a module whose
 * init fails is freed whatever holds it.
 *
 * The mount holds that reference until it is unmounted, so unloading is
 * "umount /sys/kernel/magnet; rmmod magnet" (docs/IOCTL.md).  A failed
 * helper (no mount binary, user-mode helpers disabled, a killed insmod)
 * leaves the module loaded without the mount and says so in the kernel
 * log.  "insmod magnet.ko automount=0" skips it.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/umh.h>
#include "../kmod/internal.h"
#include "magnetfs.h"

static bool automount = true;
module_param(automount, bool, 0444);
MODULE_PARM_DESC(automount,
		 "mount magnetfs on /sys/kernel/magnet at load (default Y; unmount it before rmmod)");

#define MAGNETFS_MOUNTPOINT	"/sys/kernel/magnet"

/* merged /usr first (Debian 12), then the classic place */
static const char *const magnetfs_mount_bins[] = {
	"/usr/bin/mount",
	"/bin/mount",
};

/* run one mount binary: 0, -errno from the exec, or its wait status (> 0) */
static int magnetfs_run_mount(const char *bin)
{
	char *argv[] = { (char *)bin, "-t", "magnetfs", "none",
			 MAGNETFS_MOUNTPOINT, NULL };
	static char *envp[] = { "HOME=/", "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
				NULL };

	return call_usermodehelper(bin, argv, envp,
				   UMH_WAIT_PROC | UMH_KILLABLE);
}

void magnetfs_automount(void)
{
	int i, ret = -ENOENT;

	if (!automount)
		return;
	if (!magnetfs_fs_has_mountpoint()) {
		pr_notice("magnet: no %s, magnetfs not mounted\n",
			  MAGNETFS_MOUNTPOINT);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(magnetfs_mount_bins) && ret == -ENOENT; i++)
		ret = magnetfs_run_mount(magnetfs_mount_bins[i]);
	if (!ret) {
		pr_info("magnet: magnetfs mounted on %s (unmount it before rmmod magnet)\n",
			MAGNETFS_MOUNTPOINT);
		return;
	}
	if (ret < 0)
		pr_notice("magnet: cannot run mount(8) (%d): magnetfs not mounted; mount -t magnetfs none %s\n",
			  ret, MAGNETFS_MOUNTPOINT);
	else if ((ret & 0x7f) == 0)
		pr_notice("magnet: mount(8) exited with %d: magnetfs not mounted; mount -t magnetfs none %s\n",
			  (ret >> 8) & 0xff, MAGNETFS_MOUNTPOINT);
	else
		pr_notice("magnet: mount(8) killed by signal %d: magnetfs not mounted\n",
			  ret & 0x7f);
}
