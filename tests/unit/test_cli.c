// SPDX-License-Identifier: GPL-2.0-only
/*
 * magnetctl end to end, in-process: magnetctl_main() with stdout and
 * stderr captured.  Only paths that need no kernel (or that check what
 * happens without MAGNET loaded).
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "magnetctl.h"
#include "tracegen.h"

struct result {
	int code;
	char *out;
	char *err;
};

static char *slurp(FILE *f)
{
	long n;
	char *s;

	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	s = calloc(1, n + 1);
	if (fread(s, 1, n, f) != (size_t)n)
		abort();
	fclose(f);
	return s;
}

/* Run magnetctl with the NULL-terminated arguments; stdout to @out_fd
 * if >= 0 (else captured). */
static struct result run_fd(int out_fd, const char *arg, ...)
{
	FILE *out = tmpfile(), *err = tmpfile();
	int saved_out = dup(1), saved_err = dup(2);
	char *argv[32];
	struct result r;
	int argc = 0;
	va_list ap;

	argv[argc++] = "magnetctl";
	va_start(ap, arg);
	for (; arg && argc < 31; arg = va_arg(ap, const char *))
		argv[argc++] = (char *)arg;
	va_end(ap);
	argv[argc] = NULL;

	fflush(stdout);
	fflush(stderr);
	dup2(out_fd >= 0 ? out_fd : fileno(out), 1);
	dup2(fileno(err), 2);
	r.code = magnetctl_main(argc, argv);
	fflush(stderr);
	if (out_fd >= 0)
		__fpurge(stdout);
	else
		fflush(stdout);
	dup2(saved_out, 1);
	dup2(saved_err, 2);
	close(saved_out);
	close(saved_err);
	r.out = slurp(out);
	r.err = slurp(err);
	return r;
}

#define run(...) run_fd(-1, __VA_ARGS__, NULL)

static void done(struct result *r)
{
	free(r->out);
	free(r->err);
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("expected \"%s\" in \"%s\"", needle, hay);
}

static void test_unknown_object(void **state)
{
	struct result r = run("frobnicate");

	(void)state;
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "unknown object 'frobnicate'");
	assert_string_equal(r.out, "");
	done(&r);
}

static void test_unknown_command(void **state)
{
	struct result r = run("probe", "explode");

	(void)state;
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "magnetctl: probe: unknown command 'explode'");
	done(&r);
	r = run("stream", "nuke", "x");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "stream: unknown command 'nuke'");
	done(&r);
}

static void test_unknown_option(void **state)
{
	struct result r = run("-z", "status");

	(void)state;
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "unknown option '-z'");
	done(&r);
	r = run("--frob", "status");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "unknown option '--frob'");
	done(&r);
}

static void test_no_object(void **state)
{
	struct result r = run(NULL);

	(void)state;
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "Usage:");
	done(&r);
}

static void test_help_version(void **state)
{
	struct result r = run("--help");

	(void)state;
	assert_int_equal(r.code, 0);
	assert_contains(r.out, "Usage: magnetctl [OPTIONS] OBJECT");
	done(&r);
	r = run("-V");
	assert_int_equal(r.code, 0);
	assert_contains(r.out, "magnetctl ");
	done(&r);
	r = run("stream", "help");
	assert_int_equal(r.code, 0);
	assert_contains(r.out, "subbuf-size BYTES");
	done(&r);
}

/* -h/--help after the object: that object's usage, exit 0, nothing run */
static void test_object_help(void **state)
{
	struct result r = run("dump", "--help");

	(void)state;
	assert_int_equal(r.code, 0);
	assert_contains(r.out, "Usage: magnetctl dump [--file-order]");
	assert_contains(r.out, "[--no-header] FILE...");
	assert_null(strstr(r.out, "magnetctl record"));
	done(&r);
	r = run("record", "net", "-o", "/nonexistent/x", "-h");
	assert_int_equal(r.code, 0);
	assert_contains(r.out, "Usage: magnetctl record STREAM -o FILE");
	done(&r);
	r = run("convert", "--help");
	assert_int_equal(r.code, 0);
	assert_contains(r.out, "       magnetctl convert --to perfetto");
	done(&r);
	r = run("status", "--help");
	assert_int_equal(r.code, 0);
	assert_contains(r.out, "Usage: magnetctl status\n");
	done(&r);
	/* objects with commands: their help command */
	r = run("stream", "create", "--help");
	assert_int_equal(r.code, 0);
	assert_contains(r.out, "subbuf-size BYTES");
	done(&r);
	/* after "--" it is a file name */
	r = run("dump", "--", "--help");
	assert_int_equal(r.code, 3);
	done(&r);
}

static void test_json_error(void **state)
{
	struct result r = run("-j", "bogus");

	(void)state;
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_string_equal(r.out,
		"{\"error\":\"unknown object 'bogus' (try 'magnetctl help')\"}\n");
	assert_string_equal(r.err, "");
	done(&r);
}

static void test_bad_arguments(void **state)
{
	struct result r = run("stream", "create", "s0", "subbuf-size", "abc");

	(void)state;
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "bad subbuf-size 'abc'");
	done(&r);
	r = run("stream", "create", "s0", "subbuf-size", "-5");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "'-5'");
	done(&r);
	r = run("stream", "create", "s0", "overwrite", "overwrite");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "'overwrite' given twice");
	done(&r);
	r = run("stream", "snapshot", "s0");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "missing '-o FILE'");
	done(&r);
	r = run("stream", "snapshot", "s0", "-o");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "'-o' needs a FILE");
	done(&r);
	r = run("stream", "snapshot", "s0", "now");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "unexpected argument 'now'");
	done(&r);
	r = run("stream", "freeze");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "stream freeze: missing NAME");
	done(&r);
	r = run("probe", "enable", "tcp_send");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "missing 'stream STREAM'");
	done(&r);
	r = run("probe", "enable", "stream", "s0");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "missing PROBE");
	done(&r);
	r = run("probe", "disable", "99999999999");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "bad probe ID '99999999999'");
	done(&r);
	r = run("status", "extra");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "unexpected argument 'extra'");
	done(&r);
	r = run("record", "s0");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "missing '-o FILE'");
	done(&r);
	r = run("record", "s0", "-o", "/tmp/x", "--duration", "soon");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "bad duration 'soon'");
	done(&r);
}

