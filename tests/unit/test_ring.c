// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the per-CPU ring (ring/ring.c) built in user space:
 * whole-record reads, sub-buffer switching, discard-when-full with exact
 * loss accounting and LOST records at their chronological place; the
 * overwrite mode (flight recorder): the newest whole records survive, the
 * overwritten ones are counted exactly, also when a snapshot read part of
 * the oldest sub-buffer; one ring written from several CPUs (global mode);
 * a writer and a reader on two threads at once.
 */
#include <stdarg.h>
#include <setjmp.h>
#include <pthread.h>
#include <sched.h>
#include <cmocka.h>
#include "../../ring/ring.h"
#include "../../include/uapi/magnet.h"

int kshim_cpu, kshim_in_task = 1, kshim_pid = 4242, kshim_tgid = 4240;
int kshim_fault_after = -1;
void (*kshim_copy_hook)(void);

#define SB_SIZE 4096

/* The writer side of __magnet_add(), without the kernel around it. */
static bool add(struct magnet_ring *r, u16 event, u64 id, u64 ts, u32 plen)
{
	u32 size = (MAGNET_REC_HDR_SIZE + plen + 7) & ~7u;
	char *rec;

	r->produced++;
	rec = magnet_ring_reserve(r, size, ts);
	if (!rec) {
		magnet_ring_drop(r);
		return false;
	}
	magnet_rec_fill_hdr(rec, size, event, id, magnet_ring_stamp(r, ts));
	memset(rec + MAGNET_REC_HDR_SIZE, 0xab, size - MAGNET_REC_HDR_SIZE);
	magnet_ring_commit(r, size);
	r->written++;
	return true;
}

struct tally {
	u64 events, lost, lost_records, bytes;
	u64 last_ts;
	u64 next_id;	/* abstract IDs are written in order 1, 2, ... */
	bool gap_seen;	/* a LOST record preceded the last ID jump */
};

/* Check the records of one read() and fold them into @t. */
static void check_records(const char *buf, size_t len, struct tally *t)
{
	size_t off = 0;

	while (off < len) {
		const struct magnet_rec_hdr *h = (const void *)(buf + off);

		assert_true(h->size >= MAGNET_REC_HDR_SIZE);
		assert_int_equal(h->size % 8, 0);
		assert_true(off + h->size <= len);	/* whole records only */
		assert_true(h->timestamp >= t->last_ts);
		t->last_ts = h->timestamp;
		if (h->event == MAGNET_EVENT_LOST) {
			const struct magnet_lost *l = (const void *)(h + 1);

			assert_true(l->count > 0);
			t->lost += l->count;
			t->lost_records++;
			t->gap_seen = true;
		} else {
			assert_int_equal(h->pid, 4242);
			assert_int_equal(h->tgid, 4240);
			if (h->abstract_id != t->next_id) {
				/* a jump in IDs only right after a LOST record */
				assert_true(t->gap_seen);
				assert_true(h->abstract_id > t->next_id);
			}
			t->next_id = h->abstract_id + 1;
			t->gap_seen = false;
			t->events++;
		}
		off += h->size;
	}
	t->bytes += len;
}

static void ring_setup(struct magnet_ring *r, u32 count)
{
	assert_int_equal(magnet_ring_init(r, 0, SB_SIZE, count), 0);
}

static size_t drain(struct magnet_ring *r, char *buf, size_t len,
		    struct tally *t)
{
	size_t total = 0;
	ssize_t n;
	u32 need;

	while ((n = magnet_ring_read(r, buf, len, &need)) > 0) {
		check_records(buf, n, t);
		total += n;
	}
	assert_true(n == 0);
	return total;
}

static void test_empty_ring_reads_nothing(void **state)
{
	struct magnet_ring r;
	char buf[256];
	u32 need = 1;

	(void)state;
	ring_setup(&r, 2);
	assert_false(magnet_ring_has_data(&r));
	assert_int_equal(magnet_ring_read(&r, buf, sizeof(buf), &need), 0);
	assert_int_equal(need, 0);
	magnet_ring_free(&r);
}

static void test_reads_whole_records_only(void **state)
{
	struct magnet_ring r;
	char buf[100];	/* room for 1 record of 48 bytes, not 3 */
	struct tally t = { .next_id = 1 };
	u32 need;
	ssize_t n;

	(void)state;
	ring_setup(&r, 2);
	for (int i = 1; i <= 3; i++)
		assert_true(add(&r, 20, i, i, 16));
	n = magnet_ring_read(&r, buf, sizeof(buf), &need);
	assert_int_equal(n, 96);		/* two 48-byte records */
	assert_int_equal(need, 48);		/* the third did not fit */
	check_records(buf, n, &t);
	n = magnet_ring_read(&r, buf, 40, &need);	/* smaller than a record */
	assert_int_equal(n, 0);
	assert_int_equal(need, 48);
	n = magnet_ring_read(&r, buf, sizeof(buf), &need);
	assert_int_equal(n, 48);
	check_records(buf, n, &t);
	assert_int_equal(t.events, 3);
	assert_int_equal(r.read, 3);
	magnet_ring_free(&r);
}

