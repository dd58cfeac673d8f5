// SPDX-License-Identifier: GPL-2.0
/* Log-linear latency histogram: see hist.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"

void an_hist_init(struct an_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void an_hist_free(struct an_hist *h)
{
	for (unsigned int g = 0; g < AH_GROUPS; g++)
		free(h->group[g]);
	an_hist_init(h);
}

static unsigned int group_size(unsigned int g)
{
	return g ? AH_SUB : 2 * AH_SUB;
}

/* The group and index of @v. */
static void locate(uint64_t v, unsigned int *g, unsigned int *i)
{
	unsigned int msb;

	if (v < 2 * AH_SUB) {
		*g = 0;
		*i = (unsigned int)v;
		return;
	}
	msb = 63 - (unsigned int)__builtin_clzll(v);
	*g = msb - AH_SUB_BITS;
	*i = (unsigned int)(v >> (msb - AH_SUB_BITS)) & (AH_SUB - 1);
}

/* The lowest value of bucket (g, i) and the bucket's width. */
static void bucket(unsigned int g, unsigned int i, uint64_t *lo, uint64_t *width)
{
	if (!g) {
		*lo = i;
		*width = 1;
		return;
	}
	*width = (uint64_t)1 << g;
	*lo = ((uint64_t)AH_SUB + i) << g;
}

void an_hist_add(struct an_hist *h, uint64_t v)
{
	unsigned int g, i;

	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	locate(v, &g, &i);
	if (!h->group[g]) {
		h->group[g] = calloc(group_size(g), sizeof(uint64_t));
		if (!h->group[g]) {
			h->oom++;
			return;
		}
	}
	h->group[g][i]++;
}

void an_hist_merge(struct an_hist *dst, const struct an_hist *src)
{
	if (!src->count)
		return;
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->oom += src->oom;
	for (unsigned int g = 0; g < AH_GROUPS; g++) {
		if (!src->group[g])
			continue;
		if (!dst->group[g] && !(dst->group[g] = calloc(group_size(g), sizeof(uint64_t)))) {
			dst->oom++;
			continue;
		}
		for (unsigned int i = 0; i < group_size(g); i++)
			dst->group[g][i] += src->group[g][i];
	}
}

uint64_t an_hist_quantile(const struct an_hist *h, double q)
{
	uint64_t rank, seen = 0;

	if (!h->count)
		return 0;
	if (q <= 0)
		return h->min;
	rank = (uint64_t)ceil(q * (double)h->count);
	if (rank < 1)
		rank = 1;
	if (rank >= h->count)
		return h->max;
	for (unsigned int g = 0; g < AH_GROUPS; g++) {
		if (!h->group[g])
			continue;
		for (unsigned int i = 0; i < group_size(g); i++) {
			uint64_t lo, width, mid;

			seen += h->group[g][i];
			if (seen < rank)
				continue;
			bucket(g, i, &lo, &width);
			mid = lo + width / 2;
			if (mid < h->min)
				mid = h->min;
			if (mid > h->max)
				mid = h->max;
			return mid;
		}
	}
	return h->max;	/* only when buckets were lost to an allocation failure */
}

void an_hist_each(const struct an_hist *h,
		  void (*fn)(void *ctx, uint64_t lo, uint64_t width, uint64_t count), void *ctx)
{
	for (unsigned int g = 0; g < AH_GROUPS; g++) {
		if (!h->group[g])
			continue;
		for (unsigned int i = 0; i < group_size(g); i++) {
			uint64_t lo, width;

			if (!h->group[g][i])
				continue;
			bucket(g, i, &lo, &width);
			fn(ctx, lo, width, h->group[g][i]);
		}
	}
}