/* filter add: the grammar is checked before talking to the kernel */
static void test_filter_arguments(void **state)
{
	static const char *const bad[][2] = {
		{ "cpu", "x" }, { "pid", "-1" }, { "id", "1y" },
		{ "every", "0" }, { "period", "0" }, { "period", "5h" },
		{ "priority", "1.5" }, { "cgroup", "/nonexistent/dir" },
	};
	struct result r;
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = run("filter", "add", "f0", bad[i][0], bad[i][1]);
		assert_int_equal(r.code, MC_EXIT_USAGE);
		assert_contains(r.err, bad[i][1]);
		done(&r);
	}
	r = run("filter", "add", "f0", "cpu");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "'cpu' needs a value");
	done(&r);
	r = run("filter", "add", "f0", "colour", "red");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "unexpected argument 'colour'");
	done(&r);
	r = run("filter", "add");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "missing NAME");
	done(&r);
	r = run("filter", "del", "f0", "extra");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	done(&r);
	r = run("filter", "help");
	assert_int_equal(r.code, MC_EXIT_OK);
	assert_contains(r.out, "ACTION   := { drop | [stream STREAM]...");
	done(&r);
}

/* synth add/show: the grammar is checked before talking to the kernel */
static void test_synth_arguments(void **state)
{
	static const char *const bad[][2] = {
		{ "cpu", "x" }, { "pid", "-1" }, { "id", "1y" },
		{ "period", "0" }, { "period", "5h" }, { "keys", "0" },
		{ "by", "socket" }, { "value", "bytes" },
		{ "cgroup", "/nonexistent/dir" },
	};
	struct result r;
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = run("synth", "add", "s0", "probe", "p", bad[i][0], bad[i][1]);
		assert_int_equal(r.code, MC_EXIT_USAGE);
		assert_contains(r.err, bad[i][1]);
		done(&r);
	}
	r = run("synth", "add", "s0", "probe", "p", "value", "field", "4");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "value field needs OFF:WIDTH, got '4'");
	done(&r);
	r = run("synth", "add", "s0", "probe", "p", "by", "cpu,cpu");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "group key 'cpu' named twice");
	done(&r);
	r = run("synth", "add", "s0", "value", "size", "period", "1s",
		"stream", "s");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "missing 'probe PROBE'");
	done(&r);
	r = run("synth", "add", "s0", "probe", "p", "value", "size",
		"period", "1s");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "missing 'stream STREAM'");
	done(&r);
	r = run("synth", "add", "s0", "probe", "p", "value", "size",
		"stream", "s");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "missing 'period DURATION'");
	done(&r);
	r = run("synth", "show", "s0", "values", "socket", "1");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "bad key 'socket'");
	done(&r);
	r = run("synth", "show", "s0", "values", "pid");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "key 'pid' needs a value");
	done(&r);
	r = run("synth", "del", "s0", "extra");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	done(&r);
	r = run("synth", "help");
	assert_int_equal(r.code, MC_EXIT_OK);
	assert_contains(r.out, "GROUP    := { event | cpu | id | pid | tgid | cgroup }");
	done(&r);
}

/* This host has no MAGNET: exit 4 and say so (skipped where loaded). */
static void test_not_loaded(void **state)
{
	struct result r = run("status");

	(void)state;
	if (r.code == 0) {
		done(&r);
		skip();
	}
	assert_int_equal(r.code, MC_EXIT_NOTLOADED);
	assert_string_equal(r.err,
		"magnetctl: MAGNET is not loaded (no generic netlink family 'magnet'); "
		"load it with 'modprobe magnet_net' (the core, magnet, comes with it) as root\n");
	done(&r);
	r = run("-j", "stream", "list");
	assert_int_equal(r.code, MC_EXIT_NOTLOADED);
	assert_contains(r.out, "{\"error\":\"MAGNET is not loaded");
	done(&r);
	/* sock show reads the sockstat file, not the family: same answer */
	r = run("sock", "show", "1");
	assert_int_equal(r.code, MC_EXIT_NOTLOADED);
	assert_contains(r.err, "MAGNET is not loaded; load it with 'modprobe magnet_net'");
	done(&r);
}

/* The help's exit codes are magnetctl(8)'s, all seven. */
static void test_help_exit_codes(void **state)
{
	struct result r = run("help");

	(void)state;
	assert_int_equal(r.code, MC_EXIT_OK);
	assert_contains(r.out, "Exit: 0 ok, 1 usage, 2 kernel refused, 3 file/trace error, 4 not loaded,\n"
			       "      5 no such object, 6 not permitted");
	done(&r);
}

static void test_record_missing_stream_file(void **state)
{
	struct result r = run("record", "/nonexistent/magnet/s0", "-o",
			      "/tmp/magnet-test-never-written");

	(void)state;
	assert_int_equal(r.code, MC_EXIT_NOENT);
	assert_contains(r.err, "/nonexistent/magnet/s0");
	assert_int_equal(access("/tmp/magnet-test-never-written", F_OK), -1);
	done(&r);
}

#define STR_(x) #x
#define STR(x) STR_(x)
/* the trace says the format this build writes */
#define SYSINFO_TEXT							\
	"stream=s0 release=6.1.0-test clock=monotonic clock_hz=1000000000 " \
	"wall_ns_at_zero=1700000000000000000 nr_cpus=8 subbuf_size=262144 " \
	"subbuf_count=2 flags=0x0 format=" STR(MAGNET_FORMAT_MAJOR) "."	\
	STR(MAGNET_FORMAT_MINOR) " abi=1"
#define NET_TEXT							\
	"len=1448 ifindex=2 proto=6 flags=0x1 gso_size=0 gso_segs=0"

static void build_trace(struct tbuf *tb)
{
	static const char raw[24];

	tb_init(tb, false);
	tb_sysinfo(tb, 1000);
	tb_eventdef(tb, 16, "tcp_send", MAGNET_LAYER_TRANSPORT,
		    MAGNET_PAYLOAD_NET);
	tb_net(tb, 16, 1448, 2, 6, MAGNET_NET_F_TX);
	tb_lost(tb, 5);
	tb_rec(tb, 40, 0, 3000000000ull, raw, sizeof(raw));
}

/*
 * Every command's options through getopt_long: --opt=VALUE and --opt VALUE,
 * options after the positional arguments, -j anywhere on the line; bad
 * ones named in the message.
 */
