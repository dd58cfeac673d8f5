/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The online merge's ordering stage: records that arrive per stream, each
 * stream in its own host-time order, released as one sequence in (host
 * time, stream index) order — the order of the two-pass merge's heap
 * (heap.h), so that an online consumer sees what `vmscope merge` would
 * write — without reading ahead in any stream, in bounded memory.
 *
 * Each stream has a queue of at most @cap records and a watermark: the
 * least host time it can still deliver (its last pushed key, raised by
 * wm_advance when a source knows more, e.g. a host buffer polled empty at
 * a known time, or a guest CPU whose next record cannot convert earlier).
 * The least queued record is released once no other live stream could
 * still deliver one before it: a heap of the streams keyed by their
 * frontier (the head's key, or the watermark when the queue is empty);
 * frontiers only grow, so a stale heap key is refreshed when it reaches
 * the top.
 *
 * A stream that holds the others back is declared late when the caller
 * forces progress (a queue is full: the memory bound) or when the newest
 * key pushed is more than lag_ns past its frontier (the time bound). A
 * late stream is not waited for; a record it pushes below what was
 * already released is refused (WM_LATE) and counted, never put out of
 * order; its first record at or after that rejoins the merge.
 *
 * Pure: no I/O, one allocation in wm_init. Not thread-safe.
 */
#ifndef VMSCOPE_MERGE_WMERGE_H
#define VMSCOPE_MERGE_WMERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heap.h"

struct wm_stats {
	uint64_t pushed, released;
	uint64_t clamped;	/* keys below their stream's previous key: queued at it */
	uint64_t late;		/* refused: below what was already released */
	uint64_t stalls;	/* streams declared late */
	size_t peak;		/* most records queued in one stream */
};

struct wm_stream {
	uint64_t *key;		/* ring [cap] */
	uint8_t *rec;		/* ring [cap * size] */
	size_t head, n;
	uint64_t mark;		/* watermark: least key it can still push */
	bool ended, late, in_heap;
};

struct wm {
	size_t n, cap, size;
	uint64_t lag_ns;	/* 0: no time bound */
	struct wm_stream *s;
	struct mh heap;		/* streams by frontier (lazily refreshed) */
	size_t queued;		/* records in all queues */
	bool any_out;
	uint64_t last_out;	/* key of the last record released */
	bool any_in;
	uint64_t newest;	/* largest key pushed */
	struct wm_stats st;
};

/* @n streams, @cap records of @size bytes each per stream, declared late
 * @lag_ns behind the newest key (0: only when forced). 0 or -ENOMEM. */
int wm_init(struct wm *m, size_t n, size_t cap, size_t size, uint64_t lag_ns);
void wm_free(struct wm *m);

/* Whether stream @i's queue has no room (release before pushing). */
bool wm_full(const struct wm *m, size_t i);

#define WM_LATE 1
/* Queue record @rec of stream @i at host time @key: 0; WM_LATE when @key
 * is below the last released key (refused, counted); -ENOSPC when the
 * queue is full, -EINVAL for a stream that ended or out of range. */
int wm_push(struct wm *m, size_t i, uint64_t key, const void *rec);

/* Stream @i will deliver nothing below @key. */
void wm_advance(struct wm *m, size_t i, uint64_t key);
/* Stream @i is not waited for (its source knows it is quiet, or has no
 * source yet) until it pushes again: as a stream declared late. */
void wm_late(struct wm *m, size_t i);
/* Stream @i (late) is waited for again before it pushes (its source has
 * records to convert): its watermark no lower than what was released. */
void wm_wait(struct wm *m, size_t i);
/* Stream @i delivers nothing more. */
void wm_end(struct wm *m, size_t i);

enum wm_pop {
	WM_WAIT = 0,	/* a live stream may still deliver an earlier record */
	WM_ITEM = 1,	/* *@rec, *@i, *@key: the next record */
	WM_DONE = 2,	/* every stream ended and every queue is empty */
};
/* The next record in (key, stream) order, copied into @rec. With @force,
 * the streams holding it back are declared late instead of waited for
 * (a caller whose queue is full). */
enum wm_pop wm_pop(struct wm *m, bool force, void *rec, size_t *i, uint64_t *key);

/* After wm_pop returned WM_WAIT: the stream it waits for (the one to read
 * next), or SIZE_MAX when it waits only for late streams. */
size_t wm_blocker(const struct wm *m);
/* The least key still to come out: the least queued record's, or the
 * watermark of a stream waited for with an empty queue; UINT64_MAX when
 * nothing is queued and no stream is waited for. Every record below it
 * was released. O(streams). */
uint64_t wm_frontier(const struct wm *m);

#endif
