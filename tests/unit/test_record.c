// SPDX-License-Identifier: GPL-2.0-only
/* Record decoding: framing, byte order, EVENTDEF names, trace files. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tracegen.h"

#define EV_TCP	16
#define EV_RAW	17

struct fixture {
	struct tbuf tb;
	struct magnet_decoder *d;
	size_t off;
	struct magnet_rec rec;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	f->d = magnet_decoder_new();
	assert_non_null(f->d);
	tb_init(&f->tb, false);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	magnet_decoder_free(f->d);
	tb_free(&f->tb);
	free(f);
	return 0;
}

static int next(struct fixture *f)
{
	return magnet_rec_next(f->d, f->tb.data, f->tb.len, &f->off, &f->rec);
}

/* SYSINFO, EVENTDEF tcp_send (net), a net event, LOST 5, a raw event. */
static void build_basic(struct tbuf *tb)
{
	static const char raw[10] = "abcdefghi";

	tb_sysinfo(tb, 1000);
	tb_eventdef(tb, EV_TCP, "tcp_send", MAGNET_LAYER_TRANSPORT,
		    MAGNET_PAYLOAD_NET);
	tb_net(tb, EV_TCP, 1448, 2, 6, MAGNET_NET_F_TX);
	tb_lost(tb, 5);
	tb_rec(tb, EV_RAW, 0, 2000000001ull, raw, sizeof(raw));
}

static void check_basic(struct fixture *f)
{
	struct magnet_rec *r = &f->rec;

	assert_int_equal(next(f), 1);
	assert_int_equal(r->kind, MAGNET_REC_SYSINFO);
	assert_string_equal(r->name, "SYSINFO");
	assert_int_equal(r->hdr.size, 32 + sizeof(struct magnet_sysinfo));
	assert_int_equal(r->hdr.cpu, TB_CPU);
	assert_int_equal(r->hdr.pid, TB_PID);
	assert_int_equal(r->hdr.tgid, TB_TGID);
	assert_int_equal(r->hdr.abstract_id, TB_ABSTRACT);
	assert_int_equal(r->hdr.timestamp, 1000);
	assert_int_equal(r->u.sysinfo.endian, MAGNET_ENDIAN_MAGIC);
	assert_int_equal(r->u.sysinfo.clock_hz, 1000000000ull);
	assert_int_equal(r->u.sysinfo.nr_cpus, 8);
	assert_int_equal(r->u.sysinfo.subbuf_size, 262144);
	assert_string_equal(r->u.sysinfo.release, "6.1.0-test");

	assert_int_equal(next(f), 1);
	assert_int_equal(r->kind, MAGNET_REC_EVENTDEF);
	assert_string_equal(r->name, "EVENTDEF");
	assert_int_equal(r->u.eventdef.id, EV_TCP);
	assert_int_equal(r->u.eventdef.layer, MAGNET_LAYER_TRANSPORT);
	assert_int_equal(r->u.eventdef.payload, MAGNET_PAYLOAD_NET);
	assert_string_equal(r->u.eventdef.name, "tcp_send");

	assert_int_equal(next(f), 1);
	assert_int_equal(r->kind, MAGNET_REC_NET);
	assert_string_equal(r->name, "tcp_send");
	assert_int_equal(r->hdr.event, EV_TCP);
	assert_int_equal(r->layer, MAGNET_LAYER_TRANSPORT);
	assert_int_equal(r->u.net.len, 1448);
	assert_int_equal(r->u.net.ifindex, 2);
	assert_int_equal(r->u.net.proto, 6);
	assert_int_equal(r->u.net.flags, MAGNET_NET_F_TX);

	assert_int_equal(next(f), 1);
	assert_int_equal(r->kind, MAGNET_REC_LOST);
	assert_string_equal(r->name, "LOST");
	assert_int_equal(r->u.lost.count, 5);

	assert_int_equal(next(f), 1);
	assert_int_equal(r->kind, MAGNET_REC_PLAIN);
	assert_string_equal(r->name, "event17");
	assert_int_equal(r->hdr.size, 48);
	assert_int_equal(r->payload_len, 16);
	assert_int_equal(r->hdr.timestamp, 2000000001ull);
	assert_memory_equal(r->payload, "abcdefghi", 10);

	assert_int_equal(next(f), 0);
	assert_int_equal(f->off, f->tb.len);
	assert_int_equal(next(f), 0);
}

