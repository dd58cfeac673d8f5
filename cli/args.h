/*
 * The ends of a command's option parsing that the commands share: --help,
 * an option getopt refused, a wrong number of operands, and the one
 * parser of numeric options.
 */
#ifndef VMSCOPE_CLI_ARGS_H
#define VMSCOPE_CLI_ARGS_H

#include <getopt.h>
#include <stdio.h>

/* The largest thread id (FUTEX_TID_MASK): what --pid options take. */
#define ARGS_PID_MAX 0x3fffffffull

/*
 * The end of every command's getopt_long table: --help as 'h', the value
 * args_help_or_usage() answers, and the terminating entry.
 */
#define ARGS_HELP_AND_END { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 }

/* A command's own usage text, printed to @out. */
typedef void args_usage_fn(FILE *out);

/* @usage to stderr; returns EXIT_USAGE (for `return args_usage_error(usage);`). */
int args_usage_error(args_usage_fn *usage);

/*
 * The default of a getopt_long switch: @c is what getopt_long returned and
 * the command did not handle. 'h' (--help): @usage to stdout, EXIT_OK;
 * anything else (getopt has already said what was wrong): @usage to
 * stderr, EXIT_USAGE.
 */
int args_help_or_usage(int c, args_usage_fn *usage);

/*
 * 0 when getopt_long has taken all of @argv (optind == @argc); else says
 * "vmscope @cmd: unexpected argument" and -1 (for a usage error).
 */
int args_none_left(const char *cmd, int argc, char **argv);

/*
 * One option of a command: @c as getopt_long returned it, @arg its value,
 * @ctx the command's. 0, an exit status (parsing ends with it), or -1:
 * not one of the command's (--help, or what getopt refused).
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

/*
 * @arg, the value of option @opt of `vmscope @cmd`, as a decimal number
 * from @min to @max (digits only: no sign, blank or base prefix) in *@v.
 * 0, or -1 after saying what was wrong (for a usage error).
 */
int args_number(const char *cmd, const char *opt, const char *arg, unsigned long long min,
		unsigned long long max, unsigned long long *v);

/*
 * @arg, the value of option @opt of `vmscope @cmd`, as one of the @n
 * @names: its index in *@k. 0, or -1 after saying which names it takes
 * ("a, b or c") (for a usage error).
 */
int args_choice(const char *cmd, const char *opt, const char *arg, const char *const *names,
		int n, int *k);

#endif
