/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The live host source's ordering stage: sub-buffers as the recorder's
 * reader threads take them from each host buffer (channel × CPU), each
 * buffer in its own order only, released as one sequence of records in
 * (host time, buffer) order, for `vmscope top --pid` (README.md, "Live
 * sources").
 *
 * Each buffer is one stream of the online merge's ordering stage
 * (merge/wmerge.h): its records are queued there and released once no
 * other buffer can still deliver an earlier one. A quiet buffer must not
 * hold the others back for ever. Its reader says when it found the
 * buffer empty (lo_drained, a time on CLOCK_MONOTONIC): the module's
 * flush timer hands a partly filled sub-buffer to the reader within its
 * period, so the buffer can then deliver nothing more than @lag_ns before
 * that moment, in host time (the clocks' offset taken from the chunks:
 * a chunk's end was in the past when its reader took it, so the largest
 * end - taken seen is a lower bound of host time - monotonic time). A
 * reader that is slow, starved of CPU, is waited for: only a full queue
 * declares its buffer late. A buffer whose reader never said (a source
 * without readers: a test's feed) is declared late as before: when its
 * records lag @lag_ns behind the newest record of any buffer (one that has
 * delivered nothing yet: @lag_ns after the first record of any buffer,
 * not at once, as wmerge's own time bound would from its watermark 0). A
 * record a late buffer then delivers below what was already released
 * cannot be put in order: it is not released, and a loss record (LO_LATE)
 * stands for it at the point the sequence had reached, so a window counts
 * it as a loss.
 *
 * A sub-buffer's losses come out in the sequence too, before its records:
 * a rise of the ring's cumulative lost_before (overwrites, discards) and
 * a skip of sub-buffer sequence numbers, as the trace reader reports them
 * (reader/README.md: VR_LOSS, VR_GAP); records the decoder refuses end
 * their sub-buffer with one VR_BAD.
 *
 * Memory: @cap queued records per buffer, fixed at lo_init. Pure: no I/O,
 * no threads (the caller's consumer thread runs it). Not thread-safe.
 */
#ifndef VMSCOPE_ONLINE_LIVE_ORDER_H
#define VMSCOPE_ONLINE_LIVE_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader.h"
#include "vmscope/events.h"
#include "wmerge.h"

/* A sub-buffer as taken from the ring (its header's facts, its records;
 * taken_ns: CLOCK_MONOTONIC when its reader took it, 0 unknown). */
struct lo_chunk {
	uint64_t seq, begin_ts, end_ts, lost_before, taken_ns;
	uint32_t nr_records, len;
	const void *data;	/* len bytes of records, after the header */
};

/* loss_kind of a VR_LOSS standing for records delivered too late */
#define LO_LATE	1

/* One record of the released sequence. */
struct lo_rec {
	uint8_t kind;		/* enum vr_item_kind: VR_EVENT, VR_LOSS, VR_GAP, VR_BAD */
	uint8_t loss_kind;	/* VR_LOSS: 0 the ring's, LO_LATE */
	uint16_t id, size;	/* VR_EVENT: event id, payload bytes */
	uint32_t buf;		/* the host buffer it came from */
	uint64_t ts;		/* host trace clock */
	uint64_t events;	/* VR_LOSS: events lost; VR_GAP: sub-buffers missing */
	uint8_t payload[VMSCOPE_MAX_PAYLOAD];
};

struct lo_stats {
	uint64_t chunks, records;	/* taken in, events decoded */
	uint64_t lost_events, gap_subbufs, bad;
	uint64_t late;			/* records delivered too late to order */
	uint64_t released;
};

/* Where released records go; non-zero stops the stage and is returned. */
typedef int lo_emit_fn(void *ctx, const struct lo_rec *r);

struct lo_buf {
	bool any;			/* a chunk was taken */
	bool drained;			/* its reader says when it is empty */
	uint64_t said;			/* and it can deliver nothing below this */
	uint64_t next_seq, lost_before;
	uint64_t late;			/* refused, not yet said by a loss record */
};

struct lo {
	struct wm wm;
	struct lo_buf *b;
	size_t n;
	lo_emit_fn *emit;
	void *ctx;
	uint64_t lag_ns;
	bool any_key;
	uint64_t first_key;		/* the first record's of any buffer */
	/* host time - CLOCK_MONOTONIC, at least: the largest end_ts -
	 * taken_ns of a chunk in this window of OFFSET_WINDOW_NS and the one
	 * before (the two clocks' rates may differ a little: a sample ages
	 * out), the last one known when both are empty */
	bool have_off;
	int64_t off, off_cur, off_prev;
	bool any_cur, any_prev;
	uint64_t off_window_end;
	struct lo_stats st;
};

/* @nbuf buffers, @cap records queued per buffer, a quiet buffer declared
 * late @lag_ns behind the newest record (0: only when a queue is full).
 * 0 or a negative errno. */
int lo_init(struct lo *l, size_t nbuf, size_t cap, uint64_t lag_ns, lo_emit_fn *emit,
	    void *ctx);
void lo_free(struct lo *l);

/* The next sub-buffer of buffer @buf; what can then be released is
 * emitted. 0, the emit's non-zero return, or a negative errno. */
int lo_chunk(struct lo *l, uint32_t buf, const struct lo_chunk *c);

/* Sub-buffer @c of a buffer whose state is @b, decoded as lo_chunk
 * decodes it (its gap and ring loss first, its records, a VR_BAD for a
 * rest that cannot be read), each record to @fn in order with buf @buf,
 * counted in @st: also for a guest CPU's sub-buffers, which the online
 * merge orders (live.c). 0 or @fn's non-zero. */
int lo_decode(struct lo_buf *b, uint32_t buf, const struct lo_chunk *c, struct lo_stats *st,
	      lo_emit_fn *fn, void *ctx);

/* Buffer @buf's reader found it empty at @taken_ns (CLOCK_MONOTONIC):
 * from then on the buffer is waited for only until its reader says so
 * (above); what can then be released is emitted. 0 or as lo_chunk. */
int lo_drained(struct lo *l, uint32_t buf, uint64_t taken_ns);

/* Host time up to which every record was emitted (wm_frontier): the
 * least that can still come; UINT64_MAX when nothing can. */
uint64_t lo_frontier(const struct lo *l);

/* Buffer @buf delivers nothing (it has no reader): not waited for. */
void lo_skip(struct lo *l, uint32_t buf);

/* Every buffer has delivered everything (the session stopped and was
 * drained): the rest is emitted in order. 0 or as lo_chunk. */
int lo_finish(struct lo *l);

#endif
