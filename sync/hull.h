/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Bounded convex chains sorted by g. A lower hull (sign +1) keeps the
 * points that bound lines from above (guest→host messages lie above every
 * feasible line); an upper hull (sign -1) the points that bound them from
 * below. Points arrive in any order.
 */
#ifndef VMSCOPE_SYNC_HULL_H
#define VMSCOPE_SYNC_HULL_H

#include <stdbool.h>

#include "vmscope_sync.h"

/* Insert p. Returns true if the chain changed. Points on or beyond the
 * chain (above a lower hull, below an upper one) are redundant: every
 * line below the chain is also below them. At the capacity, one interior
 * vertex is dropped first (*evicted set), which only loosens the chain. */
bool hull_insert(struct vmscope_sync_hull *h, int sign,
		 struct vmscope_sync_point p, bool *evicted);

/* Drop end vertices that bind only for slopes outside [lo, hi]. The slope
 * range of feasible lines only shrinks, so they can never bind again. */
void hull_prune(struct vmscope_sync_hull *h, int sign,
		struct vmscope_sync_ratio lo, struct vmscope_sync_ratio hi);

#endif /* VMSCOPE_SYNC_HULL_H */
