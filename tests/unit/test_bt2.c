// SPDX-License-Identifier: GPL-2.0-only
/*
 * The babeltrace2 plugin (babeltrace2/) and magnetctl convert --to ctf,
 * through the real babeltrace2: a trace of every record kind on two CPUs
 * with a LOST record, read by babeltrace2 (the plugin found by its
 * support-info query), written as CTF and read back by babeltrace2's own
 * source.ctf.fs.  The same plugin reads real kernel traces in
 * tests/vm/t_convert.sh.
 *
 * $MAGNET_BT2_PLUGIN_DIR: the directory of the built plugin (magnetctl
 * reads it too); $MAGNETCTL: the magnetctl to run; $MAGNET_BT2_INSTALL_DIR,
 * $MAGNET_BT2_SYSTEM_DIR: where MAGNET installs the plugin and where
 * babeltrace2 keeps its own.
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "magnetctl.h"
#include "tracegen.h"

static const char *plugdir;

#define EV_UDP	16
#define EV_SW	17
#define EV_RAW	18

/* Move the record at @off to CPU @cpu and time @ts (tracegen: CPU 3). */
static void place(struct tbuf *tb, size_t off, __u32 cpu, __u64 ts)
{
	struct magnet_rec_hdr *h = (void *)(tb->data + off);

	h->cpu = cpu;
	h->timestamp = ts;
}

/* The trace: every kind of record; returns its file's path (caller frees). */
static char *make_trace(size_t *len_out)
{
	struct magnet_sched_switch_payload sw = {
		.prev_pid = 76, .next_pid = 77, .next_tgid = 77, .cpu = 1,
		.prev_comm = "kworker/1:0", .next_comm = "bash",
	};
	static const unsigned char raw[3] = { 1, 2, 3 };
	struct tbuf tb;
	size_t o;
	char *path;

	tb_init(&tb, false);
	tb_sysinfo(&tb, 0);
	tb_eventdef(&tb, EV_UDP, "udp_send", MAGNET_LAYER_TRANSPORT,
		    MAGNET_PAYLOAD_NET);
	tb_eventdef(&tb, EV_SW, "sched_switch", MAGNET_LAYER_SCHED,
		    MAGNET_PAYLOAD_SCHED_SWITCH);
	tb_eventdef(&tb, EV_RAW, "rawev", MAGNET_LAYER_OTHER, MAGNET_PAYLOAD_RAW);
	o = tb_net(&tb, EV_UDP, 1400, 2, 0x0800, MAGNET_NET_F_TX);
	place(&tb, o, 0, 1000);
	o = tb_rec(&tb, EV_SW, 0, 0, &sw, sizeof(sw));
	place(&tb, o, 1, 2000);
	o = tb_lost(&tb, 5);
	place(&tb, o, 1, 3000);
	o = tb_rec(&tb, EV_RAW, 0, 0, raw, sizeof(raw));
	place(&tb, o, 0, 4000);
	o = tb_net(&tb, EV_UDP, 0, 2, 0x0800, MAGNET_NET_F_TX | MAGNET_NET_F_ERROR);
	((struct magnet_net_payload *)(tb.data + o + MAGNET_REC_HDR_SIZE))->err = -11;
	place(&tb, o, 1, 5000);
	o = tb_app(&tb, 6000, MAGNET_APP_SEND, 5800, 5900, 1400);
	place(&tb, o, 0, 6000);
	o = tb_corr(&tb, 7000, 1000, EV_UDP, EV_SW, 50, 1400);
	place(&tb, o, 0, 7000);
	path = strdup(tb_write_tmp(&tb, tb.len));
	*len_out = tb.len;
	tb_free(&tb);
	return path;
}

/* Run a shell command; its stdout (caller frees) and exit status. */
static char *sh(int *status, const char *fmt, ...)
{
	char cmd[2048], *out = NULL;
	size_t len = 0;
	FILE *p, *m;
	va_list ap;
	int c;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	m = open_memstream(&out, &len);
	p = popen(cmd, "r");
	assert_non_null(p);
	while ((c = fgetc(p)) != EOF)
		fputc(c, m);
	*status = pclose(p);
	fclose(m);
	return out;
}

static int count(const char *s, const char *needle)
{
	int n = 0;

	for (; (s = strstr(s, needle)); s += strlen(needle))
		n++;
	return n;
}

/* The lines of @s that are events ("[...] name: ..."), in order. */
static char *event_lines(const char *s)
{
	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);
	const char *e;

	for (; *s; s = *e ? e + 1 : e) {
		e = strchrnul(s, '\n');
		if (*s == '[')
			fprintf(m, "%.*s\n", (int)(e - s), s);
	}
	fclose(m);
	return out;
}