static void test_full_ring_discards_and_counts(void **state)
{
	struct magnet_ring r;
	struct tally t = { .next_id = 1 };
	static char buf[1 << 16];
	u64 id, ok = 0;

	(void)state;
	ring_setup(&r, 2);
	/* 64-byte records: 64 per sub-buffer, 128 fit, the rest drop */
	for (id = 1; id <= 300; id++)
		ok += add(&r, 20, id, id, 32);
	assert_int_equal(ok, 128);
	assert_int_equal(r.lost, 172);
	assert_int_equal(r.lost_pending, 172);
	assert_int_equal(r.switches, 1);

	drain(&r, buf, sizeof(buf), &t);
	assert_int_equal(t.events, 128);
	/* the loss is reported with the next event that fits */
	assert_true(add(&r, 20, 301, 301, 32));
	drain(&r, buf, sizeof(buf), &t);
	assert_int_equal(t.lost_records, 1);
	assert_int_equal(t.lost, 172);
	assert_int_equal(t.events, 129);
	assert_int_equal(r.produced, t.events + t.lost);
	assert_int_equal(r.read, t.events);
	assert_int_equal(magnet_ring_fill(&r), 0);
	magnet_ring_free(&r);
}

static void test_flush_writes_pending_lost(void **state)
{
	struct magnet_ring r;
	struct tally t = { .next_id = 1 };
	static char buf[1 << 16];
	u64 id;

	(void)state;
	ring_setup(&r, 2);
	for (id = 1; id <= 200; id++)
		add(&r, 20, id, id, 32);
	drain(&r, buf, sizeof(buf), &t);
	assert_int_equal(t.lost, 0);		/* not reported yet */
	magnet_ring_flush_lost(&r, 1000);
	drain(&r, buf, sizeof(buf), &t);
	assert_int_equal(t.lost, 72);
	assert_int_equal(r.lost_pending, 0);
	assert_int_equal(r.produced, t.events + t.lost);
	magnet_ring_free(&r);
}

static void test_interleaved_reader_loses_nothing(void **state)
{
	struct magnet_ring r;
	struct tally t = { .next_id = 1 };
	static char buf[3000];
	u64 id;

	(void)state;
	ring_setup(&r, 4);
	/* a reader that keeps up: many sub-buffer switches, no loss */
	for (id = 1; id <= 20000; id++) {
		assert_true(add(&r, 20 + id % 3, id, id, (id * 7) % 120));
		if (id % 50 == 0)
			drain(&r, buf, sizeof(buf), &t);
	}
	drain(&r, buf, sizeof(buf), &t);
	assert_int_equal(t.events, 20000);
	assert_int_equal(r.lost, 0);
	assert_true(r.switches > 100);
	assert_int_equal(t.bytes, r.bytes);
	magnet_ring_free(&r);
}

/*
 * A clock reading earlier than the ring's last record (an extrapolated
 * timestamp ran a little ahead of the kernel's clock, ring/clock.h) is
 * raised to it: events and the LOST record stay in time order.
 */
static void test_timestamps_never_go_back(void **state)
{
	struct magnet_ring r;
	struct tally t = { .next_id = 1 };
	static char buf[1 << 16];
	const struct magnet_rec_hdr *h;
	u32 need;
	u64 id;

	(void)state;
	ring_setup(&r, 2);
	for (id = 1; id <= 200; id++)	/* 72 of them lost */
		add(&r, 20, id, 1000 + id, 32);
	add(&r, 20, 201, 900, 32);	/* no room: lost, pending */
	drain(&r, buf, sizeof(buf), &t);	/* checks the order */
	assert_int_equal(t.last_ts, 1128);
	add(&r, 20, 202, 1100, 32);	/* LOST then the event, both raised */
	assert_true(magnet_ring_read(&r, buf, sizeof(buf), &need) > 0);
	h = (const void *)buf;
	assert_int_equal(h->event, MAGNET_EVENT_LOST);
	assert_int_equal(h->timestamp, 1128);
	h = (const void *)(buf + h->size);
	assert_int_equal(h->abstract_id, 202);
	assert_int_equal(h->timestamp, 1128);
	magnet_ring_flush_lost(&r, 1050);	/* nothing pending: no record */
	assert_int_equal(magnet_ring_read(&r, buf, sizeof(buf), &need), 0);
	add(&r, 20, 203, 2000, 32);	/* a later reading is kept as is */
	assert_int_equal(r.last_ts, 2000);
	magnet_ring_free(&r);
}

/*
 * CLOCK_MONOTONIC extrapolated from the TSC (ring/clock.h): within 1 ns
 * of the exact ns over an anchor's whole span, for TSCs from 250 MHz to
 * 10 GHz; outside the span (before the anchor, after it, no TSC, the
 * first read) the anchor serves nothing and a new one is taken.
 */
