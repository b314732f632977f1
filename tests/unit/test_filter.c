// SPDX-License-Identifier: GPL-2.0
/*
 * The filters' pure logic (kmod/filter_core.h, the same header the kernel
 * builds): key matching with wildcards, precedence between overlapping
 * filters, the 1-in-N count sampler and the time sampler, including a
 * model of the kernel's sorted-chain lookup against a brute-force search.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <cmocka.h>

#include "../../kmod/filter_core.h"

/*
 * Events' cgroups: cgroup @cg (ID 10 + cg, or 9000) one level below the
 * root (ID 1), or, for 9000, two levels below, under 8000.
 */
static const u64 cg_paths[][3] = {
	{ 1, 10, 0 }, { 1, 11, 0 }, { 1, 12, 0 }, { 1, 8000, 9000 },
};

static struct magnet_fkey ev(u32 event, u32 cpu, u64 aid, u32 pid, u32 tgid,
			     u64 cg)
{
	struct magnet_fkey k = {
		.event = event, .cpu = cpu, .abstract_id = aid, .pid = pid,
		.tgid = tgid,
	};

	if (cg == 9000) {
		k.cg_ids = cg_paths[3];
		k.cg_level = 2;
	} else {
		k.cg_ids = cg_paths[cg % 3];
		k.cg_level = 1;
	}
	k.cgroup = k.cg_ids[k.cg_level];
	return k;
}

static void test_match_each_key(void **state)
{
	struct magnet_fkey e = ev(20, 1, 777, 42, 40, 9000);
	struct magnet_fkey f = { 0 };

	(void)state;
	assert_true(magnet_fkey_match(&f, &e));		/* all wildcards */
	f.mask = MAGNET_FK_EVENT; f.event = 20;
	assert_true(magnet_fkey_match(&f, &e));
	f.event = 21;
	assert_false(magnet_fkey_match(&f, &e));
	f = (struct magnet_fkey){ .mask = MAGNET_FK_CPU, .cpu = 1 };
	assert_true(magnet_fkey_match(&f, &e));
	f.cpu = 0;
	assert_false(magnet_fkey_match(&f, &e));
	f = (struct magnet_fkey){ .mask = MAGNET_FK_AID, .abstract_id = 777 };
	assert_true(magnet_fkey_match(&f, &e));
	f.abstract_id = 778;
	assert_false(magnet_fkey_match(&f, &e));
	f = (struct magnet_fkey){ .mask = MAGNET_FK_PID, .pid = 42 };
	assert_true(magnet_fkey_match(&f, &e));
	f.pid = 40;
	assert_false(magnet_fkey_match(&f, &e));
	f = (struct magnet_fkey){ .mask = MAGNET_FK_TGID, .tgid = 40 };
	assert_true(magnet_fkey_match(&f, &e));
	f.tgid = 42;
	assert_false(magnet_fkey_match(&f, &e));
	f = (struct magnet_fkey){ .mask = MAGNET_FK_CGROUP, .cgroup = 9000,
				  .cg_level = 2 };
	assert_true(magnet_fkey_match(&f, &e));
	/* a cgroup matches its whole subtree: the parent, the root */
	f.cgroup = 8000;
	f.cg_level = 1;
	assert_true(magnet_fkey_match(&f, &e));
	f.cgroup = 1;
	f.cg_level = 0;
	assert_true(magnet_fkey_match(&f, &e));
	/* not a sibling, not a cgroup below the event's */
	f.cgroup = 11;
	f.cg_level = 1;
	assert_false(magnet_fkey_match(&f, &e));
	f.cgroup = 9001;
	f.cg_level = 3;
	assert_false(magnet_fkey_match(&f, &e));
	/* an event from no task (no cgroup) matches no cgroup key */
	e.cg_ids = NULL;
	f.cgroup = 1;
	f.cg_level = 0;
	assert_false(magnet_fkey_match(&f, &e));
	e = ev(20, 1, 777, 42, 40, 9000);
	/* a wildcard ignores the field's value */
	f = (struct magnet_fkey){ .mask = MAGNET_FK_EVENT, .event = 20, .cpu = 99 };
	assert_true(magnet_fkey_match(&f, &e));
	/* all keys */
	f = e;
	f.mask = 0x3f;
	assert_true(magnet_fkey_match(&f, &e));
	f.tgid++;
	assert_false(magnet_fkey_match(&f, &e));
}

