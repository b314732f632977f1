// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Names of the UAPI enums, shared by magnetctl and other tools. */
#include "internal.h"

static const char *const layer_names[] = {
	[MAGNET_LAYER_OTHER]	 = "other",
	[MAGNET_LAYER_SOCKET]	 = "socket",
	[MAGNET_LAYER_TRANSPORT] = "transport",
	[MAGNET_LAYER_NETWORK]	 = "network",
	[MAGNET_LAYER_DEVICE]	 = "device",
	[MAGNET_LAYER_SCHED]	 = "sched",
	[MAGNET_LAYER_MEMORY]	 = "memory",
	[MAGNET_LAYER_CORE]	 = "core",
};

static const char *const payload_names[] = {
	[MAGNET_PAYLOAD_NONE]	= "none",
	[MAGNET_PAYLOAD_NET]	= "net",
	[MAGNET_PAYLOAD_RAW]	= "raw",
	[MAGNET_PAYLOAD_SCHED_SWITCH] = "sched_switch",
	[MAGNET_PAYLOAD_SCHED_PROC] = "sched_proc",
	[MAGNET_PAYLOAD_SCHED_EXEC] = "sched_exec",
	[MAGNET_PAYLOAD_FAULT]	= "fault",
	[MAGNET_PAYLOAD_PAGE]	= "page",
	[MAGNET_PAYLOAD_TCP]	= "tcp",
	[MAGNET_PAYLOAD_IP]	= "ip",
	[MAGNET_PAYLOAD_KPROBE]	= "kprobe",
	[MAGNET_PAYLOAD_SCHED_SWITCH_END] = "sched_switch_end",
};

const char *magnet_layer_name(__u32 layer)
{
	return layer < __MAGNET_LAYER_MAX ? layer_names[layer] : "?";
}

const char *magnet_payload_name(__u32 payload)
{
	return payload < __MAGNET_PAYLOAD_MAX ? payload_names[payload] : "?";
}
