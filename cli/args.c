/* The shared ends of the commands' option parsing (args.h). */
#include <string.h>

#include "args.h"
#include "commands.h"
#include "util_number.h"

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

int args_number(const char *cmd, const char *opt, const char *arg, unsigned long long min,
		unsigned long long max, unsigned long long *v)
{
	if (!util_parse_ull(arg, min, max, v))
		return 0;
	fprintf(stderr, "vmscope %s: %s: a number from %llu to %llu, not '%s'\n", cmd, opt, min,
		max, arg);
	return -1;
}

int args_choice(const char *cmd, const char *opt, const char *arg, const char *const *names,
		int n, int *k)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(arg, names[i])) {
			*k = i;
			return 0;
		}
	fprintf(stderr, "vmscope %s: %s: ", cmd, opt);
	for (int i = 0; i < n; i++)
		fprintf(stderr, "%s%s", names[i], i + 2 < n ? ", " : i + 1 < n ? " or " : "");
	fprintf(stderr, ", not '%s'\n", arg);
	return -1;
}

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

int args_none_left(const char *cmd, int argc, char **argv)
{
	if (optind == argc)
		return 0;
	fprintf(stderr, "vmscope %s: unexpected argument '%s'\n", cmd, argv[optind]);
	return -1;
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
