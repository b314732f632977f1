// SPDX-License-Identifier: GPL-2.0
/*
 * The correlators' matching core (kmod/corr_core.h, the header the kernel
 * builds): chains in order, interleaved keys, expiry by the window,
 * out-of-order steps, restarts, segmented sends (several IP packets or
 * frames per send), overflow of the pending table, the record payload,
 * and a random trace against a straightforward model.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "../../kmod/corr_core.h"

enum { UDP = 20, TCP = 21, IP = 22, DEV = 23, SOCK = 24, OTHER = 30 };

struct out {
	u64 key;
	u32 reached, flags;
	u64 ts[MAGNET_CORR_STEPS_MAX];
	u32 count[MAGNET_CORR_STEPS_MAX];
	u32 bytes[MAGNET_CORR_STEPS_MAX];
};

struct fix {
	struct mcc m;
	struct mcc_chain c[64];
	s32 hash[64];
	struct out out[256];
	unsigned int n;
};

static void emit(void *arg, const struct mcc_chain *c, u32 reached, u32 flags)
{
	struct fix *f = arg;
	struct out *o = &f->out[f->n++];

	assert_true(f->n <= 256);
	memset(o, 0, sizeof(*o));
	o->key = c->key;
	o->reached = reached;
	o->flags = flags;
	memcpy(o->ts, c->ts, sizeof(o->ts));
	memcpy(o->count, c->count, sizeof(o->count));
	memcpy(o->bytes, c->bytes, sizeof(o->bytes));
}

/* udp_send|tcp_send, ip_send, dev_send, sock_send; window 1000 */
static struct fix *setup(u32 cap, u64 window)
{
	struct fix *f = calloc(1, sizeof(*f));

	f->m.nsteps = 4;
	f->m.nalt[0] = 2;
	f->m.alt[0][0] = UDP;
	f->m.alt[0][1] = TCP;
	f->m.nalt[1] = 1;
	f->m.alt[1][0] = IP;
	f->m.nalt[2] = 1;
	f->m.alt[2][0] = DEV;
	f->m.nalt[3] = 1;
	f->m.alt[3][0] = SOCK;
	f->m.window = window;
	f->m.cap = cap;
	f->m.c = f->c;
	f->m.nbuckets = 64;
	f->m.hash = f->hash;
	f->m.emit = emit;
	f->m.arg = f;
	mcc_init(&f->m);
	return f;
}

static void ev(struct fix *f, u16 e, u64 key, u64 ts, u32 bytes)
{
	mcc_event(&f->m, e, key, ts, 1, 1, bytes);
}

static void test_in_order(void **state)
{
	struct fix *f = setup(64, 1000);

	(void)state;
	ev(f, UDP, 7, 100, 64);
	ev(f, IP, 7, 130, 92);
	ev(f, DEV, 7, 170, 106);
	assert_int_equal(f->n, 0);
	assert_int_equal(f->m.pending, 1);
	ev(f, SOCK, 7, 200, 64);
	assert_int_equal(f->n, 1);
	assert_int_equal(f->out[0].flags, 0);
	assert_int_equal(f->out[0].reached, 4);
	assert_int_equal(f->out[0].ts[1] - f->out[0].ts[0], 30);
	assert_int_equal(f->out[0].ts[3], 200);
	assert_int_equal(f->m.st.completed, 1);
	assert_int_equal(f->m.st.events, 4);
	assert_int_equal(f->m.pending, 0);
	free(f);
}

static void test_interleaved_keys(void **state)
{
	struct fix *f = setup(64, 1000);

	(void)state;
	ev(f, UDP, 1, 100, 10);
	ev(f, TCP, 2, 101, 20);
	ev(f, IP, 2, 102, 0);
	ev(f, IP, 1, 103, 0);
	ev(f, DEV, 1, 104, 0);
	ev(f, DEV, 2, 105, 0);
	ev(f, SOCK, 2, 106, 0);
	ev(f, SOCK, 1, 107, 0);
	assert_int_equal(f->n, 2);
	assert_int_equal(f->out[0].key, 2);
	assert_int_equal(f->out[0].ts[1], 102);
	assert_int_equal(f->out[1].key, 1);
	assert_int_equal(f->out[1].ts[1], 103);
	assert_int_equal(f->out[1].ts[2], 104);
	assert_int_equal(f->m.st.completed, 2);
	free(f);
}

