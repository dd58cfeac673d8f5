/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interactive view of the pipeline's intervals (ncurses): a header,
 * per VM its vCPUs' exits/s and time split, one table of the interval's
 * exits grouped by reason, guest task or vCPU (or the host tasks that had
 * vCPU threads' CPUs), the interval's worst guest-thread stalls with who
 * caused them and its longest exits. Keys: s sort (total, count, p99,
 * max), g grouping, v one VM or all, p pause (a replay waits; a live
 * source goes on and the screen is frozen), q quit; a resize redraws.
 * Keys are read when an interval closes (and every 200 ms while a replay
 * is paused, or at the end). After the last interval it stays until q.
 */
#ifndef VMSCOPE_ONLINE_SCREEN_H
#define VMSCOPE_ONLINE_SCREEN_H

#include <stdio.h>

#include "pipe.h"

enum { OL_GROUP_REASON, OL_GROUP_TASK, OL_GROUP_VCPU, OL_GROUP_PREEMPTOR, OL_GROUPS };

struct ol_screen {
	const char *source;	/* what is shown, for the header */
	enum an_sort sort;
	int group;		/* OL_GROUP_* */
	int64_t vm;		/* -1: all */
	bool paused;
	/* the source does not wait for the view (top --pid: the view runs on
	 * the recorder's writer thread): p freezes what is shown, the run
	 * goes on, and the intervals that close meanwhile are not drawn */
	bool live;
	bool drawn;		/* the first draw clears the whole terminal */
	void *term;		/* ncurses' SCREEN */
	/* stderr on the terminal: held in a file while the screen is up */
	int saved_err;		/* the terminal's stderr, -1 when not held */
	FILE *held;

};

/* Take the terminal (stdin, stdout); 0, or -1 when it is not one ncurses
 * can drive (e.g. no TERM). When stderr is a terminal, what is written to
 * it meanwhile is held and written there by ol_screen_close, after the
 * screen is given back (it would be drawn over, or draw over it). */
int ol_screen_open(struct ol_screen *s, const char *source, enum an_sort sort, bool live);
/* Give the terminal back. */
void ol_screen_close(struct ol_screen *s);

/* The view (ctx = struct ol_screen). */
int ol_view_screen(void *ctx, const struct ol_report *r);

#endif
