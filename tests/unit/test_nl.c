// SPDX-License-Identifier: GPL-2.0-only
/*
 * Control-plane error handling without MAGNET: extended-ACK parsing on
 * synthesized NLMSG_ERROR messages, and real round trips against the
 * kernel's own "nlctrl" family, which refuses MAGNET's commands.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/netlink.h>
#include <linux/genetlink.h>
#include <cmocka.h>

#include "internal.h"

#define MSG "Stream 'foo' already exists"

/* NLMSG_ERROR with a @req_payload byte request and extack TLVs. */
static size_t build_error(unsigned char *buf, size_t req_payload, int flags,
			  bool include_request, const char *msg)
{
	struct nlmsghdr *nlh = (void *)buf;
	struct nlmsgerr *e = (void *)(buf + NLMSG_HDRLEN);
	size_t off = NLMSG_HDRLEN + sizeof(*e);
	struct nlattr *a;
	size_t mlen = strlen(msg) + 1;

	memset(buf, 0, 512);
	e->error = -EEXIST;
	e->msg.nlmsg_len = NLMSG_HDRLEN + req_payload;
	e->msg.nlmsg_type = 0x20;
	if (include_request) {
		memset(buf + off, 0xaa, req_payload);	/* request attrs */
		off += req_payload;
	}
	off = NLMSG_ALIGN(off);
	a = (void *)(buf + off);
	a->nla_type = NLMSGERR_ATTR_OFFS;
	a->nla_len = NLA_HDRLEN + 4;
	off += NLA_ALIGN(a->nla_len);
	a = (void *)(buf + off);
	a->nla_type = NLMSGERR_ATTR_MSG;
	a->nla_len = NLA_HDRLEN + mlen;
	memcpy(buf + off + NLA_HDRLEN, msg, mlen);
	off += NLA_ALIGN(a->nla_len);
	nlh->nlmsg_len = off;
	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_flags = flags;
	return off;
}

static const struct nlmsgerr *err_of(const unsigned char *buf)
{
	return (const void *)(buf + NLMSG_HDRLEN);
}

static void test_extack_uncapped(void **state)
{
	static unsigned char buf[512] __attribute__((aligned(8)));
	char out[256];

	(void)state;
	build_error(buf, 36, NLM_F_ACK_TLVS, true, MSG);
	assert_true(magnet_parse_extack(err_of(buf), out, sizeof(out)));
	assert_string_equal(out, MSG);
	/* A request whose length is not a multiple of 4. */
	build_error(buf, 21, NLM_F_ACK_TLVS, true, MSG);
	assert_true(magnet_parse_extack(err_of(buf), out, sizeof(out)));
	assert_string_equal(out, MSG);
}

static void test_extack_capped(void **state)
{
	static unsigned char buf[512] __attribute__((aligned(8)));
	char out[256];

	(void)state;
	build_error(buf, 36, NLM_F_ACK_TLVS | NLM_F_CAPPED, false, MSG);
	assert_true(magnet_parse_extack(err_of(buf), out, sizeof(out)));
	assert_string_equal(out, MSG);
}

static void test_extack_absent(void **state)
{
	static unsigned char buf[512] __attribute__((aligned(8)));
	char out[256] = "stale";

	(void)state;
	build_error(buf, 36, 0, true, MSG);
	assert_false(magnet_parse_extack(err_of(buf), out, sizeof(out)));
	assert_string_equal(out, "");
}

static void test_extack_truncated(void **state)
{
	static unsigned char buf[512] __attribute__((aligned(8)));
	struct nlmsghdr *nlh = (void *)buf;
	char out[256];

	(void)state;
	/* The message ends inside the TLVs: nothing is read past it. */
	build_error(buf, 36, NLM_F_ACK_TLVS, true, MSG);
	nlh->nlmsg_len -= 16;
	assert_false(magnet_parse_extack(err_of(buf), out, sizeof(out)));
	/* The echoed request claims to be longer than the message. */
	build_error(buf, 36, NLM_F_ACK_TLVS, true, MSG);
	((struct nlmsgerr *)(buf + NLMSG_HDRLEN))->msg.nlmsg_len = 400;
	assert_false(magnet_parse_extack(err_of(buf), out, sizeof(out)));
	/* A long message is cut to the buffer, NUL-terminated. */
	build_error(buf, 0, NLM_F_ACK_TLVS, true, MSG);
	assert_true(magnet_parse_extack(err_of(buf), out, 7));
	assert_string_equal(out, "Stream");
}

