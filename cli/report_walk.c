/* The walk that both reports run, with their error messages (cmd_report.h). */
#include <stdio.h>
#include <stdlib.h>

#include "cmd_report.h"

int report_walk_setup(const char *cmd, const char *path, unsigned int flags,
		      struct an_walk **w, struct an_hooks *h,
		      int (*setup)(struct an_walk *w, struct an_hooks *h, void *arg), void *arg)
{
	const char *tmp = getenv("TMPDIR");	/* pass 1's spill files, as merge's */
	char err[1400] = "";
	/* a raw trace is merged as `vmscope merge` merges it, its pass 2
	 * read instead of written, so the report is the merged trace's */
	int e = an_trace_is_merged(path) ?
		an_walk_open(w, path, flags, err, sizeof(err)) :
		an_walk_open_raw_exact(w, path, flags, tmp && *tmp ? tmp : NULL, err, sizeof(err));

	if (e) {
		fprintf(stderr, "vmscope report %s: %s\n", cmd, err);
		*w = NULL;
		return -1;
	}
	if (setup && setup(*w, h, arg)) {
		fprintf(stderr, "vmscope report %s: out of memory\n", cmd);
		an_walk_close(*w);
		*w = NULL;
		return -1;
	}
	e = an_walk_run(*w, h, err, sizeof(err));
	if (e < 0) {
		fprintf(stderr, "vmscope report %s: %s: %s\n", cmd, path, err);
		an_walk_close(*w);
		*w = NULL;
		return -1;
	}
	if (e)
		fprintf(stderr, "vmscope report %s: %s: %s\n", cmd, path, err);
	if (an_walk_merge_result(*w)) {
		/* what `vmscope merge` would have printed is not lost: each
		 * VM's clock segments and bounds, its unreliable spans */
		fprintf(stderr, "vmscope report %s: %s: a raw trace, merged as `vmscope merge` "
			"merges it (nothing written):\n", cmd, path);
		an_walk_merge_report(stderr, *w);
	}
	return e;
}
