// SPDX-License-Identifier: GPL-2.0-only
/*
 * Decoding of the probe library's payloads (libmagnet/fields.c): each
 * MAGNET_PAYLOAD_* type by field name, in both byte orders, strings,
 * sign extension, short payloads left raw, and the field tables
 * themselves (inside their struct, unique names); the tables of the
 * decoded kinds (net, app, synth, corr and its steps) likewise.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <byteswap.h>
#include <cmocka.h>

#include "tracegen.h"

#define EV_SWITCH	40
#define EV_FAULT	41
#define EV_KPROBE	42
#define EV_TCP		43

/* Value of field @name of a decoded record; fails the test if absent. */
static __u64 field(const struct magnet_rec *r, const char *name)
{
	const struct magnet_field *f;
	unsigned int i, n;

	f = magnet_payload_fields(r->payload_type, &n);
	assert_non_null(f);
	for (i = 0; i < n; i++)
		if (!strcmp(f[i].name, name))
			return r->u.fields[i];
	fail_msg("no field %s", name);
	return 0;
}

static const char *sfield(const struct magnet_rec *r, const char *name,
			  char *buf, size_t len)
{
	const struct magnet_field *f;
	unsigned int i, n;

	f = magnet_payload_fields(r->payload_type, &n);
	for (i = 0; i < n; i++)
		if (!strcmp(f[i].name, name))
			return magnet_rec_field_str(r, &f[i], buf, len);
	fail_msg("no field %s", name);
	return NULL;
}

static __u32 s32(bool swap, __u32 v) { return swap ? bswap_32(v) : v; }
static __u16 s16(bool swap, __u16 v) { return swap ? bswap_16(v) : v; }
static __u64 s64(bool swap, __u64 v) { return swap ? bswap_64(v) : v; }

static void build(struct tbuf *tb, bool swap)
{
	struct magnet_sched_switch_payload sw = {
		.prev_pid = s32(swap, 100), .prev_tgid = s32(swap, 99),
		.next_pid = s32(swap, 200), .next_tgid = s32(swap, 200),
		.prev_state = s32(swap, 2),
		.prev_prio = s32(swap, (__u32)-5), .next_prio = s32(swap, 120),
		.cpu = s32(swap, 1),
		.prev_comm = "worker", .next_comm = "a-full-15-chars",
	};
	struct magnet_fault_payload fa = {
		.address = s64(swap, 0x7f0012345000ull),
		.ip = s64(swap, 0x401000),
		.error_code = s32(swap, 6),
		.flags = s32(swap, MAGNET_FAULT_F_WRITE | MAGNET_FAULT_F_USER |
				   MAGNET_FAULT_F_ADDR),
	};
	struct magnet_kprobe_payload kp = {
		.valid = s16(swap, 0x7 | MAGNET_KPROBE_V_RET),
		.arg = { s64(swap, 1), s64(swap, 0xdeadbeef), s64(swap, 3) },
		.ret = s64(swap, (__u64)-14),
	};

	tb_init(tb, swap);
	tb_sysinfo(tb, 1);
	tb_eventdef(tb, EV_SWITCH, "sched_switch", MAGNET_LAYER_SCHED,
		    MAGNET_PAYLOAD_SCHED_SWITCH);
	tb_eventdef(tb, EV_FAULT, "fault_user", MAGNET_LAYER_MEMORY,
		    MAGNET_PAYLOAD_FAULT);
	tb_eventdef(tb, EV_KPROBE, "kp", MAGNET_LAYER_OTHER,
		    MAGNET_PAYLOAD_KPROBE);
	tb_eventdef(tb, EV_TCP, "tcp_state", MAGNET_LAYER_TRANSPORT,
		    MAGNET_PAYLOAD_TCP);
	tb_rec(tb, EV_SWITCH, 0, 2, &sw, sizeof(sw));
	tb_rec(tb, EV_FAULT, 0, 3, &fa, sizeof(fa));
	tb_rec(tb, EV_KPROBE, 0, 4, &kp, sizeof(kp));
	/* shorter than struct magnet_tcp_payload: stays raw */
	tb_rec(tb, EV_TCP, 0, 5, &kp, 16);
}

