/* SPDX-License-Identifier: GPL-2.0-only */
/* A tiny streaming JSON writer (one value after another, JSON lines). */
#ifndef MAGNETCTL_JSON_H
#define MAGNETCTL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct json_writer;

struct json_writer *jw_new(FILE *f, bool pretty);
void jw_destroy(struct json_writer *jw);
/* Depth of open containers: 0 between top-level values. */
int jw_depth(const struct json_writer *jw);

void jw_start_object(struct json_writer *jw);
void jw_end_object(struct json_writer *jw);
void jw_start_array(struct json_writer *jw);
void jw_end_array(struct json_writer *jw);
/* Key of the next value inside an object. */
void jw_name(struct json_writer *jw, const char *name);
void jw_string(struct json_writer *jw, const char *s);
void jw_uint(struct json_writer *jw, uint64_t v);
void jw_int(struct json_writer *jw, int64_t v);
void jw_bool(struct json_writer *jw, bool v);
void jw_double(struct json_writer *jw, double v);
void jw_null(struct json_writer *jw);

/* Write @s as a JSON string literal (quotes included) to @f. */
void json_escape(FILE *f, const char *s);

#endif /* MAGNETCTL_JSON_H */
