/* The walk that both reports run, with their error messages (cmd_report.h). */
#include <stdio.h>

#include "cmd_report.h"

int report_walk_setup(const char *cmd, const char *path, unsigned int flags,
		      struct an_walk **w, struct an_hooks *h,
		      int (*setup)(struct an_walk *w, struct an_hooks *h, void *arg), void *arg)
{
	char err[1400] = "";
	int e = an_walk_open(w, path, flags, err, sizeof(err));

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
	return e;
}
