/* SPDX-License-Identifier: GPL-2.0 */
/* The input of an export: a merged trace (merge/out.h), or a raw one
 * merged as `vmscope merge` merges it, read through the analysis walk
 * (analysis/walk.h), with errors a user can act on. */
#ifndef VMSCOPE_EXPORT_IN_H
#define VMSCOPE_EXPORT_IN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "out.h"
#include "walk.h"

struct ex_opts {
	bool force;		/* replace an existing output (ex_out.h) */
	const char *spill_dir;	/* a raw input's pass-1 temporary files; NULL: /tmp */
	/* a raw input: where merge's report of its clocks goes (NULL: not
	 * printed), as `vmscope merge` would have printed it */
	FILE *merge_report;
};

/*
 * Open @in for the walk: a merged trace, or a raw one (what `vmscope
 * record` writes) through `vmscope merge`'s two passes, pass 2's records
 * read as the merged trace would give them back (an_walk_open_raw_exact),
 * so that its export is byte for byte the one of its merged trace. *@ev
 * is the merged (union) event table the records' descriptors point into.
 * Any merged trace opens (AN_WALK_ANY_TRACE); damage refuses it. 0, or
 * -errno with @err.
 */
int ex_in_open(struct an_walk **w, const struct vr_events **ev, const char *in,
	       const struct ex_opts *o, char *err, size_t errlen);

/* After an_walk_run() returned @run: 0 when the input ended clean and
 * nothing is wrong with it (nor with a raw input's streams), else
 * negative with @err (an export of a damaged trace is refused, not half
 * written). For a raw input, merge's report goes to o->merge_report. */
int ex_in_check_end(struct an_walk *w, int run, const char *in, const struct ex_opts *o,
		    char *err, size_t errlen);

#endif