#define BT "babeltrace2 --plugin-path='%s' "

static void test_pretty(void **state)
{
	size_t len;
	char *path = make_trace(&len), *out;
	int st;

	(void)state;
	/* no component named: babeltrace2 asks the plugins (support-info) */
	out = sh(&st, BT "--clock-cycles --no-delta '%s' 2>&1", plugdir, path);
	assert_int_equal(st, 0);
	assert_int_equal(count(out, " udp_send: "), 2);
	assert_int_equal(count(out, " sched_switch: "), 1);
	assert_int_equal(count(out, " rawev: "), 1);
	assert_int_equal(count(out, " APP: "), 1);
	assert_int_equal(count(out, " CORR: "), 1);
	/*
	 * the records' times (--clock-cycles: 20 digits), the APP record at
	 * its call's entry; a raw payload is the record's bytes (8-aligned)
	 */
	assert_non_null(strstr(out, "[00000000000000001000] udp_send: { cpu_id = 0 }, { abstract_id = 73588229205, pid = 4242, tgid = 4240 }, { len = 1400, ifindex = 2, proto = 0x800, flags = 0x1, gso_size = 0, gso_segs = 0, err = 0 }"));
	assert_non_null(strstr(out, "[00000000000000002000] sched_switch: { cpu_id = 1 }"));
	assert_non_null(strstr(out, "next_pid = 77"));
	assert_non_null(strstr(out, "prev_comm = \"kworker/1:0\""));
	assert_non_null(strstr(out, "next_comm = \"bash\""));
	assert_non_null(strstr(out, "[00000000000000004000] rawev: { cpu_id = 0 }"));
	assert_non_null(strstr(out, "data_len = 8, data = [ [0] = 0x1, [1] = 0x2, [2] = 0x3, [3] = 0x0"));
	assert_non_null(strstr(out, "[00000000000000005000] udp_send: { cpu_id = 1 }"));
	assert_non_null(strstr(out, "len = 0, ifindex = 2, proto = 0x800, flags = 0x5, gso_size = 0, gso_segs = 0, err = -11"));
	assert_non_null(strstr(out, "[00000000000000005800] APP: { cpu_id = 0 }"));
	assert_non_null(strstr(out, "call = \"send\", fd = 3, req = 10240, ret = 1400, entry_ns = 5800, exit_ns = 5900"));
	assert_non_null(strstr(out, "[00000000000000007000] CORR: { cpu_id = 0 }"));
	assert_non_null(strstr(out, "nsteps = 2, steps = [ [0] = { event = 16, delta_ns = 0, count = 1, bytes = 1400, event_name = \"udp_send\" }, [1] = { event = 17, delta_ns = 50, count = 1, bytes = 1400, event_name = \"sched_switch\" } ]"));
	/* the LOST record */
	assert_non_null(strstr(out, "discarded 5 events"));
	free(out);
	/* the clock: SYSINFO's wall_ns_at_zero as the offset from the epoch */
	out = sh(&st, BT "--clock-seconds --no-delta '%s' 2>&1", plugdir, path);
	assert_int_equal(st, 0);
	assert_non_null(strstr(out, "[1700000000.000001000] udp_send:"));
	free(out);
	unlink(path);
	free(path);
}

