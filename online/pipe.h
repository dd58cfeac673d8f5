/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The online pipeline (README.md): records in host-time order through the
 * analysis walk (analysis/walk.h, the pass `report` makes), cut into
 * interval windows of a fixed span of host time, with a cumulative window
 * beside them; each closed interval is handed to a view.
 *
 * Today's source is a recorded trace (ol_replay): `vmscope top --replay`.
 * Memory: two windows (bounded by the walk's tables of VMs, vCPUs,
 * reasons and tasks) and the walk's own state, whatever the duration.
 */
#ifndef VMSCOPE_ONLINE_PIPE_H
#define VMSCOPE_ONLINE_PIPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "window.h"

/* What a view is handed at the end of each interval. */
struct ol_report {
	const struct an_walk *w;
	/* sorted by the opts' key; a view may sort them again (an_exits_sort) */
	struct ol_window *iv;		/* the interval */
	struct ol_window *cum;		/* everything since the start */
	uint64_t index;			/* 0, 1, ... */
	bool final;			/* the last one: the source ended (iv may be short) */
};

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