static void test_clock_extrapolation(void **state)
{
	static const u32 khzs[] = { 250001, 1000000, 2599980, 3000000,
				    3999999, 10000000 };
	struct magnet_ring_clock c;
	unsigned int i;

	(void)state;
	assert_false(magnet_clock_setup(&c, 0));
	assert_int_equal(magnet_clock_extrapolate(&c, 12345), 0);
	assert_false(magnet_clock_setup(&c, 250000));
	assert_int_equal(magnet_clock_extrapolate(&c, 12345), 0);
	for (i = 0; i < sizeof(khzs) / sizeof(khzs[0]); i++) {
		u32 khz = khzs[i];
		u64 d, step;

		assert_true(magnet_clock_setup(&c, khz));
		/* the first read of a ring takes an anchor */
		assert_int_equal(magnet_clock_extrapolate(&c, 0), 0);
		assert_int_equal(magnet_clock_extrapolate(&c, 1ull << 40), 0);
		/* an anchor serves 256 us of TSC, its readings span <= 1 us */
		assert_int_equal(c.span, (u64)khz * 256 / 1000);
		assert_int_equal(c.gap, (u64)khz / 1000);
		c.tsc = 1ull << 50;
		c.ns = 7000000000ull;
		step = c.span / 997 + 1;
		for (d = 0; d < c.span; d += step) {
			/* exact: d cycles at khz kHz, in ns */
			u64 exact = c.ns + d * 1000000 / khz;
			u64 ns = magnet_clock_extrapolate(&c, c.tsc + d);

			assert_true(ns <= exact + 1 && ns + 1 >= exact);
		}
		assert_true(magnet_clock_extrapolate(&c, c.tsc + c.span - 1) != 0);
		assert_int_equal(magnet_clock_extrapolate(&c, c.tsc + c.span), 0);
		assert_int_equal(magnet_clock_extrapolate(&c, c.tsc - 1), 0);
	}
}

static void count_records(const char *buf, ssize_t n, u64 *events, u64 *lost)
{
	ssize_t off = 0;

	while (off < n) {
		const struct magnet_rec_hdr *h = (const void *)(buf + off);

		if (h->event == MAGNET_EVENT_LOST)
			*lost += ((const struct magnet_lost *)(h + 1))->count;
		else
			(*events)++;
		off += h->size;
	}
}

static void test_slow_reader_exact_accounting(void **state)
{
	struct magnet_ring r;
	static char buf[5000];
	u64 id, events = 0, lost = 0;
	ssize_t n;
	u32 need;

	(void)state;
	ring_setup(&r, 2);
	for (id = 1; id <= 50000; id++) {
		add(&r, 20, id, id, (id * 13) % 200);
		if (id % 997 == 0) {	/* reads one buffer now and then */
			n = magnet_ring_read(&r, buf, sizeof(buf), &need);
			count_records(buf, n, &events, &lost);
		}
	}
	magnet_ring_flush_lost(&r, 1 << 30);
	while ((n = magnet_ring_read(&r, buf, sizeof(buf), &need)) > 0)
		count_records(buf, n, &events, &lost);
	assert_true(r.lost > 0);
	assert_int_equal(lost, r.lost);		/* every loss reported */
	assert_int_equal(events, r.written);
	assert_int_equal(r.produced, events + lost);
	assert_int_equal(r.read, events);
	magnet_ring_free(&r);
}

static void test_irq_context_has_no_pid(void **state)
{
	struct magnet_ring r;
	char buf[128];
	const struct magnet_rec_hdr *h = (const void *)buf;
	u32 need;

	(void)state;
	ring_setup(&r, 2);
	kshim_in_task = 0;
	kshim_cpu = 1;
	add(&r, 30, 7, 5, 8);
	kshim_in_task = 1;
	kshim_cpu = 0;
	assert_int_equal(magnet_ring_read(&r, buf, sizeof(buf), &need), 40);
	assert_int_equal(h->pid, 0);
	assert_int_equal(h->tgid, 0);
	assert_int_equal(h->cpu, 1);
	assert_int_equal(h->event, 30);
	magnet_ring_free(&r);
}

static void test_fault_keeps_data(void **state)
{
	struct magnet_ring r;
	char buf[256];
	u32 need;

	(void)state;
	ring_setup(&r, 2);
	add(&r, 20, 1, 1, 8);
	kshim_fault_after = 0;
	assert_int_equal(magnet_ring_read(&r, buf, sizeof(buf), &need), -EFAULT);
	kshim_fault_after = -1;
	/* the record is still there for the next read */
	assert_int_equal(magnet_ring_read(&r, buf, sizeof(buf), &need), 40);
	magnet_ring_free(&r);
}

/*
 * The in-kernel reader's access (magnetfs/kreader.c): peek/consume in place
 * interleaved with a writer that keeps filling and losing; every record
 * comes once and in order, the read counter and the losses are exact,
 * and sub-buffers go back to the writer as they are drained.
 */
