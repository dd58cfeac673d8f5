/* `vmscope report`: shared by its subcommands (cmd_report*.c). */
#ifndef VMSCOPE_CLI_CMD_REPORT_H
#define VMSCOPE_CLI_CMD_REPORT_H

#include "out.h"
#include "report.h"

int report_exits(int argc, char **argv);
int report_sched(int argc, char **argv);
int report_wake(int argc, char **argv);

/*
 * Open @path with an_walk_open, or an_walk_open_raw_exact when it is a raw
 * trace (its merge's clock report to stderr after the walk) (@flags: MR_ACCEPT_DAMAGE or 0), call
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

/* Help shared by the reports: what TRACE is, --accept-damage, and the
 * exit status. */
#define REPORT_TRACE_HELP \
	"TRACE is a raw recording (`vmscope record`'s) or a merged trace (`vmscope\n" \
	"merge`'s). A raw recording is merged exactly as `vmscope merge` merges it\n" \
	"(its two passes; temporary files in $TMPDIR, default /tmp, unlinked at once)\n" \
	"and its second pass read instead of written: the report is the one of its\n" \
	"merged trace, and nothing is written. What merge prints of the clocks\n" \
	"(each VM's segments and their bounds, its clock-unreliable spans) goes to\n" \
	"stderr.\n\n"
#define REPORT_ACCEPT_DAMAGE_HELP \
	"  --accept-damage       report a damaged trace (a raw one, or a merged one,\n" \
	"                        also one merged from damaged input): the output says\n" \
	"                        it is damaged\n"
#define REPORT_EXIT_HELP \
	"Exit status: 0 (also for a damaged trace with --accept-damage); 1 when\n" \
	"TRACE is not a readable trace, or is damaged (a raw one: as `vmscope merge`\n" \
	"names its damage; a merged one: its stream did not end cleanly, its files\n" \
	"are not as its summary lists, it was merged from damaged input; what was\n" \
	"read is still reported)"

#endif
