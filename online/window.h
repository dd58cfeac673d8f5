/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One window of the online pipeline (README.md): what `report exits`
 * counts, over a span of host time. The exits are aggregated by the
 * report's own code (analysis/exits.h), by exit reason, by guest task and
 * by vCPU; the vCPUs' time split and the walk's counts are the
 * difference of the walk's cumulative figures (a snapshot) between the
 * window's edges. An exit belongs to the window its kvm_entry (its end)
 * falls in, so the windows of a run partition its exits.
 */
#ifndef VMSCOPE_ONLINE_WINDOW_H
#define VMSCOPE_ONLINE_WINDOW_H

#include <stdint.h>

#include "exits.h"
#include "walk.h"

/* The walk's cumulative figures at one moment, or their difference over
 * a window: the counts and every vCPU's time split. */
struct ol_snap {
	struct an_counts counts;
	uint32_t n_vms;
	uint32_t *n_vcpus;		/* [n_vms] */
	struct an_vcpu_time **t;	/* [n_vms][n_vcpus[vm]] */
};

/* @s := the walk's figures now (@s empty or taken before); 0 or -ENOMEM. */
int ol_snap_take(struct ol_snap *s, const struct an_walk *w);
/* @d := @now - @base (vCPUs @base had not seen count from zero). */
int ol_snap_diff(struct ol_snap *d, const struct ol_snap *now, const struct ol_snap *base);
void ol_snap_free(struct ol_snap *s);
void ol_snap_swap(struct ol_snap *a, struct ol_snap *b);

struct ol_window {
	uint64_t start, end;		/* host time, ns: [start, end) */
	struct an_exits by_reason, by_task, by_vcpu;
	struct ol_snap t;		/* counts and vCPU time over the window */
	/* once the interval is closed: by_reason.top sorted, largest first */
	size_t n_longest;
};

/* An empty window from @start, keeping @top longest exits; 0 or -ENOMEM. */
int ol_window_init(struct ol_window *win, uint64_t start, size_t top);
void ol_window_free(struct ol_window *win);

/* The walk's exit hook (ctx = the window). */
void ol_window_exit(void *ctx, const struct an_exit *e);

/* Exits that could not be counted for want of memory. */
int ol_window_oom(const struct ol_window *win);

#endif