static void test_long_options(void **state)
{
	struct tbuf tb;
	const char *path;
	struct result r;

	(void)state;
	build_trace(&tb);
	path = tb_write_tmp(&tb, tb.len);
	/* options after FILE, --opt=V: the same output as before it */
	r = run("dump", path, "--no-header", "--format=csv", "--time", "wall");
	assert_int_equal(r.code, 0);
	assert_contains(r.out, "\n2023-11-14T22:13:21.500000000Z,3,4242,4240,,tcp_send,");
	assert_true(strncmp(r.out, "time,", 5) != 0);	/* --no-header */
	done(&r);
	/* -j after the object and after FILE */
	r = run("dump", path, "-j");
	assert_int_equal(r.code, 0);
	assert_contains(r.out, "\"name\":\"tcp_send\"");
	done(&r);
	/* -jp after the object, as before it: pretty JSON (indented) */
	r = run("dump", path, "-jp");
	assert_int_equal(r.code, 0);
	assert_contains(r.out, "\n  ");
	assert_contains(r.out, "\"name\": \"tcp_send\"");
	done(&r);
	/* a value for an option that takes none is named as such */
	r = run("dump", path, "--no-header=1");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "dump: --no-header takes no value");
	done(&r);
	r = run("dump", "--bogus", path);
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "dump: unknown option '--bogus'");
	done(&r);
	r = run("dump", path, "--time");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "dump: --time needs a value");
	done(&r);
	/* "--" ends the options: a FILE named -j is a file, not an option */
	r = run("dump", "--", "-j");
	assert_int_equal(r.code, MC_EXIT_FILE);
	assert_contains(r.err, "-j");
	done(&r);
	unlink(path);
	tb_free(&tb);

	/* record: parsed before the kernel is asked */
	r = run("record", "s0", "-o", "/tmp/x", "--duration=soon");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "record: bad duration 'soon'");
	done(&r);
	r = run("record", "--watermark=12Q", "s0", "-o", "/tmp/x");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "record: bad watermark '12Q'");
	done(&r);
	r = run("record", "s0", "-o");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "record: '-o' needs a value");
	done(&r);
	r = run("record", "s0", "--output=/tmp/x", "--frobnicate", "1");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "record: unknown option '--frobnicate'");
	done(&r);
	r = run("record", "s0", "s1", "-o", "/tmp/x");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "record: unexpected argument 's1'");
	done(&r);
	r = run("record", "--switch-timer=10", "--timeout=5", "s0", "-o", "/tmp/x");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "give one of --switch-timer and --timeout");
	done(&r);
	/* a stream path given as --output=FILE -j STREAM: reaches the open */
	r = run("record", "--output=/tmp/magnet-test-never-written", "-j",
		"/nonexistent/magnet/s0");
	assert_int_equal(r.code, MC_EXIT_NOENT);
	assert_contains(r.out, "{\"error\":\"record: open stream /nonexistent/magnet/s0");
	done(&r);

	/* convert and stream snapshot */
	r = run("convert", "in.trace", "--to=svg");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "convert: unknown format 'svg'");
	done(&r);
	r = run("convert", "--to", "pcapng", "--output");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "convert: --output needs a value");
	done(&r);
	r = run("stream", "snapshot", "-o");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "stream snapshot: '-o' needs a FILE");
	done(&r);
	r = run("stream", "snapshot", "--output=/tmp/x");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "stream snapshot: missing NAME");
	done(&r);
	r = run("stream", "snapshot", "--force", "s0");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "stream snapshot: unknown option '--force'");
	done(&r);
}

static void test_dump_text(void **state)
{
	struct tbuf tb;
	const char *path;
	struct result r;

	(void)state;
	build_trace(&tb);
	path = tb_write_tmp(&tb, tb.len);
	r = run("dump", "--file-order", path);
	assert_int_equal(r.code, 0);
	assert_string_equal(r.out,
		"# time\tcpu\tpid\tevent\tabstract_id\tsize\tdetails\n"
		"0.000001000\t3\t4242\tSYSINFO\t73588229205\t152\t" SYSINFO_TEXT "\n"
		"0.000000000\t3\t4242\tEVENTDEF\t73588229205\t40\t"
		"id=16 name=tcp_send layer=transport payload=net\n"
		"1.500000000\t3\t4242\ttcp_send\t73588229205\t1448\t" NET_TEXT "\n"
		"0.000000000\t3\t4242\tLOST\t73588229205\t5\tcount=5\n"
		"3.000000000\t3\t4242\tevent40\t73588229205\t24\n");
	assert_string_equal(r.err, "");
	done(&r);
	/* by default in time order: metadata first, then by timestamp */
	r = run("dump", "--no-header", path);
	assert_int_equal(r.code, 0);
	assert_string_equal(r.out,
		"0.000001000\t3\t4242\tSYSINFO\t73588229205\t152\t" SYSINFO_TEXT "\n"
		"0.000000000\t3\t4242\tEVENTDEF\t73588229205\t40\t"
		"id=16 name=tcp_send layer=transport payload=net\n"
		"0.000000000\t3\t4242\tLOST\t73588229205\t5\tcount=5\n"
		"1.500000000\t3\t4242\ttcp_send\t73588229205\t1448\t" NET_TEXT "\n"
		"3.000000000\t3\t4242\tevent40\t73588229205\t24\n");
	assert_string_equal(r.err, "");
	done(&r);
	/* the time column: wall clock (SYSINFO's wall_ns_at_zero + time) */
	r = run("dump", "--no-header", "--time", "wall", path);
	assert_int_equal(r.code, 0);
	assert_contains(r.out, "2023-11-14T22:13:21.500000000Z\t3\t4242\ttcp_send\t");
	assert_contains(r.out, "2023-11-14T22:13:23.000000000Z\t3\t4242\tevent40\t");
	done(&r);
	/* since the first record (SYSINFO at 1 us); since the previous one */
	r = run("dump", "--no-header", "--time=rel", path);
	assert_int_equal(r.code, 0);
	assert_contains(r.out, "0.000000000\t3\t4242\tSYSINFO\t");
	assert_contains(r.out, "-0.000001000\t3\t4242\tEVENTDEF\t");
	assert_contains(r.out, "1.499999000\t3\t4242\ttcp_send\t");
	done(&r);
	r = run("dump", "--no-header", "--time", "delta", path);
	assert_int_equal(r.code, 0);
	assert_contains(r.out, "1.500000000\t3\t4242\ttcp_send\t");
	assert_contains(r.out, "1.500000000\t3\t4242\tevent40\t");
	done(&r);
	r = run("dump", "--time", "local", path);
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "--time takes raw, wall, rel or delta");
	done(&r);
	r = run("dump", "--format", path);
	assert_int_equal(r.code, MC_EXIT_USAGE);
	done(&r);
	/* CSV: a header row, one row per record, details in one column */
	r = run("dump", "--format", "csv", "--time", "wall", path);
	assert_int_equal(r.code, 0);
	assert_contains(r.out, "time,cpu,pid,tgid,comm,event,abstract_id,size,details\n"
			"2023-11-14T22:13:20.000001000Z,3,4242,4240,,SYSINFO,73588229205,152,");
	assert_contains(r.out, "\n2023-11-14T22:13:21.500000000Z,3,4242,4240,,tcp_send,"
			"73588229205,1448," NET_TEXT "\n");
	assert_contains(r.out, ",event40,73588229205,24,\n");
	done(&r);
	unlink(path);
	tb_free(&tb);
}

/*
 * Thread names: a sched_exec record (at 2 s) names thread 4242; every
 * record of that thread shows it, also the ones before it (text, CSV, -j).
 */