static void test_peek_consume(void **state)
{
	struct magnet_ring r;
	struct tally t = { .next_id = 1 };
	const struct magnet_rec_hdr *h;
	u64 id = 1, ts = 1, written = 0;
	int round, i;

	(void)state;
	assert_int_equal(magnet_ring_init(&r, 0, SB_SIZE, 3), 0);
	assert_null(magnet_ring_peek(&r));
	for (round = 0; round < 50; round++) {
		/* up to ~2.5 sub-buffers per round: sometimes full */
		for (i = 0; i < 150 + round * 3; i++) {
			written += add(&r, 20, id, ts, 24);
			id++;
			ts++;
		}
		/* drain only part of it on even rounds */
		for (i = 0; (h = magnet_ring_peek(&r)) && (round % 2 || i < 100); i++) {
			check_records((const char *)h, h->size, &t);
			magnet_ring_consume(&r, h);
		}
	}
	while ((h = magnet_ring_peek(&r))) {
		check_records((const char *)h, h->size, &t);
		magnet_ring_consume(&r, h);
	}
	magnet_ring_flush_lost(&r, ts);
	while ((h = magnet_ring_peek(&r))) {
		check_records((const char *)h, h->size, &t);
		magnet_ring_consume(&r, h);
	}
	assert_int_equal(t.events, written);
	assert_int_equal(r.read, written);
	assert_int_equal(t.lost, r.lost);
	assert_true(r.lost > 0);
	assert_int_equal(r.produced, r.written + r.lost);
	assert_int_equal(r.bytes_read, r.bytes);
	magnet_ring_free(&r);
}

/* ---- overwrite mode ------------------------------------------------ */

static void ring_setup_ow(struct magnet_ring *r, u32 count)
{
	ring_setup(r, count);
	r->overwrite = true;
}

/*
 * Records of one read of an overwrite ring: whole, well formed, probe
 * events' abstract IDs strictly increasing (a gap is what was overwritten
 * or lost), timestamps never back.  Returns the number of probe events.
 */
static u64 check_ow(const char *buf, ssize_t n, u64 *last_id, u64 *last_ts,
		    u64 *lost)
{
	ssize_t off = 0;
	u64 events = 0;

	while (off < n) {
		const struct magnet_rec_hdr *h = (const void *)(buf + off);

		assert_true(h->size >= MAGNET_REC_HDR_SIZE);
		assert_int_equal(h->size % 8, 0);
		assert_true(off + h->size <= n);
		assert_true(h->timestamp >= *last_ts);
		*last_ts = h->timestamp;
		if (h->event == MAGNET_EVENT_LOST) {
			*lost += ((const struct magnet_lost *)(h + 1))->count;
		} else {
			assert_true(h->abstract_id > *last_id);
			/* the payload is intact: not partly overwritten */
			for (u32 i = MAGNET_REC_HDR_SIZE; i < h->size; i++)
				assert_int_equal((unsigned char)buf[off + i], 0xab);
			*last_id = h->abstract_id;
			events++;
		}
		off += h->size;
	}
	return events;
}

static void test_overwrite_keeps_newest(void **state)
{
	static char buf[1 << 16];
	struct magnet_ring r;
	u64 id, last = 0, ts = 0, lost = 0, ev = 0, first = 0;
	ssize_t n;
	u32 need;

	(void)state;
	ring_setup_ow(&r, 4);
	/* 64-byte records, 64 per sub-buffer: nothing is ever refused */
	for (id = 1; id <= 1000; id++)
		assert_true(add(&r, 20, id, id, 32));
	assert_int_equal(r.written, 1000);
	assert_int_equal(r.lost, 0);
	assert_int_equal(r.switches, 15);
	/* 12 switches found the ring full: 12 sub-buffers of 64 events */
	assert_int_equal(r.overwritten, 12 * 64);
	assert_int_equal(r.overwritten_bytes, 12 * 64 * 64);
	assert_int_equal(magnet_ring_fill(&r), (1000 - 768) * 64);
	while ((n = magnet_ring_read(&r, buf, sizeof(buf), &need)) > 0) {
		if (!first)
			first = ((const struct magnet_rec_hdr *)buf)->abstract_id;
		ev += check_ow(buf, n, &last, &ts, &lost);
	}
	/* the newest 232, in order, ending at the last one written */
	assert_int_equal(first, 769);
	assert_int_equal(last, 1000);
	assert_int_equal(ev, 232);
	assert_int_equal(r.read + r.overwritten, r.written);
	assert_int_equal(r.bytes_read + r.overwritten_bytes, r.bytes);
	assert_int_equal(magnet_ring_fill(&r), 0);
	magnet_ring_free(&r);
}

static void test_overwrite_after_partial_read(void **state)
{
	static char buf[1 << 16];
	struct magnet_ring r;
	u64 id, last = 0, ts = 0, lost = 0, ev;
	ssize_t n;
	u32 need;

	(void)state;
	ring_setup_ow(&r, 4);
	for (id = 1; id <= 256; id++)		/* exactly 4 full sub-buffers */
		assert_true(add(&r, 20, id, id, 32));
	assert_int_equal(r.overwritten, 0);
	/* a snapshot reads 10 records of the oldest one, then resumes */
	n = magnet_ring_read(&r, buf, 10 * 64, &need);
	assert_int_equal(n, 640);
	ev = check_ow(buf, n, &last, &ts, &lost);
	assert_int_equal(ev, 10);
	assert_int_equal(last, 10);
	/* the next switch takes that sub-buffer: only its unread 54 count */
	assert_true(add(&r, 20, 257, 257, 32));
	assert_int_equal(r.overwritten, 54);
	assert_int_equal(r.overwritten_bytes, 4096 - 640);
	n = magnet_ring_read(&r, buf, sizeof(buf), &need);
	assert_int_equal(((const struct magnet_rec_hdr *)buf)->abstract_id, 65);
	ev += check_ow(buf, n, &last, &ts, &lost);
	assert_int_equal(last, 257);
	assert_int_equal(ev, 10 + 193);
	assert_int_equal(r.read + r.overwritten, r.written);
	assert_int_equal(r.bytes_read + r.overwritten_bytes, r.bytes);
	magnet_ring_free(&r);
}