static void check(bool swap)
{
	struct magnet_decoder *d = magnet_decoder_new();
	struct magnet_rec r;
	struct tbuf tb;
	size_t off = 0;
	char buf[64];
	int i;

	build(&tb, swap);
	for (i = 0; i < 5; i++)
		assert_int_equal(magnet_rec_next(d, tb.data, tb.len, &off, &r), 1);

	assert_int_equal(magnet_rec_next(d, tb.data, tb.len, &off, &r), 1);
	assert_int_equal(r.kind, MAGNET_REC_FIELDS);
	assert_int_equal(r.payload_type, MAGNET_PAYLOAD_SCHED_SWITCH);
	assert_int_equal(field(&r, "prev_pid"), 100);
	assert_int_equal(field(&r, "prev_tgid"), 99);
	assert_int_equal(field(&r, "next_pid"), 200);
	assert_int_equal(field(&r, "prev_state"), 2);
	assert_int_equal((__s64)field(&r, "prev_prio"), -5);
	assert_int_equal(field(&r, "next_prio"), 120);
	assert_int_equal(field(&r, "cpu"), 1);
	assert_string_equal(sfield(&r, "prev_comm", buf, sizeof(buf)), "worker");
	assert_string_equal(sfield(&r, "next_comm", buf, sizeof(buf)),
			    "a-full-15-chars");
	/* a small buffer truncates */
	assert_string_equal(sfield(&r, "prev_comm", buf, 4), "wor");

	assert_int_equal(magnet_rec_next(d, tb.data, tb.len, &off, &r), 1);
	assert_int_equal(r.kind, MAGNET_REC_FIELDS);
	assert_int_equal(field(&r, "address"), 0x7f0012345000ull);
	assert_int_equal(field(&r, "ip"), 0x401000);
	assert_int_equal(field(&r, "error_code"), 6);
	assert_int_equal(field(&r, "flags"), MAGNET_FAULT_F_WRITE |
			 MAGNET_FAULT_F_USER | MAGNET_FAULT_F_ADDR);

	assert_int_equal(magnet_rec_next(d, tb.data, tb.len, &off, &r), 1);
	assert_int_equal(r.kind, MAGNET_REC_FIELDS);
	assert_int_equal(field(&r, "valid"), 0x47);
	assert_int_equal(field(&r, "arg0"), 1);
	assert_int_equal(field(&r, "arg1"), 0xdeadbeef);
	assert_int_equal(field(&r, "arg2"), 3);
	assert_int_equal(field(&r, "arg5"), 0);
	assert_int_equal((__s64)field(&r, "ret"), -14);

	assert_int_equal(magnet_rec_next(d, tb.data, tb.len, &off, &r), 1);
	assert_int_equal(r.kind, MAGNET_REC_PLAIN);
	assert_int_equal(r.payload_type, MAGNET_PAYLOAD_TCP);

	assert_int_equal(magnet_rec_next(d, tb.data, tb.len, &off, &r), 0);
	tb_free(&tb);
	magnet_decoder_free(d);
}

static void test_native(void **state)
{
	(void)state;
	check(false);
}

static void test_swapped(void **state)
{
	(void)state;
	check(true);
}