static void test_dump_comm(void **state)
{
	struct magnet_sched_exec_payload ex;
	struct tbuf tb;
	const char *path;
	struct result r;

	(void)state;
	memset(&ex, 0, sizeof(ex));
	ex.pid = TB_PID;
	ex.tgid = TB_TGID;
	strcpy(ex.comm, "my app");
	strcpy(ex.filename, "/usr/bin/app");
	tb_init(&tb, false);
	tb_sysinfo(&tb, 1000);
	tb_eventdef(&tb, 16, "tcp_send", MAGNET_LAYER_TRANSPORT,
		    MAGNET_PAYLOAD_NET);
	tb_eventdef(&tb, 17, "sched_exec", MAGNET_LAYER_SCHED,
		    MAGNET_PAYLOAD_SCHED_EXEC);
	tb_net(&tb, 16, 1448, 2, 6, MAGNET_NET_F_TX);
	tb_rec(&tb, 17, 0, 2000000000ull, &ex, sizeof(ex));
	path = tb_write_tmp(&tb, tb.len);
	r = run("dump", path);
	assert_int_equal(r.code, 0);
	assert_contains(r.out, "\ttcp_send\t73588229205\t1448\t" NET_TEXT
			" comm=my\\x20app\n");
	assert_contains(r.out, "2.000000000\t3\t4242\tsched_exec\t73588229205\t96\t"
			"pid=4242 tgid=4240 old_pid=0 comm=my\\x20app "
			"filename=/usr/bin/app comm=my\\x20app\n");
	done(&r);
	r = run("dump", "--format", "csv", path);
	assert_int_equal(r.code, 0);
	assert_contains(r.out, ",4242,4240,my app,tcp_send,");
	done(&r);
	r = run("-j", "dump", path);
	assert_int_equal(r.code, 0);
	assert_contains(r.out, "\"tgid\":4240,\"comm\":\"my app\",\"event\":16,");
	assert_contains(r.out, "\"wall_ns\":1700000001500000000,");
	done(&r);
	unlink(path);
	tb_free(&tb);
}

/* An ip_hdr_* record with the first 40 bytes of an IPv4/TCP packet. */
static void tb_ip(struct tbuf *tb, __u16 event, __u64 ts, __u32 ifindex,
		  __u16 flags, unsigned char last_octet)
{
	unsigned char p[sizeof(struct magnet_ip_payload) + 40];
	struct magnet_ip_payload ip;
	static const unsigned char hdr[40] = {
		0x45, 0, 0x05, 0xdc, 0x12, 0x34, 0x40, 0, 64, 6, 0, 0,
		10, 0, 0, 1, 10, 0, 0, 2,		/* 10.0.0.1 > 10.0.0.2 */
		0xc3, 0x50, 0x13, 0x89,			/* 50000 > 5001 */
		0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0xff, 0xff, 0, 0, 0, 0,
	};

	memset(&ip, 0, sizeof(ip));
	ip.version = 4;
	ip.ihl = 5;
	ip.ttl = 64;
	ip.protocol = 6;
	ip.id = 0x1234;
	ip.tot_len = 1500;
	ip.ifindex = ifindex;
	ip.len = 1500;
	ip.hdr_len = 40;
	ip.flags = flags;
	memcpy(p, &ip, sizeof(ip));
	memcpy(p + sizeof(ip), hdr, sizeof(hdr));
	p[sizeof(ip) + 19] = last_octet;
	tb_rec(tb, event, 0, ts, p, sizeof(p));
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/*
 * convert --to pcapng: a section header, an interface per (ifindex,
 * event) before its first packet, a packet per ip_hdr record with bytes
 * (the bytes, the wall-clock time in ns, the IP total length, a comment);
 * a record without bytes and other records are left out.
 */
static void test_convert_pcapng(void **state)
{
	unsigned char buf[4096];
	struct tbuf tb;
	char in[64], out[64];
	unsigned int nidb = 0, nepb = 0;
	struct result r;
	size_t n, off;
	FILE *f;
	int fd;

	(void)state;
	tb_init(&tb, false);
	tb_sysinfo(&tb, 1000);
	tb_eventdef(&tb, 16, "ip_hdr_send", MAGNET_LAYER_NETWORK,
		    MAGNET_PAYLOAD_IP);
	tb_eventdef(&tb, 17, "ip_hdr_recv", MAGNET_LAYER_NETWORK,
		    MAGNET_PAYLOAD_IP);
	tb_eventdef(&tb, 18, "tcp_send", MAGNET_LAYER_TRANSPORT,
		    MAGNET_PAYLOAD_NET);
	tb_ip(&tb, 16, 2000000000ull, 2, MAGNET_NET_F_TX, 2);
	tb_net(&tb, 18, 1448, 2, 6, MAGNET_NET_F_TX);
	tb_ip(&tb, 17, 2500000000ull, 2, MAGNET_NET_F_RX, 3);
	tb_ip(&tb, 16, 3000000000ull, 2, MAGNET_NET_F_TX, 4);
	tb_ip(&tb, 16, 3500000000ull, 3, MAGNET_NET_F_TX, 5);
	snprintf(in, sizeof(in), "%s", tb_write_tmp(&tb, tb.len));
	snprintf(out, sizeof(out), "/tmp/magnet-test-XXXXXX");
	fd = mkstemp(out);
	assert_true(fd >= 0);
	close(fd);
	r = run("convert", "--to", "pcapng", "-o", out, in);
	assert_int_equal(r.code, 0);
	assert_string_equal(r.err, "");
	assert_contains(r.out, ": 4 packets on 3 interfaces (0 ip_hdr records without packet bytes)\n");
	done(&r);
	f = fopen(out, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	assert_true(n > 28);
	assert_int_equal(get32(buf), 0x0A0D0D0A);
	assert_int_equal(get32(buf + 8), 0x1A2B3C4D);
	for (off = 0; off + 12 <= n; off += get32(buf + off + 4)) {
		uint32_t type = get32(buf + off), len = get32(buf + off + 4);

		assert_true(len >= 12 && len % 4 == 0 && off + len <= n);
		assert_int_equal(get32(buf + off + len - 4), len);
		if (type == 1) {
			nidb++;
			assert_int_equal(get32(buf + off + 8) & 0xffff, 101);
			assert_non_null(memmem(buf + off, len, "if2:ip_hdr_send", 15) ?:
					memmem(buf + off, len, "if2:ip_hdr_recv", 15) ?:
					memmem(buf + off, len, "if3:ip_hdr_send", 15));
		} else if (type == 6) {
			uint64_t ts = (uint64_t)get32(buf + off + 12) << 32 |
				      get32(buf + off + 16);

			/* the interfaces come before their packets */
			assert_true(get32(buf + off + 8) < nidb);
			assert_int_equal(get32(buf + off + 20), 40);
			assert_int_equal(get32(buf + off + 24), 1500);
			assert_int_equal(buf[off + 28], 0x45);
			assert_int_equal(buf[off + 28 + 19], 2 + nepb);
			assert_true(ts == 1700000000000000000ull + 2000000000ull +
					  500000000ull * nepb);
			assert_non_null(memmem(buf + off, len,
					       "cpu=3 pid=4242 tgid=4240 socket=73588229205", 43));
			nepb++;
		}
	}
	assert_int_equal(off, n);
	assert_int_equal(nidb, 3);
	assert_int_equal(nepb, 4);
	/* to standard output; a trace without packet bytes: a header only */
	r = run("convert", "--to=pcapng", in);
	assert_int_equal(r.code, 0);
	assert_int_equal(get32((const unsigned char *)r.out), 0x0A0D0D0A);
	done(&r);
	r = run("convert", "--to", "ctf", in);
	assert_int_equal(r.code, MC_EXIT_USAGE);
	done(&r);
	r = run("convert", in);
	assert_int_equal(r.code, MC_EXIT_USAGE);
	done(&r);
	unlink(out);
	unlink(in);
	tb_free(&tb);
}

/*
 * An application's write() (entry 1.4 s, exit 1.6 s, in the stream at
 * 2.0 s) sorts before the kernel's tcp_send of the same call (1.5 s), also
 * when the two come from different files.
 */
static void test_dump_app(void **state)
{
	const char *app_line =
		"1.400000000\t3\t4242\tAPP\t73588229205\t10240"
		"\twrite fd=3 req=10240 ret=10240 dur=200000000ns\n";
	struct tbuf tb, tb2;
	char p1[64], p2[64];
	struct result r;

	(void)state;
	tb_init(&tb, false);
	tb_sysinfo(&tb, 1000);
	tb_eventdef(&tb, 16, "tcp_send", MAGNET_LAYER_TRANSPORT,
		    MAGNET_PAYLOAD_NET);
	tb_net(&tb, 16, 10240, 2, 6, MAGNET_NET_F_TX);
	tb_app(&tb, 2000000000ull, MAGNET_APP_WRITE, 1400000000ull,
	       1600000000ull, 10240);
	snprintf(p1, sizeof(p1), "%s", tb_write_tmp(&tb, tb.len));
	r = run("dump", p1);
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, app_line));
	assert_true(strstr(r.out, app_line) < strstr(r.out, "tcp_send\t"));
	done(&r);

	r = run("-j", "dump", p1);
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, "\"app\":{\"call\":\"write\",\"fd\":3,"
				   "\"req\":10240,\"ret\":10240,"
				   "\"entry_ns\":1400000000,\"exit_ns\":1600000000"));
	done(&r);

	/* the application's records in a file of their own */
	tb_init(&tb2, true);
	tb_sysinfo(&tb2, 1000);
	tb_app(&tb2, 2000000000ull, MAGNET_APP_WRITE, 1400000000ull,
	       1600000000ull, 10240);
	tb_app(&tb2, 2000000000ull, MAGNET_APP_RECV, 1700000000ull,
	       1800000000ull, -11);
	tb.len = 0;
	tb_sysinfo(&tb, 1000);
	tb_eventdef(&tb, 16, "tcp_send", MAGNET_LAYER_TRANSPORT,
		    MAGNET_PAYLOAD_NET);
	tb_net(&tb, 16, 10240, 2, 6, MAGNET_NET_F_TX);
	snprintf(p1, sizeof(p1), "%s", tb_write_tmp(&tb, tb.len));
	snprintf(p2, sizeof(p2), "%s", tb_write_tmp(&tb2, tb2.len));
	r = run("dump", p1, p2);
	assert_int_equal(r.code, 0);
	assert_non_null(strstr(r.out, app_line));
	assert_true(strstr(r.out, app_line) < strstr(r.out, "tcp_send\t"));
	assert_non_null(strstr(r.out, "recv fd=3 req=10240 ret=-11"));
	assert_true(strstr(r.out, "tcp_send\t") < strstr(r.out, "recv fd="));
	done(&r);
	r = run("dump", "--file-order", p1, p2);
	assert_int_equal(r.code, MC_EXIT_USAGE);
	done(&r);
	unlink(p1);
	unlink(p2);
	tb_free(&tb);
	tb_free(&tb2);
}

