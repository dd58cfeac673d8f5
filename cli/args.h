/*
 * The commands' command lines: util_args.h (each command's options as a
 * table, parsed by args_run), with the commands' exit statuses bound to
 * its usage status.
 */
#ifndef VMSCOPE_CLI_ARGS_H
#define VMSCOPE_CLI_ARGS_H

#include "commands.h"
#include "util_args.h"

/* args_run ends a usage error with its own status: the commands' must be it */
_Static_assert(EXIT_USAGE == ARGS_EXIT_USAGE && EXIT_OK == 0, "usage statuses differ");

#endif
