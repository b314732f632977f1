// SPDX-License-Identifier: GPL-2.0-only
/*
 * magnetctl [OPTIONS] OBJECT { COMMAND | help }
 *
 * Options, object dispatch, error reporting and exit codes.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "magnetctl.h"
#include "json.h"
#include "output.h"

#ifndef MAGNET_VERSION_STRING
#define MAGNET_VERSION_STRING "unknown"
#endif

struct mc_options mc_opts;

static void verror(const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (mc_opts.json) {
		fputs("{\"error\":", stdout);
		json_escape(stdout, msg);
		fputs("}\n", stdout);
	} else {
		fprintf(stderr, "magnetctl: %s\n", msg);
	}
}

void mc_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(fmt, ap);
	va_end(ap);
}

int mc_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(fmt, ap);
	va_end(ap);
	return MC_EXIT_USAGE;
}

int mc_errno_exit(int err)
{
	switch (err) {
	case -ENOENT:
		return MC_EXIT_NOENT;
	case -EPERM:
	case -EACCES:
		return MC_EXIT_PERM;
	default:
		return MC_EXIT_KERNEL;
	}
}

int mc_ctl_error(struct magnet_ctl *h, int err, const char *what)
{
	const char *msg = h ? magnet_ctl_errmsg(h) : "";

	/*
	 * An EPERM with the kernel's reason (lockdown, another user's
	 * object) says it; a bare one is generic netlink's: the operation
	 * is an administrator's.
	 */
	if (!msg[0])
		msg = strerror(-err);
	if (err == -EPERM && !(h && magnet_ctl_has_extack(h)))
		mc_error("%s: %s: needs CAP_NET_ADMIN (run as root)", what, msg);
	else
		mc_error("%s: %s", what, msg);
	return mc_errno_exit(err);
}

/* what every "not loaded" message says to do */
#define MC_LOAD_HINT \
	"load it with 'modprobe magnet_net' (the core, magnet, comes with it) as root"

/* sysfs's statfs() f_type: the mount point magnet.ko makes is in sysfs */
#define MC_SYSFS_MAGIC	0x62656572

/*
 * MAGNET's generic netlink family is in the initial network namespace
 * only.  In another one (ip netns exec NS magnetctl ...) connect there:
 * the socket stays in the namespace it was made in, and the process goes
 * back to its own.  -ENOENT when this process is in the initial network
 * namespace already (nothing to retry), -EPERM when it may not enter it.
 */
static int ctl_open_init_net(struct magnet_ctl **h)
{
	struct stat self, init;
	int cur, fd, err;

	if (stat("/proc/self/ns/net", &self))
		return -ENOENT;
	if (stat("/proc/1/ns/net", &init))
		return errno == EACCES ? -EPERM : -ENOENT;
	if (self.st_ino == init.st_ino && self.st_dev == init.st_dev)
		return -ENOENT;
	cur = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (cur < 0)
		return -errno;
	fd = open("/proc/1/ns/net", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno == EACCES ? -EPERM : -errno;
		close(cur);
		return err;
	}
	if (setns(fd, CLONE_NEWNET)) {
		err = -errno;
		close(fd);
		close(cur);
		return err;
	}
	close(fd);
	err = magnet_ctl_open(h);
	if (setns(cur, CLONE_NEWNET)) {
		/* never left in the wrong namespace: give up the handle */
		mc_error("cannot return to this process's network namespace: %s",
			 strerror(errno));
		if (!err)
			magnet_ctl_close(*h);
		err = -EIO;
	}
	close(cur);
	return err;
}