static void test_valid_stream(void **state)
{
	struct fixture *f = *state;

	build_basic(&f->tb);
	check_basic(f);
	assert_false(magnet_decoder_swapped(f->d));
}

static void test_swapped_stream(void **state)
{
	struct fixture *f = *state;

	tb_init(&f->tb, true);
	build_basic(&f->tb);
	/* The raw bytes really are the other order. */
	assert_int_equal(f->tb.data[0], 0);
	check_basic(f);
	assert_true(magnet_decoder_swapped(f->d));
}

static void expect_error(struct fixture *f, size_t at, const char *reason)
{
	char want[200];

	assert_int_equal(next(f), -EBADMSG);
	assert_int_equal(f->off, at);
	snprintf(want, sizeof(want), "offset %zu: %s", at, reason);
	assert_string_equal(magnet_decoder_errmsg(f->d), want);
	/* The decoder does not move past a bad record. */
	assert_int_equal(next(f), -EBADMSG);
	assert_int_equal(f->off, at);
}

static void test_truncated(void **state)
{
	struct fixture *f = *state;
	size_t last;

	build_basic(&f->tb);
	last = f->tb.len - 48;
	f->tb.len -= 8;
	for (int i = 0; i < 4; i++)
		assert_int_equal(next(f), 1);
	expect_error(f, last, "truncated record: needs 48 bytes, 40 left");
}

static void test_truncated_header(void **state)
{
	struct fixture *f = *state;
	size_t end;

	tb_sysinfo(&f->tb, 1);
	end = f->tb.len;
	tb_lost(&f->tb, 1);
	f->tb.len = end + 16;
	assert_int_equal(next(f), 1);
	expect_error(f, end, "truncated record: needs 32 bytes, 16 left");
}

static void test_size_too_small(void **state)
{
	struct fixture *f = *state;
	size_t at;

	tb_sysinfo(&f->tb, 1);
	at = tb_rec(&f->tb, EV_RAW, 24, 0, NULL, 0);
	assert_int_equal(next(f), 1);
	expect_error(f, at, "record size 24 < 32");
}

static void test_size_zero(void **state)
{
	struct fixture *f = *state;
	size_t at;

	tb_sysinfo(&f->tb, 1);
	at = tb_rec(&f->tb, EV_RAW, 0, 0, NULL, 0);
	memset(f->tb.data + at, 0, 2);	/* size 0: would loop forever */
	assert_int_equal(next(f), 1);
	expect_error(f, at, "record size 0 < 32");
}

static void test_size_unaligned(void **state)
{
	struct fixture *f = *state;
	size_t at;

	tb_sysinfo(&f->tb, 1);
	at = tb_rec(&f->tb, EV_RAW, 44, 0, "0123456789abcde", 16);
	assert_int_equal(next(f), 1);
	expect_error(f, at, "record size 44 not a multiple of 8");
}

static void test_size_too_big(void **state)
{
	struct fixture *f = *state;
	static char big[4200];
	size_t at;

	tb_sysinfo(&f->tb, 1);
	at = tb_rec(&f->tb, EV_RAW, 4104, 0, big, sizeof(big));
	assert_int_equal(next(f), 1);
	expect_error(f, at, "record size 4104 > 4096");
}

static void test_max_size_ok(void **state)
{
	struct fixture *f = *state;
	static char big[MAGNET_PAYLOAD_MAX];

	tb_sysinfo(&f->tb, 1);
	tb_rec(&f->tb, EV_RAW, 0, 0, big, sizeof(big));
	assert_int_equal(next(f), 1);
	assert_int_equal(next(f), 1);
	assert_int_equal(f->rec.hdr.size, MAGNET_REC_MAX);
	assert_int_equal(next(f), 0);
}

