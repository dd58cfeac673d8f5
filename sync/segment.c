/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* A segment: two hulls, the exact feasible slope range, and bookkeeping. */
#include <string.h>

#include "exact.h"
#include "feasible.h"
#include "hull.h"

void vmscope_sync_segment_init(struct vmscope_sync_segment *s, uint64_t g0,
			       uint64_t h0, uint32_t ppm)
{
	memset(s, 0, sizeof(*s));
	if (ppm == 0)
		ppm = 1;
	if (ppm > VMSCOPE_SYNC_MAX_PPM)
		ppm = VMSCOPE_SYNC_MAX_PPM;
	s->g0 = g0;
	s->h0 = h0;
	s->ppm = ppm;
	s->dmin = ratio_make(-(int64_t)ppm, 1000000);
	s->dmax = ratio_make((int64_t)ppm, 1000000);
	s->min_rtt = INT64_MAX;
}

/* Rebase a (guest, host) pair into (g, u = h' - g'). */
static int to_point(const struct vmscope_sync_segment *s, uint64_t g,
		    uint64_t h, struct vmscope_sync_point *pt)
{
	int64_t gg, hh;
	if (rebase(g, s->g0, &gg) || rebase(h, s->h0, &hh))
		return -1;
	pt->g = gg;
	pt->u = hh - gg;  /* |.| < 2^62 */
	return 0;
}

static void note_span(struct vmscope_sync_segment *s, uint64_t g, uint64_t h)
{
	if (s->n_p + s->n_q == 0 || g < s->g_first)
		s->g_first = g;
	if (s->n_p + s->n_q == 0 || g > s->g_last)
		s->g_last = g;
	if (s->n_p + s->n_q == 0 || h < s->h_first)
		s->h_first = h;
	if (s->n_p + s->n_q == 0 || h > s->h_last)
		s->h_last = h;
}

/* Insert up to one point per hull into copies, test, then commit. */
static enum vmscope_sync_add_result
add_points(struct vmscope_sync_segment *s, const struct vmscope_sync_point *pp,
	   const struct vmscope_sync_point *qp)
{
	struct vmscope_sync_hull p = s->p, q = s->q;
	struct vmscope_sync_ratio lo = s->dmin, hi = s->dmax;
	bool ev = false;

	if (s->failed)
		return VMSCOPE_SYNC_INFEASIBLE;
	if (pp)
		hull_insert(&p, +1, *pp, &ev);
	if (qp)
		hull_insert(&q, -1, *qp, &ev);
	if (!feasible_range(&p, &q, &lo, &hi))
		return VMSCOPE_SYNC_INFEASIBLE;
	hull_prune(&p, +1, lo, hi);
	hull_prune(&q, -1, lo, hi);
	s->p = p;
	s->q = q;
	s->dmin = lo;
	s->dmax = hi;
	feasible_midline(&s->p, &s->q, lo, hi, &s->est_d, &s->est_b);
	if (ev)
		s->evictions++;
	return VMSCOPE_SYNC_ADDED;
}

enum vmscope_sync_add_result
vmscope_sync_segment_add(struct vmscope_sync_segment *s, uint64_t t1,
			 uint64_t t2, uint64_t t3, uint64_t t4)
{
	struct vmscope_sync_point pp, qp;
	if (t4 < t1 || t3 < t2)
		return VMSCOPE_SYNC_RANGE;
	if (to_point(s, t1, t2, &pp) || to_point(s, t4, t3, &qp))
		return VMSCOPE_SYNC_RANGE;
	enum vmscope_sync_add_result r = add_points(s, &pp, &qp);
	if (r != VMSCOPE_SYNC_ADDED)
		return r;
	note_span(s, t1, t2);
	s->n_p++;
	note_span(s, t4, t3);
	s->n_q++;
	s->n_samples++;
	/* Both differences are below 2^61 (rebase succeeded around one
	 * origin), so this cannot overflow. */
	int64_t rtt = (int64_t)(t4 - t1) - (int64_t)(t3 - t2);
	if (rtt < s->min_rtt)
		s->min_rtt = rtt;
	return r;
}

/* One point alone: an upper one (P, guest before host) or a lower one (Q). */
static enum vmscope_sync_add_result add_one(struct vmscope_sync_segment *s, uint64_t g,
					    uint64_t h, bool upper)
{
	struct vmscope_sync_point pt;
	if (to_point(s, g, h, &pt))
		return VMSCOPE_SYNC_RANGE;
	enum vmscope_sync_add_result r = add_points(s, upper ? &pt : NULL,
						    upper ? NULL : &pt);
	if (r == VMSCOPE_SYNC_ADDED) {
		note_span(s, g, h);
		if (upper)
			s->n_p++;
		else
			s->n_q++;
		s->n_samples++;
	}
	return r;
}

enum vmscope_sync_add_result
vmscope_sync_segment_add_g2h(struct vmscope_sync_segment *s, uint64_t g,
			     uint64_t h)
{
	return add_one(s, g, h, true);
}

enum vmscope_sync_add_result
vmscope_sync_segment_add_h2g(struct vmscope_sync_segment *s, uint64_t h,
			     uint64_t g)
{
	return add_one(s, g, h, false);
}
