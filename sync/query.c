/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Queries on a segment. The feasible (d, b) set is a convex polygon; a
 * host time g' + d*g' + b is linear on it, so its extremes are at the
 * polygon's vertices: the upper chain b = U(d) breaks at P's edge slopes,
 * the lower chain b = L(d) at Q's, both ending at dmin and dmax. At a
 * vertex d = n/m with active P vertex p, U(d) + d*g' = u_p + n*(g'-g_p)/m,
 * which is evaluated exactly in __int128 and rounded outward.
 */
#include <math.h>

#include "exact.h"
#include "feasible.h"

static bool in_range(const struct vmscope_sync_segment *s,
		     struct vmscope_sync_ratio d)
{
	return ratio_cmp(d, s->dmin) >= 0 && ratio_cmp(d, s->dmax) <= 0;
}

/* max over upper-chain vertices of U(d) + d*g, rounded up. */
static i128 upper_at(const struct vmscope_sync_segment *s, int64_t g)
{
	const struct vmscope_sync_hull *p = &s->p;
	i128 best = 0;
	bool have = false;
	struct vmscope_sync_ratio ends[2] = { s->dmin, s->dmax };
	for (int e = 0; e < 2; e++) {
		struct vmscope_sync_point v = p->v[active_p(p, ends[e])];
		i128 val = v.u + div_ceil((i128)ends[e].num * (g - v.g),
					  ends[e].den);
		if (!have || val > best)
			best = val;
		have = true;
	}
	for (uint32_t i = 0; i + 1 < p->n; i++) {
		struct vmscope_sync_ratio d = slope(p->v[i], p->v[i + 1]);
		if (!in_range(s, d))
			continue;
		i128 val = p->v[i].u + div_ceil((i128)d.num * (g - p->v[i].g),
						d.den);
		if (val > best)
			best = val;
	}
	return best;
}

/* min over lower-chain vertices of L(d) + d*g, rounded down. */
static i128 lower_at(const struct vmscope_sync_segment *s, int64_t g)
{
	const struct vmscope_sync_hull *q = &s->q;
	i128 best = 0;
	bool have = false;
	struct vmscope_sync_ratio ends[2] = { s->dmin, s->dmax };
	for (int e = 0; e < 2; e++) {
		struct vmscope_sync_point v = q->v[active_q(q, ends[e])];
		i128 val = v.u + div_floor((i128)ends[e].num * (g - v.g),
					   ends[e].den);
		if (!have || val < best)
			best = val;
		have = true;
	}
	for (uint32_t j = 0; j + 1 < q->n; j++) {
		struct vmscope_sync_ratio d = slope(q->v[j], q->v[j + 1]);
		if (!in_range(s, d))
			continue;
		i128 val = q->v[j].u + div_floor((i128)d.num * (g - q->v[j].g),
						 d.den);
		if (val < best)
			best = val;
	}
	return best;
}

int vmscope_sync_segment_bound(const struct vmscope_sync_segment *s,
			       uint64_t g, uint64_t *lo, uint64_t *hi)
{
	int64_t gg;
	if (s->n_samples == 0 || s->failed || rebase(g, s->g0, &gg))
		return -1;
	int ret = 0;
	if (s->p.n)
		*hi = unbase(s->h0, (i128)gg + upper_at(s, gg));
	else {
		*hi = UINT64_MAX;
		ret = 1;
	}
	if (s->q.n)
		*lo = unbase(s->h0, (i128)gg + lower_at(s, gg));
	else {
		*lo = 0;
		ret = 1;
	}
	return ret;
}

int vmscope_sync_segment_estimate(const struct vmscope_sync_segment *s,
				  uint64_t g, uint64_t *h)
{
	uint64_t lo, hi;

	return vmscope_sync_segment_locate(s, g, h, &lo, &hi) < 0 ? -1 : 0;
}

