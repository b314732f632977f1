// SPDX-License-Identifier: GPL-2.0-only
/* magnetctl status */
#include <stdio.h>
#include <string.h>

#include "magnetctl.h"
#include "output.h"

static void print_status(const struct magnet_status *st)
{
	out_open_object(NULL);
	out_string("version", "version:  %s\n", st->version);
	out_uint("abi", "abi:      %llu\n", st->abi);
	out_uint("nr_cpus", "cpus:     %llu\n", st->nr_cpus);
	out_uint("nr_probes", "probes:   %llu\n", st->nr_probes);
	out_uint("nr_streams", "streams:  %llu\n", st->nr_streams);
	out_close_object();
}

int do_status(int argc, char **argv)
{
	struct magnet_status st;
	struct magnet_ctl *h;
	int ret;

	if (argc > 0 && !strcmp(argv[0], "help")) {
		printf("Usage: magnetctl status\n");
		return MC_EXIT_OK;
	}
	if (argc > 0)
		return mc_usage_error("status: unexpected argument '%s'", argv[0]);
	ret = mc_ctl_open(&h);
	if (ret)
		return ret;
	ret = magnet_status_get(h, &st);
	if (ret)
		ret = mc_ctl_error(h, ret, "status");
	else
		print_status(&st);
	magnet_ctl_close(h);
	return ret;
}