static void test_tables(void **state)
{
	static const size_t sizes[] = {
		[MAGNET_PAYLOAD_SCHED_SWITCH] = sizeof(struct magnet_sched_switch_payload),
		[MAGNET_PAYLOAD_SCHED_PROC] = sizeof(struct magnet_sched_proc_payload),
		[MAGNET_PAYLOAD_SCHED_EXEC] = sizeof(struct magnet_sched_exec_payload),
		[MAGNET_PAYLOAD_FAULT] = sizeof(struct magnet_fault_payload),
		[MAGNET_PAYLOAD_PAGE] = sizeof(struct magnet_page_payload),
		[MAGNET_PAYLOAD_TCP] = sizeof(struct magnet_tcp_payload),
		[MAGNET_PAYLOAD_IP] = sizeof(struct magnet_ip_payload),
		[MAGNET_PAYLOAD_KPROBE] = sizeof(struct magnet_kprobe_payload),
		[MAGNET_PAYLOAD_SCHED_SWITCH_END] =
			sizeof(struct magnet_sched_switch_end_payload),
	};
	unsigned int t, i, j, n;

	(void)state;
	assert_null(magnet_payload_fields(MAGNET_PAYLOAD_NET, &n));
	assert_int_equal(n, 0);
	assert_null(magnet_payload_fields(MAGNET_PAYLOAD_RAW, NULL));
	assert_null(magnet_payload_fields(9999, &n));
	for (t = MAGNET_PAYLOAD_SCHED_SWITCH; t < __MAGNET_PAYLOAD_MAX; t++) {
		const struct magnet_field *f = magnet_payload_fields(t, &n);

		assert_non_null(f);
		assert_true(n > 0 && n <= MAGNET_REC_FIELDS_MAX);
		assert_string_not_equal(magnet_payload_name(t), "?");
		for (i = 0; i < n; i++) {
			assert_true(f[i].offset + f[i].size <= sizes[t]);
			if (f[i].kind != MAGNET_FIELD_STR)
				assert_true(f[i].size == 1 || f[i].size == 2 ||
					    f[i].size == 4 || f[i].size == 8);
			for (j = 0; j < i; j++)
				assert_string_not_equal(f[i].name, f[j].name);
		}
	}
}

/* Value of field @name of any record magnet_rec_fields() describes. */
static __u64 rfield(const struct magnet_rec *r, const char *name)
{
	const struct magnet_field *f;
	unsigned int i, n;

	f = magnet_rec_fields(r, &n);
	assert_non_null(f);
	for (i = 0; i < n; i++)
		if (!strcmp(f[i].name, name))
			return magnet_rec_field_value(r, i);
	fail_msg("no field %s in kind %d", name, r->kind);
	return 0;
}

/*
 * One table per record kind (the Perfetto converter and the babeltrace2
 * plugin read payloads only through it): values by name for net, app and
 * corr records in both byte orders, signed ones sign-extended, a step's
 * fields, and none for the kinds without a payload struct.
 */
