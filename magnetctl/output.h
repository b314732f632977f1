/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One printing path for text and JSON, as iproute2's print_*(PRINT_ANY):
 * every field is printed once with a JSON key and a text format; a NULL
 * key means text only, a NULL format JSON only.
 */
#ifndef MAGNETCTL_OUTPUT_H
#define MAGNETCTL_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

int out_init(FILE *f, bool json, bool pretty);
void out_fini(void);
bool out_json(void);

void out_open_object(const char *key);
void out_close_object(void);
void out_open_array(const char *key);
void out_close_array(void);

void out_string(const char *key, const char *fmt, const char *v);
void out_uint(const char *key, const char *fmt, uint64_t v);
void out_int(const char *key, const char *fmt, int64_t v);
void out_double(const char *key, const char *fmt, double v);
void out_bool(const char *key, const char *fmt, bool v);
/* Text only. */
__attribute__((format(printf, 1, 2)))
void out_text(const char *fmt, ...);

#endif /* MAGNETCTL_OUTPUT_H */
