/* SPDX-License-Identifier: GPL-2.0-only */
/* magnetctl: shared declarations of the command implementations. */
#ifndef MAGNETCTL_H
#define MAGNETCTL_H

#include <stdbool.h>
#include <stdint.h>
#include <magnet/libmagnet.h>

/* Exit codes, one per kind of failure, documented in magnetctl(8). */
enum {
	MC_EXIT_OK		= 0,
	MC_EXIT_USAGE		= 1,	/* usage error, bad argument */
	MC_EXIT_KERNEL		= 2,	/* the kernel refused the request */
	MC_EXIT_FILE		= 3,	/* file or trace error */
	MC_EXIT_NOTLOADED	= 4,	/* MAGNET is not loaded */
	MC_EXIT_NOENT		= 5,	/* no such stream, probe, filter, ... */
	MC_EXIT_PERM		= 6,	/* not permitted (the message says what grants it) */
};

struct mc_options {
	bool json;
	bool pretty;
};
extern struct mc_options mc_opts;

/* The whole tool, callable from tests; returns the exit code. */
int magnetctl_main(int argc, char **argv);

/* ---- errors (main.c) ---- */
__attribute__((format(printf, 1, 2)))
void mc_error(const char *fmt, ...);
/* Print "magnetctl: <fmt>" and return MC_EXIT_USAGE. */
__attribute__((format(printf, 1, 2)))
int mc_usage_error(const char *fmt, ...);
/*
 * Report a failed control request "<what>: <extack|strerror>" (and, for a
 * bare EPERM, that CAP_NET_ADMIN grants it); returns mc_errno_exit(err).
 */
int mc_ctl_error(struct magnet_ctl *h, int err, const char *what);
/* The exit code of a request that failed with -@err: NOENT, PERM or KERNEL. */
int mc_errno_exit(int err);
/* Open the control handle; 0 or an exit code (message printed). */
int mc_ctl_open(struct magnet_ctl **h);
/*
 * What would let this user open the stream file @path: in a magnetfs
 * mount, the mount's owner and mode options; in debugfs, root alone.
 */
const char *mc_stream_perm_hint(const char *path);
/*
 * magnetfs on MAGNETFS_DEFAULT_DIR, as bpftool does for bpffs: 0 when it
 * is mounted there, else mounted now on the sysfs directory magnet.ko
 * makes (needs CAP_SYS_ADMIN; in this process's mount namespace, so also
 * inside "ip netns exec", whose fresh sysfs hides the host's mount);
 * -errno when it cannot be: -ENOENT no such directory, -ENOTDIR another
 * file system is mounted there, -EPERM not root.
 */
int mc_magnetfs_mount(void);
/* What to do about mc_magnetfs_mount()'s error @err: names the command. */
const char *mc_magnetfs_hint(int err);
/*
 * The exit code and message of a failure that may mean MAGNET is not
 * loaded: an -ENOENT while no module "magnet" is loaded says so, names
 * the modprobe and returns MC_EXIT_NOTLOADED; else -1 (not that case).
 */
int mc_not_loaded(int err);

/* ---- argument parsing (args.c) ---- */
/*
 * After getopt_long() refused @arg ('?'): "CMD: --opt takes no value"
 * for a value given to an option without one, else "CMD: unknown option
 * 'ARG'"; returns MC_EXIT_USAGE.
 */
int mc_option_error(const char *cmd, const char *arg);
int mc_parse_u32(const char *s, uint32_t *out);
/* BYTES with optional K/M/G suffix (powers of 1024), > 0, <= UINT32_MAX. */
int mc_parse_size(const char *s, uint32_t *out);
/* NUMBER[ns|us|ms|s] (no suffix: ns) -> ns > 0; -EINVAL, -ERANGE. */
int mc_parse_duration(const char *s, unsigned long long *ns);
/* u64 in any strtoull() base; a cgroup v2 ID or directory (its inode). */
int mc_parse_u64(const char *s, unsigned long long *out);
int mc_parse_cgroup(const char *s, unsigned long long *id);
/* Positive seconds, decimals allowed. */
int mc_parse_seconds(const char *s, double *out);

/*
 * "stream create" arguments after "create"; 0 or MC_EXIT_USAGE.  @mode
 * gets MAGNET_STREAM_F_* of the "global" and "overwrite" keywords.
 */
int mc_parse_stream_create(int argc, char **argv, uint32_t *size,
			   uint32_t *count, uint32_t *mode);

/* ---- named objects: filter, synth, correlate, stream (objects.c) ---- */
/* 1 to MAGNET_NAME_MAX - 1 characters: what the kernel takes as a name. */
bool mc_name_ok(const char *s);
/*
 * "@object @cmd NAME...": argv[0] is a good NAME ("bad @noun name" if
 * not) and, when @max is not 0, at most @max arguments; 0 or MC_EXIT_USAGE.
 */
int mc_check_name(const char *object, const char *noun, const char *cmd,
		  int argc, char **argv, int max);
/* A failed request on @name, reported as "@object @cmd @name: <why>". */
int mc_name_error(struct magnet_ctl *h, int err, const char *object,
		  const char *cmd, const char *name);
/* "@object @cmd NAME": one request that takes NAME and prints nothing. */
int mc_name_request(const char *object, const char *noun, const char *cmd,
		    int argc, char **argv,
		    int (*op)(struct magnet_ctl *h, const char *name));

/*
 * Where the match keys of a filter or synthesizer go: the fields of
 * struct magnet_filter_info and magnet_synth_info of the same names.
 */
struct mc_match {
	__u32 *keys;		/* MAGNET_FILTER_KEY_* given */
	__u32 *cpu, *pid, *tgid;
	__u64 *abstract_id, *cgroup;
};
/*
 * "@kw @val" if @kw is a match key (cpu, id, pid, tgid, cgroup): 0 or
 * MC_EXIT_USAGE ("@cmd: bad ..."); -ENOENT if it is not one.
 */
int mc_parse_match_key(const char *cmd, const char *kw, const char *val,
		       const struct mc_match *m);

/* Objects a list callback gets, kept to print after the request. */
struct mc_vec {
	void *v;
	size_t n, cap;
	size_t size;		/* of one object */
};
/* Append a copy of *@elem; 0 or -ENOMEM (what a list callback returns). */
int mc_vec_push(struct mc_vec *vec, const void *elem);

struct mc_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);	/* argv[0]: first argument */
};
/*
 * Run the command argv[0] of @object from @cmds; "help" runs @help.
 * With no command, runs @deflt (if not NULL).
 */
int mc_dispatch(const char *object, const struct mc_cmd *cmds,
		int (*help)(void), const char *deflt, int argc, char **argv);

/* ---- objects ---- */
int do_status(int argc, char **argv);
int do_probe(int argc, char **argv);
int do_stream(int argc, char **argv);
int do_record(int argc, char **argv);
int do_dump(int argc, char **argv);
int do_convert(int argc, char **argv);
/* convert_ctf.c: --to ctf through babeltrace2 and MAGNET's plugin */
int convert_ctf(const char *out, int argc, char **argv);
/* convert_perfetto.c: --to perfetto, protobuf TracePackets */
int convert_perfetto(const char *out, int argc, char **argv);
int do_export(int argc, char **argv);
int do_plot(int argc, char **argv);
int do_filter(int argc, char **argv);
int do_synth(int argc, char **argv);
int do_correlate(int argc, char **argv);
int do_sock(int argc, char **argv);

#endif /* MAGNETCTL_H */
