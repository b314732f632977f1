// SPDX-License-Identifier: GPL-2.0-only
/* magnetctl argument parsing and dispatch, without a kernel. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "magnetctl.h"

static void test_size_suffixes(void **state)
{
	uint32_t v;

	(void)state;
	assert_int_equal(mc_parse_size("4096", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(mc_parse_size("64K", &v), 0);
	assert_int_equal(v, 65536);
	assert_int_equal(mc_parse_size("64k", &v), 0);
	assert_int_equal(v, 65536);
	assert_int_equal(mc_parse_size("1M", &v), 0);
	assert_int_equal(v, 1048576);
	assert_int_equal(mc_parse_size("16M", &v), 0);
	assert_int_equal(v, 16u << 20);
	assert_int_equal(mc_parse_size("3G", &v), 0);
	assert_int_equal(v, 3u << 30);
	assert_int_equal(mc_parse_size("4294967295", &v), 0);
	assert_int_equal(v, UINT32_MAX);
}

static void test_size_rejects(void **state)
{
	static const char *const bad[] = {
		"abc", "0", "0K", "-5", "", "K", "12KB", "1.5M", " 5", "5 ",
		"+5", "0x10", "1m1",
	};
	uint32_t v = 7;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (mc_parse_size(bad[i], &v) != -EINVAL)
			fail_msg("'%s' was not rejected with -EINVAL", bad[i]);
	}
	assert_int_equal(v, 7);	/* untouched on failure */
	assert_int_equal(mc_parse_size(NULL, &v), -EINVAL);
}

static void test_size_overflow(void **state)
{
	uint32_t v;

	(void)state;
	assert_int_equal(mc_parse_size("4294967296", &v), -ERANGE);
	assert_int_equal(mc_parse_size("4194304K", &v), -ERANGE);
	assert_int_equal(mc_parse_size("4096M", &v), -ERANGE);
	assert_int_equal(mc_parse_size("4G", &v), -ERANGE);
	assert_int_equal(mc_parse_size("99999999999999999999999", &v), -ERANGE);
	assert_int_equal(mc_parse_size("18446744073709551615K", &v), -ERANGE);
}