/* CORR records through the sorted dump, in both byte orders (the steps
 * need the decoder of the record being printed). */
static void test_dump_corr(void **state)
{
	struct tbuf tb;
	struct result r;
	char p[64];
	int swap;

	(void)state;
	for (swap = 0; swap < 2; swap++) {
		tb_init(&tb, swap);
		tb_sysinfo(&tb, 1000);
		tb_corr(&tb, 3000000000ull, 2000000000ull, 17, 18, 12345, 1400);
		snprintf(p, sizeof(p), "%s", tb_write_tmp(&tb, tb.len));
		r = run("dump", p);
		assert_int_equal(r.code, 0);
		assert_non_null(strstr(r.out, "CORR"));
		assert_non_null(strstr(r.out, "+12345ns(1)"));
		done(&r);
		r = run("-j", "dump", p);
		assert_int_equal(r.code, 0);
		assert_non_null(strstr(r.out, "\"delta_ns\":12345"));
		done(&r);
		unlink(p);
		tb_free(&tb);
	}
}

static void test_dump_json(void **state)
{
	struct tbuf tb;
	const char *path;
	struct result r;
	char *line, *save = NULL;
	int n = 0;

	(void)state;
	build_trace(&tb);
	tb.swap = true;		/* decoding must not depend on byte order */
	tb.len = 0;
	tb_sysinfo(&tb, 1000);
	tb_eventdef(&tb, 16, "tcp_send", MAGNET_LAYER_TRANSPORT,
		    MAGNET_PAYLOAD_NET);
	tb_net(&tb, 16, 1448, 2, 6, MAGNET_NET_F_TX);
	tb_lost(&tb, 5);
	path = tb_write_tmp(&tb, tb.len);
	r = run("--json", "dump", path);
	assert_int_equal(r.code, 0);
	for (line = strtok_r(r.out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), n++) {
		assert_true(line[0] == '{');
		assert_contains(line, "\"cpu\":3,\"pid\":4242,\"tgid\":4240");
	}
	assert_int_equal(n, 4);
	done(&r);
	r = run("-j", "dump", path);
	assert_contains(r.out, "\"sysinfo\":{\"endian\":19088743,");
	assert_contains(r.out, "\"release\":\"6.1.0-test\"");
	assert_contains(r.out, "\"eventdef\":{\"id\":16,\"name\":\"tcp_send\",\"layer\":2,\"payload\":1}");
	assert_contains(r.out, "\"name\":\"tcp_send\",\"abstract_id\":73588229205,\"size\":48,\"net\":{\"len\":1448,\"ifindex\":2,\"proto\":6,\"flags\":1,\"gso_size\":0,\"gso_segs\":0}}");
	assert_contains(r.out, "\"lost\":{\"count\":5}");
	done(&r);
	unlink(path);
	tb_free(&tb);
}

