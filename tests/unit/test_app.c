// SPDX-License-Identifier: GPL-2.0-only
/*
 * Application events (MAGNET_EVENT_APP) in libmagnet: decoding in both
 * byte orders, corrupt payloads, the ordering time, and the sorted-trace
 * reader with its error paths.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tracegen.h"

static void decode_one(bool swap)
{
	struct magnet_decoder *d = magnet_decoder_new();
	struct magnet_rec rec;
	struct tbuf tb;
	size_t off = 0;

	assert_non_null(d);
	tb_init(&tb, swap);
	tb_sysinfo(&tb, 1000);
	tb_app(&tb, 5000, MAGNET_APP_RECVMSG, 3000, 4000, -11);
	assert_int_equal(magnet_rec_next(d, tb.data, tb.len, &off, &rec), 1);
	assert_int_equal(magnet_rec_next(d, tb.data, tb.len, &off, &rec), 1);
	assert_int_equal(magnet_decoder_swapped(d), swap);
	assert_int_equal(rec.kind, MAGNET_REC_APP);
	assert_string_equal(rec.name, "APP");
	assert_int_equal(rec.hdr.event, MAGNET_EVENT_APP);
	assert_int_equal(rec.hdr.abstract_id, TB_ABSTRACT);
	assert_int_equal(rec.hdr.timestamp, 5000);
	assert_int_equal(rec.u.app.entry_ns, 3000);
	assert_int_equal(rec.u.app.exit_ns, 4000);
	assert_int_equal(rec.u.app.ret, -11);
	assert_int_equal(rec.u.app.req, 10240);
	assert_int_equal(rec.u.app.fd, 3);
	assert_int_equal(rec.u.app.call, MAGNET_APP_RECVMSG);
	assert_int_equal(rec.u.app.flags, MAGNET_APP_F_RX);
	assert_string_equal(magnet_app_call_name(rec.u.app.call), "recvmsg");
	/* ordered at the call's entry, not when the batch was written */
	assert_int_equal(magnet_rec_time(&rec), 3000);
	assert_int_equal(magnet_rec_next(d, tb.data, tb.len, &off, &rec), 0);
	magnet_decoder_free(d);
	tb_free(&tb);
}

static void test_decode_native(void **state)
{
	(void)state;
	decode_one(false);
}

static void test_decode_swapped(void **state)
{
	(void)state;
	decode_one(true);
}

static void test_call_names(void **state)
{
	(void)state;
	assert_string_equal(magnet_app_call_name(MAGNET_APP_SEND), "send");
	assert_string_equal(magnet_app_call_name(MAGNET_APP_READV), "readv");
	assert_string_equal(magnet_app_call_name(__MAGNET_APP_CALL_MAX), "?");
	assert_string_equal(magnet_app_call_name(~0u), "?");
}

/* A damaged APP record stops decoding with a reason, *off at it. */
static void expect_corrupt(struct tbuf *tb, size_t bad, const char *why)
{
	struct magnet_decoder *d = magnet_decoder_new();
	struct magnet_rec rec;
	size_t off = 0;

	assert_int_equal(magnet_rec_next(d, tb->data, tb->len, &off, &rec), 1);
	assert_int_equal(magnet_rec_next(d, tb->data, tb->len, &off, &rec),
			 -EBADMSG);
	assert_int_equal(off, bad);
	assert_non_null(strstr(magnet_decoder_errmsg(d), why));
	magnet_decoder_free(d);
}

static void test_decode_corrupt(void **state)
{
	unsigned char small[16] = { 0 };
	struct tbuf tb;
	size_t at;

	(void)state;
	tb_init(&tb, false);
	tb_sysinfo(&tb, 1000);
	at = tb_rec(&tb, MAGNET_EVENT_APP, 0, 1, small, sizeof(small));
	expect_corrupt(&tb, at, "APP payload 16 bytes < 48");

	tb.len = 0;
	tb_sysinfo(&tb, 1000);
	at = tb_app(&tb, 1, 42, 1, 2, 0);
	expect_corrupt(&tb, at, "unknown call 42");

	tb.len = 0;
	tb_sysinfo(&tb, 1000);
	at = tb_app(&tb, 1, MAGNET_APP_SEND, 9, 2, 0);
	expect_corrupt(&tb, at, "exits (2) before it enters (9)");
	tb_free(&tb);
}