static void test_event_out_of_range(void **state)
{
	struct fixture *f = *state;
	size_t at;

	tb_sysinfo(&f->tb, 1);
	at = tb_rec(&f->tb, 1024, 0, 0, NULL, 0);
	assert_int_equal(next(f), 1);
	expect_error(f, at, "event ID 1024 > 1023");
}

static void test_first_not_sysinfo(void **state)
{
	struct fixture *f = *state;

	tb_lost(&f->tb, 1);
	tb_sysinfo(&f->tb, 1);
	expect_error(f, 0, "first record is not SYSINFO (event 1): not a MAGNET trace");
}

static void test_bad_magic(void **state)
{
	struct fixture *f = *state;

	tb_sysinfo(&f->tb, 1);
	memcpy(f->tb.data + 32, "\xde\xad\xbe\xef", 4);
	expect_error(f, 0, "not a MAGNET trace: bad endian magic 0xefbeadde in SYSINFO");
}

static void test_short_eventdef(void **state)
{
	struct fixture *f = *state;
	size_t at;

	tb_sysinfo(&f->tb, 1);
	at = tb_rec(&f->tb, MAGNET_EVENT_EVENTDEF, 0, 0, "abcdefgh", 8);
	assert_int_equal(next(f), 1);
	expect_error(f, at, "EVENTDEF payload 8 bytes < 40");
}

static void test_eventdef_replacement(void **state)
{
	struct fixture *f = *state;
	char buf[MAGNET_NAME_MAX];

	tb_sysinfo(&f->tb, 1);
	tb_eventdef(&f->tb, 20, "udp_send", MAGNET_LAYER_TRANSPORT,
		    MAGNET_PAYLOAD_NET);
	tb_eventdef(&f->tb, 21, "sched_switch", MAGNET_LAYER_SCHED,
		    MAGNET_PAYLOAD_RAW);
	tb_rec(&f->tb, 20, 0, 5, NULL, 0);
	/* The stream was reopened: a new group, ID 20 now names another probe. */
	tb_sysinfo(&f->tb, 10);
	tb_eventdef(&f->tb, 20, "ip_rcv", MAGNET_LAYER_NETWORK,
		    MAGNET_PAYLOAD_RAW);
	tb_rec(&f->tb, 20, 0, 11, NULL, 0);
	tb_rec(&f->tb, 21, 0, 12, NULL, 0);

	for (int i = 0; i < 3; i++)
		assert_int_equal(next(f), 1);
	assert_int_equal(next(f), 1);
	assert_string_equal(f->rec.name, "udp_send");
	/* No net payload bytes: decoded as plain, not misread. */
	assert_int_equal(f->rec.kind, MAGNET_REC_PLAIN);
	assert_int_equal(next(f), 1);
	assert_int_equal(f->rec.kind, MAGNET_REC_SYSINFO);
	assert_int_equal(next(f), 1);
	assert_int_equal(next(f), 1);
	assert_string_equal(f->rec.name, "ip_rcv");
	assert_int_equal(f->rec.layer, MAGNET_LAYER_NETWORK);
	assert_int_equal(f->rec.payload_type, MAGNET_PAYLOAD_RAW);
	assert_int_equal(next(f), 1);
	assert_string_equal(f->rec.name, "sched_switch");
	assert_int_equal(next(f), 0);
	assert_string_equal(magnet_decoder_event_name(f->d, 20, buf, sizeof(buf)),
			    "ip_rcv");
}

static void test_unknown_ids(void **state)
{
	struct fixture *f = *state;
	char buf[MAGNET_NAME_MAX];

	tb_sysinfo(&f->tb, 1);
	tb_rec(&f->tb, 999, 0, 0, NULL, 0);
	tb_rec(&f->tb, 15, 0, 0, NULL, 0);
	tb_rec(&f->tb, MAGNET_EVENT_MAX, 0, 0, NULL, 0);
	assert_int_equal(next(f), 1);
	assert_int_equal(next(f), 1);
	assert_string_equal(f->rec.name, "event999");
	assert_int_equal(next(f), 1);
	assert_string_equal(f->rec.name, "event15");
	assert_int_equal(next(f), 1);
	assert_string_equal(f->rec.name, "event1023");
	assert_string_equal(magnet_decoder_event_name(f->d, 2, buf, sizeof(buf)),
			    "EVENTDEF");
	assert_string_equal(magnet_decoder_event_name(f->d, 77, buf, sizeof(buf)),
			    "event77");
}

