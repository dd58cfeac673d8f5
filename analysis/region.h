/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest-physical regions: the one definition `report exits --by
 * mmio-region` and `--by npf-region` share.
 *
 * A region is, within one VM, a maximal run of adjacent AN_PAGE-byte
 * guest-physical pages each of which had at least one exit of the
 * grouping (an MMIO access, a nested page fault): a device's BAR, the
 * RAM a guest touched. Two regions never touch: a page between them
 * joins them. The set is kept ordered by (VM, first byte) and grows as
 * pages come, so a region is known before the pass ends and its exits
 * are never held: a page is in a region, extends the one it touches,
 * joins the two it lies between, or starts a new one. Addresses are
 * whole 64-bit values: the last page ends at 2^64 - 1, and nothing
 * lies beyond it or below page 0.
 */
#ifndef VMSCOPE_ANALYSIS_REGION_H
#define VMSCOPE_ANALYSIS_REGION_H

#include <stddef.h>
#include <stdint.h>

#define AN_PAGE	4096u

static inline uint64_t an_page_of(uint64_t addr)
{
	return addr & ~(uint64_t)(AN_PAGE - 1);
}

struct an_region {
	uint32_t vm;
	uint64_t first, last;	/* its first and last byte */
	size_t id;		/* the caller's (its group) */
};

struct an_regions {
	struct an_region *r;	/* [n], by (vm, first) */
	size_t n, cap;
};

enum an_region_op {
	AN_REGION_IN,		/* the page was in a region already */
	AN_REGION_NEW,		/* a region of that page alone: set its id */
	AN_REGION_GREW,		/* it extended the region it touches */
	AN_REGION_JOINED,	/* it joined two: the upper one is gone */
};

/*
 * Put the page of @addr of VM @vm in the set. Returns what happened
 * (enum an_region_op), *@at the index of the region that holds it now
 * (valid until the next call); for AN_REGION_JOINED, *@gone the id of
 * the region absorbed into it. A new region beyond @max regions is not
 * made: -ENOSPC, and the page is in none. -ENOMEM.
 */
int an_regions_add(struct an_regions *s, uint32_t vm, uint64_t addr, size_t max, size_t *at,
		   size_t *gone);

/* The index of the region of VM @vm holding @addr, or -1. */
long an_regions_find(const struct an_regions *s, uint32_t vm, uint64_t addr);

void an_regions_free(struct an_regions *s);

#endif
