// SPDX-License-Identifier: GPL-2.0
/* The live host source's ordering stage: see live_order.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "live_order.h"
#include "rb_decode.h"

/* The clocks' offset is the largest seen in this long a window and the
 * one before (lo.off_cur, lo.off_prev). */
#define OFFSET_WINDOW_NS	(10ull * 1000000000ull)

int lo_init(struct lo *l, size_t nbuf, size_t cap, uint64_t lag_ns, lo_emit_fn *emit,
	    void *ctx)
{
	int e;

	memset(l, 0, sizeof(*l));
	if (!nbuf || !emit)
		return -EINVAL;
	l->b = calloc(nbuf, sizeof(*l->b));
	if (!l->b)
		return -ENOMEM;
	/* the time bound is ours (lagging()): wmerge's counts from 0 */
	e = wm_init(&l->wm, nbuf, cap, sizeof(struct lo_rec), 0);
	if (e) {
		free(l->b);
		l->b = NULL;
		return e;
	}
	l->n = nbuf;
	l->lag_ns = lag_ns;
	l->emit = emit;
	l->ctx = ctx;
	return 0;
}

void lo_free(struct lo *l)
{
	wm_free(&l->wm);
	free(l->b);
	memset(l, 0, sizeof(*l));
}

/*
 * Whether the ordering stage may stop waiting for buffer @b: the newest
 * record is more than the lag past the least it can still deliver. A
 * buffer that has delivered nothing yet can deliver anything (watermark
 * 0): it is given the lag from the first record of any buffer, since all
 * started together, rather than declared late at once.
 */
static bool lagging(const struct lo *l, size_t b)
{
	uint64_t f = l->wm.s[b].mark;

	if (!l->lag_ns || !l->any_key || b >= l->n || l->b[b].drained)
		return false;
	if (f < l->first_key)
		f = l->first_key;
	return l->wm.newest > f && l->wm.newest - f > l->lag_ns;
}

/* Emit what the ordering stage releases: everything it can (@force
 * false; a buffer lagging behind is not waited for), or the one least
 * record (@force: a queue is full, and the buffers holding it back are
 * declared late rather than waited for). */
static int release(struct lo *l, bool force)
{
	struct lo_rec r;
	uint64_t key;
	size_t i;
	int e;

	for (;;) {
		enum wm_pop p = wm_pop(&l->wm, force, &r, &i, &key);

		/* forced once: the lagging buffer is declared late */
		if (p == WM_WAIT && !force && lagging(l, wm_blocker(&l->wm)))
			p = wm_pop(&l->wm, true, &r, &i, &key);
		if (p != WM_ITEM)
			return 0;
		/* the key, not r.ts: a clamped key keeps the sequence ordered */
		r.ts = key;
		l->st.released++;
		e = l->emit(l->ctx, &r);
		if (e || force)
			return e;
	}
}

static int push(struct lo *l, uint32_t buf, const struct lo_rec *r);

/* A loss record for the records of @buf refused as late, where the
 * released sequence is now: a window counts it there. */
static int say_late(struct lo *l, uint32_t buf)
{
	struct lo_rec r = { .kind = VR_LOSS, .loss_kind = LO_LATE, .buf = buf,
			    .ts = l->wm.last_out, .events = l->b[buf].late };

	l->b[buf].late = 0;
	return push(l, buf, &r);
}

static int push(struct lo *l, uint32_t buf, const struct lo_rec *r)
{
	int e;

	if (l->b[buf].late && l->wm.any_out && r->ts >= l->wm.last_out) {
		e = say_late(l, buf);
		if (e)
			return e;
	}
	if (!l->any_key) {
		l->any_key = true;
		l->first_key = r->ts;
	}
	if (r->ts < l->b[buf].said) {
		/* the module held it longer than the lag: its place may have
		 * been released already, and wmerge would move it up to the
		 * watermark, a time it does not have */
		l->b[buf].late++;
		l->st.late++;
		return 0;
	}
	while (wm_full(&l->wm, buf)) {
		e = release(l, true);
		if (e)
			return e;
	}
	e = wm_push(&l->wm, buf, r->ts, r);
	if (e == WM_LATE) {
		l->b[buf].late++;
		l->st.late++;
		return 0;
	}
	return e;
}

/* The sub-buffer's losses before its records: as the reader has them. */
static int chunk_losses(struct lo_buf *b, uint32_t buf, const struct lo_chunk *c,
			struct lo_stats *st, lo_emit_fn *fn, void *ctx)
{
	struct lo_rec r = { .buf = buf, .ts = c->begin_ts };
	int e = 0;

