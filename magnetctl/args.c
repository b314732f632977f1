// SPDX-License-Identifier: GPL-2.0-only
/* Argument parsing and object/command dispatch, testable without a kernel. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "magnetctl.h"

int mc_option_error(const char *cmd, const char *arg)
{
	const char *eq = strchr(arg, '=');

	/* getopt_long sets optopt to a known option's value, 0 if unknown */
	if (optopt && !strncmp(arg, "--", 2) && eq)
		return mc_usage_error("%s: %.*s takes no value", cmd,
				      (int)(eq - arg), arg);
	return mc_usage_error("%s: unknown option '%s'", cmd, arg);
}

int mc_parse_u32(const char *s, uint32_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v > UINT32_MAX)
		return -ERANGE;
	*out = v;
	return 0;
}

int mc_parse_size(const char *s, uint32_t *out)
{
	unsigned long long v, mult = 1;
	char *end;

	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	switch (*end) {
	case '\0':
		break;
	case 'k': case 'K':
		mult = 1ull << 10;
		end++;
		break;
	case 'm': case 'M':
		mult = 1ull << 20;
		end++;
		break;
	case 'g': case 'G':
		mult = 1ull << 30;
		end++;
		break;
	default:
		return -EINVAL;
	}
	if (*end)
		return -EINVAL;
	if (v == 0)
		return -EINVAL;
	if (v > UINT32_MAX / mult)
		return -ERANGE;
	*out = v * mult;
	return 0;
}

int mc_parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !(isdigit((unsigned char)s[0]) || s[0] == '.'))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (*end || errno || !isfinite(v) || v <= 0 || v > 1e9)
		return -EINVAL;
	*out = v;
	return 0;
}

int mc_dispatch(const char *object, const struct mc_cmd *cmds,
		int (*help)(void), const char *deflt, int argc, char **argv)
{
	const char *cmd = argc > 0 ? argv[0] : deflt;
	const struct mc_cmd *c;

	if (!cmd)
		return mc_usage_error("%s: missing command (try 'magnetctl %s help')",
				      object, object);
	if (!strcmp(cmd, "help"))
		return help();
	for (c = cmds; c->name; c++) {
		if (!strcmp(c->name, cmd))
			return c->fn(argc > 0 ? argc - 1 : 0, argv + (argc > 0));
	}
	return mc_usage_error("%s: unknown command '%s' (try 'magnetctl %s help')",
			      object, cmd, object);
}

/* NUMBER[ns|us|ms|s] -> ns, > 0 */
int mc_parse_duration(const char *s, unsigned long long *ns)
{
	static const struct { const char *sfx; unsigned long long mul; } u[] = {
		{ "", 1 }, { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 },
		{ "s", 1000000000ull },
	};
	unsigned long long v;
	unsigned int i;
	char *end;

	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	for (i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		if (!strcmp(end, u[i].sfx)) {
			if (v && u[i].mul > ~0ull / v)
				return -ERANGE;
			*ns = v * u[i].mul;
			return *ns ? 0 : -EINVAL;
		}
	}
	return -EINVAL;
}

/* Unsigned 64-bit number, any base strtoull() takes (0x.., 0..). */
int mc_parse_u64(const char *s, unsigned long long *out)
{
	char *end;

	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 0);
	if (*end || errno)
		return -EINVAL;
	return 0;
}

/* cgroup ID, or a cgroup v2 directory whose inode number is its ID */
int mc_parse_cgroup(const char *s, unsigned long long *id)
{
	struct stat st;

	if (!mc_parse_u64(s, id))
		return 0;
	if (stat(s, &st) || !S_ISDIR(st.st_mode))
		return -EINVAL;
	*id = st.st_ino;
	return 0;
}