/*
 * Snapshots and writers in turns (the stream never lets them overlap),
 * record sizes varying, some events too large (dropped, reported by a
 * LOST record that may itself be overwritten later): the accounting is
 * exact at every step.
 */
static void test_overwrite_interleavings(void **state)
{
	static char buf[1 << 15];
	struct magnet_ring r;
	u64 id = 0, last = 0, ts = 0, lost = 0, ev = 0, newest = 0;
	unsigned int seed = 12345, round;
	ssize_t n;
	u32 need;

	(void)state;
	ring_setup_ow(&r, 3);
	for (round = 0; round < 3000; round++) {
		unsigned int k = rand_r(&seed) % 200;

		while (k--) {
			u32 plen = rand_r(&seed) % 300;

			id++;
			if (rand_r(&seed) % 97 == 0)
				plen = 5000;	/* larger than a sub-buffer */
			if (add(&r, 20, id, id, plen))
				newest = id;
		}
		/* a snapshot of random extent: 0, a little or everything */
		k = rand_r(&seed) % 4;
		while (k--) {
			n = magnet_ring_read(&r, buf, 64 + rand_r(&seed) % sizeof(buf),
					     &need);
			assert_true(n >= 0);
			ev += check_ow(buf, n, &last, &ts, &lost);
		}
		assert_int_equal(r.produced, r.written + r.lost);
		assert_true(r.read + r.overwritten <= r.written);
		assert_int_equal(r.bytes_read + r.overwritten_bytes +
				 magnet_ring_fill(&r), r.bytes);
	}
	magnet_ring_flush_lost(&r, id + 1);
	while ((n = magnet_ring_read(&r, buf, sizeof(buf), &need)) > 0)
		ev += check_ow(buf, n, &last, &ts, &lost);
	assert_true(r.overwritten > 0);
	assert_true(r.lost > 0);
	assert_true(lost > 0 && lost <= r.lost);
	assert_int_equal(ev, r.read);
	assert_int_equal(r.read + r.overwritten, r.written);
	assert_int_equal(r.bytes_read + r.overwritten_bytes, r.bytes);
	assert_int_equal(r.lost_pending, 0);
	/* the newest event that was written is the last one read */
	assert_int_equal(last, newest);
	magnet_ring_free(&r);
}

/* Global mode: one ring, writers on several CPUs taking turns (the lock). */
static void test_global_ring_keeps_write_order(void **state)
{
	static char buf[1 << 16];
	struct magnet_ring r;
	u64 id, last = 0, ts = 0, lost = 0, ev = 0;
	int cpus_seen = 0;
	ssize_t n, off;
	u32 need;

	(void)state;
	assert_int_equal(magnet_ring_init(&r, -1, SB_SIZE, 4), 0);
	r.overwrite = true;
	for (id = 1; id <= 700; id++) {
		kshim_cpu = id % 3;
		assert_true(add(&r, 20, id, id * 10, 24));
	}
	kshim_cpu = 0;
	while ((n = magnet_ring_read(&r, buf, sizeof(buf), &need)) > 0) {
		for (off = 0; off < n; off += ((struct magnet_rec_hdr *)(buf + off))->size) {
			const struct magnet_rec_hdr *h = (const void *)(buf + off);

			/* the CPU of each record is kept; order is global */
			assert_int_equal(h->cpu, h->abstract_id % 3);
			cpus_seen |= 1 << h->cpu;
		}
		ev += check_ow(buf, n, &last, &ts, &lost);
	}
	assert_int_equal(cpus_seen, 7);
	assert_int_equal(last, 700);
	assert_int_equal(ev + r.overwritten, 700);
	magnet_ring_free(&r);
}

/* Take spans (closed first, then partial) until none; fold into @t. */
static void take_spans(struct magnet_ring *r, bool partial, struct tally *t)
{
	struct magnet_ring_span sp;

	while (magnet_ring_hold(r, partial, &sp) == 0) {
		u64 ev = 0;
		size_t off = 0;

		/* whole records, and the span counts exactly its events */
		while (off < sp.len) {
			const struct magnet_rec_hdr *h =
				(const void *)(r->data + sp.off + off);

			ev += h->event >= MAGNET_EVENT_FIRST_PROBE;
			off += h->size;
		}
		assert_int_equal(off, sp.len);
		assert_int_equal(ev, sp.events);
		check_records(r->data + sp.off, sp.len, t);
		magnet_ring_put(r);
	}
}

