// SPDX-License-Identifier: GPL-2.0
/*
 * MAGNET core module: starts magnetk and the instrumentation database,
 * creates magnetfs (its type and /sys/kernel/magnet, which user space
 * mounts) and registers the control family.
 */
#include <linux/module.h>
#include "internal.h"
#include "compat.h"
#include "sockstat.h"

/* Say once how a monotonic stream's per-CPU rings read their clock. */
static void __init magnet_clock_report(void)
{
	struct magnet_ring_clock c;

	magnet_clock_init(&c);
	if (c.span)
		pr_info("magnet: CLOCK_MONOTONIC extrapolated from the TSC (%llu cycles per %u us anchor)\n",
			c.span, MAGNET_CLOCK_SPAN_US);
	else
		pr_info("magnet: CLOCK_MONOTONIC read from the kernel on every event (the TSC is not trusted)\n");
}

static int __init magnet_init(void)
{
	int err;

	err = magnetk_start();
	if (err)
		return err;
	err = magnetfs_init();
	if (err)
		goto err_magnetk;
	err = magnet_status_init(magnet_db.dir);
	if (err)
		goto err_magnetfs;
	err = magnet_sockstat_init(magnet_db.dir);
	if (err)
		goto err_magnetfs;
	err = magnet_genl_init();
	if (err)
		goto err_magnetfs;
	pr_info("magnet %s loaded (abi %u)\n", MAGNET_VERSION,
		MAGNET_ABI_VERSION);
	magnet_clock_report();
	return 0;

err_magnetfs:
	magnetfs_exit();
err_magnetk:
	magnetk_stop();
	return err;
}

static void __exit magnet_exit(void)
{
	magnet_genl_exit();
	magnet_extack_exit();
	magnet_kprobe_teardown();
	magnet_sockstat_exit();
	magnet_db_teardown();
	magnetfs_exit();
	magnetk_stop();
}

module_init(magnet_init);
module_exit(magnet_exit);
MODULE_LICENSE("GPL");
MODULE_AUTHOR("MAGNET developers");
MODULE_DESCRIPTION("MAGNET: kernel event monitoring framework core");
MODULE_VERSION(MAGNET_VERSION);
