/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Bounded convex chains with exact orientation tests. */
#include <string.h>

#include "exact.h"
#include "hull.h"

static void remove_at(struct vmscope_sync_hull *h, uint32_t i)
{
	memmove(&h->v[i], &h->v[i + 1], (h->n - i - 1) * sizeof(h->v[0]));
	h->n--;
}

/* First index whose g >= key (binary search; the chain is sorted). */
static uint32_t lower_bound(const struct vmscope_sync_hull *h, int64_t key)
{
	uint32_t lo = 0, hi = h->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (h->v[mid].g < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Restore convexity around index i after v[i] was inserted or replaced. */
static void fix_around(struct vmscope_sync_hull *h, int sign, uint32_t i)
{
	while (i >= 2 && sign * cross(h->v[i - 2], h->v[i - 1], h->v[i]) <= 0) {
		remove_at(h, i - 1);
		i--;
	}
	while (i + 2 < h->n &&
	       sign * cross(h->v[i], h->v[i + 1], h->v[i + 2]) <= 0)
		remove_at(h, i + 1);
}

/* Drop the interior vertex that sticks out least past its neighbours'
 * chord. Any choice is safe (a looser chain admits more lines); this one
 * widens the bound least. Long double suffices because only the choice,
 * not the result, depends on it. */
static void evict_one(struct vmscope_sync_hull *h)
{
	uint32_t best = 1;
	long double best_gap = 0;
	for (uint32_t j = 1; j + 1 < h->n; j++) {
		i128 c = cross(h->v[j - 1], h->v[j], h->v[j + 1]);
		long double gap = (long double)(c < 0 ? -c : c) /
				  (long double)(h->v[j + 1].g - h->v[j - 1].g);
		if (j == 1 || gap < best_gap) {
			best = j;
			best_gap = gap;
		}
	}
	remove_at(h, best);
}

bool hull_insert(struct vmscope_sync_hull *h, int sign,
		 struct vmscope_sync_point p, bool *evicted)
{
	uint32_t i = lower_bound(h, p.g);

	if (i < h->n && h->v[i].g == p.g) {
		/* Same g: only the tighter of the two can matter. */
		if (sign > 0 ? p.u >= h->v[i].u : p.u <= h->v[i].u)
			return false;
		h->v[i] = p;
		fix_around(h, sign, i);
		return true;
	}
	if (i > 0 && i < h->n &&
	    sign * cross(h->v[i - 1], p, h->v[i]) <= 0)
		return false;  /* on or beyond the chord: redundant */

	if (h->n == VMSCOPE_SYNC_HULL_CAP) {
		evict_one(h);
		if (evicted)
			*evicted = true;
		i = lower_bound(h, p.g);
	}
	memmove(&h->v[i + 1], &h->v[i], (h->n - i) * sizeof(h->v[0]));
	h->v[i] = p;
	h->n++;
	fix_around(h, sign, i);
	return true;
}

void hull_prune(struct vmscope_sync_hull *h, int sign,
		struct vmscope_sync_ratio lo, struct vmscope_sync_ratio hi)
{
	/* Lower hull: edge slopes ascend; v[0] binds only for d <= first
	 * slope, v[n-1] only for d >= last slope. Upper hull: mirrored. */
	while (h->n >= 2) {
		struct vmscope_sync_ratio s = slope(h->v[0], h->v[1]);
		if (sign > 0 ? ratio_cmp(s, lo) < 0 : ratio_cmp(s, hi) > 0)
			remove_at(h, 0);
		else
			break;
	}
	while (h->n >= 2) {
		struct vmscope_sync_ratio s = slope(h->v[h->n - 2], h->v[h->n - 1]);
		if (sign > 0 ? ratio_cmp(s, hi) > 0 : ratio_cmp(s, lo) < 0)
			h->n--;
		else
			break;
	}
}
