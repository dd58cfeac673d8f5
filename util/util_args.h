/*
 * Every program's command line (vmscope's commands, vmscope-agent,
 * vmscoped): a program states its options as a table (struct args_opt:
 * each option's name and what it sets in the program's own struct) and
 * args_run parses them with getopt_long. What all programs then share:
 * --help (and -h) prints the usage to stdout with status 0; a refused
 * option prints getopt's complaint and the usage to stderr with status 2;
 * a number out of its range or a name not among an option's choices is
 * refused as "CMD: --OPT: ..." with status 2; operands too many or too
 * few are a usage error too.
 */
#ifndef VMSCOPE_UTIL_ARGS_H
#define VMSCOPE_UTIL_ARGS_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

/* The exit status of a usage error, the same in every vmscope program. */
#define ARGS_EXIT_USAGE 2

/* The largest thread id (FUTEX_TID_MASK): what --pid options take. */
#define ARGS_PID_MAX 0x3fffffffull

/* A program's own usage text, printed to @out. */
typedef void args_usage_fn(FILE *out);

/* What an option sets (struct args_opt's kind). */
enum args_kind {
	ARGS_K_FLAG,	/* no value: the member set to 1 */
	ARGS_K_STR,	/* the value itself (const char *) */
	ARGS_K_NUM,	/* a decimal number from min to max (util_parse_ull) */
	ARGS_K_CNUM,	/* the same with C's prefixes, 0x and 0 (util_parse_ull_c) */
	ARGS_K_CHOICE,	/* one of names[0..n): its index */
	ARGS_K_FN,	/* the program's own parser of the value */
};

/*
 * The program's parser of one option's value (ARGS_K_FN): @args is the
 * program's struct, @arg the value (NULL for an option without one).
 * 0, or the exit status to end with after saying what was wrong.
 */
typedef int args_value_fn(void *args, const char *arg);

/*
 * One option. @name is the long option without "--" (NULL: @key only);
 * @key its one-letter form, 0 for none. @off and @size are the member of
 * the program's struct it sets (an unsigned or non-negative integer of 1,
 * 2, 4 or 8 bytes for FLAG, NUM, CNUM and CHOICE; a const char * for STR).
 * Written with the ARGS_* macros below.
 */
struct args_opt {
	const char *name;
	int key;
	enum args_kind kind;
	size_t off, size;
	unsigned long long min, max;		/* NUM, CNUM */
	const char *const *names;		/* CHOICE */
	int n;
	args_value_fn *fn;			/* FN */
	int has_arg;				/* FN: required_argument or no_argument */
};

#define ARGS_OPT_(nm, k, kd, T, m) \
	.name = (nm), .key = (k), .kind = (kd), .off = offsetof(T, m), \
	.size = sizeof(((T *)0)->m)
#define ARGS_FLAG(nm, k, T, m) { ARGS_OPT_(nm, k, ARGS_K_FLAG, T, m) }
#define ARGS_STR(nm, k, T, m) { ARGS_OPT_(nm, k, ARGS_K_STR, T, m) }
#define ARGS_NUM(nm, k, T, m, lo, hi) \
	{ ARGS_OPT_(nm, k, ARGS_K_NUM, T, m), .min = (lo), .max = (hi) }
#define ARGS_CNUM(nm, k, T, m, lo, hi) \
	{ ARGS_OPT_(nm, k, ARGS_K_CNUM, T, m), .min = (lo), .max = (hi) }
#define ARGS_CHOICE(nm, k, T, m, choices, count) \
	{ ARGS_OPT_(nm, k, ARGS_K_CHOICE, T, m), .names = (choices), .n = (count) }
/* An option with a value parsed by @f (args_value_fn). */
#define ARGS_FN(nm, k, f) \
	{ .name = (nm), .key = (k), .kind = ARGS_K_FN, .fn = (f), .has_arg = required_argument }
/* An option without a value that @f handles (called with NULL). */
#define ARGS_FN_FLAG(nm, k, f) \
	{ .name = (nm), .key = (k), .kind = ARGS_K_FN, .fn = (f), .has_arg = no_argument }
/* The end of an option table. */
#define ARGS_END { .name = NULL, .key = 0 }

/* How many operands follow the options (struct args_spec's operands). */
#define ARGS_OPERANDS_ANY (-1)	/* the program checks them */

/*
 * A program's command line. @cmd is what each refusal begins with: the
 * command as typed ("vmscope report exits"), so a program of its own
 * names itself ("vmscope-agent"). @operands: 0 (one more is refused as
 * "@cmd: unexpected argument 'X'"), N (exactly N, else @usage to stderr),
 * or ARGS_OPERANDS_ANY.
 */
struct args_spec {
	const char *cmd;
	args_usage_fn *usage;
	const struct args_opt *opts;	/* ended by ARGS_END */
	int operands;
};

/*
 * @argv parsed by @spec into @args (the program's struct, defaults set).
 * -1 when the command line is whole (the operands from optind), else the
 * exit status to end with: 0 after --help, ARGS_EXIT_USAGE after a
 * refusal, or what an args_value_fn returned.
 */
int args_run(const struct args_spec *spec, void *args, int argc, char **argv);

/* @usage to stderr; returns ARGS_EXIT_USAGE (for `return args_usage_error(usage);`). */
int args_usage_error(args_usage_fn *usage);

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

/*
 * 0 when getopt_long has taken all of @argv (optind == @argc); else says
 * "@cmd: unexpected argument" and -1 (for a usage error).
 */
int args_none_left(const char *cmd, int argc, char **argv);

#endif
