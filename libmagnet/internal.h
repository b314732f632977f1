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
/* A dump of @cmd without attributes: each reply to @parse. */
int magnet_nl_dump(struct magnet_ctl *h, __u8 cmd, magnet_nl_parse_fn parse,
		   void *arg);
/* Attribute @type of a parsed reply; 0 or "" when the kernel left it out. */
__u32 magnet_nl_u32(struct nlattr **tb, int type);
__u64 magnet_nl_u64(struct nlattr **tb, int type);
void magnet_nl_str(struct nlattr **tb, int type, char *dst, size_t len);

/*
 * nlobj.c: the named objects whose attributes are nested in one attribute
 * (filters, synthesizers, correlators) and the requests they share.
 */
struct magnet_nl_obj {
	int nest;			/* MAGNET_A_FILTER, ... */
	int name;			/* the nest's NAME attribute */
	__u8 cmd_new, cmd_del, cmd_get;
};
/* Fills the open nest of a NEW request from *@info; 0 or -errno. */
typedef int (*magnet_nl_put_fn)(struct nl_msg *msg, const void *info);
/* A name attribute of 1 to MAGNET_NAME_MAX - 1 characters, else -EINVAL. */
int magnet_nl_put_str(struct nl_msg *msg, int type, const char *s);
/*
 * A request about the object @name of kind @o, its nest left open (*@nest)
 * for more attributes; NULL with *@err set on failure.
 */
struct nl_msg *magnet_nl_obj_req(struct magnet_ctl *h,
				 const struct magnet_nl_obj *o, __u8 cmd,
				 int flags, const char *name,
				 struct nlattr **nest, int *err);
int magnet_nl_obj_add(struct magnet_ctl *h, const struct magnet_nl_obj *o,
		      const char *name, magnet_nl_put_fn put, const void *info);
int magnet_nl_obj_del(struct magnet_ctl *h, const struct magnet_nl_obj *o,
		      const char *name);
/* *@out (@size bytes) is zeroed, then filled by @parse from the reply. */
int magnet_nl_obj_get(struct magnet_ctl *h, const struct magnet_nl_obj *o,
		      const char *name, magnet_nl_parse_fn parse, void *out,
		      size_t size);

#endif /* LIBMAGNET_INTERNAL_H */
