/* SPDX-License-Identifier: GPL-2.0-only */
/* Build MAGNET record streams in memory, in either byte order. */
#ifndef TRACEGEN_H
#define TRACEGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <magnet/libmagnet.h>

struct tbuf {
	unsigned char *data;
	size_t len, cap;
	bool swap;		/* write in the opposite byte order */
};

void tb_init(struct tbuf *tb, bool swap);
void tb_free(struct tbuf *tb);
/* Append a record; returns its offset.  size 0: computed and aligned. */
size_t tb_rec(struct tbuf *tb, __u16 event, __u16 size, __u64 ts,
	      const void *payload, size_t plen);
size_t tb_sysinfo(struct tbuf *tb, __u64 ts);
size_t tb_eventdef(struct tbuf *tb, __u16 id, const char *name, __u16 layer,
		   __u16 payload);
size_t tb_lost(struct tbuf *tb, __u64 count);
size_t tb_net(struct tbuf *tb, __u16 event, __u32 len, __u32 ifindex,
	      __u16 proto, __u16 flags);
/* An APP record at header time @ts for a call of [@entry, @exit]. */
size_t tb_app(struct tbuf *tb, __u64 ts, __u16 call, __u64 entry, __u64 exit,
	      __s64 ret);
/* A CORR record of 2 steps: events @e0 then @e1 @delta ns later. */
size_t tb_corr(struct tbuf *tb, __u64 ts, __u64 start, __u16 e0, __u16 e1,
	       __u64 delta, __u32 bytes);
/* Write to a new temporary file; returns its path (static buffer). */
const char *tb_write_tmp(const struct tbuf *tb, size_t len);

/* Header values every generated record carries. */
#define TB_CPU		3
#define TB_ABSTRACT	0x1122334455ull
#define TB_PID		4242
#define TB_TGID		4240

#endif /* TRACEGEN_H */