static void test_spans_closed_then_partial(void **state)
{
	struct magnet_ring r;
	struct magnet_ring_span sp;
	struct tally t = { .next_id = 1 };
	u64 id;

	(void)state;
	ring_setup(&r, 4);
	/* 64-byte records, 64 a sub-buffer: 1.5 sub-buffers */
	for (id = 1; id <= 96; id++)
		assert_true(add(&r, 20, id, id, 32));
	/* without @partial only the finished sub-buffer comes, whole */
	assert_int_equal(magnet_ring_hold(&r, false, &sp), 0);
	assert_true(sp.closed);
	assert_int_equal(sp.off, 0);
	assert_int_equal(sp.len, SB_SIZE);
	assert_int_equal(sp.events, 64);
	/* one span at a time; read() and peek() keep off a held ring */
	assert_int_equal(magnet_ring_hold(&r, true, &sp), -EBUSY);
	{
		char buf[256];
		u32 need;

		assert_int_equal(magnet_ring_read(&r, buf, sizeof(buf), &need), 0);
		assert_null(magnet_ring_peek(&r));
	}
	check_records(r.data, SB_SIZE, &t);
	magnet_ring_put(&r);
	assert_int_equal(r.read, 64);
	assert_int_equal(magnet_ring_hold(&r, false, &sp), -EAGAIN);
	/* @partial: the sub-buffer being written, up to its commit */
	assert_int_equal(magnet_ring_hold(&r, true, &sp), 0);
	assert_false(sp.closed);
	assert_int_equal(sp.off, SB_SIZE);
	assert_int_equal(sp.len, 32 * 64);
	assert_int_equal(sp.events, 32);
	/* the writer goes on behind the held span */
	assert_true(add(&r, 20, 97, 97, 32));
	check_records(r.data + sp.off, sp.len, &t);
	magnet_ring_put(&r);
	take_spans(&r, true, &t);
	assert_int_equal(t.events, 97);
	assert_int_equal(r.read, 97);
	assert_int_equal(magnet_ring_fill(&r), 0);
	magnet_ring_free(&r);
}

static void test_spans_hold_keeps_writer_out(void **state)
{
	struct magnet_ring r;
	struct magnet_ring_span sp;
	struct tally t = { .next_id = 1 };
	u64 id, ok = 0;

	(void)state;
	ring_setup(&r, 2);
	for (id = 1; id <= 64; id++)
		ok += add(&r, 20, id, id, 32);
	assert_int_equal(magnet_ring_hold(&r, true, &sp), 0);
	/* the ring fills: the writer takes the free sub-buffer, then drops */
	for (; id <= 300; id++)
		ok += add(&r, 20, id, id, 32);
	assert_int_equal(ok, 128);
	assert_int_equal(r.lost, 172);
	/* what was held is intact, in order */
	check_records(r.data + sp.off, sp.len, &t);
	assert_int_equal(t.events, 64);
	magnet_ring_put(&r);
	/* an unheld span stays unread */
	assert_int_equal(magnet_ring_hold(&r, true, &sp), 0);
	magnet_ring_unhold(&r);
	assert_int_equal(r.read, 64);
	take_spans(&r, true, &t);
	magnet_ring_flush_lost(&r, 1000);
	take_spans(&r, true, &t);
	assert_int_equal(t.lost, 172);
	assert_int_equal(r.produced, t.events + t.lost);
	assert_int_equal(r.read, t.events);
	magnet_ring_free(&r);
}

/*
 * The writer wakes nobody per event: it queues its deferred wake-up only
 * when it closes a sub-buffer, and only while a reader is armed.
 */
static void test_wakeup_only_at_switch(void **state)
{
	struct magnet_ring r;
	u64 id;

	(void)state;
	ring_setup(&r, 4);
	for (id = 1; id <= 64; id++)
		assert_true(add(&r, 20, id, id, 32));
	assert_int_equal(r.wake.queued, 0);
	r.wake_armed = true;
	for (; id <= 127; id++)
		assert_true(add(&r, 20, id, id, 32));
	assert_int_equal(r.wake.queued, 1);	/* the switch at event 65 */
	for (; id <= 192; id++)
		assert_true(add(&r, 20, id, id, 32));
	assert_int_equal(r.wake.queued, 2);	/* and at 129 */
	r.wake_armed = false;
	for (; id <= 256; id++)
		assert_true(add(&r, 20, id, id, 32));
	assert_int_equal(r.wake.queued, 2);
	magnet_ring_free(&r);
}

/* A deleted stream's full ring: the reader writes the owed LOST record. */
static void test_settle_lost_after_drain(void **state)
{
	struct magnet_ring r;
	struct tally t = { .next_id = 1 };
	u64 id;

	(void)state;
	ring_setup(&r, 2);
	for (id = 1; id <= 200; id++)
		add(&r, 20, id, id, 32);
	magnet_ring_flush_lost(&r, 500);	/* no room: stays pending */
	assert_int_equal(r.lost_pending, 72);
	/* not before everything else was taken: it would come too early */
	magnet_ring_settle_lost(&r, 600);
	assert_int_equal(r.lost_pending, 72);
	take_spans(&r, true, &t);
	kshim_cpu = 1;				/* the reader runs elsewhere */
	magnet_ring_settle_lost(&r, 1000);
	kshim_cpu = 0;
	assert_int_equal(r.lost_pending, 0);
	take_spans(&r, true, &t);
	assert_int_equal(t.lost, 72);
	assert_int_equal(r.produced, t.events + t.lost);
	magnet_ring_free(&r);
}

/*
 * A largest record (MAGNET_REC_MAX, a whole 4 KiB sub-buffer) cannot share
 * a sub-buffer with the LOST record it must follow: the LOST record takes
 * the end of one, the record the next.  Before, every such record was
 * dropped for as long as a loss was pending.
 */
