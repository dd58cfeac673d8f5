/* The shared ends of the commands' option parsing (args.h). */
#include "args.h"
#include "commands.h"

int args_usage_error(args_usage_fn *usage)
{
	usage(stderr);
	return EXIT_USAGE;
}

int args_help_or_usage(int c, args_usage_fn *usage)
{
	if (c != 'h')
		return args_usage_error(usage);
	usage(stdout);
	return EXIT_OK;
}
