// SPDX-License-Identifier: GPL-2.0-only
/* JSON writer: escaping and structure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "json.h"

static char *escaped(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	json_escape(f, s);
	fclose(f);
	return buf;
}

static void check_escape(const char *in, const char *want)
{
	char *got = escaped(in);

	assert_string_equal(got, want);
	free(got);
}

static void test_escape(void **state)
{
	(void)state;
	check_escape("plain", "\"plain\"");
	check_escape("", "\"\"");
	check_escape("a\"b", "\"a\\\"b\"");
	check_escape("back\\slash", "\"back\\\\slash\"");
	check_escape("t\tn\nr\rb\bf\f", "\"t\\tn\\nr\\rb\\bf\\f\"");
	check_escape("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
	check_escape("/", "\"/\"");
}

static void test_escape_utf8(void **state)
{
	(void)state;
	check_escape("caf\xc3\xa9", "\"caf\xc3\xa9\"");		/* é */
	check_escape("\xe2\x82\xac", "\"\xe2\x82\xac\"");		/* € */
	check_escape("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");	/* emoji */
	check_escape("a\xff" "b", "\"a\\ufffdb\"");		/* invalid */
	check_escape("\xc3", "\"\\ufffd\"");			/* truncated */
	check_escape("\xc0\xaf", "\"\\ufffd\\ufffd\"");		/* overlong */
	check_escape("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");	/* surrogate */
}

static char *render(bool pretty)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json_writer *jw = jw_new(f, pretty);

	jw_start_object(jw);
	jw_name(jw, "name");
	jw_string(jw, "x\"y");
	jw_name(jw, "n");
	jw_uint(jw, UINT64_MAX);
	jw_name(jw, "neg");
	jw_int(jw, -3);
	jw_name(jw, "list");
	jw_start_array(jw);
	jw_uint(jw, 1);
	jw_bool(jw, true);
	jw_null(jw);
	jw_end_array(jw);
	jw_name(jw, "empty");
	jw_start_object(jw);
	jw_end_object(jw);
	jw_end_object(jw);
	assert_int_equal(jw_depth(jw), 0);
	/* A second top-level value: JSON lines. */
	jw_start_array(jw);
	jw_end_array(jw);
	jw_destroy(jw);
	fclose(f);
	return buf;
}

static void test_writer_compact(void **state)
{
	char *s = render(false);

	(void)state;
	assert_string_equal(s,
		"{\"name\":\"x\\\"y\",\"n\":18446744073709551615,\"neg\":-3,"
		"\"list\":[1,true,null],\"empty\":{}}\n[]\n");
	free(s);
}

static void test_writer_pretty(void **state)
{
	char *s = render(true);

	(void)state;
	assert_string_equal(s,
		"{\n"
		"  \"name\": \"x\\\"y\",\n"
		"  \"n\": 18446744073709551615,\n"
		"  \"neg\": -3,\n"
		"  \"list\": [\n"
		"    1,\n"
		"    true,\n"
		"    null\n"
		"  ],\n"
		"  \"empty\": {}\n"
		"}\n"
		"[]\n");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_escape_utf8),
		cmocka_unit_test(test_writer_compact),
		cmocka_unit_test(test_writer_pretty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