static void test_u32(void **state)
{
	uint32_t v;

	(void)state;
	assert_int_equal(mc_parse_u32("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(mc_parse_u32("1023", &v), 0);
	assert_int_equal(v, 1023);
	assert_int_equal(mc_parse_u32("4294967296", &v), -ERANGE);
	assert_int_equal(mc_parse_u32("-1", &v), -EINVAL);
	assert_int_equal(mc_parse_u32("12a", &v), -EINVAL);
	assert_int_equal(mc_parse_u32("", &v), -EINVAL);
}

static void test_seconds(void **state)
{
	double d;

	(void)state;
	assert_int_equal(mc_parse_seconds("10", &d), 0);
	assert_true(d == 10.0);
	assert_int_equal(mc_parse_seconds("0.5", &d), 0);
	assert_true(d == 0.5);
	assert_int_equal(mc_parse_seconds("0", &d), -EINVAL);
	assert_int_equal(mc_parse_seconds("-1", &d), -EINVAL);
	assert_int_equal(mc_parse_seconds("inf", &d), -EINVAL);
	assert_int_equal(mc_parse_seconds("nan", &d), -EINVAL);
	assert_int_equal(mc_parse_seconds("5s", &d), -EINVAL);
}

static void test_stream_create_args(void **state)
{
	char *ok[] = { "s0", "subbuf-count", "4", "subbuf-size", "64K" };
	char *only[] = { "s1" };
	char *bad_kw[] = { "s0", "subbuf-sz", "4" };
	char *no_val[] = { "s0", "subbuf-size" };
	char *zero_cnt[] = { "s0", "subbuf-count", "0" };
	char *bad_size[] = { "s0", "subbuf-size", "-5" };
	char *long_name[] = { "a_name_that_is_far_too_long_for_magnet" };
	char *modes[] = { "s2", "global", "size", "8K", "overwrite", "count", "3" };
	char *ow[] = { "s3", "overwrite" };
	char *twice[] = { "s4", "global", "global" };
	char *ow_val[] = { "s5", "overwrite", "subbuf-size" };
	uint32_t size, count, mode;

	(void)state;
	assert_int_equal(mc_parse_stream_create(5, ok, &size, &count, &mode), 0);
	assert_int_equal(size, 65536);
	assert_int_equal(count, 4);
	assert_int_equal(mc_parse_stream_create(1, only, &size, &count, &mode), 0);
	assert_int_equal(size, 0);	/* 0: kernel default */
	assert_int_equal(count, 0);
	assert_int_equal(mc_parse_stream_create(0, NULL, &size, &count, &mode),
			 MC_EXIT_USAGE);
	assert_int_equal(mc_parse_stream_create(3, bad_kw, &size, &count, &mode),
			 MC_EXIT_USAGE);
	assert_int_equal(mc_parse_stream_create(2, no_val, &size, &count, &mode),
			 MC_EXIT_USAGE);
	assert_int_equal(mc_parse_stream_create(3, zero_cnt, &size, &count, &mode),
			 MC_EXIT_USAGE);
	assert_int_equal(mc_parse_stream_create(3, bad_size, &size, &count, &mode),
			 MC_EXIT_USAGE);
	assert_int_equal(mc_parse_stream_create(1, long_name, &size, &count, &mode),
			 MC_EXIT_USAGE);
	/* buffer modes: keywords without a value, anywhere after NAME */
	assert_int_equal(mc_parse_stream_create(7, modes, &size, &count, &mode), 0);
	assert_int_equal(mode, MAGNET_STREAM_F_GLOBAL | MAGNET_STREAM_F_OVERWRITE);
	assert_int_equal(size, 8192);
	assert_int_equal(count, 3);
	assert_int_equal(mc_parse_stream_create(2, ow, &size, &count, &mode), 0);
	assert_int_equal(mode, MAGNET_STREAM_F_OVERWRITE);
	assert_int_equal(mc_parse_stream_create(1, only, &size, &count, &mode), 0);
	assert_int_equal(mode, 0);
	assert_int_equal(mc_parse_stream_create(3, twice, &size, &count, &mode),
			 MC_EXIT_USAGE);
	assert_int_equal(mc_parse_stream_create(3, ow_val, &size, &count, &mode),
			 MC_EXIT_USAGE);
}

static int called;

static int cmd_a(int argc, char **argv)
{
	(void)argv;
	called = 100 + argc;
	return 0;
}

static int help_fn(void)
{
	called = -1;
	return 0;
}

static void test_dispatch(void **state)
{
	static const struct mc_cmd cmds[] = {
		{ "alpha", cmd_a },
		{ NULL, NULL },
	};
	char *run[] = { "alpha", "x", "y" };
	char *help[] = { "help" };
	char *bad[] = { "alphax" };
	char *prefix[] = { "alp" };

	(void)state;
	called = 0;
	assert_int_equal(mc_dispatch("obj", cmds, help_fn, NULL, 3, run), 0);
	assert_int_equal(called, 102);
	assert_int_equal(mc_dispatch("obj", cmds, help_fn, NULL, 1, help), 0);
	assert_int_equal(called, -1);
	called = 0;
	assert_int_equal(mc_dispatch("obj", cmds, help_fn, NULL, 1, bad),
			 MC_EXIT_USAGE);
	assert_int_equal(mc_dispatch("obj", cmds, help_fn, NULL, 1, prefix),
			 MC_EXIT_USAGE);
	assert_int_equal(mc_dispatch("obj", cmds, help_fn, NULL, 0, NULL),
			 MC_EXIT_USAGE);
	assert_int_equal(called, 0);
	assert_int_equal(mc_dispatch("obj", cmds, help_fn, "alpha", 0, NULL), 0);
	assert_int_equal(called, 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size_suffixes),
		cmocka_unit_test(test_size_rejects),
		cmocka_unit_test(test_size_overflow),
		cmocka_unit_test(test_u32),
		cmocka_unit_test(test_seconds),
		cmocka_unit_test(test_stream_create_args),
		cmocka_unit_test(test_dispatch),
	};

	/* Error messages of the rejected cases go to stderr: keep quiet. */
	freopen("/dev/null", "w", stderr);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