static void test_dump_corrupt(void **state)
{
	struct tbuf tb;
	const char *path;
	struct result r;
	char want[256];

	(void)state;
	build_trace(&tb);
	path = tb_write_tmp(&tb, tb.len - 8);
	r = run("dump", path);
	assert_int_equal(r.code, MC_EXIT_FILE);
	/* Every good record is printed ... */
	assert_contains(r.out, "\tLOST\t");
	assert_null(strstr(r.out, "event40"));
	/* ... then the error names the file, offset and reason. */
	snprintf(want, sizeof(want),
		 "magnetctl: dump: %s: offset %zu: truncated record: needs 56 bytes, 48 left\n",
		 path, tb.len - 56);
	assert_string_equal(r.err, want);
	done(&r);
	unlink(path);
	tb_free(&tb);
}

static void test_dump_not_a_trace(void **state)
{
	struct tbuf tb;
	const char *path;
	struct result r;

	(void)state;
	tb_init(&tb, false);
	path = tb_write_tmp(&tb, 0);
	r = run("dump", path);
	assert_int_equal(r.code, MC_EXIT_FILE);
	assert_contains(r.err, "empty file");
	done(&r);
	unlink(path);

	tb_rec(&tb, 7, 0, 0, "not magnet at all", 18);
	path = tb_write_tmp(&tb, tb.len);
	r = run("dump", path);
	assert_int_equal(r.code, MC_EXIT_FILE);
	assert_contains(r.err, "not a MAGNET trace");
	assert_string_equal(r.out, "");
	done(&r);
	unlink(path);
	tb_free(&tb);

	r = run("dump", "/nonexistent/trace");
	assert_int_equal(r.code, MC_EXIT_FILE);
	assert_contains(r.err, "/nonexistent/trace: No such file or directory");
	done(&r);
}

static void test_stdout_error(void **state)
{
	int full = open("/dev/full", O_WRONLY);
	struct result r;

	(void)state;
	if (full < 0)
		skip();
	r = run_fd(full, "help", NULL);
	close(full);
	assert_int_equal(r.code, MC_EXIT_FILE);
	assert_contains(r.err, "write error on standard output");
	done(&r);
}

/* Read a whole file into a string (caller frees); NULL if missing. */
static char *file_text(const char *path)
{
	FILE *f = fopen(path, "r");

	return f ? slurp(f) : NULL;
}

/* magnetctl plot through the real gnuplot: images, data, script, errors. */
static void test_plot(void **state)
{
	char out[] = "/tmp/magnet-plot-XXXXXX", img[64], dat[80], gp[80], opt[80];
	unsigned char magic[8];
	struct result r;
	struct tbuf tb;
	const char *path;
	char *txt;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(out));
	tb_init(&tb, false);
	tb_sysinfo(&tb, 0);
	tb_eventdef(&tb, 16, "udp_send", MAGNET_LAYER_TRANSPORT, MAGNET_PAYLOAD_NET);
	tb_eventdef(&tb, 17, "ip_send", MAGNET_LAYER_NETWORK, MAGNET_PAYLOAD_NET);
	tb_net(&tb, 16, 3000, 2, 0x0800, MAGNET_NET_F_TX);
	tb_net(&tb, 17, 1428, 2, 0x0800, MAGNET_NET_F_TX);
	tb_corr(&tb, 1600000000ull, 1500000000ull, 16, 17, 2500, 3000);
	path = tb_write_tmp(&tb, tb.len);

	snprintf(img, sizeof(img), "%s/layers.png", out);
	snprintf(dat, sizeof(dat), "%s.dat", img);
	snprintf(gp, sizeof(gp), "%s.gp", img);
	r = run("plot", "layers", "-o", img, path);
	assert_int_equal(r.code, MC_EXIT_OK);
	assert_contains(r.out, "2 series, socket 73588229205");
	done(&r);
	f = fopen(img, "rb");
	assert_non_null(f);
	assert_int_equal(fread(magic, 1, 8, f), 8);
	fclose(f);
	assert_memory_equal(magic, "\x89PNG\r\n\x1a\n", 8);
	txt = file_text(dat);
	assert_non_null(txt);
	assert_contains(txt, "# SERIES udp_send\n0.000000000 3000\n");
	assert_contains(txt, "# SERIES ip_send\n0.000000000 1428\n");
	free(txt);
	txt = file_text(gp);
	assert_non_null(txt);
	assert_contains(txt, "set terminal pngcairo");
	assert_contains(txt, "title \"ip_send\"");
	free(txt);

	/* latency: a CDF per step, in microseconds; SVG */
	snprintf(img, sizeof(img), "%s/lat.svg", out);
	snprintf(dat, sizeof(dat), "%s.dat", img);
	r = run("plot", "latency", "--format", "svg", "-o", img, path);
	assert_int_equal(r.code, MC_EXIT_OK);
	done(&r);
	txt = file_text(dat);
	assert_non_null(txt);
	assert_contains(txt, "# SERIES 1: udp_send -> ip_send\n2.500 1.000000\n");
	free(txt);
	txt = file_text(img);
	assert_non_null(txt);
	assert_contains(txt, "<svg");
	free(txt);

	/* options anywhere, --opt=value too (getopt_long) */
	snprintf(img, sizeof(img), "%s/lat2.svg", out);
	r = run("plot", "latency", path, "-o", img, "--format=svg");
	assert_int_equal(r.code, MC_EXIT_OK);
	assert_contains(r.out, "lat2.svg: 1 series");
	done(&r);
	/* options before the figure, as the other commands take them */
	snprintf(img, sizeof(img), "%s/lat3.svg", out);
	r = run("plot", "--format=svg", "-o", img, "latency", path);
	assert_int_equal(r.code, MC_EXIT_OK);
	assert_contains(r.out, "lat3.svg: 1 series");
	done(&r);
	txt = file_text(img);
	assert_non_null(txt);
	assert_contains(txt, "<svg");
	free(txt);
	/* --output=FILE and --output FILE: the long form of -o */
	snprintf(img, sizeof(img), "%s/rate-eq.png", out);
	snprintf(opt, sizeof(opt), "--output=%s", img);
	r = run("plot", "rate", opt, path);
	assert_int_equal(r.code, MC_EXIT_OK);
	assert_contains(r.out, "rate-eq.png: 1 series");
	done(&r);
	f = fopen(img, "rb");
	assert_non_null(f);
	assert_int_equal(fread(magic, 1, 8, f), 8);
	fclose(f);
	assert_memory_equal(magic, "\x89PNG\r\n\x1a\n", 8);
	snprintf(img, sizeof(img), "%s/rate-sp.png", out);
	snprintf(dat, sizeof(dat), "%s.dat", img);
	r = run("plot", "--output", img, "rate", path);
	assert_int_equal(r.code, MC_EXIT_OK);
	assert_contains(r.out, "rate-sp.png: 1 series");
	done(&r);
	f = fopen(img, "rb");
	assert_non_null(f);
	assert_int_equal(fread(magic, 1, 8, f), 8);
	fclose(f);
	assert_memory_equal(magic, "\x89PNG\r\n\x1a\n", 8);
	txt = file_text(dat);
	assert_non_null(txt);
	assert_contains(txt, "# SERIES cpu3\n");
	free(txt);
	/* an unknown option before the figure is named, not taken for one */
	r = run("plot", "--bogus", "layers", "-o", img, path);
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "plot: unknown option '--bogus'");
	done(&r);
	r = run("plot", "layers", path, "--output");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "plot: --output needs a value");
	done(&r);
	r = run("plot", "-o", img);
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "plot: missing FIGURE");
	done(&r);
	/* "--" ends the options: a trace file named --frob is a file */
	r = run("plot", "-o", img, "rate", "--", "--frob");
	assert_int_equal(r.code, MC_EXIT_FILE);
	assert_contains(r.err, "plot: --frob: ");
	done(&r);

	/* rate: 200 bins per CPU */
	snprintf(img, sizeof(img), "%s/rate.png", out);
	snprintf(dat, sizeof(dat), "%s.dat", img);
	r = run("plot", "rate", "-o", img, path);
	assert_int_equal(r.code, MC_EXIT_OK);
	done(&r);
	txt = file_text(dat);
	assert_non_null(txt);
	assert_contains(txt, "# SERIES cpu3\n");
	free(txt);

	/* nothing to draw, bad arguments */
	snprintf(img, sizeof(img), "%s/tcp.png", out);
	r = run("plot", "tcp", "-o", img, path);
	assert_int_equal(r.code, MC_EXIT_FILE);
	assert_contains(r.err, "no tcp_state records");
	done(&r);
	r = run("plot", "pie", "-o", img, path);
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "unknown figure 'pie'");
	done(&r);
	r = run("plot", "layers", "--format", "gif", "-o", img, path);
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "--format 'gif'");
	done(&r);
	r = run("plot", "rate", "--id", "5", "-o", img, path);
	assert_int_equal(r.code, MC_EXIT_USAGE);
	done(&r);
	r = run("plot", "layers", path);
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "missing -o OUT");
	done(&r);
	r = run("plot", "layers", path, "--size", "3");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "unknown option '--size'");
	done(&r);
	r = run("plot", "layers", path, "-o");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "-o needs a value");
	done(&r);
	/* export's arguments, checked before it listens */
	r = run("export", "--max-keys=x");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "--max-keys 'x': not a number");
	done(&r);
	r = run("export", "--listen");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "--listen needs a value");
	done(&r);
	r = run("export", "now");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "unexpected argument 'now'");
	done(&r);
	r = run("export", "--listen=nonsense");
	assert_int_equal(r.code, MC_EXIT_USAGE);
	assert_contains(r.err, "'nonsense': expected ADDR:PORT");
	done(&r);
	unlink(path);
	tb_free(&tb);
	snprintf(dat, sizeof(dat), "rm -rf %s", out);
	assert_int_equal(system(dat), 0);
}

