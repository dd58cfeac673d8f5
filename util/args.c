/* Every program's command line (util_args.h). */
#include <stdint.h>
#include <string.h>

#include "util_args.h"
#include "util_number.h"

/* The most options one table may hold (a program's, besides --help). */
#define ARGS_MAX_OPTS 32
/* getopt_long's value of a table's option i without a key. */
#define ARGS_VAL_BASE 256

int args_usage_error(args_usage_fn *usage)
{
	usage(stderr);
	return ARGS_EXIT_USAGE;
}

/* --help (@c 'h'): @usage to stdout, 0; anything getopt refused: to stderr. */
static int help_or_usage(int c, args_usage_fn *usage)
{
	if (c != 'h')
		return args_usage_error(usage);
	usage(stdout);
	return 0;
}

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

/* @v into the integer member of @size bytes at @dst; 0, or -1 if it does not fit. */
static int store(void *dst, size_t size, unsigned long long v)
{
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;
	uint64_t u64 = v;
	const void *src = &u64;

	switch (size) {
	case 1: src = &u8; break;
	case 2: src = &u16; break;
	case 4: src = &u32; break;
	case 8: break;
	default: return -1;
	}
	if (size < 8 && v >> (8 * size))
		return -1;
	memcpy(dst, src, size);
	return 0;
}

/* "--NAME" of @o, or "-K" of a key-only option, for refusals. */
static const char *opt_label(const struct args_opt *o, char *buf, size_t len)
{
	if (o->name)
		snprintf(buf, len, "--%s", o->name);
	else
		snprintf(buf, len, "-%c", o->key);
	return buf;
}

/* The value @arg of option @o into @args; 0 or an exit status. */
static int take(const struct args_spec *s, const struct args_opt *o, void *args,
		const char *arg)
{
	char *dst = (char *)args + o->off, label[80];
	unsigned long long v = 1;
	int k, bad = 0;

	opt_label(o, label, sizeof(label));
	switch (o->kind) {
	case ARGS_K_FN:
		return o->fn(args, arg);
	case ARGS_K_STR:
		memcpy(dst, &arg, sizeof(arg));
		return 0;
	case ARGS_K_FLAG:
		break;
	case ARGS_K_NUM:
		bad = args_number(s->cmd, label, arg, o->min, o->max, &v);
		break;
	case ARGS_K_CNUM:
		bad = util_parse_ull_c(arg, o->min, o->max, &v);
		if (bad)
			fprintf(stderr, "%s: %s: a number from %llu to %llu (0x: hexadecimal), "
				"not '%s'\n", s->cmd, label, o->min, o->max, arg);
		break;
	case ARGS_K_CHOICE:
		bad = args_choice(s->cmd, label, arg, o->names, o->n, &k);
		v = (unsigned long long)k;
		break;
	}
	if (bad)
		return ARGS_EXIT_USAGE;
	if (store(dst, o->size, v)) {
		fprintf(stderr, "%s: %s: %llu does not fit its variable (a bug)\n", s->cmd,
			label, v);
		return 1;
	}
	return 0;
}

/*
 * getopt_long's tables from @opts: @lo (ended by --help and the empty
 * entry) and @shortopts (each key, ':' after one that takes a value, and
 * 'h'). 0, or -1 when the table is larger than they hold (a bug).
 */
static int tables(const struct args_opt *opts, struct option *lo, char *shortopts)
{
	size_t nl = 0, ns = 0;

	for (int i = 0; opts[i].name || opts[i].key; i++) {
		const struct args_opt *o = &opts[i];
		int has = o->kind == ARGS_K_FN ? o->has_arg
			: o->kind == ARGS_K_FLAG ? no_argument : required_argument;

		if (i >= ARGS_MAX_OPTS)
			return -1;
		if (o->name)
			lo[nl++] = (struct option){ o->name, has, NULL,
						    o->key ? o->key : ARGS_VAL_BASE + i };
		if (o->key) {
			shortopts[ns++] = (char)o->key;
			if (has == required_argument)
				shortopts[ns++] = ':';
		}
	}
	lo[nl++] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[nl] = (struct option){ NULL, 0, NULL, 0 };
	shortopts[ns++] = 'h';
	shortopts[ns] = '\0';
	return 0;
}

/* The option of @opts that getopt_long returned as @c, or NULL. */
static const struct args_opt *find(const struct args_opt *opts, int c)
{
	for (int i = 0; opts[i].name || opts[i].key; i++)
		if (opts[i].key ? opts[i].key == c : ARGS_VAL_BASE + i == c)
			return &opts[i];
	return NULL;
}

int args_run(const struct args_spec *s, void *args, int argc, char **argv)
{
	struct option lo[ARGS_MAX_OPTS + 2];
	char shortopts[2 * ARGS_MAX_OPTS + 2];
	const struct args_opt *o;
	int c, rc;

	if (tables(s->opts, lo, shortopts)) {
		fprintf(stderr, "%s: more than %d options (a bug)\n", s->cmd, ARGS_MAX_OPTS);
		return 1;
	}
	while ((c = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		o = c == 'h' ? NULL : find(s->opts, c);
		if (!o)
			return help_or_usage(c, s->usage);
		rc = take(s, o, args, optarg);
		if (rc)
			return rc;
	}
	if (s->operands == 0)
		return args_none_left(s->cmd, argc, argv) ? ARGS_EXIT_USAGE : -1;
	if (s->operands > 0 && argc - optind != s->operands)
		return args_usage_error(s->usage);
	return -1;
}
