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
#include "vmscope/events.h"
#include "sched.h"
#include "walk.h"

/* A vCPU's figures: the walk's time split, and `report sched`'s host view
 * of its thread (off its CPU: preempted, blocked in the host), the
 * guest's own steal over the spans between its readings (steal.h) with
 * the host's preempted time over the same spans, and the stalls of its
 * guest threads by class (sched.h, an_sched_vcpu.stall_ns). */
struct ol_vcpu {
	struct an_vcpu_time t;
	uint64_t preempted_ns, preemptions, blocked_ns, blocks;
	uint64_t steal_readings, steal_ns, steal_host_ns, steal_span_ns;
	uint64_t stall_ns[AN_STALL_NSTATES][AN_STALL_NCAUSES];
};

/* The cumulative figures at one moment, or their difference over a
 * window: the walk's counts and every vCPU's. */
struct ol_snap {
	struct an_counts counts;
	uint32_t n_vms;
	uint32_t *n_vcpus;		/* [n_vms] */
	struct ol_vcpu **t;		/* [n_vms][n_vcpus[vm]] */
};

/* @s := the figures of the walk and @sched now (@s empty or taken
 * before); 0 or -ENOMEM. */
int ol_snap_take(struct ol_snap *s, const struct an_walk *w, const struct an_sched *sched);
/* @d := @now - @base (vCPUs @base had not seen count from zero). */
int ol_snap_diff(struct ol_snap *d, const struct ol_snap *now, const struct ol_snap *base);
void ol_snap_free(struct ol_snap *s);
void ol_snap_swap(struct ol_snap *a, struct ol_snap *b);

#define OL_WIN_VMS VMSCOPE_MAX_PIDS

struct ol_window {
	uint64_t start, end;		/* host time, ns: [start, end) */
	struct an_exits by_reason, by_task, by_vcpu;
	struct ol_snap t;		/* counts and vCPU time over the window */
	/* once the interval is closed: by_reason.top sorted, largest first */
	size_t n_longest;
	/* the vCPU threads' off-CPU intervals that ended in the window: time
	 * and times by the host task that had the CPU (index host_task -
	 * AN_TASK_OTHER; blocked in the host is AN_TASK_UNKNOWN), NULL until
	 * the first; a host task beyond the AN_SCHED_KEEP of one interval
	 * counts in off_other_ns */
	uint64_t *host_ns;
	uint32_t *host_n;
	uint64_t off_other_ns;
	/* per VM (the first OL_WIN_VMS, a recording's most): the longest
	 * exit that is not a halt and the worst stall, bit vm of has_busy
	 * and has_worst saying there is one (triggers, trigger.h) */
	struct an_exit busy[OL_WIN_VMS];
	struct an_stall worst[OL_WIN_VMS];
	uint32_t has_busy, has_worst;
	struct an_topn stalls;		/* struct an_stall by duration */
	size_t n_stalls;		/* once closed: stalls sorted, largest first */
	int oom;
};

/* An empty window from @start, keeping @top longest exits and stalls;
 * 0 or -ENOMEM. */
int ol_window_init(struct ol_window *win, uint64_t start, size_t top);
void ol_window_free(struct ol_window *win);

/* The walk's exit hook (ctx = the window). */
void ol_window_exit(void *ctx, const struct an_exit *e);
/* The sched pass's off-CPU hook (an_sched.on_off, ctx = the window). */
void ol_window_off(void *ctx, const struct an_off *o);
/* The host tasks of the window's off-CPU time, largest first, into a new
 * *@out (free it); their count. */
size_t ol_window_preemptors(const struct ol_window *win, struct an_by_host **out);
/* Close the window at @end: sort its longest exits and stalls. */
void ol_window_close(struct ol_window *win, uint64_t end);

/* Exits that could not be counted for want of memory. */
int ol_window_oom(const struct ol_window *win);

#endif