int mc_ctl_open(struct magnet_ctl **h)
{
	int err = magnet_ctl_open(h);

	if (err == -ENOENT && !access("/sys/module/magnet", F_OK)) {
		/* loaded, yet no family here: another network namespace */
		err = ctl_open_init_net(h);
		if (err == -EPERM) {
			mc_error("MAGNET's netlink family is in the initial network namespace only and this "
				 "process is in another one, which it may not leave: run magnetctl outside the "
				 "namespace (its events cover every namespace), or as root");
			return MC_EXIT_PERM;
		}
	}
	if (err == -ENOENT) {
		mc_error("MAGNET is not loaded (no generic netlink family '%s'); " MC_LOAD_HINT,
			 MAGNET_GENL_NAME);
		return MC_EXIT_NOTLOADED;
	}
	if (err) {
		mc_error("cannot connect to generic netlink: %s", strerror(-err));
		return MC_EXIT_KERNEL;
	}
	return 0;
}

const char *mc_stream_perm_hint(const char *path)
{
	struct statfs sfs;

	if (!statfs(path, &sfs) && sfs.f_type == MAGNETFS_MAGIC)
		return "stream files are the magnetfs mount's owner's (default root, mode 0400): "
		       "remount with uid=, gid= or mode= to share them (mount -o remount,gid=GROUP,mode=0440 "
		       MAGNETFS_DEFAULT_DIR "), or run as root";
	return "debugfs stream files are root's: run as root, or read the stream through magnetfs "
	       "mounted with uid=, gid= or mode= (mount -t magnetfs -o gid=GROUP,mode=0440 none "
	       MAGNETFS_DEFAULT_DIR ")";
}

int mc_magnetfs_mount(void)
{
	struct statfs sfs;

	if (statfs(MAGNETFS_DEFAULT_DIR, &sfs))
		return -errno;
	if (sfs.f_type == MAGNETFS_MAGIC)
		return 0;
	/* only on the empty sysfs directory magnet.ko made, never over another mount */
	if (sfs.f_type != MC_SYSFS_MAGIC)
		return -ENOTDIR;
	if (mount("magnetfs", MAGNETFS_DEFAULT_DIR, "magnetfs",
		  MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		return -errno;
	return 0;
}

const char *mc_magnetfs_hint(int err)
{
	switch (err) {
	case -EPERM:
	case -EACCES:
		return "magnetfs is not mounted on " MAGNETFS_DEFAULT_DIR " and only root may mount it: "
		       "as root, mount -t magnetfs magnetfs " MAGNETFS_DEFAULT_DIR
		       " (or systemctl start sys-kernel-magnet.mount)";
	case -ENOENT:
		return "there is no " MAGNETFS_DEFAULT_DIR ": load MAGNET (modprobe magnet_net)";
	case -ENOTDIR:
		return MAGNETFS_DEFAULT_DIR " holds another file system, not magnetfs: unmount it, then "
		       "mount -t magnetfs magnetfs " MAGNETFS_DEFAULT_DIR;
	default:
		return "magnetfs is not mounted on " MAGNETFS_DEFAULT_DIR
		       ": mount -t magnetfs magnetfs " MAGNETFS_DEFAULT_DIR " (as root)";
	}
}

int mc_not_loaded(int err)
{
	if (err != -ENOENT || !access("/sys/module/magnet", F_OK))
		return -1;
	mc_error("MAGNET is not loaded; " MC_LOAD_HINT);
	return MC_EXIT_NOTLOADED;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: magnetctl [OPTIONS] OBJECT { COMMAND | help }\n"
		"       magnetctl status\n"
		"       magnetctl probe { list | enable PROBE... stream STREAM |\n"
		"                         disable PROBE... |\n"
		"                         add NAME kprobe SYMBOL[+OFF] [args I,J,...] |\n"
		"                         add NAME kretprobe SYMBOL [args I,J,...] | del NAME }\n"
		"       magnetctl stream { create NAME [subbuf-size BYTES] [subbuf-count N]\n"
		"                                 [global] [overwrite] [app-write]\n"
		"                                 [clock { monotonic | local }] |\n"
		"                          delete NAME | list | show NAME | flush NAME |\n"
		"                          snapshot NAME -o FILE | freeze NAME | resume NAME }\n"
		"       magnetctl record STREAM -o FILE [--duration SECONDS] [--watermark BYTES]\n"
		"                        [--timeout MS | --switch-timer MS] [--min-events N]\n"
		"       magnetctl dump [--file-order] [--time raw|wall|rel|delta]\n"
		"                      [--format text|csv] [--no-header] FILE...\n"
		"       magnetctl convert --to pcapng [-o OUT] FILE...\n"
		"       magnetctl convert --to ctf -o DIR FILE...\n"
		"       magnetctl convert --to perfetto [-o OUT] FILE...\n"
		"       magnetctl export [--listen ADDR:PORT] [--max-keys N] [--corr-stream STREAM]\n"
		"       magnetctl plot { layers | tcp | latency | rate } [--id ID] [--format png|svg]\n"
		"                      -o|--output OUT FILE...\n"
		"       magnetctl filter { add NAME [KEY VALUE]... [priority N] ACTION | del NAME |\n"
		"                          list | show NAME }\n"
		"       magnetctl synth { add NAME probe PROBE [KEY VALUE]... [by GROUP[,GROUP]...]\n"
		"                         value { size | interval | field OFF:WIDTH }\n"
		"                         period DURATION stream STREAM [keys N] |\n"
		"                         del NAME | list | show NAME [values [GROUP VALUE]...] }\n"
		"       magnetctl correlate { add NAME chain P1,P2[|P2b],... window DURATION\n"
		"                             stream STREAM | del NAME | list | show NAME }\n"
		"       magnetctl sock show ID\n"
		"OPTIONS := { -j|--json | -p|--pretty | -h|--help | -V|--version }\n"
		"PROBE   := { NAME | ID | all }\n"
		"BYTES   := NUMBER[K|M|G]\n"
		"Exit: 0 ok, 1 usage, 2 kernel refused, 3 file/trace error, 4 not loaded,\n"
		"      5 no such object, 6 not permitted (magnetctl(8), EXIT STATUS)\n");
}

static int do_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	usage(stdout);
	return MC_EXIT_OK;
}