int vmscope_sync_segment_locate(const struct vmscope_sync_segment *s,
				uint64_t g, uint64_t *h, uint64_t *lo_out,
				uint64_t *hi_out)
{
	uint64_t lo, hi;
	int64_t gg = 0;
	int r = vmscope_sync_segment_bound(s, g, &lo, &hi);
	if (r < 0)
		return -1;
	*lo_out = lo;
	*hi_out = hi;
	rebase(g, s->g0, &gg);
	if (r == 1) {
		*h = s->p.n ? hi : lo;
		return 1;
	}
	/* the segment's central line (feasible_midline), kept with it */
	long double off = (long double)gg + s->est_d * gg + s->est_b;
	long double hv = (long double)s->h0 + roundl(off);
	if (hv <= (long double)lo)
		*h = lo;
	else if (hv >= (long double)hi)
		*h = hi;
	else
		*h = (uint64_t)hv;
	return 0;
}

void vmscope_sync_segment_summary(const struct vmscope_sync_segment *s,
				  uint32_t min_samples,
				  struct vmscope_sync_summary *out)
{
	*out = (struct vmscope_sync_summary){ 0 };
	out->n_samples = s->n_samples;
	out->hull_p = s->p.n;
	out->hull_q = s->q.n;
	out->width_ns = UINT64_MAX;
	if (s->failed) {
		out->verdict = VMSCOPE_SYNC_FAILED;
		return;
	}
	if (s->n_samples == 0) {
		out->verdict = VMSCOPE_SYNC_EMPTY;
		return;
	}
	struct vmscope_sync_ratio plo = ratio_make(-(int64_t)s->ppm, 1000000);
	struct vmscope_sync_ratio phi = ratio_make((int64_t)s->ppm, 1000000);
	out->drift_from_data_lo = ratio_cmp(s->dmin, plo) > 0;
	out->drift_from_data_hi = ratio_cmp(s->dmax, phi) < 0;
	out->a_min = 1 + ratio_ld(s->dmin);
	out->a_max = 1 + ratio_ld(s->dmax);
	out->a_est = (out->a_min + out->a_max) / 2;

	uint64_t lo = 0, hi = UINT64_MAX, est;
	int r = vmscope_sync_segment_locate(s, s->g0, &est, &lo, &hi);
	out->b0_min = s->q.n ? (long double)((i128)lo - s->h0) : -INFINITY;
	out->b0_max = s->p.n ? (long double)((i128)hi - s->h0) : INFINITY;
	if (r >= 0)
		out->b0_est = (long double)(i128)((i128)est - s->h0);
	if (r == 0) {
		/* hi - lo is convex in g (max of linear minus min of linear),
		 * so over the sample span it peaks at an end. */
		uint64_t w = 0, l2, h2;
		if (vmscope_sync_segment_bound(s, s->g_first, &l2, &h2) == 0)
			w = h2 - l2;
		if (vmscope_sync_segment_bound(s, s->g_last, &l2, &h2) == 0 &&
		    h2 - l2 > w)
			w = h2 - l2;
		out->width_ns = w;
	}
	bool accurate = r == 0 && out->drift_from_data_lo &&
			out->drift_from_data_hi && s->n_samples >= min_samples;
	out->verdict = accurate ? VMSCOPE_SYNC_ACCURATE
				: VMSCOPE_SYNC_APPROXIMATE;
}

size_t vmscope_sync_fit(const struct vmscope_sync_exchange *x, size_t n,
			uint32_t ppm, struct vmscope_sync_segment *out)
{
	size_t added = 0;
	if (n == 0) {
		vmscope_sync_segment_init(out, 0, 0, ppm);
		return 0;
	}
	vmscope_sync_segment_init(out, x[0].t1, x[0].t2, ppm);
	for (size_t i = 0; i < n; i++) {
		if (vmscope_sync_segment_add(out, x[i].t1, x[i].t2, x[i].t3,
					     x[i].t4) != VMSCOPE_SYNC_ADDED) {
			/* Never report a line through a contradiction. */
			out->failed = true;
			break;
		}
		added++;
	}
	return added;
}
