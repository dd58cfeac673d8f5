/*
 * `vmscope report exits|sched MERGED`: analyses of a merged trace
 * (analysis/), a text table by default and JSON with --json.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "cmd_report.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope report exits [OPTIONS] MERGED\n"
		"       vmscope report sched [OPTIONS] MERGED\n\n"
		"Analyses of a merged trace (the output of `vmscope merge`), in one pass\n"
		"whose memory does not grow with the trace's length:\n"
		"  exits   VM exit latency per VM, vCPU, exit reason or guest task\n"
		"  sched   guest threads' running/runnable/blocked time against what the\n"
		"          host did to their vCPU threads: stalls and who caused them\n\n"
		"`vmscope report CMD --help` describes each.\n");
}

int cmd_report(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "exits"))
		return report_exits(argc - 1, argv + 1);
	if (!strcmp(argv[1], "sched"))
		return report_sched(argc - 1, argv + 1);
	fprintf(stderr, "vmscope report: unknown report '%s'\n\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}

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
