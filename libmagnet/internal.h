/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* libmagnet internals shared between its source files. */
#ifndef LIBMAGNET_INTERNAL_H
#define LIBMAGNET_INTERNAL_H

#include <magnet/libmagnet.h>

#define MAGNET_ERRMSG_LEN	256

struct magnet_evinfo {
	char name[MAGNET_NAME_MAX];	/* "" = not defined */
	__u16 layer;
	__u16 payload;
};

struct magnet_decoder {
	bool started;			/* first SYSINFO seen */
	bool swapped;			/* opposite byte order */
	unsigned long long base;	/* added to offsets in messages */
	char errmsg[MAGNET_ERRMSG_LEN];
	struct magnet_evinfo ev[MAGNET_EVENT_MAX + 1];
};

struct nlmsgerr;
/* Not exported: the family name is a parameter for tests only. */
int magnet_ctl_open_family(const char *family, struct magnet_ctl **out);
int magnet_ctl_request_raw(struct magnet_ctl *h, __u8 cmd, int flags,
			   int attr, const void *data, size_t len);
bool magnet_parse_extack(const struct nlmsgerr *e, char *buf, size_t len);

#endif /* LIBMAGNET_INTERNAL_H */
