/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `report exits`: completed exits (walk.h) aggregated by one grouping —
 * per VM, per vCPU, per exit reason (within its VM), per guest task, or
 * by what the exit accessed (I/O port, MSR, MMIO page or region, nested
 * page fault's page or region) —
 * each group with count, total, the split of that time (in-kernel
 * handling, userspace exits, halted), a latency histogram (hist.h:
 * percentiles within 0.79 %, exact min and max) and, except by reason,
 * the count and time per exit reason; and the N longest exits with their
 * context. Memory: one histogram per group (groups are bounded by the
 * walk's tables, pages and regions by AN_MAX_ADDR_GROUPS), N exits.
 */
#ifndef VMSCOPE_ANALYSIS_EXITS_H
#define VMSCOPE_ANALYSIS_EXITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hist.h"
#include "region.h"
#include "topn.h"
#include "walk.h"

/* AN_BY_PORT, AN_BY_MSR, AN_BY_MMIO: only the exits with that detail
 * (walk.h, struct an_detail), by (VM, port, direction, access size in
 * bytes), (VM, MSR index,
 * read or write), (VM, guest-physical page of AN_PAGE bytes,
 * direction); the others are counted in no_detail. */
/* AN_BY_SYMBOL: by (VM, the guest kernel function of the exit's RIP,
 * walk.h an_exit.sym); exits from guest user mode by (VM, task), kernel
 * RIPs without a symbol, or of a VM without a table, one row each. */
/* AN_BY_NPF: the nested page faults (walk.h an_exit.fault) by (VM, page,
 * write or not), as AN_BY_MMIO by page. AN_BY_MMIO_REGION,
 * AN_BY_NPF_REGION: the same exits by (VM, region.h region), reads and
 * writes together (a group's writes counted). Page and region groups are
 * at most AN_MAX_ADDR_GROUPS: the exits of pages or regions beyond them
 * are counted in beyond. */
enum an_by { AN_BY_VM, AN_BY_VCPU, AN_BY_REASON, AN_BY_TASK, AN_BY_PORT, AN_BY_MSR,
	     AN_BY_MMIO, AN_BY_SYMBOL, AN_BY_MMIO_REGION, AN_BY_NPF, AN_BY_NPF_REGION,
	     AN_BY_N };
#define AN_MAX_ADDR_GROUPS	16384
enum an_sort { AN_SORT_COUNT, AN_SORT_TOTAL, AN_SORT_P99, AN_SORT_MAX };

struct an_reason_share {
	uint32_t reason;
	uint64_t count, total_ns;
};

struct an_group {
	uint32_t vm;
	uint32_t vcpu;		/* AN_BY_VCPU */
	uint32_t reason;	/* AN_BY_REASON */
	int32_t task;		/* AN_BY_TASK, and AN_BY_SYMBOL's user mode: walk task */
	int32_t sym;		/* AN_BY_SYMBOL: an_exit.sym */
	/* by what was accessed: kind, direction, port / MSR / page's or
	 * region's start, and the access size by port (0 otherwise); a page's
	 * or region's last byte in end */
	struct an_detail d;
	uint64_t end;
	uint64_t writes;	/* by region: its exits that wrote */
	struct an_hist h;	/* exit durations; h.sum is the total */
	uint64_t kernel_ns, user_ns, halted_ns;
	uint32_t nr;		/* reasons below (not AN_BY_REASON) */
	struct an_reason_share *r;
};

struct an_exits {
	enum an_by by;
	struct an_group *g;
	size_t n, cap;
	uint32_t *hash;		/* index + 1 */
	size_t hash_cap;
	struct an_topn top;	/* struct an_exit by duration */
	uint64_t no_detail;	/* by what was accessed: exits without that detail */
	uint64_t beyond;	/* ... with it, in pages or regions beyond the table */
	struct an_regions reg;	/* by region: the regions, id = group index */
	int oom;
};

int an_exits_init(struct an_exits *x, enum an_by by, size_t top);
void an_exits_free(struct an_exits *x);

/* The walk hook (struct an_hooks.exit, ctx = the an_exits). */
void an_exits_add(void *ctx, const struct an_exit *e);

/* Whether @by groups by what the exits accessed (--by port|msr|mmio|...),
 * and by a region. */
bool an_by_detail(enum an_by by);
bool an_by_region(enum an_by by);
/* What of exit @e grouping @by looks at: its fault by npf (a nested page
 * fault is kept apart from the access the exit emulated: an NPF exit
 * that reaches MMIO has both), its detail otherwise. */
const struct an_detail *an_exits_detail(enum an_by by, const struct an_exit *e);

/* Order the groups by @s, largest first (ties: VM, then key); by region,
 * the groups joined into others are dropped first. */
void an_exits_sort(struct an_exits *x, enum an_sort s);

#endif