/*
 * convert --to perfetto, decoded by perfetto's own protos (the perfetto
 * Python package): tracks, instants, slices, annotations, the clock.
 */
static void test_perfetto(void **state)
{
	static const char check[] =
		"python3 -c '\n"
		"import sys\n"
		"from collections import Counter\n"
		"from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as p\n"
		"t = p.Trace(); t.ParseFromString(open(sys.argv[1], \"rb\").read())\n"
		"names = {k.track_descriptor.uuid: k.track_descriptor.name for k in t.packet if k.HasField(\"track_descriptor\")}\n"
		"c = Counter((names[k.track_event.track_uuid], k.track_event.type, k.track_event.name) for k in t.packet if k.HasField(\"track_event\"))\n"
		"for k, v in sorted(c.items()): print(\"%%s|%%d|%%s=%%d\" %% (k[0], k[1], k[2], v))\n"
		"e = [k for k in t.packet if k.track_event.name == \"udp_send\"][0]\n"
		"print(\"first\", e.timestamp, sorted((a.name, a.uint_value or a.int_value) for a in e.track_event.debug_annotations if not a.dict_entries))\n"
		"print(\"payload\", [[(d.name, d.uint_value) for d in a.dict_entries] for a in e.track_event.debug_annotations if a.name == \"payload\"])\n"
		"print(\"clocks\", sorted((x.clock_id, x.timestamp) for x in t.packet[0].clock_snapshot.clocks))\n"
		"' %s";
	char out[] = "/tmp/magnet-pf-XXXXXX", file[64], cmd[4096], *txt = NULL;
	struct result r;
	struct tbuf tb;
	const char *path;
	size_t len = 0;
	FILE *p;
	int c;

	(void)state;
	assert_non_null(mkdtemp(out));
	tb_init(&tb, false);
	tb_sysinfo(&tb, 0);
	tb_eventdef(&tb, 16, "udp_send", MAGNET_LAYER_TRANSPORT, MAGNET_PAYLOAD_NET);
	tb_eventdef(&tb, 17, "ip_send", MAGNET_LAYER_NETWORK, MAGNET_PAYLOAD_NET);
	tb_net(&tb, 16, 3000, 2, 0x0800, MAGNET_NET_F_TX);
	tb_net(&tb, 17, 1428, 2, 0x0800, MAGNET_NET_F_TX);
	tb_lost(&tb, 7);
	tb_corr(&tb, 1600000000ull, 1500000000ull, 16, 17, 2500, 3000);
	path = tb_write_tmp(&tb, tb.len);
	snprintf(file, sizeof(file), "%s/t.pftrace", out);
	r = run("convert", "--to", "perfetto", "-o", file, path);
	assert_int_equal(r.code, MC_EXIT_OK);
	assert_contains(r.out, "3 events, 2 slices, 0 counter values on 4 tracks");
	done(&r);
	snprintf(cmd, sizeof(cmd), check, file);
	p = popen(cmd, "r");
	assert_non_null(p);
	{
		FILE *m = open_memstream(&txt, &len);

		while ((c = fgetc(p)) != EOF)
			fputc(c, m);
		fclose(m);
	}
	assert_int_equal(pclose(p), 0);
	/* every event on its CPU's track, network ones on their socket's too */
	assert_contains(txt, "cpu 3|3|udp_send=1\n");
	assert_contains(txt, "cpu 3|3|ip_send=1\n");
	assert_contains(txt, "cpu 3|3|LOST=1\n");
	assert_contains(txt, "socket 73588229205|3|udp_send=1\n");
	assert_contains(txt, "socket 73588229205|3|ip_send=1\n");
	/* the chain and its step as nested slices */
	assert_contains(txt, "correlator 1 lane 0|1|chain=1\n");
	assert_contains(txt, "correlator 1 lane 0|1|udp_send -> ip_send=1\n");
	assert_contains(txt, "correlator 1 lane 0|2|=2\n");
	assert_contains(txt, "first 1500000000 [('bytes', 3000), ('pid', 4242), ('socket', 73588229205), ('tgid', 4240)]\n");
	/* every field of the net payload, in the table's order */
	assert_contains(txt, "payload [[('len', 3000), ('ifindex', 2), ('proto', 2048), ('flags', 1), ('gso_size', 0), ('gso_segs', 0)]]\n");
	assert_contains(txt, "clocks [(1, 1700000000000000000), (3, 0), (6, 0)]\n");
	free(txt);
	r = run("convert", "--to", "perfetto", "-o", file, "/nonexistent.trace");
	assert_int_equal(r.code, MC_EXIT_FILE);
	assert_contains(r.err, "/nonexistent.trace: No such file or directory");
	done(&r);
	unlink(path);
	tb_free(&tb);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", out);
	assert_int_equal(system(cmd), 0);
}

