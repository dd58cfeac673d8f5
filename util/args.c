/* The getopt_long loop of every program (util_args.h). */
#include "util_args.h"

const char *args_opt_name(const struct option *opts, int val)
{
	static char buf[64];

	for (; opts->name; opts++)
		if (opts->val == val && !opts->flag) {
			snprintf(buf, sizeof(buf), "--%s", opts->name);
			return buf;
		}
	return "an option";
}

int args_usage_error(args_usage_fn *usage)
{
	usage(stderr);
	return ARGS_EXIT_USAGE;
}

int args_help_or_usage(int c, args_usage_fn *usage)
{
	if (c != 'h')
		return args_usage_error(usage);
	usage(stdout);
	return 0;
}

int args_parse(int argc, char **argv, const char *shortopts, const struct option *opts,
	       args_option_fn *option, void *ctx, args_usage_fn *usage)
{
	int c, rc;

	while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
		rc = option(c, optarg, ctx);
		if (rc < 0)
			return args_help_or_usage(c, usage);
		if (rc)
			return rc;
	}
	return -1;
}
