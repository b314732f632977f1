// SPDX-License-Identifier: GPL-2.0-only
/*
 * A tiny streaming JSON writer.  Each top-level value ends with a newline,
 * so consecutive values form JSON lines.  Strings are escaped per RFC 8259;
 * bytes that are not valid UTF-8 become U+FFFD so the output stays valid.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "json.h"

#define JSON_MAX_DEPTH	32

struct json_writer {
	FILE *f;
	bool pretty;
	int depth;
	bool first[JSON_MAX_DEPTH];	/* no element yet at this depth */
	bool after_name;		/* a key was written, value pending */
};

struct json_writer *jw_new(FILE *f, bool pretty)
{
	struct json_writer *jw = calloc(1, sizeof(*jw));

	if (!jw)
		return NULL;
	jw->f = f;
	jw->pretty = pretty;
	return jw;
}

void jw_destroy(struct json_writer *jw)
{
	free(jw);
}

int jw_depth(const struct json_writer *jw)
{
	return jw->depth;
}

static void indent(struct json_writer *jw)
{
	int i;

	if (!jw->pretty)
		return;
	fputc('\n', jw->f);
	for (i = 0; i < jw->depth; i++)
		fputs("  ", jw->f);
}

/* Separator before a new element of the current container. */
static void element(struct json_writer *jw)
{
	if (jw->after_name) {
		jw->after_name = false;
		return;
	}
	if (jw->depth == 0)
		return;
	if (!jw->first[jw->depth])
		fputc(',', jw->f);
	jw->first[jw->depth] = false;
	indent(jw);
}

static void value_done(struct json_writer *jw)
{
	if (jw->depth == 0)
		fputc('\n', jw->f);
}

static void open_container(struct json_writer *jw, char c)
{
	element(jw);
	fputc(c, jw->f);
	if (jw->depth < JSON_MAX_DEPTH - 1)
		jw->depth++;
	jw->first[jw->depth] = true;
}

static void close_container(struct json_writer *jw, char c)
{
	bool empty = jw->first[jw->depth];

	if (jw->depth > 0)
		jw->depth--;
	if (!empty)
		indent(jw);
	fputc(c, jw->f);
	value_done(jw);
}

void jw_start_object(struct json_writer *jw)
{
	open_container(jw, '{');
}

void jw_end_object(struct json_writer *jw)
{
	close_container(jw, '}');
}

void jw_start_array(struct json_writer *jw)
{
	open_container(jw, '[');
}

void jw_end_array(struct json_writer *jw)
{
	close_container(jw, ']');
}

void jw_name(struct json_writer *jw, const char *name)
{
	element(jw);
	json_escape(jw->f, name);
	fputs(jw->pretty ? ": " : ":", jw->f);
	jw->after_name = true;
}

void jw_string(struct json_writer *jw, const char *s)
{
	element(jw);
	json_escape(jw->f, s);
	value_done(jw);
}

void jw_uint(struct json_writer *jw, uint64_t v)
{
	element(jw);
	fprintf(jw->f, "%" PRIu64, v);
	value_done(jw);
}

void jw_int(struct json_writer *jw, int64_t v)
{
	element(jw);
	fprintf(jw->f, "%" PRId64, v);
	value_done(jw);
}

/* A finite double with every significant digit; NaN/inf as null. */
void jw_double(struct json_writer *jw, double v)
{
	element(jw);
	if (v != v || v - v != 0)
		fputs("null", jw->f);
	else
		fprintf(jw->f, "%.17g", v);
	value_done(jw);
}

void jw_bool(struct json_writer *jw, bool v)
{
	element(jw);
	fputs(v ? "true" : "false", jw->f);
	value_done(jw);
}

void jw_null(struct json_writer *jw)
{
	element(jw);
	fputs("null", jw->f);
	value_done(jw);
}

/* Length of the valid UTF-8 sequence at @s, 0 if invalid. */
static int utf8_len(const unsigned char *s)
{
	int n, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

void json_escape(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	int n;

	fputc('"', f);
	while (*s) {
		switch (*s) {
		case '"':  fputs("\\\"", f); s++; continue;
		case '\\': fputs("\\\\", f); s++; continue;
		case '\b': fputs("\\b", f); s++; continue;
		case '\f': fputs("\\f", f); s++; continue;
		case '\n': fputs("\\n", f); s++; continue;
		case '\r': fputs("\\r", f); s++; continue;
		case '\t': fputs("\\t", f); s++; continue;
		}
		if (*s < 0x20 || *s == 0x7f) {
			fprintf(f, "\\u%04x", *s);
			s++;
			continue;
		}
		n = utf8_len(s);
		if (!n) {
			fputs("\\ufffd", f);
			s++;
			continue;
		}
		fwrite(s, 1, n, f);
		s += n;
	}
	fputc('"', f);
}