/* NLMSG_DONE carrying @err and, when @msg, an extack message. */
static void build_done(unsigned char *buf, int err, const char *msg)
{
	struct nlmsghdr *nlh = (void *)buf;
	size_t off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(int));
	struct nlattr *a;

	memset(buf, 0, 512);
	memcpy(buf + NLMSG_HDRLEN, &err, sizeof(err));
	nlh->nlmsg_type = NLMSG_DONE;
	nlh->nlmsg_flags = NLM_F_MULTI;
	if (msg) {
		a = (void *)(buf + off);
		a->nla_type = NLMSGERR_ATTR_MSG;
		a->nla_len = NLA_HDRLEN + strlen(msg) + 1;
		memcpy(buf + off + NLA_HDRLEN, msg, strlen(msg) + 1);
		off += NLA_ALIGN(a->nla_len);
		nlh->nlmsg_flags |= NLM_F_ACK_TLVS;
	}
	nlh->nlmsg_len = off;
}

/* A dump the kernel refused at its first call is an error, not an empty list. */
static void test_done_error(void **state)
{
	static unsigned char buf[512] __attribute__((aligned(8)));
	char out[256];

	(void)state;
	build_done(buf, -ENOENT, "no synthesizer named 'x'");
	assert_int_equal(magnet_parse_done((void *)buf, out, sizeof(out)), -ENOENT);
	assert_string_equal(out, "no synthesizer named 'x'");
	build_done(buf, -EINVAL, NULL);
	assert_int_equal(magnet_parse_done((void *)buf, out, sizeof(out)), -EINVAL);
	assert_string_equal(out, "");
	/* a dump that ended well */
	build_done(buf, 0, NULL);
	assert_int_equal(magnet_parse_done((void *)buf, out, sizeof(out)), 0);
	/* an old kernel's empty NLMSG_DONE */
	((struct nlmsghdr *)buf)->nlmsg_len = NLMSG_HDRLEN;
	assert_int_equal(magnet_parse_done((void *)buf, out, sizeof(out)), 0);
	/* TLVs cut short: the error stays, no message is read past the end */
	build_done(buf, -ENOENT, "no synthesizer named 'x'");
	((struct nlmsghdr *)buf)->nlmsg_len -= 12;
	assert_int_equal(magnet_parse_done((void *)buf, out, sizeof(out)), -ENOENT);
	assert_string_equal(out, "");
}

static void test_family_missing(void **state)
{
	struct magnet_ctl *h = NULL;
	int err = magnet_ctl_open_family("magnet_no_such_fam", &h);

	(void)state;
	if (err == -EAFNOSUPPORT || err == -EPERM)
		skip();		/* no netlink in this sandbox */
	assert_int_equal(err, -ENOENT);
	assert_null(h);
}

/* nlctrl has no MAGNET commands: requests fail cleanly, handle reusable. */
static int count_cb(const struct magnet_stream_info *s, void *ctx)
{
	(void)s;
	++*(int *)ctx;
	return 0;
}

static void test_kernel_refusal(void **state)
{
	struct magnet_status st;
	struct magnet_ctl *h;
	int err, n = 0;

	(void)state;
	err = magnet_ctl_open_family("nlctrl", &h);
	if (err)
		skip();
	assert_string_equal(magnet_ctl_errmsg(h), "");
	err = magnet_status_get(h, &st);	/* nlctrl cmd 1: NEWFAMILY */
	assert_true(err < 0);
	assert_true(magnet_ctl_errmsg(h)[0] != '\0');
	err = magnet_stream_list(h, count_cb, &n);	/* cmd 7 dump */
	assert_true(err < 0);
	assert_int_equal(n, 0);
	err = magnet_stream_delete(h, "x");		/* cmd 6, ACK */
	assert_true(err < 0);
	assert_true(magnet_ctl_errmsg(h)[0] != '\0');
	/* Names that do not fit are refused before anything is sent. */
	err = magnet_stream_delete(h, "0123456789012345678901234567890123");
	assert_int_equal(err, -EINVAL);
	assert_false(magnet_ctl_has_extack(h));
	assert_string_equal(magnet_ctl_errmsg(h), strerror(EINVAL));
	magnet_ctl_close(h);
}

