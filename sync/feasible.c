/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Exact feasible slope range between the two hulls (see feasible.h). */
#include <math.h>

#include "exact.h"
#include "feasible.h"

/* Sign of U(d) - L(d) on the piece where p and q are active, at d = r:
 * (u_p - u_q) - r*(g_p - g_q), scaled by r.den > 0. */
static int f_sign(struct vmscope_sync_point p, struct vmscope_sync_point q,
		  struct vmscope_sync_ratio r)
{
	i128 v = (i128)(p.u - q.u) * r.den - (i128)(p.g - q.g) * r.num;
	return (v > 0) - (v < 0);
}

uint32_t active_p(const struct vmscope_sync_hull *p,
		  struct vmscope_sync_ratio d)
{
	uint32_t i = 0;
	while (i + 1 < p->n && ratio_cmp(slope(p->v[i], p->v[i + 1]), d) < 0)
		i++;
	return i;
}

uint32_t active_q(const struct vmscope_sync_hull *q,
		  struct vmscope_sync_ratio d)
{
	/* Upper hull: slopes descend, so the count of slopes above d is a
	 * prefix. */
	uint32_t j = 0;
	while (j + 1 < q->n && ratio_cmp(slope(q->v[j], q->v[j + 1]), d) > 0)
		j++;
	return j;
}

bool feasible_range(const struct vmscope_sync_hull *p,
		    const struct vmscope_sync_hull *q,
		    struct vmscope_sync_ratio *lo,
		    struct vmscope_sync_ratio *hi)
{
	if (ratio_cmp(*lo, *hi) > 0)
		return false;
	if (p->n == 0 || q->n == 0)
		return true;

	struct vmscope_sync_ratio x = *lo, dmin = *lo, dmax = *hi;
	/* ip = #P slopes <= x: the P vertex active just right of x.
	 * jq = #Q slopes > x: the Q vertex active just right of x. */
	uint32_t ip = 0, jq = 0;
	while (ip + 1 < p->n && ratio_cmp(slope(p->v[ip], p->v[ip + 1]), x) <= 0)
		ip++;
	while (jq + 1 < q->n && ratio_cmp(slope(q->v[jq], q->v[jq + 1]), x) > 0)
		jq++;

	bool have = false;
	for (;;) {
		struct vmscope_sync_ratio y = *hi;
		if (ip + 1 < p->n) {
			struct vmscope_sync_ratio s = slope(p->v[ip], p->v[ip + 1]);
			if (ratio_cmp(s, y) < 0)
				y = s;
		}
		if (jq > 0) {
			struct vmscope_sync_ratio t = slope(q->v[jq - 1], q->v[jq]);
			if (ratio_cmp(t, y) < 0)
				y = t;
		}
		struct vmscope_sync_point pp = p->v[ip], qq = q->v[jq];
		int fx = f_sign(pp, qq, x), fy = f_sign(pp, qq, y);
		bool ok = true;
		struct vmscope_sync_ratio a = x, b = y;
		if (fx >= 0 && fy >= 0) {
			/* whole piece */
		} else if (fx >= 0 || fy >= 0) {
			/* Sign change: g_p != g_q, root is the P–Q slope. */
			struct vmscope_sync_ratio root =
				ratio_make(pp.u - qq.u, pp.g - qq.g);
			if (fx >= 0)
				b = root;
			else
				a = root;
		} else {
			ok = false;
		}
		if (ok) {
			if (!have)
				dmin = a;
			have = true;
			dmax = b;
		} else if (have) {
			break;  /* U - L is concave: no feasible piece follows */
		}
		if (ratio_cmp(y, *hi) >= 0)
			break;
		x = y;
		while (ip + 1 < p->n &&
		       ratio_cmp(slope(p->v[ip], p->v[ip + 1]), x) <= 0)
			ip++;
		while (jq > 0 && ratio_cmp(slope(q->v[jq - 1], q->v[jq]), x) <= 0)
			jq--;
	}
	if (!have)
		return false;
	*lo = dmin;
	*hi = dmax;
	return true;
}

void feasible_midline(const struct vmscope_sync_hull *p,
		      const struct vmscope_sync_hull *q,
		      struct vmscope_sync_ratio dmin,
		      struct vmscope_sync_ratio dmax,
		      long double *d, long double *b)
{
	long double U = INFINITY, L = -INFINITY;

	*d = 0;
	*b = 0;
	if (!p->n || !q->n)
		return;
	*d = (ratio_ld(dmin) + ratio_ld(dmax)) / 2;
	for (uint32_t i = 0; i < p->n; i++) {
		long double v = p->v[i].u - *d * p->v[i].g;
		if (v < U)
			U = v;
	}
	for (uint32_t j = 0; j < q->n; j++) {
		long double v = q->v[j].u - *d * q->v[j].g;
		if (v > L)
			L = v;
	}
	*b = (U + L) / 2;
}
