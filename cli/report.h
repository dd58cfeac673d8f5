/* `vmscope report`: shared by its subcommands (cmd_report.c). */
#ifndef VMSCOPE_CLI_REPORT_H
#define VMSCOPE_CLI_REPORT_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "dur.h"
#include "out.h"
#include "walk.h"

int report_exits(int argc, char **argv);
int report_sched(int argc, char **argv);

/* "comm/tid" of walk task @task, or "(unknown task)" / "(other tasks)". */
const char *report_task(const struct an_walk *w, int32_t task, char *buf, size_t len);

/*
 * Open @path with an_walk_open (@flags: MR_ACCEPT_DAMAGE or 0), call
 * @setup (when not NULL; it may fill @h, and fails with -1) and run the
 * walk with @h; errors are printed as "vmscope report CMD: ...". Returns
 * 0 (clean, or damaged and accepted: report_damage_line() and
 * report_print_json() say so), 1 (the stream did not end cleanly or the
 * trace is damaged; the walk's results are usable) or -1 (nothing to
 * report; *w is NULL).
 */
int report_walk_setup(const char *cmd, const char *path, unsigned int flags,
		      struct an_walk **w, struct an_hooks *h,
		      int (*setup)(struct an_walk *w, struct an_hooks *h, void *arg), void *arg);

/* The line on `vmscope merge`'s clock-unreliable spans (nothing when the
 * trace has none): how many exits and guest records lie in them. */
void report_clock_line(FILE *f, const struct an_counts *c);
/* The same counts into JSON object @counts (a json_object *). */
void report_clock_json(void *counts, const struct an_counts *c);

/* The most --top and --tasks take. */
#define REPORT_COUNT_MAX 100000

/* Print @j (a json_object *) pretty with its "damaged" field (what is
 * wrong with the trace @w read, or null), and release it. */
void report_print_json(void *j, const struct an_walk *w);

/* The text report's "damaged: ..." line, when the trace is. */
void report_damage_line(const struct an_walk *w);

/* Help shared by the reports: --accept-damage, and the exit status. */
#define REPORT_ACCEPT_DAMAGE_HELP \
	"  --accept-damage       report a damaged merged trace (also one merged from\n" \
	"                        damaged input): the output says it is damaged\n"
#define REPORT_EXIT_HELP \
	"Exit status: 0 (also for a damaged trace with --accept-damage); 1 when\n" \
	"MERGED is not a readable merged trace, or is damaged (its stream did not\n" \
	"end cleanly, its files are not as its summary lists, it was merged from\n" \
	"damaged input; what was read is still reported)"

/* The sum of the observed time of @vm's vCPUs (or of one, @vcpu >= 0). */
uint64_t report_vcpu_observed(const struct an_walk *w, uint32_t vm, int64_t vcpu);

#endif
