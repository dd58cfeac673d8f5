// SPDX-License-Identifier: GPL-2.0
/*
 * Clock-unreliable spans (README.md, "Clock-unreliable spans"): each
 * guest CPU stream read once more, in its order, with the outcome of each
 * of its sync records' exchanges. Between two consecutive accepted
 * exchanges of a CPU, the hull's bound holds for the CPU's events only if
 * its clock ran on the fitted line in between; that interval is flagged
 * when something in it says otherwise:
 *
 *  - an exchange whose guest interval is shorter than the host's
 *    (MT_DROP_SHORT; the library's "rtt");
 *  - an exchange contradicting the fitted line ("outlier", "overflow");
 *  - two consecutive records of the stream with the same timestamp: the
 *    trace clock has ns resolution and a record's clock read follows the
 *    previous record's by at least that record's write, so a running
 *    clock never repeats; a repeat shows it stood still, for a time only
 *    the bracketing exchanges bound;
 *  - the two exchanges in different segments, unless the change is an
 *    explicit break (kvm_write_tsc_offset, at a known host time) whose
 *    new relation puts the guest's times no later than the old one: then
 *    the segment limit moves every later event to the new segment.
 *
 * The span is the flagged interval in host time, [t3 of the exchange
 * before, t2 of the one after]: a guest event between the two in the
 * stream happened between those host instants, and the merge places it
 * there too (the estimate is monotonic and inside the bound at accepted
 * exchanges). Consecutive flagged intervals of a CPU make one span.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "merge.h"
#include "roles.h"

struct cs {
	uint32_t vm, cpu;
	size_t stream;
	const struct mt_vm *vmt;
	bool have_ok;
	uint64_t ok_t3;
	int64_t ok_seg;
	struct mg_span_edge ok;	/* that exchange */
	uint32_t seen;
	uint64_t events, longest, worst_short;
	bool have_ts;
	uint64_t last_ts, run;
	bool last_flagged;	/* the CPU's last span ends at ok's t2 */
	/* where pass 2 puts this interval's events (the same conversion) */
	const struct vmscope_sync_segment *seg;
	bool have_h;
	uint64_t h_min, h_max;
};

/* Host time of @g as pass 2 converts it (merge.c, conv()). */
static bool convert(struct cs *c, uint64_t g, uint64_t *h)
{
	if (!c->have_ok && (!c->seg || g > c->seg->g_last))
		c->seg = mt_segment_for(c->vmt, g);
	return mt_convert(c->vmt, &c->seg, g, h);
}

static uint64_t span_start(const struct cs *c)
{
	uint64_t h = c->have_ok ? c->ok_t3 : 0;

	return c->have_h && c->h_min < h ? c->h_min : h;
}

static struct mg_span_edge edge_of(const struct mg_acc *a)
{
	if (!a)
		return (struct mg_span_edge){ 0 };
	return (struct mg_span_edge){ .known = true, .seq = a->seq, .token = a->token,
				      .t1 = a->t1 };
}

/* The interval of @c up to the accepted exchange @a (NULL: the stream's
 * end), whose t2 is @h_end, is flagged. */
static int add_span(struct mg_spans *sp, struct cs *c, uint64_t h_end,
		    const struct mg_acc *a)
{
	struct mg_span *s;

	if (c->have_h && c->h_max > h_end)
		h_end = c->h_max;
	if (c->last_flagged && sp->n) {	/* continues the previous span */
		s = &sp->s[sp->n - 1];
		s->h_end = h_end;
		s->after = edge_of(a);
		if (span_start(c) < s->h_start)
			s->h_start = span_start(c);
		s->seen |= c->seen;
		s->events += c->events;
		if (c->longest > s->longest_run)
			s->longest_run = c->longest;
		if (c->worst_short > s->worst_short_ns)
			s->worst_short_ns = c->worst_short;
		return 0;
	}
	if (sp->n == sp->cap) {
		size_t nc = sp->cap ? 2 * sp->cap : 16;
		void *p = realloc(sp->s, nc * sizeof(*sp->s));

		if (!p)
			return -ENOMEM;
		sp->s = p;
		sp->cap = nc;
	}
	s = &sp->s[sp->n++];
	*s = (struct mg_span){ .vm = c->vm, .cpu = c->cpu,
			       .h_start = span_start(c), .h_end = h_end,
			       .seen = c->seen, .events = c->events,
			       .longest_run = c->longest, .worst_short_ns = c->worst_short,
			       .stream = c->stream, .found = sp->n - 1, .before = c->ok,
			       .after = edge_of(a) };
	return 0;
}