static void test_expiry(void **state)
{
	struct fix *f = setup(64, 1000);

	(void)state;
	ev(f, UDP, 1, 100, 0);
	ev(f, IP, 1, 200, 0);
	/* exactly the window: still in */
	ev(f, UDP, 2, 1100, 0);
	assert_int_equal(f->n, 0);
	ev(f, OTHER, 9, 1101, 0);	/* not a chain point: stray, but expires */
	assert_int_equal(f->n, 1);
	assert_int_equal(f->out[0].flags, MAGNET_CORR_F_EXPIRED);
	assert_int_equal(f->out[0].reached, 2);
	assert_int_equal(f->m.st.expired, 1);
	assert_int_equal(f->m.st.stray, 1);
	/* the late step of the expired chain is stray */
	ev(f, DEV, 1, 1102, 0);
	assert_int_equal(f->m.st.stray, 2);
	/* expiry by time alone (the kernel's horizon) */
	mcc_expire(&f->m, 2101);
	assert_int_equal(f->n, 2);
	assert_int_equal(f->out[1].key, 2);
	assert_int_equal(f->m.pending, 0);
	free(f);
}

static void test_out_of_order(void **state)
{
	struct fix *f = setup(64, 1000);

	(void)state;
	/* dev before ip: a skipped step closes the chain */
	ev(f, UDP, 1, 100, 0);
	ev(f, DEV, 1, 110, 0);
	assert_int_equal(f->n, 1);
	assert_int_equal(f->out[0].flags, MAGNET_CORR_F_SKIP);
	assert_int_equal(f->out[0].reached, 1);
	ev(f, IP, 1, 120, 0);		/* no chain now */
	assert_int_equal(f->m.st.stray, 2);
	/* a step before any start */
	ev(f, SOCK, 5, 130, 0);
	assert_int_equal(f->m.st.stray, 3);
	/* a new start on an open chain: RESTART */
	ev(f, TCP, 3, 140, 0);
	ev(f, IP, 3, 150, 0);
	ev(f, TCP, 3, 160, 0);
	assert_int_equal(f->n, 2);
	assert_int_equal(f->out[1].flags, MAGNET_CORR_F_RESTART);
	assert_int_equal(f->out[1].reached, 2);
	assert_int_equal(f->m.st.partial, 2);
	/* an older event than one fed before is counted late */
	ev(f, IP, 3, 155, 0);
	assert_int_equal(f->m.st.late, 1);
	mcc_flush(&f->m, MAGNET_CORR_F_FLUSH);
	assert_int_equal(f->out[2].flags, MAGNET_CORR_F_FLUSH);
	assert_int_equal(f->out[2].reached, 2);
	assert_int_equal(f->m.pending, 0);
	free(f);
}

static void test_segmentation(void **state)
{
	struct fix *f = setup(64, 100000);
	int i;

	(void)state;
	/* a 10000-byte TCP write cut into 7 segments: 7 IP packets, 7 frames */
	ev(f, TCP, 4, 1000, 10000);
	for (i = 0; i < 7; i++) {
		ev(f, IP, 4, 1100 + i * 100, 1500);
		ev(f, DEV, 4, 1150 + i * 100, 1514);
	}
	ev(f, SOCK, 4, 2000, 10000);
	assert_int_equal(f->n, 1);
	assert_int_equal(f->out[0].flags, 0);
	assert_int_equal(f->out[0].count[1], 7);
	assert_int_equal(f->out[0].count[2], 7);
	assert_int_equal(f->out[0].bytes[1], 7 * 1500);
	assert_int_equal(f->out[0].bytes[2], 7 * 1514);
	/* the step's time is its first event's */
	assert_int_equal(f->out[0].ts[1], 1100);
	assert_int_equal(f->out[0].ts[2], 1150);
	assert_int_equal(f->out[0].ts[3], 2000);
	/* segments after completion are stray */
	ev(f, DEV, 4, 2100, 1514);
	assert_int_equal(f->m.st.stray, 1);
	free(f);
}

static void test_overflow(void **state)
{
	struct fix *f = setup(4, 1000);
	u64 k;

	(void)state;
	for (k = 1; k <= 6; k++)
		ev(f, UDP, k, 100 + k, 0);
	assert_int_equal(f->m.pending, 4);
	assert_int_equal(f->m.st.overflow, 2);
	ev(f, IP, 6, 200, 0);		/* its chain never opened */
	assert_int_equal(f->m.st.stray, 1);
	/* freed entries are reused */
	mcc_expire(&f->m, 5000);
	assert_int_equal(f->m.st.expired, 4);
	ev(f, UDP, 6, 5001, 0);
	assert_int_equal(f->m.pending, 1);
	free(f);
}

