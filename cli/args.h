/*
 * What vmscope's commands (and the test reader vmscope-capture) share in
 * parsing options beyond the loop of util_args.h: a wrong number of
 * operands and the parsers of numbers and named choices. @cmd is what
 * each refusal begins with: the command as typed ("vmscope report
 * exits"), so a program of its own names itself ("vmscope-capture").
 */
#ifndef VMSCOPE_CLI_ARGS_H
#define VMSCOPE_CLI_ARGS_H

#include "util_args.h"

/* The largest thread id (FUTEX_TID_MASK): what --pid options take. */
#define ARGS_PID_MAX 0x3fffffffull

/*
 * 0 when getopt_long has taken all of @argv (optind == @argc); else says
 * "@cmd: unexpected argument" and -1 (for a usage error).
 */
int args_none_left(const char *cmd, int argc, char **argv);

/*
 * @arg, the value of option @opt of @cmd, as a decimal number
 * from @min to @max (digits only: no sign, blank or base prefix) in *@v.
 * 0, or -1 after saying what was wrong (for a usage error).
 */
int args_number(const char *cmd, const char *opt, const char *arg, unsigned long long min,
		unsigned long long max, unsigned long long *v);

/*
 * @arg, the value of option @opt of @cmd, as one of the @n
 * @names: its index in *@k. 0, or -1 after saying which names it takes
 * ("a, b or c") (for a usage error).
 */
int args_choice(const char *cmd, const char *opt, const char *arg, const char *const *names,
		int n, int *k);

#endif