static void test_largest_record_after_loss(void **state)
{
	struct magnet_ring r;
	struct tally t = { .next_id = 1 };
	static char buf[1 << 16];
	const u32 plen = MAGNET_REC_MAX - MAGNET_REC_HDR_SIZE;

	(void)state;
	ring_setup(&r, 3);
	for (u64 id = 1; id <= 3; id++)
		assert_true(add(&r, 20, id, id, plen));
	assert_false(add(&r, 20, 4, 4, plen));	/* full */
	assert_int_equal(r.lost_pending, 1);
	drain(&r, buf, sizeof(buf), &t);
	assert_int_equal(t.events, 3);
	assert_true(add(&r, 20, 5, 5, plen));
	assert_int_equal(r.lost_pending, 0);
	drain(&r, buf, sizeof(buf), &t);
	assert_int_equal(t.lost_records, 1);
	assert_int_equal(t.lost, 1);
	assert_int_equal(t.events, 4);
	assert_int_equal(r.produced, t.events + t.lost);
	magnet_ring_free(&r);
}

/*
 * The same with two sub-buffers: the LOST record takes the first free
 * one; the record needs the other, free once the reader has moved on.
 */
static void test_largest_record_after_loss_two_subbufs(void **state)
{
	struct magnet_ring r;
	struct tally t = { .next_id = 1 };
	static char buf[1 << 16];
	const u32 plen = MAGNET_REC_MAX - MAGNET_REC_HDR_SIZE;

	(void)state;
	ring_setup(&r, 2);
	assert_true(add(&r, 20, 1, 1, plen));
	assert_true(add(&r, 20, 2, 2, plen));
	assert_false(add(&r, 20, 3, 3, plen));	/* full */
	drain(&r, buf, sizeof(buf), &t);
	assert_false(add(&r, 20, 4, 4, plen));	/* LOST written, no room yet */
	drain(&r, buf, sizeof(buf), &t);
	assert_true(add(&r, 20, 5, 5, plen));
	drain(&r, buf, sizeof(buf), &t);
	assert_int_equal(t.lost_records, 2);
	assert_int_equal(t.lost, 2);
	assert_int_equal(t.events, 3);
	assert_int_equal(r.produced, t.events + t.lost);
	magnet_ring_free(&r);
}

/*
 * The writer switches sub-buffers while a read is under way: the read
 * took the writer's sequence (N) on entry, copied the closed sub-buffer
 * before N, and moves on to N, the one being written when it started.
 * In between, the writer closed N early (a record too large for what
 * was left of it) and wrote that record into N + 1, whose offset is now
 * beyond N's end.  The read must stop at N's end: whole records, all
 * written, none twice.
 */
static struct magnet_ring *race_ring;
static u64 race_id;

static void race_writer(void)
{
	/* 4000 bytes: N (about 2000 bytes in) cannot take them */
	assert_true(add(race_ring, 20, race_id, race_id, 4000 - MAGNET_REC_HDR_SIZE));
	race_id++;
	assert_int_equal(race_ring->switches, 2);
}

static void test_read_across_a_switch(void **state)
{
	struct magnet_ring r;
	struct tally t = { .next_id = 1 };
	static char buf[3 * SB_SIZE];
	ssize_t n;
	u32 need;

	(void)state;
	ring_setup(&r, 4);
	/* sub-buffer 0 full, then about 2000 bytes of sub-buffer 1 */
	for (race_id = 1; r.switches == 0 || r.woff < 2000; race_id++)
		assert_true(add(&r, 20, race_id, race_id, 64));
	race_ring = &r;
	kshim_copy_hook = race_writer;
	n = magnet_ring_read(&r, buf, sizeof(buf), &need);
	assert_null(kshim_copy_hook);		/* the writer ran in between */
	check_records(buf, n, &t);
	/* everything up to sub-buffer 1's end, not the 4000 bytes beyond */
	assert_int_equal(t.events, race_id - 2);
	assert_int_equal(n, r.bytes - 4000);
	/* the large record comes with the next read */
	n = magnet_ring_read(&r, buf, sizeof(buf), &need);
	assert_int_equal(n, 4000);
	check_records(buf, n, &t);
	assert_int_equal(t.events, race_id - 1);
	assert_int_equal(r.read, r.written);
	magnet_ring_free(&r);
}

/*
 * A writer and a reader at the same time, as a CPU's probes and a reader
 * on another CPU are: the publication protocol of ring.h, not a
 * sequence of calls.  Records of every size, among them some too large
 * for what is left of a sub-buffer, which closes it early: the next
 * sub-buffer's offset then runs past the closed one's end, and a reader
 * that took it for the closed one's committed length would copy bytes
 * never written there.  Every record read must be whole and intact, in
 * order, with gaps only after a LOST record, and produced = read + lost.
 */
#define CONC_N 200000

struct conc {
	struct magnet_ring r;
	int writer_done;		/* atomic */
	/* the reader's findings, checked by the main thread */
	struct tally t;
	u64 bad, reads;
	char buf[2 * SB_SIZE];
};