static void test_precedence(void **state)
{
	(void)state;
	assert_int_equal(magnet_fkey_spec(0), 0);
	assert_int_equal(magnet_fkey_spec(MAGNET_FK_EVENT | MAGNET_FK_PID), 2);
	/* more specific wins whatever the priority */
	assert_true(magnet_filter_before(2, -100, 9, 1, 100, 0));
	assert_false(magnet_filter_before(1, 100, 0, 2, -100, 9));
	/* then higher priority */
	assert_true(magnet_filter_before(2, 5, 9, 2, 0, 0));
	assert_false(magnet_filter_before(2, 0, 0, 2, 5, 9));
	/* then older */
	assert_true(magnet_filter_before(2, 5, 3, 2, 5, 4));
	assert_false(magnet_filter_before(2, 5, 4, 2, 5, 3));
	assert_false(magnet_filter_before(2, 5, 4, 2, 5, 4));
}

/* ---- a model of the kernel table: 64 sorted chains + a wildcard chain -- */

struct mf {
	struct magnet_fkey key;
	s32 prio;
	u32 seq;
	unsigned int spec;
	struct mf *next;
};

#define NB 64
static struct mf *chains[NB + 1];

static bool before(const struct mf *a, const struct mf *b)
{
	return magnet_filter_before(a->spec, a->prio, a->seq, b->spec, b->prio,
				    b->seq);
}

static void insert(struct mf *f)
{
	struct mf **pp = &chains[(f->key.mask & MAGNET_FK_EVENT) ?
				 (f->key.event & (NB - 1)) : NB];

	f->spec = magnet_fkey_spec(f->key.mask);
	while (*pp && !before(f, *pp))
		pp = &(*pp)->next;
	f->next = *pp;
	*pp = f;
}

static struct mf *first(struct mf *c, const struct magnet_fkey *e)
{
	for (; c; c = c->next)
		if (magnet_fkey_match(&c->key, e))
			return c;
	return NULL;
}

static struct mf *lookup(const struct magnet_fkey *e)
{
	struct mf *a = first(chains[e->event & (NB - 1)], e);
	struct mf *w = first(chains[NB], e);

	if (!a)
		return w;
	if (!w)
		return a;
	return before(a, w) ? a : w;
}

static void test_table_vs_bruteforce(void **state)
{
	enum { NF = 200, NE = 20000 };
	static struct mf fs[NF];
	unsigned int i, j;

	(void)state;
	srand(4);
	for (i = 0; i < NF; i++) {
		struct mf *f = &fs[i];

		f->key.mask = (u32)rand() & 0x3f;
		f->key.event = 16 + rand() % 80;	/* collide in chains */
		f->key.cpu = rand() % 4;
		f->key.abstract_id = rand() % 5;
		f->key.pid = rand() % 6;
		f->key.tgid = rand() % 3;
		/* the root or one of the events' three cgroups */
		f->key.cg_level = rand() % 2;
		f->key.cgroup = f->key.cg_level ? 10 + rand() % 3 : 1;
		f->prio = rand() % 5 - 2;
		f->seq = i;
		insert(f);
	}
	for (j = 0; j < NE; j++) {
		struct magnet_fkey e = ev(16 + rand() % 80, rand() % 4,
					  rand() % 5, rand() % 6, rand() % 3,
					  rand() % 3);
		struct mf *best = NULL, *got = lookup(&e);

		for (i = 0; i < NF; i++)
			if (magnet_fkey_match(&fs[i].key, &e) &&
			    (!best || before(&fs[i], best)))
				best = &fs[i];
		assert_ptr_equal(got, best);
	}
}

static void test_count_sampler(void **state)
{
	u64 n, passed;
	u32 every;

	(void)state;
	for (every = 1; every <= 50; every++) {
		passed = 0;
		for (n = 1; n <= 10007; n++) {
			passed += magnet_sample_count_ok(n, every);
			/* after any N matches, exactly ceil(N / every) passed */
			assert_int_equal(passed, (n + every - 1) / every);
		}
	}
	assert_true(magnet_sample_count_ok(1, 0));
	assert_true(magnet_sample_count_ok(1, 40));
	assert_false(magnet_sample_count_ok(40, 40));
	assert_true(magnet_sample_count_ok(41, 40));
}

static void test_time_sampler(void **state)
{
	const u64 period = 1000000;	/* 1 ms */
	u64 next = 0, last = 0, t, passed = 0;
	bool any = false;

	(void)state;
	/* events every 7 us for 1 s: one per period, at least a period apart */
	for (t = 5; t < 1000000000ull; t += 7000) {
		if (!magnet_sample_time_ok(t, next))
			continue;
		next = magnet_sample_time_next(t, period);
		if (any)
			assert_true(t - last >= period);
		last = t;
		any = true;
		passed++;
	}
	assert_true(passed >= 990 && passed <= 1000);
	/* the first event always passes */
	assert_true(magnet_sample_time_ok(0, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match_each_key),
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_table_vs_bruteforce),
		cmocka_unit_test(test_count_sampler),
		cmocka_unit_test(test_time_sampler),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