static void test_ctf_roundtrip(void **state)
{
	size_t len;
	char *path = make_trace(&len), *direct, *back, *out;
	char dir[] = "/tmp/magnet-ctf-XXXXXX", sub[64];
	int st;

	(void)state;
	direct = sh(&st, BT "--clock-cycles --no-delta '%s' 2>/dev/null", plugdir,
		    path);
	assert_int_equal(st, 0);
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/ctf", dir);
	out = sh(&st, "'%s' convert --to ctf -o '%s' '%s' 2>&1",
		 getenv("MAGNETCTL"), sub, path);
	assert_int_equal(st, 0);
	free(out);
	/* babeltrace2 alone (its source.ctf.fs) reads the CTF trace */
	back = sh(&st, "babeltrace2 --clock-cycles --no-delta '%s' 2>&1", sub);
	assert_int_equal(st, 0);
	out = event_lines(direct);
	assert_int_equal(count(out, "\n"), 6);
	free(direct);
	direct = out;
	out = event_lines(back);
	assert_string_equal(out, direct);
	free(out);
	free(direct);
	assert_non_null(strstr(back, "discarded 5 events"));
	free(back);
	/*
	 * No empty packet inside a stream: Trace Compass's CTF reader stops
	 * reading a stream, silently, at an empty packet that is not its
	 * first (the discarded events after a LOST record get a packet
	 * holding the next event instead).  Per stream, the events of each
	 * packet, from sink.text.details.
	 */
	out = sh(&st, "babeltrace2 -c sink.text.details '%s' 2>&1 | awk '"
		 "/^[{]Trace/ { match($0, /Stream ID [0-9]+/); s = substr($0, RSTART + 10, RLENGTH - 10);"
		 " getline; if (/^Packet beginning/) { n[s]++; ev[s, n[s]] = 0 }"
		 " else if (/^Event /) ev[s, n[s]]++; else if (/^Discarded events/) d++ }"
		 " END { for (s in n) for (i = 2; i < n[s]; i++) if (!ev[s, i]) bad++;"
		 " printf \"streams=%%d discarded=%%d inner_empty=%%d\\n\", length(n), d, bad }'",
		 sub);
	assert_int_equal(st, 0);
	assert_string_equal(out, "streams=2 discarded=1 inner_empty=0\n");
	free(out);
	/* the directory holds a trace now: a second conversion is refused */
	out = sh(&st, "'%s' convert --to ctf -o '%s' '%s' 2>&1",
		 getenv("MAGNETCTL"), sub, path);
	assert_int_equal(WEXITSTATUS(st), MC_EXIT_FILE);
	assert_non_null(strstr(out, "already holds a CTF trace"));
	free(out);
	out = sh(&st, "rm -rf '%s'", dir);
	free(out);
	unlink(path);
	free(path);
}

/*
 * A loss on a CPU that then records nothing for longer than the iterator
 * keeps the discarded events' place (MBT_LOST_WAIT, 65536 messages):
 * the message is given its end then, in an empty packet, and every event
 * is still delivered, in time order, with the loss counted once.
 */
static void test_lost_long_wait(void **state)
{
	enum { N = 70000 };
	struct tbuf tb;
	char *path, *out;
	size_t o;
	int st, i;

	(void)state;
	tb_init(&tb, false);
	tb_sysinfo(&tb, 0);
	tb_eventdef(&tb, EV_UDP, "udp_send", MAGNET_LAYER_TRANSPORT,
		    MAGNET_PAYLOAD_NET);
	o = tb_net(&tb, EV_UDP, 100, 2, 0x0800, MAGNET_NET_F_TX);
	place(&tb, o, 1, 1000);
	o = tb_lost(&tb, 9);
	place(&tb, o, 1, 1500);
	for (i = 0; i < N; i++) {
		o = tb_net(&tb, EV_UDP, 100, 2, 0x0800, MAGNET_NET_F_TX);
		place(&tb, o, 0, 2000 + i);
	}
	o = tb_net(&tb, EV_UDP, 100, 2, 0x0800, MAGNET_NET_F_TX);
	place(&tb, o, 1, 2000 + N);
	path = strdup(tb_write_tmp(&tb, tb.len));
	tb_free(&tb);
	out = sh(&st, BT "--clock-cycles --no-delta '%s' 2>&1 | awk '"
		 "/ udp_send: / { n++; t = substr($1, 2, 20) + 0; if (t < last) back++; last = t }"
		 " /discarded 9 events/ { d++; match($0, /and [[][0-9:]+[.][0-9]+/);"
		 " e = substr($0, RSTART, RLENGTH); sub(/.*[.]/, \"\", e); end = e + 0 }"
		 " END { r = (end > 2000 && end < 2000 + %d) ? \"given-up\" : end;"
		 " printf \"%%d %%d %%d %%s\\n\", n, d, back, r }'",
		 plugdir, path, N);
	assert_int_equal(st, 0);
	/* its end: where the iterator gave up, before the CPU's next event */
	assert_string_equal(out, "70002 1 0 given-up\n");
	free(out);
	unlink(path);
	free(path);
}

/* Inputs without an event write no CTF trace: said, exit 3. */
static void test_ctf_no_event(void **state)
{
	char dir[] = "/tmp/magnet-ctf-XXXXXX", sub[64], *path, *out;
	struct tbuf tb;
	int st;

	(void)state;
	tb_init(&tb, false);
	tb_sysinfo(&tb, 0);
	tb_eventdef(&tb, EV_UDP, "udp_send", MAGNET_LAYER_TRANSPORT,
		    MAGNET_PAYLOAD_NET);
	path = strdup(tb_write_tmp(&tb, tb.len));
	tb_free(&tb);
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/ctf", dir);
	out = sh(&st, "'%s' convert --to ctf -o '%s' '%s' 2>&1",
		 getenv("MAGNETCTL"), sub, path);
	assert_int_equal(WEXITSTATUS(st), MC_EXIT_FILE);
	assert_non_null(strstr(out, "the input holds no event"));
	free(out);
	assert_int_equal(access(sub, F_OK), -1);
	out = sh(&st, "rm -rf '%s'", dir);
	free(out);
	unlink(path);
	free(path);
}

