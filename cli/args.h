/*
 * The ends of a command's option parsing that the commands share: --help,
 * an option getopt refused, and a wrong number of operands.
 */
#ifndef VMSCOPE_CLI_ARGS_H
#define VMSCOPE_CLI_ARGS_H

#include <stdio.h>

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

#endif
