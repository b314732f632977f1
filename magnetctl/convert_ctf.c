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
 * The plugin (babeltrace-plugin-magnet.so) is looked for in
 * $MAGNET_BT2_PLUGIN_DIR alone when it is set; else beside magnetctl's
 * build (BUILD/magnetctl/magnetctl: BUILD/babeltrace2/plugins), where
 * MAGNET installs it, then in babeltrace2's own search path
 * ($BABELTRACE_PLUGIN_PATH, its system directory).  PLUGDIR is the first
 * of MAGNET's own directories that holds it; found in babeltrace2's path,
 * none is passed.  Found nowhere: an error naming every place looked in,
 * before babeltrace2 runs.  DIR must not hold a trace already.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
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

#define BT2_PLUGIN_FILE	"babeltrace-plugin-magnet.so"

struct plugin_where {
	char dir[PATH_MAX];	/* where it is */
	bool pass;		/* hand @dir to babeltrace2 (--plugin-path) */
	FILE *looked;		/* the places looked in, for the message */
	int nlooked;
};

/*
 * Does the directory @dir (its first @len bytes) hold the plugin?  If not,
 * it is added to the places looked in, @what saying why it was one.
 */
static bool try_dir(struct plugin_where *w, const char *dir, size_t len,
		    const char *what, bool pass)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%.*s/" BT2_PLUGIN_FILE,
			 (int)len, dir);

	if (n > 0 && (size_t)n < sizeof(path) && !access(path, R_OK)) {
		snprintf(w->dir, sizeof(w->dir), "%.*s", (int)len, dir);
		w->pass = pass;
		return true;
	}
	fprintf(w->looked, "%s%.*s (%s)", w->nlooked++ ? ", " : "", (int)len,
		dir, what);
	return false;
}

/* A build tree's plugin directory (BUILD/magnetctl/magnetctl: BUILD/babeltrace2/plugins). */
static bool build_tree_dir(char *buf, size_t size)
{
	static const char sub[] = "/babeltrace2/plugins";
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	char *slash;

	if (n <= 0 || (size_t)n >= size - 1)
		return false;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash)
		return false;
	*slash = '\0';
	slash = strrchr(buf, '/');
	if (!slash || strcmp(slash + 1, "magnetctl"))
		return false;	/* not a build tree's layout (installed) */
	*slash = '\0';
	if ((size_t)(slash - buf) + sizeof(sub) > size)
		return false;
	memcpy(slash, sub, sizeof(sub));
	return true;
}

/* Find the plugin (above); false when it is nowhere (w->looked says where). */
static bool find_plugin(struct plugin_where *w)
{
	const char *env = getenv("MAGNET_BT2_PLUGIN_DIR"), *p, *e;
	char build[PATH_MAX];

	if (env && *env)
		return try_dir(w, env, strlen(env), "$MAGNET_BT2_PLUGIN_DIR", true);
	if (build_tree_dir(build, sizeof(build)) &&
	    try_dir(w, build, strlen(build), "beside magnetctl's build", true))
		return true;
#ifdef MAGNET_BT2_PLUGIN_DIR
	if (try_dir(w, MAGNET_BT2_PLUGIN_DIR, strlen(MAGNET_BT2_PLUGIN_DIR),
		    "where MAGNET installs it", true))
		return true;
#endif
	/* babeltrace2 searches these by itself: no --plugin-path */
	for (p = getenv("BABELTRACE_PLUGIN_PATH"); p && *p; p = *e ? e + 1 : e) {
		e = strchrnul(p, ':');
		if (e > p && try_dir(w, p, e - p, "$BABELTRACE_PLUGIN_PATH", false))
			return true;
	}
#ifdef MAGNET_BT2_SYSTEM_DIR
#ifdef MAGNET_BT2_PLUGIN_DIR
	if (!strcmp(MAGNET_BT2_SYSTEM_DIR, MAGNET_BT2_PLUGIN_DIR))
		return false;	/* looked in already */
#endif
	if (try_dir(w, MAGNET_BT2_SYSTEM_DIR, strlen(MAGNET_BT2_SYSTEM_DIR),
		    "babeltrace2's own", false))
		return true;
#endif
	return false;
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
	char *inputs = NULL, *sink = NULL, *pp = NULL, *looked = NULL;
	struct plugin_where w = { .pass = false };
	size_t looked_len = 0;
	char *bargv[10];
	bool found;
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
	w.looked = open_memstream(&looked, &looked_len);
	if (!w.looked) {
		mc_error("convert: out of memory");
		return MC_EXIT_FILE;
	}
	found = find_plugin(&w);
	if (fclose(w.looked)) {
		mc_error("convert: out of memory");
		free(looked);
		return MC_EXIT_FILE;
	}
	if (!found) {
		mc_error("convert: the babeltrace2 plugin magnet (" BT2_PLUGIN_FILE
			 ") is not in %s; set MAGNET_BT2_PLUGIN_DIR=DIR to the directory that holds it",
			 looked);
		free(looked);
		return MC_EXIT_FILE;
	}
	free(looked);
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
	if (w.pass && asprintf(&pp, "--plugin-path=%s", w.dir) < 0)
		pp = NULL;
	if (!inputs || !sink || (w.pass && !pp)) {
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
