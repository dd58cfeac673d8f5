/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Brute-force reference for the hull code: O(|P|*|Q|) pairwise slope
 * constraints and O(n^2) candidate slopes, exact, with no hulls at all.
 * Each pair (p above, q below) forces d*(g_p - g_q) <= u_p - u_q.
 */
#ifndef VMSCOPE_SYNC_TEST_ORACLE_H
#define VMSCOPE_SYNC_TEST_ORACLE_H

#include <stdbool.h>

#include "exact.h"

struct oracle {
	bool feasible;
	struct vmscope_sync_ratio dmin, dmax;
};

static inline struct oracle oracle_range(const struct vmscope_sync_point *p,
					 int np,
					 const struct vmscope_sync_point *q,
					 int nq, uint32_t ppm)
{
	struct oracle o = { true, ratio_make(-(int64_t)ppm, 1000000),
			    ratio_make((int64_t)ppm, 1000000) };
	for (int i = 0; i < np; i++)
		for (int j = 0; j < nq; j++) {
			int64_t G = p[i].g - q[j].g, D = p[i].u - q[j].u;
			if (G == 0) {
				if (D < 0)
					o.feasible = false;
			} else if (G > 0) {
				struct vmscope_sync_ratio c = ratio_make(D, G);
				if (ratio_cmp(c, o.dmax) < 0)
					o.dmax = c;
			} else {
				struct vmscope_sync_ratio c = ratio_make(D, G);
				if (ratio_cmp(c, o.dmin) > 0)
					o.dmin = c;
			}
		}
	if (ratio_cmp(o.dmin, o.dmax) > 0)
		o.feasible = false;
	return o;
}

/* hi (sign +1, over P) or lo (sign -1, over Q) of u at rebased g. */
static inline i128 oracle_bound(const struct vmscope_sync_point *v, int n,
				struct oracle o, int64_t g, int sign)
{
	i128 best = 0;
	bool have = false;
	for (int a = -2; a < n; a++)
		for (int b = (a < 0 ? a : 0); b < (a < 0 ? a + 1 : n); b++) {
			struct vmscope_sync_ratio d;
			if (a == -2)
				d = o.dmin;
			else if (a == -1)
				d = o.dmax;
			else {
				if (v[a].g == v[b].g)
					continue;
				d = ratio_make(v[b].u - v[a].u, v[b].g - v[a].g);
				if (ratio_cmp(d, o.dmin) < 0 ||
				    ratio_cmp(d, o.dmax) > 0)
					continue;
			}
			/* U(d) + d*g = min over P (max over Q) of
			 * u + d*(g - g_i). */
			i128 ext = 0;
			for (int i = 0; i < n; i++) {
				i128 num = (i128)d.num * (g - v[i].g);
				i128 val = v[i].u + (sign > 0 ? div_ceil(num, d.den)
							     : div_floor(num, d.den));
				if (i == 0 || (sign > 0 ? val < ext : val > ext))
					ext = val;
			}
			if (!have || (sign > 0 ? ext > best : ext < best))
				best = ext;
			have = true;
		}
	return best;
}

#endif
