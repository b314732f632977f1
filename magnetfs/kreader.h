/* SPDX-License-Identifier: GPL-2.0 */
/*
 * In-kernel readers of a stream (docs/CORRELATE.md): a kernel client
 * (magnetk's correlators, later synthesizers) consumes a stream's records
 * through the same ring reader as stream files, in timestamp order across
 * the per-CPU rings.
 *
 * A stream has either one kernel reader or any number of file readers,
 * never both: magnet_kreader_open() fails with -EBUSY while a file is
 * open, and opening the stream's file fails with -EBUSY while a kernel
 * reader is attached.  Records are consumed (the stream's "read" counter
 * grows) exactly as a file read would; LOST records are handed to the
 * client like any other and summed in @lost.
 *
 * Ordering: each ring is in timestamp order; records are merged by
 * timestamp (ties: lower CPU first) up to a horizon the caller gives.  A
 * record committed later with a timestamp below what was already
 * delivered (possible only if a writer was held up longer than the
 * caller's horizon lag) is delivered when seen and counted in @late.
 */
#ifndef _MAGNETFS_KREADER_H
#define _MAGNETFS_KREADER_H

#include <linux/types.h>

struct magnet_stream;
struct magnet_rec_hdr;

/* the lockdep subclass of a stream's read_lock taken by its kernel reader */
#define MAGNET_READ_LOCK_KREADER	SINGLE_DEPTH_NESTING

struct magnet_kreader_stats {
	u64 records;		/* all records consumed */
	u64 events;		/* of which events (magnet_rec_is_event()) */
	u64 lost;		/* sum of the LOST records' counts */
	u64 late;		/* records older than one delivered before */
	u64 bytes;
};

struct magnet_kreader {
	struct magnet_stream *s;	/* a reference */
	u64 last_ts;
	struct magnet_kreader_stats st;
};

/* Return false to stop the drain (the record is consumed). */
typedef bool (*magnet_krec_fn)(void *arg, const struct magnet_rec_hdr *h);

/* Attach to @s (takes a reference); -EBUSY when a file reader is open. */
int magnet_kreader_open(struct magnet_kreader *kr, struct magnet_stream *s);
/* Detach; what is left in the rings stays there. */
void magnet_kreader_close(struct magnet_kreader *kr);
/*
 * Hand records with a timestamp <= @horizon to @fn, oldest first, at most
 * @max of them.  Process context (takes the stream's read mutex).
 * Returns the number consumed.
 */
unsigned int magnet_kreader_drain(struct magnet_kreader *kr, u64 horizon,
				  unsigned int max, magnet_krec_fn fn,
				  void *arg);

#endif /* _MAGNETFS_KREADER_H */