/* Is the plugin installed (where MAGNET or babeltrace2 keeps it)? */
static bool plugin_installed(void)
{
	const char *dirs[] = { getenv("MAGNET_BT2_INSTALL_DIR"),
			       getenv("MAGNET_BT2_SYSTEM_DIR") };
	char path[512];
	unsigned int i;

	for (i = 0; i < 2; i++) {
		if (!dirs[i] || !*dirs[i])
			continue;
		snprintf(path, sizeof(path), "%s/babeltrace-plugin-magnet.so", dirs[i]);
		if (!access(path, F_OK))
			return true;
	}
	return false;
}

/*
 * Where convert --to ctf finds the plugin: beside the build's magnetctl
 * without $MAGNET_BT2_PLUGIN_DIR (README's "Using it" runs it so), in
 * $MAGNET_BT2_PLUGIN_DIR alone when set, in babeltrace2's own path; found
 * nowhere, every place looked in is named.
 */
static void test_ctf_plugin_lookup(void **state)
{
	char dir[] = "/tmp/magnet-ctf-XXXXXX", sub[64], want[512], tree[64];
	const char *mc = getenv("MAGNETCTL");
	size_t len;
	char *path = make_trace(&len), *out;
	int st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* the build's magnetctl: its build tree's plugin */
	snprintf(sub, sizeof(sub), "%s/ctf1", dir);
	out = sh(&st, "env -u MAGNET_BT2_PLUGIN_DIR -u BABELTRACE_PLUGIN_PATH "
		 "'%s' convert --to ctf -o '%s' '%s' 2>&1", mc, sub, path);
	assert_int_equal(st, 0);
	assert_string_equal(out, "");
	free(out);
	out = sh(&st, "babeltrace2 '%s' 2>&1 | grep -c ' udp_send: '", sub);
	assert_string_equal(out, "2\n");
	free(out);

	/* $MAGNET_BT2_PLUGIN_DIR without the plugin: said, babeltrace2 not run */
	snprintf(sub, sizeof(sub), "%s/empty", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	out = sh(&st, "MAGNET_BT2_PLUGIN_DIR='%s' '%s' convert --to ctf -o '%s/ctf2' '%s' 2>&1",
		 sub, mc, dir, path);
	assert_int_equal(WEXITSTATUS(st), MC_EXIT_FILE);
	snprintf(want, sizeof(want),
		 "magnetctl: convert: the babeltrace2 plugin magnet (babeltrace-plugin-magnet.so) "
		 "is not in %s ($MAGNET_BT2_PLUGIN_DIR); set MAGNET_BT2_PLUGIN_DIR=DIR "
		 "to the directory that holds it\n", sub);
	assert_string_equal(out, want);
	free(out);
	snprintf(sub, sizeof(sub), "%s/ctf2", dir);
	assert_int_equal(access(sub, F_OK), -1);

	/* a copy of the build tree: its own plugin directory */
	snprintf(tree, sizeof(tree), "%s/tree", dir);
	out = sh(&st, "mkdir -p '%s/magnetctl' '%s/babeltrace2/plugins' && "
		 "cp '%s' '%s/magnetctl/magnetctl'", tree, tree, mc, tree);
	assert_int_equal(st, 0);
	free(out);
	if (!plugin_installed()) {
		out = sh(&st, "env -u MAGNET_BT2_PLUGIN_DIR -u BABELTRACE_PLUGIN_PATH "
			 "'%s/magnetctl/magnetctl' convert --to ctf -o '%s/ctf3' '%s' 2>&1",
			 tree, dir, path);
		assert_int_equal(WEXITSTATUS(st), MC_EXIT_FILE);
		snprintf(want, sizeof(want),
			 "is not in %s/babeltrace2/plugins (beside magnetctl's build), ", tree);
		assert_non_null(strstr(out, want));
		assert_non_null(strstr(out, "(where MAGNET installs it)"));
		assert_non_null(strstr(out, "; set MAGNET_BT2_PLUGIN_DIR=DIR"));
		assert_null(strstr(out, "babeltrace2 failed"));
		free(out);
	} else {
		fprintf(stderr, "test_bt2: the plugin is installed: not checking a "
			"build tree without it\n");
	}
	/* ... found by babeltrace2 itself in $BABELTRACE_PLUGIN_PATH */
	out = sh(&st, "env -u MAGNET_BT2_PLUGIN_DIR BABELTRACE_PLUGIN_PATH=/nonexistent:'%s' "
		 "'%s/magnetctl/magnetctl' convert --to ctf -o '%s/ctf4' '%s' 2>&1",
		 plugdir, tree, dir, path);
	assert_int_equal(st, 0);
	assert_string_equal(out, "");
	free(out);
	/* ... beside it */
	out = sh(&st, "cp '%s/babeltrace-plugin-magnet.so' '%s/babeltrace2/plugins/' && "
		 "env -u MAGNET_BT2_PLUGIN_DIR -u BABELTRACE_PLUGIN_PATH "
		 "'%s/magnetctl/magnetctl' convert --to ctf -o '%s/ctf5' '%s' 2>&1",
		 plugdir, tree, tree, dir, path);
	assert_int_equal(st, 0);
	assert_string_equal(out, "");
	free(out);
	snprintf(sub, sizeof(sub), "%s/ctf5/metadata", dir);
	assert_int_equal(access(sub, F_OK), 0);
	out = sh(&st, "rm -rf '%s'", dir);
	free(out);
	unlink(path);
	free(path);
}

static void test_errors(void **state)
{
	size_t len;
	char *path = make_trace(&len), *out;
	char notrace[] = "/tmp/magnet-notrace-XXXXXX";
	int st, fd;

	(void)state;
	/* a file that is not a MAGNET trace */
	fd = mkstemp(notrace);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "hello, not a trace\n", 19), 19);
	close(fd);
	out = sh(&st, BT "-c source.magnet.trace -p 'inputs=[\"%s\"]' 2>&1",
		 plugdir, notrace);
	assert_int_not_equal(st, 0);
	assert_non_null(strstr(out, notrace));
	free(out);
	/* a missing file is named */
	out = sh(&st, BT "-c source.magnet.trace -p 'inputs=[\"/nonexistent.trace\"]' 2>&1",
		 plugdir);
	assert_int_not_equal(st, 0);
	assert_non_null(strstr(out, "/nonexistent.trace: No such file or directory"));
	free(out);
	/* no inputs */
	out = sh(&st, BT "-c source.magnet.trace 2>&1", plugdir);
	assert_int_not_equal(st, 0);
	assert_non_null(strstr(out, "missing parameter 'inputs'"));
	free(out);
	/* a trace cut inside its last record: the records before it, then the error */
	assert_int_equal(truncate(path, len - 8), 0);
	out = sh(&st, BT "--clock-cycles --no-delta '%s' 2>&1", plugdir, path);
	assert_int_not_equal(st, 0);
	assert_int_equal(count(out, " udp_send: "), 2);
	assert_int_equal(count(out, " CORR: "), 0);
	assert_non_null(strstr(out, "offset"));
	free(out);
	/* a record whose CPU no machine has: refused, not a huge allocation */
	{
		struct tbuf tb;
		const char *bad;
		size_t o;

		tb_init(&tb, false);
		tb_sysinfo(&tb, 0);
		tb_eventdef(&tb, EV_UDP, "udp_send", MAGNET_LAYER_TRANSPORT,
			    MAGNET_PAYLOAD_NET);
		o = tb_net(&tb, EV_UDP, 1400, 2, 0x0800, MAGNET_NET_F_TX);
		place(&tb, o, 0xffffffffu, 1000);
		bad = tb_write_tmp(&tb, tb.len);
		out = sh(&st, BT "'%s' 2>&1", plugdir, bad);
		assert_int_not_equal(st, 0);
		assert_non_null(strstr(out, "on CPU 4294967295: not a CPU"));
		free(out);
		unlink(bad);
		tb_free(&tb);
	}
	/* magnetctl's own checks */
	out = sh(&st, "'%s' convert --to ctf '%s' 2>&1", getenv("MAGNETCTL"), path);
	assert_int_equal(WEXITSTATUS(st), MC_EXIT_USAGE);
	assert_non_null(strstr(out, "-o DIR"));
	free(out);
	unlink(notrace);
	unlink(path);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pretty),
		cmocka_unit_test(test_ctf_roundtrip),
		cmocka_unit_test(test_ctf_no_event),
		cmocka_unit_test(test_lost_long_wait),
		cmocka_unit_test(test_ctf_plugin_lookup),
		cmocka_unit_test(test_errors),
	};

	plugdir = getenv("MAGNET_BT2_PLUGIN_DIR");
	if (!plugdir || !getenv("MAGNETCTL")) {
		fprintf(stderr, "test_bt2: set MAGNETCTL and MAGNET_BT2_PLUGIN_DIR\n");
		return 2;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
