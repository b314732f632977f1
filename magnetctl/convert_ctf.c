// SPDX-License-Identifier: GPL-2.0-only
/*
 * magnetctl convert --to ctf -o DIR FILE...: a CTF 1.8 trace in DIR (the
 * format of LTTng, which babeltrace2 and Trace Compass open), written by
 * babeltrace2 itself from MAGNET's babeltrace2 plugin:
 *
 *   babeltrace2 [--plugin-path=PLUGDIR] convert
 *       --component=magnet:source.magnet.trace --params='inputs=[FILE...]'
 *       --component=ctf:sink.ctf.fs --params='path="DIR",assume-single-trace=yes,quiet=yes'
 *
 * PLUGDIR: $MAGNET_BT2_PLUGIN_DIR, else where the build installs the
 * plugin (when it is there); babeltrace2's own search path (its system
 * directory, $BABELTRACE_PLUGIN_PATH) comes after.  DIR must not hold a
 * trace already.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "magnetctl.h"

/* Append @s to @b as a babeltrace2 parameter string: "..." with \ and " escaped. */
static char *quote_append(char *b, size_t *len, const char *s)
{
	size_t n = strlen(s), need = *len + 2 * n + 3;
	char *p = realloc(b, need + 1);

	if (!p) {
		free(b);
		return NULL;
	}
	p[(*len)++] = '"';
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			p[(*len)++] = '\\';
		p[(*len)++] = *s;
	}
	p[(*len)++] = '"';
	p[*len] = '\0';
	return p;
}

static char *str_append(char *b, size_t *len, const char *s)
{
	size_t n = strlen(s);
	char *p = realloc(b, *len + n + 1);

	if (!p) {
		free(b);
		return NULL;
	}
	memcpy(p + *len, s, n + 1);
	*len += n;
	return p;
}

/* The plugin directory to hand to babeltrace2, or NULL. */
static const char *plugin_dir(void)
{
	const char *d = getenv("MAGNET_BT2_PLUGIN_DIR");
	struct stat sb;

	if (d && *d)
		return d;
#ifdef MAGNET_BT2_PLUGIN_DIR
	if (!stat(MAGNET_BT2_PLUGIN_DIR "/babeltrace-plugin-magnet.so", &sb))
		return MAGNET_BT2_PLUGIN_DIR;
#endif
	(void)sb;
	return NULL;
}

static int run_babeltrace2(char *const *argv)
{
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		mc_error("convert: fork: %s", strerror(errno));
		return MC_EXIT_FILE;
	}
	if (!pid) {
		execvp(argv[0], argv);
		fprintf(stderr, "magnetctl: convert: %s: %s%s\n", argv[0],
			strerror(errno), errno == ENOENT ?
			" (--to ctf needs babeltrace2: apt install babeltrace2)" : "");
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			mc_error("convert: waitpid: %s", strerror(errno));
			return MC_EXIT_FILE;
		}
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return MC_EXIT_OK;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 127)
		mc_error("convert: babeltrace2 failed (%s %d): see its messages above",
			 WIFEXITED(status) ? "exit status" : "signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) :
					     WTERMSIG(status));
	return MC_EXIT_FILE;
}

int convert_ctf(const char *out, int argc, char **argv)
{
	char *inputs = NULL, *sink = NULL, *pp = NULL;
	const char *dir = plugin_dir();
	char *bargv[10];
	size_t il = 0, sl = 0;
	int i, n = 0, code;

	if (!out || !strcmp(out, "-"))
		return mc_usage_error("convert: --to ctf writes a directory: -o DIR");
	if (asprintf(&pp, "%s/metadata", out) >= 0 && !access(pp, F_OK)) {
		mc_error("convert: %s already holds a CTF trace", out);
		free(pp);
		return MC_EXIT_FILE;
	}
	free(pp);
	pp = NULL;
	for (i = 0; i < argc; i++) {
		FILE *f = fopen(argv[i], "r");

		if (!f) {
			mc_error("convert: %s: %s", argv[i], strerror(errno));
			return MC_EXIT_FILE;
		}
		fclose(f);
	}
	inputs = str_append(NULL, &il, "inputs=[");
	for (i = 0; inputs && i < argc; i++) {
		if (i)
			inputs = str_append(inputs, &il, ",");
		if (inputs)
			inputs = quote_append(inputs, &il, argv[i]);
	}
	if (inputs)
		inputs = str_append(inputs, &il, "]");
	sink = str_append(NULL, &sl, "path=");
	if (sink)
		sink = quote_append(sink, &sl, out);
	if (sink)
		sink = str_append(sink, &sl, ",assume-single-trace=yes,quiet=yes");
	if (dir && asprintf(&pp, "--plugin-path=%s", dir) < 0)
		pp = NULL;
	if (!inputs || !sink || (dir && !pp)) {
		mc_error("convert: out of memory");
		code = MC_EXIT_FILE;
		goto out;
	}
	bargv[n++] = "babeltrace2";
	if (pp)
		bargv[n++] = pp;
	bargv[n++] = "convert";
	bargv[n++] = "--component=magnet:source.magnet.trace";
	bargv[n++] = "--params";
	bargv[n++] = inputs;
	bargv[n++] = "--component=ctf:sink.ctf.fs";
	bargv[n++] = "--params";
	bargv[n++] = sink;
	bargv[n] = NULL;
	code = run_babeltrace2(bargv);
	/*
	 * sink.ctf.fs writes a trace when a stream begins, at a CPU's first
	 * record: inputs with none (no event, no loss) leave nothing, not
	 * even the metadata, which no CTF reader opens
	 */
	free(pp);
	pp = NULL;
	if (!code && asprintf(&pp, "%s/metadata", out) >= 0 && access(pp, F_OK)) {
		mc_error("convert: no CTF trace written to %s: the input holds no event", out);
		rmdir(out);	/* if sink.ctf.fs left it empty */
		code = MC_EXIT_FILE;
	}
out:
	free(inputs);
	free(sink);
	free(pp);
	return code;
}
