/* `vmscope report`: shared by its subcommands (cmd_report*.c). */
#ifndef VMSCOPE_CLI_CMD_REPORT_H
#define VMSCOPE_CLI_CMD_REPORT_H

#include "out.h"
#include "report.h"

int report_exits(int argc, char **argv);
int report_sched(int argc, char **argv);

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

/* The most --top and --tasks take. */
#define REPORT_COUNT_MAX 100000

/* Help shared by the reports: --accept-damage, and the exit status. */
#define REPORT_ACCEPT_DAMAGE_HELP \
	"  --accept-damage       report a damaged merged trace (also one merged from\n" \
	"                        damaged input): the output says it is damaged\n"
#define REPORT_EXIT_HELP \
	"Exit status: 0 (also for a damaged trace with --accept-damage); 1 when\n" \
	"MERGED is not a readable merged trace, or is damaged (its stream did not\n" \
	"end cleanly, its files are not as its summary lists, it was merged from\n" \
	"damaged input; what was read is still reported)"

#endif
