// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the commands on named kernel objects (filter, synth, correlate,
 * stream) share: NAME checks, error messages naming the object, requests
 * on NAME alone, the match keys, and collecting a list before printing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "magnetctl.h"

bool mc_name_ok(const char *s)
{
	return s[0] && strlen(s) < MAGNET_NAME_MAX;
}

int mc_check_name(const char *object, const char *noun, const char *cmd,
		  int argc, char **argv, int max)
{
	if (argc < 1)
		return mc_usage_error("%s %s: missing NAME", object, cmd);
	if (!mc_name_ok(argv[0]))
		return mc_usage_error("%s %s: bad %s name '%s' (1 to %d characters)",
				      object, cmd, noun, argv[0],
				      MAGNET_NAME_MAX - 1);
	if (max && argc > max)
		return mc_usage_error("%s %s: unexpected argument '%s'",
				      object, cmd, argv[max]);
	return 0;
}

int mc_name_error(struct magnet_ctl *h, int err, const char *object,
		  const char *cmd, const char *name)
{
	char what[96];

	snprintf(what, sizeof(what), "%s %s %s", object, cmd, name);
	return mc_ctl_error(h, err, what);
}

int mc_name_request(const char *object, const char *noun, const char *cmd,
		    int argc, char **argv,
		    int (*op)(struct magnet_ctl *h, const char *name))
{
	struct magnet_ctl *h;
	int ret;

	ret = mc_check_name(object, noun, cmd, argc, argv, 1);
	if (ret)
		return ret;
	ret = mc_ctl_open(&h);
	if (ret)
		return ret;
	ret = op(h, argv[0]);
	if (ret)
		ret = mc_name_error(h, ret, object, cmd, argv[0]);
	magnet_ctl_close(h);
	return ret;
}

int mc_parse_match_key(const char *cmd, const char *kw, const char *val,
		       const struct mc_match *m)
{
	unsigned long long v;

	if (!strcmp(kw, "cpu")) {
		if (mc_parse_u32(val, m->cpu))
			return mc_usage_error("%s: bad cpu '%s'", cmd, val);
		*m->keys |= MAGNET_FILTER_KEY_CPU;
	} else if (!strcmp(kw, "id")) {
		if (mc_parse_u64(val, &v))
			return mc_usage_error("%s: bad id '%s'", cmd, val);
		*m->abstract_id = v;
		*m->keys |= MAGNET_FILTER_KEY_ABSTRACT_ID;
	} else if (!strcmp(kw, "pid")) {
		if (mc_parse_u32(val, m->pid))
			return mc_usage_error("%s: bad pid '%s'", cmd, val);
		*m->keys |= MAGNET_FILTER_KEY_PID;
	} else if (!strcmp(kw, "tgid")) {
		if (mc_parse_u32(val, m->tgid))
			return mc_usage_error("%s: bad tgid '%s'", cmd, val);
		*m->keys |= MAGNET_FILTER_KEY_TGID;
	} else if (!strcmp(kw, "cgroup")) {
		if (mc_parse_cgroup(val, &v))
			return mc_usage_error("%s: bad cgroup '%s' (an ID or a cgroup v2 directory)",
					      cmd, val);
		*m->cgroup = v;
		*m->keys |= MAGNET_FILTER_KEY_CGROUP;
	} else {
		return -ENOENT;
	}
	return 0;
}

int mc_vec_push(struct mc_vec *vec, const void *elem)
{
	void *nv;

	if (vec->n == vec->cap) {
		vec->cap = vec->cap ? vec->cap * 2 : 8;
		nv = realloc(vec->v, vec->cap * vec->size);
		if (!nv)
			return -ENOMEM;
		vec->v = nv;
	}
	memcpy((char *)vec->v + vec->n++ * vec->size, elem, vec->size);
	return 0;
}
