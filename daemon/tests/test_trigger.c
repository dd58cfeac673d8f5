// SPDX-License-Identifier: GPL-2.0
/*
 * Triggered windows' rules (daemon-trigger): the per-domain rate limit
 * (admitted, refused and counted within the interval, admitted again at
 * its end), and the snapshots' disk quota on a real folder tree: the
 * oldest removed first across domains, ties by domain, a snapshot being
 * written (.TIME) and stray files neither counted nor removed, a symbolic
 * link removed without its target, the bytes left equal to what stat(2)
 * says of what is left.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../tests/lib/check.h"
#include "trigger.h"

static char root[512];

static void test_rate(void)
{
	struct tg_rate r = { 0 };

	CHECK(tg_rate_admit(&r, 100.0, 60.0));
	CHECK(!tg_rate_admit(&r, 100.0, 60.0));
	CHECK(!tg_rate_admit(&r, 159.9, 60.0));
	CHECK_EQ(r.suppressed, 2);
	/* a refused trigger does not move the interval */
	CHECK(tg_rate_admit(&r, 160.0, 60.0));
	CHECK(!tg_rate_admit(&r, 219.0, 60.0));
	CHECK(tg_rate_admit(&r, 1000.0, 60.0));
	CHECK_EQ(r.suppressed, 3);
	/* a gap of 0: every trigger */
	CHECK(tg_rate_admit(&r, 1000.0, 0.0));
	CHECK_EQ(r.suppressed, 3);
}

/* The bytes stat(2) says @path takes (st_blocks), added to *@sum. */
static void add_blocks(const char *path, uint64_t *sum)
{
	struct stat st;

	if (lstat(path, &st)) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		CHECK(0);
		return;
	}
	*sum += (uint64_t)st.st_blocks * 512u;
}

static void mkdir_at(const char *rel)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	CHECK(!mkdir(p, 0700) || errno == EEXIST);
}

/* ROOT/@rel holding @kib KiB of data; its bytes (with its folder's). */
static uint64_t snapshot(const char *rel, unsigned int kib)
{
	char p[1024], f[PATH_MAX];
	static char buf[1024];
	uint64_t sum = 0;
	int fd;

	memset(buf, 'x', sizeof(buf));
	mkdir_at(rel);
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	snprintf(f, sizeof(f), "%s/merged", p);
	CHECK(!mkdir(f, 0700));
	snprintf(f, sizeof(f), "%s/merged/merged.vtf", p);
	fd = open(f, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	for (unsigned int i = 0; i < kib; i++)
		CHECK(write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf));
	CHECK(!fsync(fd));
	close(fd);
	add_blocks(p, &sum);
	snprintf(f, sizeof(f), "%s/merged", p);
	add_blocks(f, &sum);
	snprintf(f, sizeof(f), "%s/merged/merged.vtf", p);
	add_blocks(f, &sum);
	return sum;
}

static int exists(const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	return !lstat(p, &st);
}

struct seen {
	char what[8][160];
	uint64_t bytes[8];
	int n;
};

static void removed(void *ctx, const char *domain, const char *time, uint64_t bytes)
{
	struct seen *s = ctx;

	if (s->n < 8) {
		snprintf(s->what[s->n], sizeof(s->what[0]), "%s/%s", domain, time);
		s->bytes[s->n] = bytes;
	}
	s->n++;
}

static void test_quota(void)
{
	uint64_t a1, b2, a3, b3, total, tmp_bytes;
	struct seen s = { 0 };
	char p[PATH_MAX], q[PATH_MAX];
	int fd;

	/* no folder yet: nothing to remove */
	snprintf(p, sizeof(p), "%s/none", root);
	CHECK_EQ(tg_quota(p, 0, &total, removed, &s), 0);
	CHECK_EQ(total, 0);

	mkdir_at("a");
	mkdir_at("b");
	a1 = snapshot("a/20261206T200001.000Z", 100);
	b2 = snapshot("b/20261206T200002.000Z", 60);
	a3 = snapshot("a/20261206T200003.000Z", 80);
	b3 = snapshot("b/20261206T200003.000Z", 40);
	/* being written: not counted, never removed */
	tmp_bytes = snapshot("a/.20261206T200004.000Z", 500);
	CHECK(tmp_bytes > 500u * 1024u);
	/* a stray file in a domain's folder and at the root: not snapshots */
	snprintf(p, sizeof(p), "%s/a/notes", root);
	fd = open(p, O_WRONLY | O_CREAT, 0600);
	CHECK(fd >= 0 && write(fd, "n", 1) == 1);
	close(fd);
	snprintf(p, sizeof(p), "%s/stray", root);
	fd = open(p, O_WRONLY | O_CREAT, 0600);
	CHECK(fd >= 0);
	close(fd);
	/* a link out of a snapshot: removed, its target kept */
	snprintf(p, sizeof(p), "%s/a/20261206T200001.000Z/link", root);
	snprintf(q, sizeof(q), "%s/stray", root);
	CHECK(!symlink(q, p));
	add_blocks(p, &a1);

	/* under the quota: nothing */
	CHECK_EQ(tg_quota(root, a1 + b2 + a3 + b3, &total, removed, &s), 0);
	CHECK_EQ(total, a1 + b2 + a3 + b3);
	CHECK_EQ(s.n, 0);

	/* one byte over: the oldest, whichever domain */
	CHECK_EQ(tg_quota(root, a1 + b2 + a3 + b3 - 1, &total, removed, &s), 1);
	CHECK_EQ(s.n, 1);
	CHECK(!strcmp(s.what[0], "a/20261206T200001.000Z"));
	CHECK_EQ(s.bytes[0], a1);
	CHECK_EQ(total, b2 + a3 + b3);
	CHECK(!exists("a/20261206T200001.000Z"));
	CHECK(exists("stray"));

	/* room for one of 40 KiB: b's older, then a's of the same second
	 * (by domain), leaving b's newest */
	CHECK_EQ(tg_quota(root, b3, &total, removed, &s), 2);
	CHECK_EQ(s.n, 3);
	CHECK(!strcmp(s.what[1], "b/20261206T200002.000Z"));
	CHECK(!strcmp(s.what[2], "a/20261206T200003.000Z"));
	CHECK_EQ(total, b3);
	CHECK(exists("b/20261206T200003.000Z"));

	/* quota 0: every snapshot, not the one being written nor strays */
	CHECK_EQ(tg_quota(root, 0, &total, removed, &s), 1);
	CHECK_EQ(total, 0);
	CHECK(exists("a/.20261206T200004.000Z"));
	CHECK(exists("a/notes"));
	CHECK(exists("a") && exists("b"));
	snprintf(p, sizeof(p), "%s/a/.20261206T200004.000Z", root);
	CHECK_EQ(tg_du(p), (int64_t)tmp_bytes);
	CHECK_EQ(tg_rm_rf(p), 0);
	CHECK(!exists("a/.20261206T200004.000Z"));
	CHECK_EQ(tg_du(p), -ENOENT);
}

int main(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(root, sizeof(root), "%s/test_trigger.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	test_rate();
	test_quota();
	CHECK_EQ(tg_rm_rf(root), 0);
	return check_result("daemon-trigger");
}
