/* What the commands' option parsing shares beyond util_args.h (args.h). */
#include <string.h>

#include "args.h"
#include "commands.h"
#include "util_number.h"

/* args_parse ends a usage error with its own status: the commands' must be it */
_Static_assert(EXIT_USAGE == ARGS_EXIT_USAGE && EXIT_OK == 0, "usage statuses differ");

int args_number(const char *cmd, const char *opt, const char *arg, unsigned long long min,
		unsigned long long max, unsigned long long *v)
{
	if (!util_parse_ull(arg, min, max, v))
		return 0;
	fprintf(stderr, "%s: %s: a number from %llu to %llu, not '%s'\n", cmd, opt, min,
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
	fprintf(stderr, "%s: %s: ", cmd, opt);
	for (int i = 0; i < n; i++)
		fprintf(stderr, "%s%s", names[i], i + 2 < n ? ", " : i + 1 < n ? " or " : "");
	fprintf(stderr, ", not '%s'\n", arg);
	return -1;
}

int args_none_left(const char *cmd, int argc, char **argv)
{
	if (optind == argc)
		return 0;
	fprintf(stderr, "%s: unexpected argument '%s'\n", cmd, argv[optind]);
	return -1;
}