static void *conc_writer(void *arg)
{
	struct conc *c = arg;
	u64 id;

	for (id = 1; id <= CONC_N; id++) {
		/*
		 * Mostly a writer the reader keeps up with (it waits while
		 * the ring has no free sub-buffer), now and then one that
		 * overruns it: the ring switches often and drops some.
		 */
		while (id % 20000 < 19000 &&
		       __atomic_load_n(&c->r.wseq, __ATOMIC_RELAXED) + 2 -
		       __atomic_load_n(&c->r.rseq, __ATOMIC_ACQUIRE) >=
		       c->r.count)
			sched_yield();
		add(&c->r, 20, id, id, id % 97 == 0 ? 3000 : (id * 7) % 120);
	}
	/* what was dropped at the end is owed a LOST record */
	while (c->r.lost_pending) {
		magnet_ring_flush_lost(&c->r, CONC_N + 1);
		sched_yield();
	}
	__atomic_store_n(&c->writer_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * check_records() for the reader thread (cmocka's asserts belong to the
 * main thread): counts what is wrong into c->bad, and also checks that
 * every payload byte is what add() wrote.
 */
static void conc_check(struct conc *c, ssize_t n)
{
	struct tally *t = &c->t;
	ssize_t off = 0;
	u32 i;

	while (off < n) {
		const struct magnet_rec_hdr *h = (const void *)(c->buf + off);
		const unsigned char *p = (const void *)(h + 1);

		if (h->size < MAGNET_REC_HDR_SIZE || h->size % 8 ||
		    off + h->size > n || h->timestamp < t->last_ts) {
			c->bad++;
			return;
		}
		t->last_ts = h->timestamp;
		if (h->event == MAGNET_EVENT_LOST) {
			t->lost += ((const struct magnet_lost *)p)->count;
			t->gap_seen = true;
		} else {
			if (h->event != 20 || h->pid != 4242 ||
			    (h->abstract_id != t->next_id &&
			     (!t->gap_seen || h->abstract_id < t->next_id)))
				c->bad++;
			for (i = 0; i < h->size - MAGNET_REC_HDR_SIZE; i++)
				if (p[i] != 0xab) {
					c->bad++;
					break;
				}
			t->next_id = h->abstract_id + 1;
			t->gap_seen = false;
			t->events++;
		}
		off += h->size;
	}
}

static void *conc_reader(void *arg)
{
	struct conc *c = arg;
	ssize_t n;
	u32 need;
	bool done;

	c->t.next_id = 1;
	do {
		done = __atomic_load_n(&c->writer_done, __ATOMIC_ACQUIRE);
		while ((n = magnet_ring_read(&c->r, c->buf, sizeof(c->buf),
					     &need)) > 0) {
			c->reads++;
			conc_check(c, n);
		}
		if (n < 0)
			c->bad++;
	} while (!done);
	return NULL;
}

static void test_concurrent_writer_and_reader(void **state)
{
	static struct conc c;
	pthread_t w, rd;

	(void)state;
	ring_setup(&c.r, 4);
	assert_int_equal(pthread_create(&rd, NULL, conc_reader, &c), 0);
	assert_int_equal(pthread_create(&w, NULL, conc_writer, &c), 0);
	pthread_join(w, NULL);
	pthread_join(rd, NULL);
	assert_int_equal(c.bad, 0);
	assert_int_equal(c.r.produced, CONC_N);
	assert_int_equal(c.t.events, c.r.written);
	assert_int_equal(c.t.events, c.r.read);
	assert_int_equal(c.t.lost, c.r.lost);	/* every loss reported */
	assert_int_equal(c.r.produced, c.t.events + c.t.lost);
	assert_true(c.r.switches > 1000);
	assert_true(c.t.lost > 0);
	assert_true(c.reads > 1000);		/* the two really interleaved */
	magnet_ring_free(&c.r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_peek_consume),
		cmocka_unit_test(test_empty_ring_reads_nothing),
		cmocka_unit_test(test_reads_whole_records_only),
		cmocka_unit_test(test_full_ring_discards_and_counts),
		cmocka_unit_test(test_flush_writes_pending_lost),
		cmocka_unit_test(test_timestamps_never_go_back),
		cmocka_unit_test(test_clock_extrapolation),
		cmocka_unit_test(test_interleaved_reader_loses_nothing),
		cmocka_unit_test(test_slow_reader_exact_accounting),
		cmocka_unit_test(test_irq_context_has_no_pid),
		cmocka_unit_test(test_fault_keeps_data),
		cmocka_unit_test(test_overwrite_keeps_newest),
		cmocka_unit_test(test_overwrite_after_partial_read),
		cmocka_unit_test(test_overwrite_interleavings),
		cmocka_unit_test(test_global_ring_keeps_write_order),
		cmocka_unit_test(test_spans_closed_then_partial),
		cmocka_unit_test(test_spans_hold_keeps_writer_out),
		cmocka_unit_test(test_wakeup_only_at_switch),
		cmocka_unit_test(test_settle_lost_after_drain),
		cmocka_unit_test(test_largest_record_after_loss),
		cmocka_unit_test(test_largest_record_after_loss_two_subbufs),
		cmocka_unit_test(test_read_across_a_switch),
		cmocka_unit_test(test_concurrent_writer_and_reader),
	};

	return cmocka_run_group_tests_name("ring", tests, NULL, NULL);
}
