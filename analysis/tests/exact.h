/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The analysis tests' exact answers for a histogram (hist.h): sorting the
 * story's values, the value at a quantile's rank, and the histogram's
 * promise about it; a group's count, total, min and max as the story
 * makes them. Header only, static functions.
 */
#ifndef VMSCOPE_ANALYSIS_TESTS_EXACT_H
#define VMSCOPE_ANALYSIS_TESTS_EXACT_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* |approx - exact| <= exact / 128 (the histogram's promise) */
static inline bool within(uint64_t approx, uint64_t exact)
{
	uint64_t d = approx > exact ? approx - exact : exact - approx;

	return d * 128 <= exact;
}

/* The value at quantile @q's rank of @n sorted values (an_hist_quantile's). */
static inline uint64_t exact_q(const uint64_t *sorted, size_t n, double q)
{
	size_t rank = (size_t)ceil(q * (double)n);

	return sorted[(rank ? rank : 1) - 1];
}

/* What a histogram's count, sum, min and max must be: the story's values
 * added one by one (exact_add) or groups merged (exact_merge). */
struct exact_agg {
	uint64_t count, total, min, max;
};

static inline void exact_merge(struct exact_agg *x, const struct exact_agg *y)
{
	if (!y->count)
		return;
	if (!x->count || y->min < x->min)
		x->min = y->min;
	if (y->max > x->max)
		x->max = y->max;
	x->count += y->count;
	x->total += y->total;
}

static inline void exact_add(struct exact_agg *x, uint64_t d)
{
	const struct exact_agg one = { 1, d, d, d };

	exact_merge(x, &one);
}

#endif