/* A real extack from the kernel reaches magnet_ctl_errmsg(). */
static void test_kernel_extack(void **state)
{
	struct magnet_ctl *h;
	char one = 1;
	int err;

	(void)state;
	if (magnet_ctl_open_family("nlctrl", &h))
		skip();
	/* CTRL_ATTR_FAMILY_ID is a u16: one byte fails policy validation. */
	err = magnet_ctl_request_raw(h, CTRL_CMD_GETFAMILY, NLM_F_ACK,
				     CTRL_ATTR_FAMILY_ID, &one, 1);
	assert_true(err < 0);
	assert_true(magnet_ctl_has_extack(h));
	assert_string_equal(magnet_ctl_errmsg(h),
			    "Attribute failed policy validation");
	/* A reply followed by an ACK: success, and the message is cleared. */
	err = magnet_ctl_request_raw(h, CTRL_CMD_GETFAMILY, NLM_F_ACK,
				     CTRL_ATTR_FAMILY_NAME, "nlctrl", 7);
	assert_int_equal(err, 0);
	assert_false(magnet_ctl_has_extack(h));
	assert_string_equal(magnet_ctl_errmsg(h), "");
	/* Without extack: strerror. */
	err = magnet_ctl_request_raw(h, CTRL_CMD_GETFAMILY, NLM_F_ACK,
				     CTRL_ATTR_FAMILY_NAME, "nosuchfam", 10);
	assert_int_equal(err, -ENOENT);
	assert_string_equal(magnet_ctl_errmsg(h), strerror(ENOENT));
	magnet_ctl_close(h);
}

/*
 * Argument errors are -EINVAL before anything is sent, the same for every
 * function taking a name, and explained by magnet_ctl_errmsg().
 */
static void test_arg_errors(void **state)
{
	const char *longname = "0123456789012345678901234567890123";
	struct magnet_stream_opts o = { .sz = sizeof(o) };
	struct magnet_stream_info si;
	struct magnet_probe_info pi;
	struct magnet_filter_info fi;
	struct magnet_ctl *h;
	const char *names[] = { longname, NULL };
	unsigned int i;

	(void)state;
	if (magnet_ctl_open_family("nlctrl", &h))
		skip();
	for (i = 0; i < 2; i++) {
		const char *n = names[i];

		assert_int_equal(magnet_stream_create(h, n, 0, 0), -EINVAL);
		assert_int_equal(magnet_stream_create_opts(h, n, &o), -EINVAL);
		assert_int_equal(magnet_stream_delete(h, n), -EINVAL);
		assert_int_equal(magnet_stream_flush(h, n), -EINVAL);
		assert_int_equal(magnet_stream_get(h, n, &si), -EINVAL);
		assert_int_equal(magnet_probe_get(h, n, &pi), -EINVAL);
		assert_int_equal(magnet_probe_enable(h, n, "s"), -EINVAL);
		assert_int_equal(magnet_probe_enable(h, "p", n), -EINVAL);
		assert_int_equal(magnet_probe_enable_id(h, 16, n), -EINVAL);
		assert_int_equal(magnet_probe_disable(h, n), -EINVAL);
		assert_int_equal(magnet_kprobe_del(h, n), -EINVAL);
		assert_int_equal(magnet_filter_del(h, n), -EINVAL);
		assert_int_equal(magnet_filter_get(h, n, &fi), -EINVAL);
		assert_false(magnet_ctl_has_extack(h));
		assert_string_equal(magnet_ctl_errmsg(h), strerror(EINVAL));
	}
	/* walks need a callback */
	assert_int_equal(magnet_probe_list(h, NULL, NULL), -EINVAL);
	assert_int_equal(magnet_stream_list(h, NULL, NULL), -EINVAL);
	assert_int_equal(magnet_filter_list(h, NULL, NULL), -EINVAL);
	assert_int_equal(magnet_ctl_open(NULL), -EINVAL);
	/* options: NULL, or a size that does not even hold the first field */
	assert_int_equal(magnet_stream_create_opts(h, "s", NULL), -EINVAL);
	o.sz = 0;
	assert_int_equal(magnet_stream_create_opts(h, "s", &o), -EINVAL);
	assert_string_equal(magnet_ctl_errmsg(h), strerror(EINVAL));
	assert_int_equal(magnet_stream_create_opts(NULL, "s", &o), -EINVAL);
	/* a caller built against an older, smaller struct: no app_write */
	o.sz = offsetof(struct magnet_stream_opts, app_write);
	o.app_write = true;
	assert_true(magnet_stream_create_opts(h, "s", &o) < 0);	/* nlctrl refuses */
	assert_int_not_equal(magnet_stream_create_opts(h, "s", &o), -EINVAL);
	magnet_ctl_close(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_extack_uncapped),
		cmocka_unit_test(test_extack_capped),
		cmocka_unit_test(test_extack_absent),
		cmocka_unit_test(test_extack_truncated),
		cmocka_unit_test(test_done_error),
		cmocka_unit_test(test_family_missing),
		cmocka_unit_test(test_kernel_refusal),
		cmocka_unit_test(test_kernel_extack),
		cmocka_unit_test(test_arg_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
