// SPDX-License-Identifier: GPL-2.0-only
/* The text/JSON printing layer over json.c (see output.h). */
#include <stdarg.h>

#include "json.h"
#include "output.h"

static FILE *out_file;
static struct json_writer *jw;

int out_init(FILE *f, bool json, bool pretty)
{
	out_file = f;
	jw = NULL;
	if (json) {
		jw = jw_new(f, pretty);
		if (!jw)
			return -1;
	}
	return 0;
}

void out_fini(void)
{
	jw_destroy(jw);
	jw = NULL;
}

bool out_json(void)
{
	return jw != NULL;
}

static void key(const char *k)
{
	if (k && jw_depth(jw) > 0)
		jw_name(jw, k);
}

void out_open_object(const char *k)
{
	if (!jw)
		return;
	key(k);
	jw_start_object(jw);
}

void out_close_object(void)
{
	if (jw)
		jw_end_object(jw);
}

void out_open_array(const char *k)
{
	if (!jw)
		return;
	key(k);
	jw_start_array(jw);
}

void out_close_array(void)
{
	if (jw)
		jw_end_array(jw);
}

void out_string(const char *k, const char *fmt, const char *v)
{
	if (jw) {
		if (k) {
			key(k);
			jw_string(jw, v);
		}
	} else if (fmt) {
		fprintf(out_file, fmt, v);
	}
}

void out_uint(const char *k, const char *fmt, uint64_t v)
{
	if (jw) {
		if (k) {
			key(k);
			jw_uint(jw, v);
		}
	} else if (fmt) {
		fprintf(out_file, fmt, (unsigned long long)v);
	}
}

void out_double(const char *k, const char *fmt, double v)
{
	if (jw) {
		if (k) {
			key(k);
			jw_double(jw, v);
		}
	} else if (fmt) {
		fprintf(out_file, fmt, v);
	}
}

void out_int(const char *k, const char *fmt, int64_t v)
{
	if (jw) {
		if (k) {
			key(k);
			jw_int(jw, v);
		}
	} else if (fmt) {
		fprintf(out_file, fmt, (long long)v);
	}
}

void out_bool(const char *k, const char *fmt, bool v)
{
	if (jw) {
		if (k) {
			key(k);
			jw_bool(jw, v);
		}
	} else if (fmt) {
		fprintf(out_file, fmt, v ? "yes" : "no");
	}
}

void out_text(const char *fmt, ...)
{
	va_list ap;

	if (jw)
		return;
	va_start(ap, fmt);
	vfprintf(out_file, fmt, ap);
	va_end(ap);
}