/* Did the relation change between segments @a and @b in a way the
 * segment limit does not follow (see above)? */
static bool step_unfollowed(const struct mt_vm *v, int64_t a, int64_t b, uint64_t g)
{
	const struct vmscope_sync_segment *sa = mt_segment(v, a), *sb = mt_segment(v, b);
	size_t i;
	uint64_t ha, hb, lo;

	if (!sa || !sb)
		return true;
	i = (size_t)(sa - v->seg);
	if (i + 1 >= v->nseg || &v->seg[i + 1] != sb || !v->by_break[i])
		return true;
	if (vmscope_sync_segment_estimate(sa, g, &ha) || vmscope_sync_segment_bound(sb, g, &lo, &hb))
		return true;
	/* the old relation puts the CPU's events after the break before
	 * anything the new one allows, and the limit does not move them */
	return ha < lo;
}

/* An accepted exchange @a: the interval before it ends at its t2. */
static int boundary(struct mg_spans *sp, struct cs *c, const struct mg_acc *a)
{
	int e = 0;

	if (c->have_ok && c->ok_seg != a->seg && step_unfollowed(c->vmt, c->ok_seg, a->seg, a->t1))
		c->seen |= MG_SEEN_STEP;
	if (c->seen)
		e = add_span(sp, c, a->t2, a);
	c->last_flagged = c->seen != 0;
	c->have_ok = true;
	c->ok = edge_of(a);
	c->ok_t3 = a->t3;
	c->ok_seg = a->seg;
	if (mt_segment(c->vmt, a->seg))
		c->seg = mt_segment(c->vmt, a->seg);
	c->have_h = false;
	c->seen = 0;
	c->events = 0;
	c->worst_short = 0;
	c->longest = c->run > 1 ? c->run : 0;
	return e;
}

static void evidence(struct cs *c, const struct mg_acc *a)
{
	int reason = (int)(-1 - a->seg);

	if (reason == MT_DROP_SHORT || reason == VMSCOPE_SYNC_DROP_RTT) {
		uint64_t d = (a->t3 - a->t2) - (a->t4 - a->t1);

		c->seen |= MG_SEEN_SHORT;
		if (a->t3 >= a->t2 && a->t4 >= a->t1 && d > c->worst_short)
			c->worst_short = d;
	} else {
		c->seen |= MG_SEEN_OFFLINE;
	}
}

static int scan_stream(struct mg_result *r, struct vr_stream *st, const struct mg_roles *ro,
		       struct cs *c, struct mg_accq *q)
{
	struct vr_item it;
	int e = 0;

	while (!e && vr_stream_next(st, &it) == 1) {
		if (it.kind != VR_EVENT)
			continue;
		if (it.desc == ro->guest) {
			const uint8_t *p = it.payload;
			struct mg_acc a;

			if (mg_accq_find(q, mg_get(&ro->f_g[G_SEQ], p), mg_get(&ro->f_g[G_TOKEN], p),
					 mg_get(&ro->f_g[G_T1], p), &a)) {
				if (a.seg >= 0)
					e = boundary(&r->spans, c, &a);
				else
					evidence(c, &a);
			}
		}
		if (c->have_ts && it.ts == c->last_ts) {
			c->run++;
			r->spans.run_records += c->run == 2 ? 2 : 1;
			r->spans.runs += c->run == 2;
			c->seen |= MG_SEEN_REPEAT;
			if (c->run > c->longest)
				c->longest = c->run;
		} else {
			c->run = 1;
		}
		c->have_ts = true;
		c->last_ts = it.ts;
		c->events++;
		uint64_t h;

		if (convert(c, it.ts, &h)) {
			if (!c->have_h || h < c->h_min)
				c->h_min = h;
			if (!c->have_h || h > c->h_max)
				c->h_max = h;
			c->have_h = true;
		}
	}
	if (!e && c->seen)
		e = add_span(&r->spans, c, UINT64_MAX, NULL);
	return e;
}

static int cmp_span(const void *a, const void *b)
{
	const struct mg_span *x = a, *y = b;

	if (x->vm != y->vm)
		return x->vm < y->vm ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return x->h_start < y->h_start ? -1 : x->h_start > y->h_start;
}


