/*
 * The getopt_long loop every program's command line goes through (vmscope's
 * commands, vmscope-agent, vmscoped): --help to stdout with status 0, a
 * refused option to stderr with status 2, each of a program's own options
 * to a callback. What an option's value means, and how a refusal of it is
 * worded, stays with the program.
 */
#ifndef VMSCOPE_UTIL_ARGS_H
#define VMSCOPE_UTIL_ARGS_H

#include <getopt.h>
#include <stdio.h>

/* The exit status of a usage error, the same in every vmscope program. */
#define ARGS_EXIT_USAGE 2

/*
 * The end of every getopt_long table: --help as 'h', the value
 * args_help_or_usage() answers, and the terminating entry.
 */
#define ARGS_HELP_AND_END { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 }

/* A program's own usage text, printed to @out. */
typedef void args_usage_fn(FILE *out);

/* @usage to stderr; returns ARGS_EXIT_USAGE (for `return args_usage_error(usage);`). */
int args_usage_error(args_usage_fn *usage);

/*
 * The default of a getopt_long switch: @c is what getopt_long returned and
 * the program did not handle. 'h' (--help): @usage to stdout, 0; anything
 * else (getopt has already said what was wrong): @usage to stderr,
 * ARGS_EXIT_USAGE.
 */
int args_help_or_usage(int c, args_usage_fn *usage);

/*
 * One option of a program: @c as getopt_long returned it, @arg its value,
 * @ctx the program's. 0, an exit status (parsing ends with it), or -1:
 * not one of the program's (--help, or what getopt refused).
 */
typedef int args_option_fn(int c, const char *arg, void *ctx);

/*
 * getopt_long over @argv with @shortopts and @opts, each option to
 * @option; -1 when all were taken (operands from optind), else the exit
 * status to end with (args_help_or_usage's for --help and refusals).
 */
int args_parse(int argc, char **argv, const char *shortopts, const struct option *opts,
	       args_option_fn *option, void *ctx, args_usage_fn *usage);

/* "--NAME" of the option whose getopt_long value is @val in @opts. */
const char *args_opt_name(const struct option *opts, int val);

#endif
