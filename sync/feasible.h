/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The feasible slope range between a lower hull P (points above every
 * feasible line) and an upper hull Q (points below).
 *
 * In rebased coordinates a line is u = d*g + b (d = a - 1). For a slope d
 * the offsets allowed are L(d) <= b <= U(d) with
 *   U(d) = min_P (u - d*g)   (concave, breakpoints at P's edge slopes)
 *   L(d) = max_Q (u - d*g)   (convex, breakpoints at Q's edge slopes)
 * so the feasible d form the interval where U - L >= 0. It is found by a
 * sweep over the merged breakpoints; on each piece U - L is linear and its
 * root is the slope through one P and one Q vertex, an exact ratio of
 * int64 differences.
 */
#ifndef VMSCOPE_SYNC_FEASIBLE_H
#define VMSCOPE_SYNC_FEASIBLE_H

#include <stdbool.h>

#include "vmscope_sync.h"

/* Intersect the box [*lo, *hi] with the feasible range. Returns false (and
 * leaves the box) when no slope in the box admits a line. An empty P or Q
 * constrains nothing. */
bool feasible_range(const struct vmscope_sync_hull *p,
		    const struct vmscope_sync_hull *q,
		    struct vmscope_sync_ratio *lo,
		    struct vmscope_sync_ratio *hi);

/* Index of the P vertex that attains U(d) (the number of P edge slopes
 * strictly below d), and of the Q vertex that attains L(d). */
uint32_t active_p(const struct vmscope_sync_hull *p,
		  struct vmscope_sync_ratio d);
uint32_t active_q(const struct vmscope_sync_hull *q,
		  struct vmscope_sync_ratio d);

/* The central line of the feasible set: slope *d the midpoint of [dmin,
 * dmax] (feasible: the range is an interval) and offset *b the middle of
 * [L(*d), U(*d)]; 0 and 0 when P or Q is empty. Long double is enough:
 * estimates from it are clamped into the exact bound. */
void feasible_midline(const struct vmscope_sync_hull *p,
		      const struct vmscope_sync_hull *q,
		      struct vmscope_sync_ratio dmin,
		      struct vmscope_sync_ratio dmax,
		      long double *d, long double *b);

#endif /* VMSCOPE_SYNC_FEASIBLE_H */
