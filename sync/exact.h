/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Exact integer helpers. Every decision of the hull code (convexity,
 * feasibility, which slope is larger, the bound of a query) is taken with
 * these, so rounding can never shrink the feasible set.
 *
 * Range argument: rebased coordinates satisfy |g|, |u| < 2^62 (|t - origin|
 * < 2^61 for each raw time, and u is a difference of two such), so any
 * difference of two coordinates is < 2^63 in magnitude and fits int64, and
 * a product of two such differences is < 2^126, a difference of two
 * products < 2^127: all fit in signed __int128.
 */
#ifndef VMSCOPE_SYNC_EXACT_H
#define VMSCOPE_SYNC_EXACT_H

#include <stdint.h>

#include "vmscope_sync.h"

typedef __int128 i128;

/* Compare a/b with c/d for b, d > 0: sign of a*d - c*b. */
static inline int ratio_cmp(struct vmscope_sync_ratio x,
			    struct vmscope_sync_ratio y)
{
	i128 l = (i128)x.num * y.den;
	i128 r = (i128)y.num * x.den;
	return (l > r) - (l < r);
}

static inline struct vmscope_sync_ratio ratio_make(int64_t num, int64_t den)
{
	/* Callers pass den != 0 with |num|, |den| < 2^63 - 1, so negation is
	 * safe. */
	struct vmscope_sync_ratio r = { num, den };
	if (den < 0) {
		r.num = -num;
		r.den = -den;
	}
	return r;
}

/* Approximately, for reports and the central estimate (never a bound). */
static inline long double ratio_ld(struct vmscope_sync_ratio r)
{
	return (long double)r.num / (long double)r.den;
}

/* Slope of the segment a→b (a.g != b.g). */
static inline struct vmscope_sync_ratio
slope(struct vmscope_sync_point a, struct vmscope_sync_point b)
{
	return ratio_make(b.u - a.u, b.g - a.g);
}

/* Twice the signed area of o, a, b: > 0 for a left (counter-clockwise)
 * turn. */
static inline i128 cross(struct vmscope_sync_point o,
			 struct vmscope_sync_point a,
			 struct vmscope_sync_point b)
{
	return (i128)(a.g - o.g) * (b.u - o.u) -
	       (i128)(a.u - o.u) * (b.g - o.g);
}

static inline i128 div_floor(i128 n, int64_t d)  /* d > 0 */
{
	i128 q = n / d;
	if ((n % d) != 0 && n < 0)
		q--;
	return q;
}

static inline i128 div_ceil(i128 n, int64_t d)  /* d > 0 */
{
	i128 q = n / d;
	if ((n % d) != 0 && n > 0)
		q++;
	return q;
}

/* t - origin as int64 when |t - origin| < VMSCOPE_SYNC_MAX_SPAN. */
static inline int rebase(uint64_t t, uint64_t origin, int64_t *out)
{
	if (t >= origin) {
		uint64_t d = t - origin;
		if (d >= (uint64_t)VMSCOPE_SYNC_MAX_SPAN)
			return -1;
		*out = (int64_t)d;
	} else {
		uint64_t d = origin - t;
		if (d >= (uint64_t)VMSCOPE_SYNC_MAX_SPAN)
			return -1;
		*out = -(int64_t)d;
	}
	return 0;
}

/* Saturate origin + off to [0, UINT64_MAX]. */
static inline uint64_t unbase(uint64_t origin, i128 off)
{
	i128 v = (i128)origin + off;
	if (v < 0)
		return 0;
	if (v > (i128)UINT64_MAX)
		return UINT64_MAX;
	return (uint64_t)v;
}

#endif /* VMSCOPE_SYNC_EXACT_H */