/* The objects; @cmds: it has commands (mc_dispatch()), "help" among them */
static const struct mc_object {
	const char *name;
	int (*fn)(int argc, char **argv);
	bool cmds;
} objects[] = {
	{ "status",	do_status,	false },
	{ "probe",	do_probe,	true },
	{ "stream",	do_stream,	true },
	{ "record",	do_record,	false },
	{ "dump",	do_dump,	false },
	{ "convert",	do_convert,	false },
	{ "export",	do_export,	false },
	{ "plot",	do_plot,	false },
	{ "filter",	do_filter,	true },
	{ "synth",	do_synth,	true },
	{ "correlate",	do_correlate,	true },
	{ "sock",	do_sock,	true },
	{ "help",	do_help,	false },
	{ NULL,		NULL,		false },
};

static const struct option long_options[] = {
	{ "json",	no_argument,	NULL, 'j' },
	{ "pretty",	no_argument,	NULL, 'p' },
	{ "help",	no_argument,	NULL, 'h' },
	{ "version",	no_argument,	NULL, 'V' },
	{ NULL,		0,		NULL, 0 },
};

/* Returns -1 to go on, else an exit code. */
static int parse_options(int argc, char **argv)
{
	int c;

	optind = 0;		/* full reset: magnetctl_main() may rerun */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+jphV", long_options, NULL)) != -1) {
		switch (c) {
		case 'j':
			mc_opts.json = true;
			break;
		case 'p':
			mc_opts.json = true;
			mc_opts.pretty = true;
			break;
		case 'h':
			usage(stdout);
			return MC_EXIT_OK;
		case 'V':
			printf("magnetctl %s (MAGNET ABI %d)\n",
			       MAGNET_VERSION_STRING, MAGNET_ABI_VERSION);
			return MC_EXIT_OK;
		default:
			if (optopt)
				return mc_usage_error("unknown option '-%c' (try 'magnetctl --help')",
						      optopt);
			return mc_usage_error("unknown option '%s' (try 'magnetctl --help')",
					      argv[optind - 1]);
		}
	}
	return -1;
}