int mg_clock_scan(struct vr_trace *t, struct mg_result *r)
{
	size_t n = vr_trace_nr_streams(t);
	struct mg_roles *ro = calloc(r->n_vms ? r->n_vms : 1, sizeof(*ro));
	struct mg_accq *q = malloc(sizeof(*q));
	int e = 0;

	if (!ro || !q) {
		e = -ENOMEM;
		goto out;
	}
	for (uint32_t v = 0; v < r->n_vms; v++)
		mg_roles_init(&ro[v], vr_trace_events(t, VMSCOPE__TRACE__SIDE__SIDE_GUEST, v));
	for (size_t i = 0; i < n && !e; i++) {
		struct vr_stream *st;
		const struct vr_stream_stats *ss;
		struct vr_item first;
		struct cs c = { 0 };

		/* the origin is known once the first item is read: open twice */
		if ((e = vr_stream_open(&st, t, i)))
			break;
		if (vr_stream_next(st, &first) != 1) {
			vr_stream_close(st);
			continue;
		}
		ss = vr_stream_stats(st);
		if (ss->origin.side != VMSCOPE__TRACE__SIDE__SIDE_GUEST ||
		    ss->origin.vm >= r->n_vms || ss->origin.cpu >= MP_MAX_CPUS) {
			vr_stream_close(st);
			continue;
		}
		c.vm = ss->origin.vm;
		c.cpu = ss->origin.cpu;
		c.stream = i;
		c.vmt = &r->mt.vm[c.vm];
		vr_stream_close(st);
		if ((e = vr_stream_open(&st, t, i)))
			break;
		mg_accq_init(q, r->acc[c.vm] ? r->acc[c.vm][c.cpu] : NULL);
		e = scan_stream(r, st, &ro[c.vm], &c, q);
		if (!e && q->err)	/* reading back a temporary file */
			e = -EIO;
		vr_stream_close(st);
	}
	if (!e && r->spans.n > 1)
		qsort(r->spans.s, r->spans.n, sizeof(*r->spans.s), cmp_span);
	if (!e && r->spans.n) {
		r->spans.by_stream = malloc(r->spans.n * sizeof(*r->spans.by_stream));
		if (!r->spans.by_stream) {
			e = -ENOMEM;
			goto out;
		}
		/* stream order, which a jump back of the conversion may not
		 * keep in h_start */
		for (size_t i = 0; i < r->spans.n; i++)
			r->spans.by_stream[r->spans.s[i].found] = i;
	}
	for (size_t i = 0; i < r->spans.n; i++)
		r->c.ev_unreliable += r->spans.s[i].events;
out:
	free(ro);
	free(q);
	return e;
}

static bool is_edge(const struct mg_span_edge *e, const struct mg_acc *a)
{
	return e->known && e->seq == a->seq && e->token == a->token && e->t1 == a->t1;
}

/* The stream's next span, or NULL. */
static const struct mg_span *walk_span(const struct mg_span_walk *w)
{
	const struct mg_spans *sp = w->sp;

	if (w->i >= sp->n || sp->s[sp->by_stream[w->i]].stream != w->stream)
		return NULL;
	return &sp->s[sp->by_stream[w->i]];
}

void mg_span_walk_init(struct mg_span_walk *w, const struct mg_spans *sp, size_t stream)
{
	const struct mg_span *s;
	size_t lo = 0, hi = sp->n;

	*w = (struct mg_span_walk){ .sp = sp, .stream = stream, .i = sp->n };
	if (!sp->by_stream)	/* no span, or mg_clock_scan did not finish */
		return;
	while (lo < hi) {	/* the stream's first span */
		size_t mid = lo + (hi - lo) / 2;

		if (sp->s[sp->by_stream[mid]].stream < stream)
			lo = mid + 1;
		else
			hi = mid;
	}
	w->i = lo;
	s = walk_span(w);
	w->inside = s && !s->before.known;
}

void mg_span_walk_at(struct mg_span_walk *w, const struct mg_acc *a, bool *before, bool *after)
{
	const struct mg_span *s = walk_span(w);

	*before = w->inside;
	if (w->inside && s && is_edge(&s->after, a)) {
		w->inside = false;
		w->i++;
		s = walk_span(w);
	}
	if (!w->inside && s && is_edge(&s->before, a))
		w->inside = true;
	*after = w->inside;
}
