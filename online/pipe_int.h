/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pipeline's state, for its sources: pipe.c runs a trace through it
 * (ol_replay), live.c the host's ring buffers (ol_live). Not an API.
 */
#ifndef VMSCOPE_ONLINE_PIPE_INT_H
#define VMSCOPE_ONLINE_PIPE_INT_H

#include <time.h>

#include "pipe.h"
#include "sched.h"

struct pipe {
	struct an_walk *w;
	const struct ol_opts *o;
	struct an_sched sched;		/* `report sched`'s pass */
	struct an_hooks sh;		/* its hooks, called from ours */
	bool have_sched;
	struct ol_window iv, cum;
	struct ol_snap base, now;	/* the walk's figures at iv's start, and now */
	uint64_t next_edge, index, first_ts;
	struct timespec wall0;
	bool started, quit;
	/* the live source's (live.c), for the views; NULL: a replay */
	const struct ol_sync *sync;
	uint32_t n_sync;
	int error;			/* the first failure: -errno */
	char why[128];
};

/* The pipeline over walk @w (not taken): its hooks into @h, to run the
 * walk with. 0 or -ENOMEM; ol_pipe_close() in any case. */
int ol_pipe_open(struct pipe *p, struct an_walk *w, const struct ol_opts *o,
		 struct an_hooks *h);
/* After the walk's run returned @e (as an_walk_run): the pipeline's own
 * failures, no records (1), damage accepted and notes said into @err;
 * the status to return. */
int ol_pipe_result(struct pipe *p, int e, char *err, size_t errlen);
void ol_pipe_close(struct pipe *p);

#endif
