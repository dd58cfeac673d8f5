/* util/: number parsing's edges, the command line's tables, the byte order, reading files. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../tests/lib/check.h"
#include "util_args.h"
#include "util_clock.h"
#include "util_endian.h"
#include "util_fs.h"
#include "util_number.h"
#include "util_signal.h"

static void test_number(void)
{
	unsigned long long v = 7;

	CHECK(util_parse_ull("0", 0, 10, &v) == 0 && v == 0);
	CHECK(util_parse_ull("10", 0, 10, &v) == 0 && v == 10);
	CHECK(util_parse_ull("18446744073709551615", 0, ~0ull, &v) == 0 && v == ~0ull);
	v = 7;
	CHECK(util_parse_ull("11", 0, 10, &v) == -1 && v == 7);
	CHECK(util_parse_ull("0", 1, 10, &v) == -1);
	CHECK(util_parse_ull("18446744073709551616", 0, ~0ull, &v) == -1);
	CHECK(util_parse_ull("-1", 0, ~0ull, &v) == -1);
	CHECK(util_parse_ull("+1", 0, 10, &v) == -1);
	CHECK(util_parse_ull(" 1", 0, 10, &v) == -1);
	CHECK(util_parse_ull("1 ", 0, 10, &v) == -1);
	CHECK(util_parse_ull("0x1", 0, 10, &v) == -1);
	CHECK(util_parse_ull("", 0, 10, &v) == -1);
	CHECK(v == 7);
	CHECK(util_parse_ull_c("0x10", 0, 100, &v) == 0 && v == 16);
	CHECK(util_parse_ull_c("010", 0, 100, &v) == 0 && v == 8);
	CHECK(util_parse_ull_c("0x", 0, 100, &v) == -1);
	CHECK(util_parse_ull_c("-0x1", 0, ~0ull, &v) == -1);
}

static void test_endian(void)
{
	uint8_t b[8];

	le_put16(b, 0x1234);
	CHECK(b[0] == 0x34 && b[1] == 0x12 && le_get16(b) == 0x1234);
	le_put32(b, 0x89abcdefu);
	CHECK(b[0] == 0xef && b[3] == 0x89 && le_get32(b) == 0x89abcdefu);
	le_put64(b, 0x0123456789abcdefull);
	CHECK(b[0] == 0xef && b[7] == 0x01 && le_get64(b) == 0x0123456789abcdefull);
}

static void test_fs(void)
{
	char path[] = "/var/tmp/test_util.XXXXXX", small[4];
	int fd = mkstemp(path);
	uint8_t *all;
	size_t len = 0;

	CHECK(fd >= 0);
	CHECK(write(fd, "hello", 5) == 5);
	close(fd);
	CHECK(util_read_small(path, small, sizeof(small)) == 3 && !strcmp(small, "hel"));
	all = util_read_all(AT_FDCWD, path, &len);
	CHECK(all && len == 5 && !memcmp(all, "hello", 6));
	free(all);
	unlink(path);
	CHECK(util_read_small(path, small, sizeof(small)) == -ENOENT);
	CHECK(!util_read_all(AT_FDCWD, path, &len) && errno == ENOENT);
}

static void test_write(void)
{
	char dir[] = "/var/tmp/test_util_dir.XXXXXX", path[128], back[16];
	struct stat st;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/a/b", dir);
	CHECK(util_mkdir_p(path, 0700) == 0);
	CHECK(util_mkdir_p(path, 0700) == 0);	/* exists: fine */
	CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
	snprintf(path, sizeof(path), "%s/a/f", dir);
	CHECK(util_write_file(path, "one") == 0);
	CHECK(util_write_file(path, "two!") == 0);
	CHECK(util_read_small(path, back, sizeof(back)) == 4 && !strcmp(back, "two!"));
	snprintf(path, sizeof(path), "%s/a/f.tmp", dir);
	CHECK(access(path, F_OK) == -1);	/* the temporary is renamed */
	snprintf(path, sizeof(path), "%s/none/f", dir);
	CHECK(util_write_file(path, "x") == -ENOENT);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	CHECK(system(path) == 0);
}

static void test_stop_signals(void)
{
	util_stop_on_signals();
	CHECK(!util_stop_requested);
	raise(SIGTERM);
	CHECK(util_stop_requested);
}

static void test_clock(void)
{
	double a = util_mono_s(), b = util_mono_s();
	uint64_t n = util_mono_ns();

	CHECK(a > 0 && b >= a);
	/* one clock in two units: the nanoseconds read after @b are not before it */
	CHECK((double)n / 1e9 >= b - 1e-6 && (double)n / 1e9 < b + 10);
	CHECK(util_realtime_ns() > 1600000000ull * 1000000000ull);
}

