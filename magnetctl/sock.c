// SPDX-License-Identifier: GPL-2.0-only
/*
 * magnetctl sock show ID  (docs/SOCKSTAT.md)
 *
 * The figures of a watched socket by abstract ID (its inode number):
 * root only (CAP_NET_ADMIN or CAP_SYS_ADMIN).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "magnetctl.h"
#include "output.h"

static int sock_help(void)
{
	printf("Usage: magnetctl sock show ID\n"
	       "ID := the socket's abstract ID (inode number), watched by some process\n"
	       "Figures since the socket's first watch (libmagnet magnet_sock_watch());\n"
	       "needs CAP_NET_ADMIN or CAP_SYS_ADMIN.\n");
	return MC_EXIT_OK;
}

static int sock_show(int argc, char **argv)
{
	struct magnet_sock_stats st;
	unsigned long long id;
	char *end;
	int err;

	if (argc < 1)
		return mc_usage_error("sock show: missing ID");
	if (argc > 1)
		return mc_usage_error("sock show: unexpected argument '%s'",
				      argv[1]);
	errno = 0;
	id = strtoull(argv[0], &end, 0);
	if (errno || end == argv[0] || *end || argv[0][0] == '-' || !id)
		return mc_usage_error("sock show: bad ID '%s' (a socket inode number)",
				      argv[0]);
	/* root: magnetfs mounted on first use, as record does (else debugfs) */
	if (!getenv("MAGNET_SOCKSTAT"))
		mc_magnetfs_mount();
	err = magnet_sock_stats_by_id(id, &st);
	if (err) {
		int rc = mc_not_loaded(err);

		if (rc >= 0)
			return rc;
		mc_error("sock show %llu: %s%s", id, strerror(-err),
			 err == -ENOENT ? " (no process watches that socket, or neither magnetfs nor debugfs is mounted)" :
			 err == -EPERM ? " (a socket by its ID: needs CAP_NET_ADMIN or CAP_SYS_ADMIN)" :
			 err == -EACCES ? " (debugfs is root's; magnetfs's sockstat file is everyone's: as root, mount -t magnetfs magnetfs " MAGNETFS_DEFAULT_DIR ")" : "");
		return mc_errno_exit(err);
	}
	out_open_object(NULL);
	out_uint("id", "socket %llu", st.abstract_id);
	out_uint("flags", " flags 0x%llx\n", st.flags);
	out_uint("start_ns", "  start %llu", st.start_ns);
	out_uint("now_ns", " now %llu\n", st.now_ns);
	out_uint("sock_calls", "  socket calls %llu", st.sock_calls);
	out_uint("sock_bytes", " bytes %llu", st.sock_bytes);
	out_uint("sock_errors", " failed %llu\n", st.sock_errors);
	out_uint("dev_frames", "  device frames %llu", st.dev_frames);
	out_uint("dev_bytes", " bytes %llu\n", st.dev_bytes);
	out_uint("ival_count", "  intervals %llu", st.ival_count);
	out_uint("ival_mean", " mean %llu ns", st.ival_mean);
	out_uint("ival_var", " var %llu ns^2", st.ival_var);
	out_uint("ival_min", " min %llu", st.ival_min);
	out_uint("ival_max", " max %llu\n", st.ival_max);
	out_uint("missed", "  missed %llu\n", st.missed);
	out_bool("tcp", NULL, st.flags & MAGNET_SOCK_F_TCP);
	if (st.flags & MAGNET_SOCK_F_TCP) {
		out_uint("tcp_state", "  tcp state %llu", st.tcp_state);
		out_uint("srtt_us", " srtt %llu us", st.srtt_us);
		out_uint("rttvar_us", " rttvar %llu us", st.rttvar_us);
		out_uint("snd_cwnd", " cwnd %llu", st.snd_cwnd);
		out_uint("mss", " mss %llu", st.mss);
		out_uint("total_retrans", " retrans %llu\n", st.total_retrans);
		out_uint("unsent", "  unsent %llu", st.unsent);
		out_uint("unacked", " unacked %llu\n", st.unacked);
	}
	out_uint("wmem_queued", "  send queue %llu", st.wmem_queued);
	out_uint("sndbuf", " of %llu\n", st.sndbuf);
	out_bool("layers", NULL, st.flags & MAGNET_SOCK_F_LAYERS);
	out_uint("chains", "  sends through the layers %llu", st.chains);
	out_uint("chains_partial", " closed early %llu\n", st.chains_partial);
	/* transport->IP, IP->device, device->return to the socket layer */
	out_uint("tcp_ip_mean_ns", "  mean ns: transport->ip %llu", st.layer_mean[0]);
	out_uint("ip_dev_mean_ns", " ip->device %llu", st.layer_mean[1]);
	out_uint("dev_ret_mean_ns", " device->return %llu\n", st.layer_mean[2]);
	out_uint("tcp_ip_last_ns", "  last ns: transport->ip %llu", st.layer_last[0]);
	out_uint("ip_dev_last_ns", " ip->device %llu", st.layer_last[1]);
	out_uint("dev_ret_last_ns", " device->return %llu\n", st.layer_last[2]);
	/* the receive side (summary version 2; zero from an older module) */
	out_uint("rx_sock_calls", "  receive: socket calls %llu", st.rx_sock_calls);
	out_uint("rx_sock_bytes", " bytes %llu", st.rx_sock_bytes);
	out_uint("rx_sock_errors", " failed %llu\n", st.rx_sock_errors);
	out_uint("rx_dev_frames", "  receive: device frames %llu", st.rx_dev_frames);
	out_uint("rx_dev_bytes", " bytes %llu\n", st.rx_dev_bytes);
	out_bool("rx_layers", NULL, st.flags & MAGNET_SOCK_F_RX_LAYERS);
	out_uint("rx_chains", "  receives through the layers %llu", st.rx_chains);
	out_uint("rx_chains_partial", " closed early %llu\n", st.rx_chains_partial);
	/* device->IP, IP->transport, transport->read: the receive queue */
	out_uint("dev_ip_mean_ns", "  mean ns: device->ip %llu", st.rx_layer_mean[0]);
	out_uint("ip_tp_mean_ns", " ip->transport %llu", st.rx_layer_mean[1]);
	out_uint("tp_read_mean_ns", " transport->read %llu\n", st.rx_layer_mean[2]);
	out_uint("dev_ip_last_ns", "  last ns: device->ip %llu", st.rx_layer_last[0]);
	out_uint("ip_tp_last_ns", " ip->transport %llu", st.rx_layer_last[1]);
	out_uint("tp_read_last_ns", " transport->read %llu\n", st.rx_layer_last[2]);
	out_close_object();
	return MC_EXIT_OK;
}

static const struct mc_cmd sock_cmds[] = {
	{ "show",	sock_show },
	{ NULL,		NULL },
};

int do_sock(int argc, char **argv)
{
	return mc_dispatch("sock", sock_cmds, sock_help, NULL, argc, argv);
}