static void test_record(void **state)
{
	struct fix *f = setup(64, 1000);
	unsigned char buf[sizeof(struct magnet_corr_rec) +
			  MAGNET_CORR_STEPS_MAX * sizeof(struct magnet_corr_step)];
	struct magnet_corr_rec *r = (void *)buf;
	struct magnet_corr_step *st = (void *)(r + 1);
	struct mcc_chain c;

	(void)state;
	assert_int_equal(sizeof(struct magnet_corr_rec), 24);
	assert_int_equal(sizeof(struct magnet_corr_step), 24);
	assert_int_equal(mcc_rec_size(&f->m), 24 + 4 * 24);
	memset(&c, 0, sizeof(c));
	c.key = 99;
	c.ts[0] = 1000; c.ts[1] = 1040; c.ts[2] = 1100;
	c.count[0] = 1; c.count[1] = 2; c.count[2] = 3;
	c.bytes[1] = 3000;
	c.event[0] = UDP; c.event[1] = IP; c.event[2] = DEV;
	memset(buf, 0xff, sizeof(buf));
	mcc_rec_fill(&f->m, 7, &c, 3, MAGNET_CORR_F_EXPIRED, buf);
	assert_int_equal(r->corr_id, 7);
	assert_int_equal(r->nsteps, 4);
	assert_int_equal(r->reached, 3);
	assert_int_equal(r->flags, MAGNET_CORR_F_EXPIRED);
	assert_int_equal(r->reserved, 0);
	assert_int_equal(r->start, 1000);
	assert_int_equal(st[0].delta_ns, 0);
	assert_int_equal(st[1].delta_ns, 40);
	assert_int_equal(st[2].delta_ns, 60);
	assert_int_equal(st[1].count, 2);
	assert_int_equal(st[1].bytes, 3000);
	assert_int_equal(st[2].event, DEV);
	/* not reached: all zero */
	assert_int_equal(st[3].delta_ns, 0);
	assert_int_equal(st[3].count, 0);
	assert_int_equal(st[3].event, 0);
	free(f);
}

/*
 * A random trace of interleaved sends on 8 keys against a model that
 * keeps, per key, a list of the events since its last step-0 event and
 * applies the rules directly.
 */
struct model_key {
	int open;
	u64 start;
	u32 cur;
	u32 count[4];
};

static void test_random_model(void **state)
{
	struct fix *f = setup(64, 8000);
	struct model_key mk[8];
	u64 ts = 1000, done = 0, exp = 0, part = 0, stray = 0;
	static const u16 evs[] = { UDP, TCP, IP, DEV, SOCK };
	int i, k;

	(void)state;
	memset(mk, 0, sizeof(mk));
	srand(4);
	for (i = 0; i < 20000; i++) {
		u64 key = rand() % 8;
		struct model_key *m = &mk[key];
		/* mostly the key's next step, sometimes anything */
		u16 e = rand() % 4 ? (m->open ? evs[m->cur + 2] : evs[rand() % 2]) :
			evs[rand() % 5];
		int step = e == UDP || e == TCP ? 0 : e - IP + 1;

		ts += rand() % 400;
		/* expiry: every open chain older than the window */
		for (k = 0; k < 8; k++)
			if (mk[k].open && ts - mk[k].start > 8000) {
				mk[k].open = 0;
				exp++;
			}
		if (step == 0) {
			if (m->open)
				part++;
			memset(m, 0, sizeof(*m));
			m->open = 1;
			m->start = ts;
			m->count[0] = 1;
		} else if (!m->open) {
			stray++;
		} else if ((u32)step <= m->cur) {
			m->count[step]++;
		} else if ((u32)step > m->cur + 1) {
			m->open = 0;
			part++;
			stray++;
		} else {
			m->cur = step;
			m->count[step] = 1;
			if (step == 3) {
				m->open = 0;
				done++;
			}
		}
		ev(f, e, key, ts, 1);
		if (f->n > 200)
			f->n = 0;
	}
	assert_int_equal(f->m.st.completed, done);
	assert_int_equal(f->m.st.expired, exp);
	assert_int_equal(f->m.st.partial, part);
	assert_int_equal(f->m.st.stray, stray);
	assert_int_equal(f->m.st.events, 20000);
	print_message("done %llu expired %llu partial %llu stray %llu\n", (unsigned long long)done, (unsigned long long)exp, (unsigned long long)part, (unsigned long long)stray);
	assert_true(done > 1000 && exp > 10 && part > 100);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order),
		cmocka_unit_test(test_interleaved_keys),
		cmocka_unit_test(test_expiry),
		cmocka_unit_test(test_out_of_order),
		cmocka_unit_test(test_segmentation),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_record),
		cmocka_unit_test(test_random_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
