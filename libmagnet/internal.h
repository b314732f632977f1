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

/* fields.c: MAGNET_REC_FIELDS decoding; false leaves the record raw */
bool magnet_decode_fields(const struct magnet_decoder *d, struct magnet_rec *r);

struct nlmsgerr;
struct nlmsghdr;
/* Not exported: the family name is a parameter for tests only. */
int magnet_ctl_open_family(const char *family, struct magnet_ctl **out);
int magnet_ctl_request_raw(struct magnet_ctl *h, __u8 cmd, int flags,
			   int attr, const void *data, size_t len);
bool magnet_parse_extack(const struct nlmsgerr *e, char *buf, size_t len);
int magnet_parse_done(const struct nlmsghdr *nlh, char *buf, size_t len);

/* nl.c requests for the object files (filter.c, ...) */
struct nl_msg;
struct nlattr;
typedef int (*magnet_nl_parse_fn)(struct nlattr **tb, void *arg);
struct nl_msg *magnet_nl_req_new(struct magnet_ctl *h, __u8 cmd, int flags);
int magnet_nl_req_run(struct magnet_ctl *h, struct nl_msg *msg,
		      magnet_nl_parse_fn parse, void *arg);
int magnet_nl_set_error(struct magnet_ctl *h, int err);

#endif /* LIBMAGNET_INTERNAL_H */