static void test_empty_buffer(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(magnet_rec_next(f->d, "", 0, &f->off, &f->rec), 0);
}

static void test_trace_file(void **state)
{
	struct fixture *f = *state;
	struct magnet_trace *t;
	struct magnet_rec r;
	const char *path;
	int n = 0, ret;

	build_basic(&f->tb);
	path = tb_write_tmp(&f->tb, f->tb.len);
	assert_int_equal(magnet_trace_open(path, &t), 0);
	while ((ret = magnet_trace_next(t, &r)) > 0)
		n++;
	assert_int_equal(ret, 0);
	assert_int_equal(n, 5);
	assert_int_equal(magnet_trace_offset(t), f->tb.len);
	magnet_trace_close(t);
	unlink(path);
}

/* More than the 1 MiB read buffer: records straddle refills. */
static void test_trace_large(void **state)
{
	struct fixture *f = *state;
	struct magnet_trace *t;
	struct magnet_rec r;
	static char pay[200];
	const char *path;
	unsigned long long lost = 0;
	int n = 0, ret, i;

	tb_sysinfo(&f->tb, 1);
	for (i = 0; i < 30000; i++) {
		if (i % 1000 == 0)
			tb_lost(&f->tb, 2);
		else
			tb_rec(&f->tb, EV_RAW, 0, i, pay, i % 7 * 24);
	}
	assert_true(f->tb.len > 2 << 20);
	f->tb.len -= 8;	/* truncate the very last record */
	path = tb_write_tmp(&f->tb, f->tb.len);
	assert_int_equal(magnet_trace_open(path, &t), 0);
	while ((ret = magnet_trace_next(t, &r)) > 0) {
		n++;
		if (r.kind == MAGNET_REC_LOST)
			lost += r.u.lost.count;
	}
	assert_int_equal(ret, -EBADMSG);
	assert_int_equal(n, 30000);
	assert_int_equal(lost, 60);
	assert_non_null(strstr(magnet_trace_errmsg(t), "truncated record"));
	/* Offsets are file offsets, not buffer offsets. */
	{
		char want[64];

		snprintf(want, sizeof(want), "offset %llu: ",
			 magnet_trace_offset(t));
		assert_int_equal(strncmp(magnet_trace_errmsg(t), want,
					 strlen(want)), 0);
		assert_true(magnet_trace_offset(t) > 1 << 20);
	}
	magnet_trace_close(t);
	unlink(path);
}

static void test_trace_empty(void **state)
{
	struct fixture *f = *state;
	struct magnet_trace *t;
	struct magnet_rec r;
	const char *path = tb_write_tmp(&f->tb, 0);

	assert_int_equal(magnet_trace_open(path, &t), 0);
	assert_int_equal(magnet_trace_next(t, &r), -ENODATA);
	assert_non_null(strstr(magnet_trace_errmsg(t), "empty"));
	magnet_trace_close(t);
	unlink(path);
	assert_int_equal(magnet_trace_open("/nonexistent/trace", &t), -ENOENT);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_valid_stream),
		T(test_swapped_stream),
		T(test_truncated),
		T(test_truncated_header),
		T(test_size_too_small),
		T(test_size_zero),
		T(test_size_unaligned),
		T(test_size_too_big),
		T(test_max_size_ok),
		T(test_event_out_of_range),
		T(test_first_not_sysinfo),
		T(test_bad_magic),
		T(test_short_eventdef),
		T(test_eventdef_replacement),
		T(test_unknown_ids),
		T(test_empty_buffer),
		T(test_trace_file),
		T(test_trace_large),
		T(test_trace_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