/* An option table of every kind, for args_run. */
struct t_args {
	bool flag;
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;
	uint64_t c64;
	int choice, verbose, fn_calls;
	const char *str;
};

static int t_fn(void *args, const char *arg)
{
	struct t_args *a = args;

	a->fn_calls++;
	return strcmp(arg, "bad") ? 0 : 7;	/* the program's own status */
}

static void t_usage(FILE *out)
{
	fprintf(out, "usage: t\n");
}

static const char *const t_names[] = { "one", "two", "three" };
static const struct args_opt t_opts[] = {
	ARGS_FLAG("flag", 'f', struct t_args, flag),
	ARGS_NUM("u8", 0, struct t_args, u8, 1, 255),
	ARGS_NUM("u16", 0, struct t_args, u16, 0, 65535),
	ARGS_NUM("u32", 0, struct t_args, u32, 0, UINT32_MAX),
	ARGS_CNUM("c64", 0, struct t_args, c64, 0, UINT64_MAX),
	ARGS_CHOICE("choice", 0, struct t_args, choice, t_names, 3),
	ARGS_STR("str", 's', struct t_args, str),
	ARGS_FN("fn", 0, t_fn),
	ARGS_FLAG(NULL, 'v', struct t_args, verbose),
	ARGS_END,
};

/* args_run over the words of @line (at most 15) with @operands; its status. */
static int t_run(const char *line, int operands, struct t_args *a)
{
	const struct args_spec spec = { "t", t_usage, t_opts, operands };
	char buf[256], *argv[16] = { "t" };
	int argc = 1, rc;
	FILE *saved = stderr;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *w = strtok(buf, " "); w && argc < 15; w = strtok(NULL, " "))
		argv[argc++] = w;
	memset(a, 0, sizeof(*a));
	a->choice = -1;
	optind = 0;	/* getopt_long starts over */
	stderr = fopen("/dev/null", "w");	/* the refusals are expected */
	rc = args_run(&spec, a, argc, argv);
	fclose(stderr);
	stderr = saved;
	return rc;
}

static void test_args(void)
{
	struct t_args a;

	CHECK(t_run("--flag --u8 255 --u16 65535 --u32 4294967295 --c64 0xffffffffffffffff", 0,
		    &a) == -1);
	CHECK(a.flag && a.u8 == 255 && a.u16 == 65535 && a.u32 == UINT32_MAX &&
	      a.c64 == UINT64_MAX && a.choice == -1 && !a.str);
	CHECK(t_run("-f -s x -v --choice three --str=y", 0, &a) == -1);
	CHECK(a.flag && a.verbose == 1 && a.choice == 2 && !strcmp(a.str, "y"));
	CHECK(t_run("--u8 0", 0, &a) == ARGS_EXIT_USAGE && a.u8 == 0);	/* below its min */
	CHECK(t_run("--u8 256", 0, &a) == ARGS_EXIT_USAGE);
	CHECK(t_run("--u32 -1", 0, &a) == ARGS_EXIT_USAGE);
	CHECK(t_run("--c64 0x10000000000000000", 0, &a) == ARGS_EXIT_USAGE);
	CHECK(t_run("--choice four", 0, &a) == ARGS_EXIT_USAGE && a.choice == -1);
	CHECK(t_run("--fn ok --fn bad --flag", 0, &a) == 7 && a.fn_calls == 2 && !a.flag);
	CHECK(t_run("--nope", 0, &a) == ARGS_EXIT_USAGE);
	CHECK(t_run("--flag=1", 0, &a) == ARGS_EXIT_USAGE);
	CHECK(t_run("--str", 0, &a) == ARGS_EXIT_USAGE);	/* its value missing */
	CHECK(t_run("--help --nope", 0, &a) == 0);		/* help ends it at once */
	CHECK(t_run("-h", 0, &a) == 0);
	/* operands: none, exactly N, or the program's */
	CHECK(t_run("x", 0, &a) == ARGS_EXIT_USAGE);
	CHECK(t_run("x --flag", 1, &a) == -1 && a.flag);	/* options after operands */
	CHECK(t_run("--flag", 1, &a) == ARGS_EXIT_USAGE);
	CHECK(t_run("x y", 1, &a) == ARGS_EXIT_USAGE);
	CHECK(t_run("x y z", ARGS_OPERANDS_ANY, &a) == -1);
}

int main(void)
{
	test_number();
	test_endian();
	test_fs();
	test_write();
	test_clock();
	test_stop_signals();
	test_args();
	return check_result("test_util");
}