static void kinds(bool swap)
{
	struct magnet_decoder *d = magnet_decoder_new();
	const struct magnet_field *sf;
	struct magnet_corr_step st;
	struct magnet_rec r;
	struct tbuf tb;
	size_t off = 0;
	unsigned int n, i;

	tb_init(&tb, swap);
	tb_sysinfo(&tb, 0);
	tb_eventdef(&tb, 16, "udp_send", MAGNET_LAYER_TRANSPORT, MAGNET_PAYLOAD_NET);
	tb_net(&tb, 16, 1472, 7, 0x86dd, MAGNET_NET_F_TX);
	tb_app(&tb, 900, MAGNET_APP_SENDTO, 500, 800, -11);
	tb_corr(&tb, 2000, 1000, 16, 17, 250, 1472);
	assert_int_equal(magnet_rec_next(d, tb.data, tb.len, &off, &r), 1);
	assert_int_equal(r.kind, MAGNET_REC_SYSINFO);
	assert_null(magnet_rec_fields(&r, &n));
	assert_int_equal(n, 0);
	assert_int_equal(magnet_rec_field_value(&r, 0), 0);
	assert_int_equal(magnet_rec_next(d, tb.data, tb.len, &off, &r), 1);

	assert_int_equal(magnet_rec_next(d, tb.data, tb.len, &off, &r), 1);
	assert_int_equal(r.kind, MAGNET_REC_NET);
	assert_int_equal(rfield(&r, "len"), 1472);
	assert_int_equal(rfield(&r, "ifindex"), 7);
	assert_int_equal(rfield(&r, "proto"), 0x86dd);
	assert_int_equal(rfield(&r, "flags"), MAGNET_NET_F_TX);
	magnet_rec_fields(&r, &n);
	assert_int_equal(magnet_rec_field_value(&r, n), 0);	/* out of range */

	assert_int_equal(magnet_rec_next(d, tb.data, tb.len, &off, &r), 1);
	assert_int_equal(r.kind, MAGNET_REC_APP);
	assert_int_equal((__s64)rfield(&r, "ret"), -11);
	assert_int_equal(rfield(&r, "fd"), 3);
	assert_int_equal(rfield(&r, "req"), 10240);
	assert_int_equal(rfield(&r, "entry_ns"), 500);
	assert_int_equal(rfield(&r, "exit_ns"), 800);

	assert_int_equal(magnet_rec_next(d, tb.data, tb.len, &off, &r), 1);
	assert_int_equal(r.kind, MAGNET_REC_CORR);
	assert_int_equal(rfield(&r, "corr_id"), 1);
	assert_int_equal(rfield(&r, "start"), 1000);
	assert_int_equal(rfield(&r, "reached"), 2);
	sf = magnet_rec_fields(&r, &n);
	assert_string_equal(sf[n - 1].name, "nsteps");	/* the steps' length, last */
	assert_int_equal(magnet_rec_field_value(&r, n - 1), 2);
	assert_int_equal(magnet_rec_corr_step(d, &r, 1, &st), 0);
	sf = magnet_corr_step_fields(&n);
	for (i = 0; i < n; i++) {
		__u64 v = magnet_field_get(&st, &sf[i]);

		if (!strcmp(sf[i].name, "event"))
			assert_int_equal(v, 17);
		else if (!strcmp(sf[i].name, "delta_ns"))
			assert_int_equal(v, 250);
		else if (!strcmp(sf[i].name, "bytes"))
			assert_int_equal(v, 1472);
		else
			assert_int_equal(v, 1);		/* count */
	}
	assert_int_equal(magnet_rec_next(d, tb.data, tb.len, &off, &r), 0);
	tb_free(&tb);
	magnet_decoder_free(d);
}

static void test_kinds(void **state)
{
	(void)state;
	kinds(false);
	kinds(true);
}

/* The kinds' tables: inside their struct, scalar sizes, unique names. */
static void test_kind_tables(void **state)
{
	static const struct { int kind; size_t size; } k[] = {
		{ MAGNET_REC_NET, sizeof(struct magnet_net_payload) },
		{ MAGNET_REC_APP, sizeof(struct magnet_app_payload) },
		{ MAGNET_REC_SYNTH, sizeof(struct magnet_synth_payload) },
		{ MAGNET_REC_CORR, sizeof(struct magnet_corr_rec) },
		{ -1, sizeof(struct magnet_corr_step) },	/* the steps */
	};
	struct magnet_rec r = { 0 };
	unsigned int t, i, j, n;

	(void)state;
	for (t = 0; t < sizeof(k) / sizeof(k[0]); t++) {
		const struct magnet_field *f;

		r.kind = (enum magnet_rec_kind)k[t].kind;
		f = k[t].kind < 0 ? magnet_corr_step_fields(&n) :
				    magnet_rec_fields(&r, &n);
		assert_non_null(f);
		assert_true(n > 0);
		for (i = 0; i < n; i++) {
			assert_true(f[i].offset + f[i].size <= k[t].size);
			if (f[i].kind != MAGNET_FIELD_STR)
				assert_true(f[i].size == 1 || f[i].size == 2 ||
					    f[i].size == 4 || f[i].size == 8);
			for (j = 0; j < i; j++)
				assert_string_not_equal(f[i].name, f[j].name);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_native),
		cmocka_unit_test(test_swapped),
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_kind_tables),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