/* -h/--help after the object: its help instead of the command */
static bool object_help;

/*
 * -j/--json, -p/--pretty and -h/--help anywhere on the line, as after
 * the object ("magnetctl stream list -j", "magnetctl dump --help"):
 * taken out of @argv before the command parses it; "--" ends the search
 * (a file named -j: "dump -- -j").  Returns the new argc.
 */
static int take_global_options(int argc, char **argv)
{
	int i, n = 0;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			while (i < argc)
				argv[n++] = argv[i++];
			break;
		}
		if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json")) {
			mc_opts.json = true;
		} else if (!strcmp(argv[i], "-p") || !strcmp(argv[i], "--pretty") ||
			   !strcmp(argv[i], "-jp") || !strcmp(argv[i], "-pj")) {
			mc_opts.json = true;
			mc_opts.pretty = true;
		} else if (i > 0 &&
			   (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))) {
			object_help = true;
		} else {
			argv[n++] = argv[i];
		}
	}
	for (i = n; i < argc; i++)
		argv[i] = NULL;
	return n;
}

/*
 * The usage lines of @object: from the one that starts "magnetctl
 * OBJECT" to the next that starts a command or a definition.
 */
static void object_usage(const char *object)
{
	char *text = NULL, *line, *save = NULL;
	size_t len = 0, olen = strlen(object);
	bool in = false, first = true;
	FILE *f = open_memstream(&text, &len);

	if (!f) {
		usage(stdout);
		return;
	}
	usage(f);
	fclose(f);
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *t = line + strspn(line, " ");
		bool cmd;

		if (!strncmp(t, "Usage: ", 7))
			t += 7;
		cmd = !strncmp(t, "magnetctl ", 10);
		if (cmd)
			in = !strncmp(t + 10, object, olen) &&
			     (t[10 + olen] == ' ' || !t[10 + olen]);
		else if (*line != ' ')
			in = false;
		if (!in)
			continue;
		if (cmd) {
			printf("%s%s\n", first ? "Usage: " : "       ", t);
			first = false;
		} else {
			printf("%s\n", line);
		}
	}
	free(text);
}

static int run_object(int argc, char **argv)
{
	const struct mc_object *o;

	if (argc < 1) {
		usage(stderr);
		return MC_EXIT_USAGE;
	}
	for (o = objects; o->name; o++) {
		if (strcmp(o->name, argv[0]))
			continue;
		if (object_help) {
			static char help[] = "help";
			char *hv[] = { help, NULL };

			if (o->cmds)
				return o->fn(1, hv);
			object_usage(o->name);
			return MC_EXIT_OK;
		}
		return o->fn(argc - 1, argv + 1);
	}
	return mc_usage_error("unknown object '%s' (try 'magnetctl help')",
			      argv[0]);
}

/* Like perf: output that could not be written is an error. */
static int check_stdout(int ret)
{
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "magnetctl: write error on standard output: %s\n",
			strerror(errno));
		clearerr(stdout);
		return MC_EXIT_FILE;
	}
	return ret;
}

int magnetctl_main(int argc, char **argv)
{
	int ret;

	memset(&mc_opts, 0, sizeof(mc_opts));
	object_help = false;
	clearerr(stdout);
	ret = parse_options(argc, argv);
	if (ret < 0) {
		int n = take_global_options(argc - optind, argv + optind);

		if (out_init(stdout, mc_opts.json, mc_opts.pretty)) {
			fprintf(stderr, "magnetctl: out of memory\n");
			return MC_EXIT_FILE;
		}
		ret = run_object(n, argv + optind);
		out_fini();
	}
	return check_stdout(ret);
}