	if (b->any && c->seq > b->next_seq) {
		r.kind = VR_GAP;
		r.events = c->seq - b->next_seq;
		st->gap_subbufs += r.events;
		e = fn(ctx, &r);
	}
	b->next_seq = c->seq + 1;
	b->any = true;
	/* lost_before is cumulative; a fall is the module's to explain,
	 * not a loss: the new count is taken as it is */
	if (!e && c->lost_before > b->lost_before) {
		r.kind = VR_LOSS;
		r.events = c->lost_before - b->lost_before;
		st->lost_events += r.events;
		e = fn(ctx, &r);
	}
	b->lost_before = c->lost_before;
	return e;
}

int lo_decode(struct lo_buf *b, uint32_t buf, const struct lo_chunk *c, struct lo_stats *st,
	      lo_emit_fn *fn, void *ctx)
{
	struct vmscope_rb_iter it;
	struct vmscope_rb_rec rr;
	struct lo_rec r;
	int e, got;

	st->chunks++;
	e = chunk_losses(b, buf, c, st, fn, ctx);
	if (e)
		return e;
	got = vmscope_rb_iter_init_records(&it, c->data, c->len, c->begin_ts, c->end_ts,
					   c->nr_records);
	while (!got && (got = vmscope_rb_iter_next(&it, &rr)) == 1) {
		if (rr.size > sizeof(r.payload)) {
			got = -VMSCOPE_RB_ERR_SIZE;
			break;
		}
		memset(&r, 0, sizeof(r));
		r.kind = VR_EVENT;
		r.buf = buf;
		r.ts = rr.ts;
		r.id = rr.id;
		r.size = rr.size;
		memcpy(r.payload, rr.payload, rr.size);
		st->records++;
		e = fn(ctx, &r);
		if (e)
			return e;
		got = 0;
	}
	if (got < 0) {
		/* the rest of this sub-buffer cannot be read: said once */
		memset(&r, 0, sizeof(r));
		r.kind = VR_BAD;
		r.buf = buf;
		r.ts = it.prev_ts > c->begin_ts ? it.prev_ts : c->begin_ts;
		st->bad++;
		return fn(ctx, &r);
	}
	return 0;
}

static int push_rec(void *ctx, const struct lo_rec *r)
{
	struct lo *l = ctx;

	return push(l, r->buf, r);
}

/* A chunk's end (host time) and when its reader took it (monotonic). */
static void offset_sample(struct lo *l, uint64_t end_ts, uint64_t taken_ns)
{
	int64_t d = (int64_t)(end_ts - taken_ns);

	if (!end_ts || !taken_ns)
		return;
	if (taken_ns >= l->off_window_end) {
		/* the window before is kept only if it ended just now */
		l->any_prev = l->any_cur && taken_ns < l->off_window_end + OFFSET_WINDOW_NS;
		l->off_prev = l->off_cur;
		l->any_cur = false;
		l->off_window_end = taken_ns + OFFSET_WINDOW_NS;
	}
	if (!l->any_cur || d > l->off_cur)
		l->off_cur = d;
	l->any_cur = true;
	l->off = l->any_prev && l->off_prev > l->off_cur ? l->off_prev : l->off_cur;
	l->have_off = true;
}

int lo_drained(struct lo *l, uint32_t buf, uint64_t taken_ns)
{
	int64_t host;

	if (buf >= l->n)
		return -EINVAL;
	l->b[buf].drained = true;
	if (!l->have_off || !taken_ns || !l->lag_ns)
		return 0;
	/* host time then, at least; the module had delivered all but what
	 * its flush timer still held, at most the lag's worth */
	host = (int64_t)taken_ns + l->off;
	if (host <= (int64_t)l->lag_ns)
		return 0;
	if ((uint64_t)host - l->lag_ns > l->b[buf].said)
		l->b[buf].said = (uint64_t)host - l->lag_ns;
	wm_advance(&l->wm, buf, l->b[buf].said);
	return release(l, false);
}

int lo_chunk(struct lo *l, uint32_t buf, const struct lo_chunk *c)
{
	int e;

	if (buf >= l->n)
		return -EINVAL;
	offset_sample(l, c->end_ts, c->taken_ns);
	e = lo_decode(&l->b[buf], buf, c, &l->st, push_rec, l);
	if (e)
		return e;
	if (l->b[buf].late && l->wm.any_out) {
		e = say_late(l, buf);
		if (e)
			return e;
	}
	return release(l, false);
}

uint64_t lo_frontier(const struct lo *l)
{
	return wm_frontier(&l->wm);
}

void lo_skip(struct lo *l, uint32_t buf)
{
	wm_end(&l->wm, buf);
}

int lo_finish(struct lo *l)
{
	int e;

	for (size_t i = 0; i < l->n; i++) {
		if (l->b[i].late && l->wm.any_out) {
			e = say_late(l, (uint32_t)i);
			if (e)
				return e;
		}
		wm_end(&l->wm, i);
	}
	return release(l, false);
}
