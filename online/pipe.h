/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The online pipeline (README.md): records in host-time order through the
 * analysis walk (analysis/walk.h, the pass `report` makes), cut into
 * interval windows of a fixed span of host time, with a cumulative window
 * beside them; each closed interval is handed to a view.
 *
 * Its sources: a recorded trace (ol_replay, `vmscope top --replay`) and
 * the host module's buffers with the guest agents (live.h, `--pid`).
 * Memory: two windows (bounded by the walk's tables of VMs, vCPUs,
 * reasons and tasks) and the walk's own state, whatever the duration.
 */
#ifndef VMSCOPE_ONLINE_PIPE_H
#define VMSCOPE_ONLINE_PIPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "window.h"

/* A VM's clock alignment as the live source has it when an interval
 * closes: the bound (hi - lo, the streaming sync library's, at that guest
 * time) of the last guest record of the VM the online merge put out. */
struct ol_sync {
	bool bounded;		/* such a record came */
	uint64_t bound_ns;
};

/* What a view says of VM @vm's clock alignment (ol_sync_of). */
enum ol_sync_state {
	OL_SYNC_BOUNDED,	/* bound_ns is the bound */
	OL_SYNC_NO_AGENT,	/* the VM has no guest side */
	OL_SYNC_NOT_YET,	/* its agent connected; no record converted yet */
	OL_SYNC_REPLAY,		/* a replay: not taken (merged traces keep none) */
};

/* What a view is handed at the end of each interval. */
struct ol_report {
	const struct an_walk *w;
	/* sorted by the opts' key; a view may sort them again (an_exits_sort) */
	struct ol_window *iv;		/* the interval */
	struct ol_window *cum;		/* everything since the start */
	uint64_t index;			/* 0, 1, ... */
	bool final;			/* the last one: the source ended (iv may be short) */
	/* [n_sync]: each session VM's alignment (live); NULL for a replay */
	const struct ol_sync *sync;
	uint32_t n_sync;
};

/* VM @vm's alignment in @r, with its bound (*@bound_ns when bounded). */
enum ol_sync_state ol_sync_of(const struct ol_report *r, uint32_t vm, uint64_t *bound_ns);
/* "bounded", "no agent", "no sync yet", "not shown in a replay" */
extern const char *const ol_sync_names[];

/* A view; 0 to go on, OL_VIEW_QUIT to end the run there (the user quit:
 * not a failure), or -errno to stop it (e.g. its output failed). */
#define OL_VIEW_QUIT 1
typedef int ol_view_fn(void *ctx, const struct ol_report *r);

struct ol_opts {
	uint64_t interval_ns;	/* > 0 */
	double speed;		/* replay: host time per wall time; 0 as fast as possible */
	size_t top;		/* longest exits kept per interval */
	enum an_sort sort;
	ol_view_fn *view;
	void *view_ctx;
};

/*
 * Run the trace @path through the pipeline: a merged trace (`vmscope
 * merge`'s output), or a raw one (`vmscope record`'s) merged as it is read
 * (merge/online.h); @flags: MR_ACCEPT_DAMAGE or 0 (merge/out.h). 0 when
 * it ended cleanly (or its damage was accepted: @err then says what it
 * is, else it is empty); 1 when the trace is damaged or ended otherwise
 * (@err says how; every interval read was shown); negative errno when it
 * could not be read at all or the view stopped it (@err says why).
 */
int ol_replay(const char *path, unsigned int flags, const struct ol_opts *o, char *err,
	      size_t errlen);

#endif
