// SPDX-License-Identifier: GPL-2.0
/* Guest-physical regions: see region.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "region.h"

/* The number of regions at or before (@vm, @page): the one that may hold
 * it is the last of them. */
static size_t upto(const struct an_regions *s, uint32_t vm, uint64_t page)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct an_region *r = &s->r[mid];

		if (r->vm < vm || (r->vm == vm && r->first <= page))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

long an_regions_find(const struct an_regions *s, uint32_t vm, uint64_t addr)
{
	size_t i = upto(s, vm, an_page_of(addr));

	if (i && s->r[i - 1].vm == vm && addr <= s->r[i - 1].last)
		return (long)i - 1;
	return -1;
}

int an_regions_add(struct an_regions *s, uint32_t vm, uint64_t addr, size_t max, size_t *at,
		   size_t *gone)
{
	uint64_t page = an_page_of(addr), last = page + (AN_PAGE - 1);
	size_t i = upto(s, vm, page);
	struct an_region *lo = i && s->r[i - 1].vm == vm ? &s->r[i - 1] : NULL;
	struct an_region *hi = i < s->n && s->r[i].vm == vm ? &s->r[i] : NULL;
	bool below, above;

	if (lo && page <= lo->last) {
		*at = i - 1;
		return AN_REGION_IN;
	}
	/* lo->last < page, so lo->last + 1 does not wrap; hi->first > page,
	 * so this page is not the last one and last + 1 does not wrap */
	below = lo && lo->last + 1 == page;
	above = hi && last + 1 == hi->first;
	if (below && above) {
		lo->last = hi->last;
		*gone = hi->id;
		memmove(hi, hi + 1, (s->n - i - 1) * sizeof(*hi));
		s->n--;
		*at = i - 1;
		return AN_REGION_JOINED;
	}
	if (below || above) {
		if (below)
			lo->last = last;
		else
			hi->first = page;
		*at = below ? i - 1 : i;
		return AN_REGION_GREW;
	}
	if (s->n >= max)
		return -ENOSPC;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct an_region *n = realloc(s->r, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->r = n;
		s->cap = cap;
	}
	memmove(&s->r[i + 1], &s->r[i], (s->n - i) * sizeof(*s->r));
	s->r[i] = (struct an_region){ .vm = vm, .first = page, .last = last };
	s->n++;
	*at = i;
	return AN_REGION_NEW;
}

void an_regions_free(struct an_regions *s)
{
	free(s->r);
	memset(s, 0, sizeof(*s));
}