/*
 * Every figure's texts as they are written: event and field names hold
 * '_', which gnuplot's enhanced text takes for a subscript (dev_recv drawn
 * as "dev", a subscript "r", "ecv": <tspan>s in the SVG).  Each figure as
 * SVG, whose text elements must hold its legend, title and axis labels
 * whole; the tic labels gnuplot writes itself keep their raised exponent
 * (1x10^8: "1x10", then "8" in a <tspan> of its own).
 */
static void test_plot_labels(void **state)
{
	static const struct {
		const char *kind;
		const char *text[8];
	} fig[] = {
		{ "layers", { "<text>dev_recv</text>", "<text>ip_recv</text>",
			      "<text>bytes per layer, socket 73588229205</text>",
			      "<text>bytes per event</text>", "<text>time (s)</text>",
			      "x10</tspan>" } },
		{ "tcp", { "<text>snd_cwnd</text>", "<text>snd_ssthresh</text>",
			   "<text>srtt</text>", "<text>srtt (ms)</text>",
			   "<text>TCP state, socket 73588229205</text>",
			   "<text>packets</text>", "<text>time (s)</text>" } },
		{ "latency", { "<text>1: ip_recv -> dev_recv</text>",
			       "<text>time between layers (correlated chains)</text>",
			       "<text>fraction of chains</text>",
			       "<text>microseconds</text>" } },
		{ "rate", { "<text>cpu3</text>", "<text>events/s</text>",
			    "<text>events per second per CPU</text>",
			    "<text>time (s)</text>" } },
	};
	struct magnet_tcp_payload tcp = {
		.family = 2, .state = 1, .len = 1448, .snd_cwnd = 10,
		.snd_ssthresh = 7, .srtt_us = 1500,
	};
	char out[] = "/tmp/magnet-plot-XXXXXX", img[64], aux[80];
	struct result r;
	struct tbuf tb;
	const char *path;
	unsigned int i, j;
	char *txt;

	(void)state;
	assert_non_null(mkdtemp(out));
	tb_init(&tb, false);
	tb_sysinfo(&tb, 0);
	tb_eventdef(&tb, 16, "dev_recv", MAGNET_LAYER_DEVICE, MAGNET_PAYLOAD_NET);
	tb_eventdef(&tb, 17, "ip_recv", MAGNET_LAYER_NETWORK, MAGNET_PAYLOAD_NET);
	tb_eventdef(&tb, 18, "tcp_state", MAGNET_LAYER_TRANSPORT, MAGNET_PAYLOAD_TCP);
	/* 100 MB: the bytes axis's tics are 1x10^8 and the like */
	tb_net(&tb, 16, 100000000, 2, 0x0800, 0);
	tb_net(&tb, 17, 1480, 2, 0x0800, 0);
	tb_rec(&tb, 18, 0, 1500000000ull, &tcp, sizeof(tcp));
	tcp.snd_cwnd = 12;
	tb_rec(&tb, 18, 0, 1500001000ull, &tcp, sizeof(tcp));
	tb_corr(&tb, 1600000000ull, 1500000000ull, 17, 16, 2500, 1480);
	path = tb_write_tmp(&tb, tb.len);
	for (i = 0; i < sizeof(fig) / sizeof(fig[0]); i++) {
		snprintf(img, sizeof(img), "%s/%s.svg", out, fig[i].kind);
		r = run("plot", fig[i].kind, "--format", "svg", "-o", img, path);
		assert_int_equal(r.code, MC_EXIT_OK);
		done(&r);
		txt = file_text(img);
		assert_non_null(txt);
		for (j = 0; j < 8 && fig[i].text[j]; j++)
			assert_contains(txt, fig[i].text[j]);
		free(txt);
		unlink(img);
		snprintf(aux, sizeof(aux), "%s.gp", img);
		unlink(aux);
		snprintf(aux, sizeof(aux), "%s.dat", img);
		unlink(aux);
	}
	/* a PNG's script: the same texts */
	snprintf(img, sizeof(img), "%s/layers.png", out);
	r = run("plot", "layers", "-o", img, path);
	assert_int_equal(r.code, MC_EXIT_OK);
	done(&r);
	snprintf(aux, sizeof(aux), "%s.gp", img);
	txt = file_text(aux);
	assert_non_null(txt);
	assert_contains(txt, "title \"dev_recv\" noenhanced");
	assert_contains(txt, "set ylabel \"bytes per event\" noenhanced\n");
	free(txt);
	unlink(aux);
	unlink(img);
	snprintf(aux, sizeof(aux), "%s.dat", img);
	unlink(aux);
	assert_int_equal(rmdir(out), 0);
	unlink(path);
	tb_free(&tb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unknown_object),
		cmocka_unit_test(test_unknown_command),
		cmocka_unit_test(test_unknown_option),
		cmocka_unit_test(test_no_object),
		cmocka_unit_test(test_help_version),
		cmocka_unit_test(test_object_help),
		cmocka_unit_test(test_json_error),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_filter_arguments),
		cmocka_unit_test(test_synth_arguments),
		cmocka_unit_test(test_not_loaded),
		cmocka_unit_test(test_help_exit_codes),
		cmocka_unit_test(test_record_missing_stream_file),
		cmocka_unit_test(test_long_options),
		cmocka_unit_test(test_dump_text),
		cmocka_unit_test(test_dump_comm),
		cmocka_unit_test(test_convert_pcapng),
		cmocka_unit_test(test_dump_app),
		cmocka_unit_test(test_dump_corr),
		cmocka_unit_test(test_dump_json),
		cmocka_unit_test(test_dump_corrupt),
		cmocka_unit_test(test_dump_not_a_trace),
		cmocka_unit_test(test_stdout_error),
		cmocka_unit_test(test_plot),
		cmocka_unit_test(test_plot_labels),
		cmocka_unit_test(test_perfetto),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
