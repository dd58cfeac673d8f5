// SPDX-License-Identifier: GPL-2.0
/*
 * ex_rename_noreplace (noreplace.h) on a file system that has
 * RENAME_NOREPLACE and, through a seam, on one that says EINVAL as 9p
 * does: this test is linked with -Wl,--wrap=renameat2, so the helper's
 * renameat2() comes to __wrap_renameat2() below, which fails with the
 * errno the test sets, or passes the call on.
 *
 * Each way: a file and a folder (with a file inside) move into place; an
 * existing file or folder at the destination (an empty folder too, which
 * a plain rename() would replace) is refused with EEXIST, the source and
 * the destination both left as they were; a missing source is ENOENT.
 * Any errno other than EINVAL is returned as is, without a fallback.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../tracefmt/tests/util.h"
#include "noreplace.h"

static int forced_errno;	/* 0: the real renameat2 */
static int calls;

int __real_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
		     unsigned int flags);
int __wrap_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
		     unsigned int flags);

int __wrap_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
		     unsigned int flags)
{
	calls++;
	if (forced_errno) {
		errno = forced_errno;
		return -1;
	}
	return __real_renameat2(olddirfd, oldpath, newdirfd, newpath, flags);
}

static char dir[256];

static const char *at(const char *name)
{
	static char p[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", dir, name);
	return p[i];
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* The file's text ("" when it cannot be read). */
static const char *text(const char *path)
{
	static char buf[64];
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = 0;
	return buf;
}

static bool exists(const char *path)
{
	struct stat st;

	return !lstat(path, &st);
}

static void clean(void)
{
	static const char *const names[] = { "src/inner", "dst/inner", "src", "dst", "dst2" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		unlink(at(names[i]));
		rmdir(at(names[i]));
	}
}

/* Every case once with renameat2 failing as @forced says (0: real). */
static void cases(int forced)
{
	const char *how = forced ? "forced EINVAL" : "real renameat2";

	fprintf(stderr, "-- %s\n", how);
	forced_errno = forced;

	/* a file moves */
	clean();
	put(at("src"), "new");
	calls = 0;
	CHECK_EQ(ex_rename_noreplace(at("src"), at("dst")), 0);
	CHECK_EQ(calls, 1);
	CHECK(!exists(at("src")));
	CHECK(!strcmp(text(at("dst")), "new"));

	/* an existing file is kept, the source too */
	clean();
	put(at("src"), "new");
	put(at("dst"), "old");
	CHECK_EQ(ex_rename_noreplace(at("src"), at("dst")), -EEXIST);
	CHECK(!strcmp(text(at("src")), "new"));
	CHECK(!strcmp(text(at("dst")), "old"));

	/* a file does not replace an existing (empty) folder */
	clean();
	put(at("src"), "new");
	CHECK_EQ(mkdir(at("dst"), 0700), 0);
	CHECK_EQ(ex_rename_noreplace(at("src"), at("dst")), -EEXIST);
	CHECK(!strcmp(text(at("src")), "new"));

	/* a folder moves with what it holds */
	clean();
	CHECK_EQ(mkdir(at("src"), 0755), 0);
	put(at("src/inner"), "in");
	CHECK_EQ(ex_rename_noreplace(at("src"), at("dst")), 0);
	CHECK(!exists(at("src")));
	CHECK(!strcmp(text(at("dst/inner")), "in"));

	/* an existing empty folder is kept: rename() alone would replace it */
	clean();
	CHECK_EQ(mkdir(at("src"), 0755), 0);
	put(at("src/inner"), "in");
	CHECK_EQ(mkdir(at("dst"), 0700), 0);
	CHECK_EQ(ex_rename_noreplace(at("src"), at("dst")), -EEXIST);
	CHECK(!strcmp(text(at("src/inner")), "in"));
	CHECK(!exists(at("dst/inner")));

	/* a folder does not replace an existing file */
	clean();
	CHECK_EQ(mkdir(at("src"), 0755), 0);
	put(at("dst"), "old");
	CHECK_EQ(ex_rename_noreplace(at("src"), at("dst")), -EEXIST);
	CHECK(exists(at("src")));
	CHECK(!strcmp(text(at("dst")), "old"));

	/* a missing source */
	clean();
	CHECK_EQ(ex_rename_noreplace(at("src"), at("dst")), -ENOENT);
	CHECK(!exists(at("dst")));
}

int main(void)
{
	int fd = tf_test_mkdir(dir, sizeof(dir));

	if (fd >= 0)
		close(fd);
	cases(0);
	cases(EINVAL);

	/* any other failure is not a reason to fall back */
	clean();
	put(at("src"), "new");
	forced_errno = EXDEV;
	CHECK_EQ(ex_rename_noreplace(at("src"), at("dst")), -EXDEV);
	CHECK(!exists(at("dst")));
	CHECK(!strcmp(text(at("src")), "new"));
	forced_errno = EPERM;
	CHECK_EQ(ex_rename_noreplace(at("src"), at("dst2")), -EPERM);
	CHECK(!exists(at("dst2")));

	clean();
	tf_test_rmdir(dir);
	return check_result("noreplace");
}
