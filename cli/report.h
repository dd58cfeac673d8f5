/* `vmscope report`: shared by its subcommands (cmd_report.c). */
#ifndef VMSCOPE_CLI_REPORT_H
#define VMSCOPE_CLI_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "dur.h"
#include "walk.h"

int report_exits(int argc, char **argv);
int report_sched(int argc, char **argv);

/* "comm/tid" of walk task @task, or "(unknown task)" / "(other tasks)". */
const char *report_task(const struct an_walk *w, int32_t task, char *buf, size_t len);

/*
 * Open @path with an_walk_open, call @setup (when not NULL; it may fill
 * @h, and fails with -1) and run the walk with @h; errors are printed as
 * "vmscope report CMD: ...". Returns 0 (clean), 1 (the stream did not end
 * cleanly; the walk's results are usable) or -1 (nothing to report; *w is
 * NULL).
 */
int report_walk_setup(const char *cmd, const char *path, struct an_walk **w,
		      struct an_hooks *h,
		      int (*setup)(struct an_walk *w, struct an_hooks *h, void *arg), void *arg);

/* The most --top and --tasks take. */
#define REPORT_COUNT_MAX 100000

/* Print @j (a json_object *) pretty, and release it. */
void report_print_json(void *j);

/* The sum of the observed time of @vm's vCPUs (or of one, @vcpu >= 0). */
uint64_t report_vcpu_observed(const struct an_walk *w, uint32_t vm, int64_t vcpu);

#endif
