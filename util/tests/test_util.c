/* util/: number parsing's edges, the byte order, reading files. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../tests/lib/check.h"
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

int main(void)
{
	test_number();
	test_endian();
	test_fs();
	test_write();
	test_clock();
	test_stop_signals();
	return check_result("test_util");
}