/* ---- sorted traces ------------------------------------------------------ */

static char *write_tmp(struct tbuf *tb, char *path, size_t len)
{
	snprintf(path, 64, "%s", tb_write_tmp(tb, len));
	return path;
}

static void test_sorted_order(void **state)
{
	char p1[64], p2[64];
	const char *paths[2] = { p1, p2 };
	const struct magnet_rec *r;
	struct magnet_sorted *st;
	struct tbuf a, b;
	const char *want[] = { "SYSINFO", "EVENTDEF", "SYSINFO", "APP",
			       "tcp_send", "event17", "APP" };
	__u64 times[] = { 0, 0, 0, 1400000000ull, 1500000000ull,
			  1500000000ull, 1500000000ull };
	unsigned int i = 0;
	int ret;

	(void)state;
	/* kernel trace: tcp_send at 1.5 s, an unnamed event at 1.5 s */
	tb_init(&a, false);
	tb_sysinfo(&a, 10);
	tb_eventdef(&a, 16, "tcp_send", MAGNET_LAYER_TRANSPORT,
		    MAGNET_PAYLOAD_NET);
	tb_net(&a, 16, 10240, 2, 6, MAGNET_NET_F_TX);
	tb_rec(&a, 17, 0, 1500000000ull, NULL, 0);
	/* application trace, other byte order, written at 2 s */
	tb_init(&b, true);
	tb_sysinfo(&b, 20);
	tb_app(&b, 2000000000ull, MAGNET_APP_WRITE, 1400000000ull,
	       1600000000ull, 10240);
	tb_app(&b, 2000000000ull, MAGNET_APP_SEND, 1500000000ull,
	       1700000000ull, 5);
	write_tmp(&a, p1, a.len);
	write_tmp(&b, p2, b.len);
	assert_int_equal(magnet_sorted_open(paths, 2, &st), 0);
	while ((ret = magnet_sorted_next(st, &r)) > 0) {
		assert_true(i < 7);
		assert_string_equal(r->name, want[i]);
		if (i >= 3)
			assert_int_equal(magnet_rec_time(r), times[i]);
		i++;
	}
	/* equal times: file order (kernel file first), then record order */
	assert_int_equal(ret, 0);
	assert_int_equal(i, 7);
	assert_int_equal(magnet_sorted_next(st, &r), 0);
	magnet_sorted_close(st);
	unlink(p1);
	unlink(p2);
	tb_free(&a);
	tb_free(&b);
}

/* An ID redefined within a file: each record keeps the name it had there. */
static void test_sorted_redefined(void **state)
{
	const struct magnet_rec *r;
	struct magnet_sorted *st;
	const char *paths[1];
	char p1[64];
	struct tbuf tb;

	(void)state;
	tb_init(&tb, false);
	tb_sysinfo(&tb, 1);
	tb_eventdef(&tb, 16, "first", MAGNET_LAYER_OTHER, MAGNET_PAYLOAD_RAW);
	tb_rec(&tb, 16, 0, 3000, NULL, 0);
	tb_eventdef(&tb, 16, "second", MAGNET_LAYER_OTHER, MAGNET_PAYLOAD_RAW);
	tb_rec(&tb, 16, 0, 2000, NULL, 0);
	paths[0] = write_tmp(&tb, p1, tb.len);
	assert_int_equal(magnet_sorted_open(paths, 1, &st), 0);
	assert_int_equal(magnet_sorted_next(st, &r), 1);	/* SYSINFO */
	assert_int_equal(magnet_sorted_next(st, &r), 1);	/* EVENTDEF */
	assert_int_equal(magnet_sorted_next(st, &r), 1);	/* EVENTDEF */
	assert_int_equal(magnet_sorted_next(st, &r), 1);
	assert_string_equal(r->name, "second");
	assert_int_equal(r->hdr.timestamp, 2000);
	assert_int_equal(magnet_sorted_next(st, &r), 1);
	assert_string_equal(r->name, "first");
	assert_int_equal(r->hdr.timestamp, 3000);
	assert_int_equal(magnet_sorted_next(st, &r), 0);
	magnet_sorted_close(st);
	unlink(p1);
	tb_free(&tb);
}

