/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A latency histogram with bounded relative error and exact extremes.
 *
 * Log-linear buckets: values below 128 ns each have their own bucket
 * (exact); above, every power of two [2^k, 2^(k+1)) is cut into 64 equal
 * buckets, so a bucket is at most 1/64 of its lower edge wide. A
 * percentile is the middle of the bucket holding that rank, clamped to
 * [min, max]: within 1/128 (0.79 %) of a value that really is at that
 * rank. Count, sum, min and max are exact.
 *
 * Memory: the 64 counters of a power of two are allocated when the first
 * value lands there, so a histogram costs about 0.5 KiB per power of two
 * its values span (a few KiB), whatever the number of values.
 */
#ifndef VMSCOPE_ANALYSIS_HIST_H
#define VMSCOPE_ANALYSIS_HIST_H

#include <stdint.h>

#define AH_SUB_BITS	6
#define AH_SUB		(1u << AH_SUB_BITS)	/* buckets per power of two */
#define AH_GROUPS	(64 - AH_SUB_BITS)	/* group 0: 0..127 exact */

struct an_hist {
	uint64_t count, sum, min, max;
	uint64_t *group[AH_GROUPS];	/* group 0: 2 * AH_SUB counters */
	int oom;			/* values counted without a bucket */
};

void an_hist_init(struct an_hist *h);
void an_hist_free(struct an_hist *h);
void an_hist_add(struct an_hist *h, uint64_t v);

/* Add every value of @src to @dst, as if each had been added to it:
 * count, sum, min, max and every bucket (what @src lost stays lost). */
void an_hist_merge(struct an_hist *dst, const struct an_hist *src);

/* The value at quantile @q (0 < q <= 1) as described above; 0 if empty. */
uint64_t an_hist_quantile(const struct an_hist *h, double q);

/*
 * Call @fn for every bucket holding values, in increasing order: its
 * lowest value, its width (every value in [lo, lo + width) lands there)
 * and its count. Bucket edges are every integer below 128 and, above,
 * every multiple of 2^k / 64 in [2^k, 2^(k+1)): coarser bins whose edges
 * are among those (e.g. quarters of each power of two) get exact counts.
 */
void an_hist_each(const struct an_hist *h,
		  void (*fn)(void *ctx, uint64_t lo, uint64_t width, uint64_t count), void *ctx);

#endif