static void test_sorted_errors(void **state)
{
	const char *nopath[] = { "/nonexistent/trace" };
	const char *nullpath[] = { NULL };
	const struct magnet_rec *r;
	struct magnet_sorted *st;
	char p1[64], p2[64];
	const char *paths[2] = { p1, p2 };
	struct tbuf tb;
	int n = 0, ret;

	(void)state;
	assert_int_equal(magnet_sorted_open(NULL, 1, &st), -EINVAL);
	assert_int_equal(magnet_sorted_open(nopath, 0, &st), -EINVAL);
	assert_int_equal(magnet_sorted_open(nopath, 1, NULL), -EINVAL);
	assert_int_equal(magnet_sorted_open(nullpath, 1, &st), -EINVAL);
	assert_int_equal(magnet_sorted_open(nopath, 1, &st), -ENOENT);
	/* the same conventions in the file iterator */
	{
		struct magnet_trace *t;

		assert_int_equal(magnet_trace_open(NULL, &t), -EINVAL);
		assert_int_equal(magnet_trace_open(nopath[0], NULL), -EINVAL);
		assert_int_equal(magnet_trace_open(nopath[0], &t), -ENOENT);
		assert_int_equal(magnet_stream_open(nopath[0], false), -ENOENT);
		assert_int_equal(magnet_stream_fd_flush(-1), -EBADF);
		assert_int_equal(magnet_stream_set_watermark(-1, 1), -EBADF);
		assert_int_equal(magnet_stream_read(-1, NULL, 0), -EBADF);
	}
	magnet_sorted_close(NULL);

	/* a truncated file keeps its good records, the error comes last */
	tb_init(&tb, false);
	tb_sysinfo(&tb, 1);
	tb_app(&tb, 10, MAGNET_APP_WRITE, 5, 6, 1);
	tb_app(&tb, 10, MAGNET_APP_WRITE, 7, 8, 1);
	write_tmp(&tb, p1, tb.len - 8);
	write_tmp(&tb, p2, 0);		/* empty */
	assert_int_equal(magnet_sorted_open(paths, 2, &st), 0);
	while ((ret = magnet_sorted_next(st, &r)) > 0)
		n++;
	assert_int_equal(n, 2);		/* SYSINFO and the first APP */
	assert_int_equal(ret, -EBADMSG);
	assert_non_null(strstr(magnet_sorted_errmsg(st), p1));
	assert_non_null(strstr(magnet_sorted_errmsg(st), "truncated record"));
	assert_int_equal(magnet_sorted_next(st, &r), 0);
	magnet_sorted_close(st);

	assert_int_equal(magnet_sorted_open(paths + 1, 1, &st), 0);
	assert_int_equal(magnet_sorted_next(st, &r), -ENODATA);
	assert_non_null(strstr(magnet_sorted_errmsg(st), "empty file"));
	magnet_sorted_close(st);
	unlink(p1);
	unlink(p2);
	tb_free(&tb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_native),
		cmocka_unit_test(test_decode_swapped),
		cmocka_unit_test(test_call_names),
		cmocka_unit_test(test_decode_corrupt),
		cmocka_unit_test(test_sorted_order),
		cmocka_unit_test(test_sorted_redefined),
		cmocka_unit_test(test_sorted_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
