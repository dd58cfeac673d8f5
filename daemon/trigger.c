// SPDX-License-Identifier: GPL-2.0
/* Triggered windows' rate limit and disk quota: see trigger.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "domxml.h"
#include "trigger.h"

bool tg_rate_admit(struct tg_rate *r, double now_s, double min_gap_s)
{
	if (r->fired && now_s - r->last_s < min_gap_s) {
		r->suppressed++;
		return false;
	}
	r->fired = true;
	r->last_s = now_s;
	return true;
}

/* Walk the tree under folder @fd (taken: closed here): its bytes into
 * *@bytes, and each entry removed when @rm. 0 or -errno. Never follows a
 * symbolic link: one is an entry like a file. */
static int walk(int fd, bool rm, uint64_t *bytes)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int e = 0;

	if (!d) {
		e = -errno;
		close(fd);
		return e;
	}
	while ((de = readdir(d))) {
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
			e = e ? e : -errno;
			continue;
		}
		*bytes += (uint64_t)st.st_blocks * 512u;
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(d), de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			int se = sub < 0 ? -errno : walk(sub, rm, bytes);

			e = e ? e : se;
		}
		if (rm && unlinkat(dirfd(d), de->d_name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0))
			e = e ? e : -errno;
	}
	closedir(d);
	return e;
}

static int tree(const char *path, bool rm, uint64_t *bytes)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	int e;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		e = -errno;
		close(fd);
		return e;
	}
	*bytes += (uint64_t)st.st_blocks * 512u;
	e = walk(fd, rm, bytes);
	if (!e && rm && rmdir(path))
		e = -errno;
	return e;
}

int64_t tg_du(const char *path)
{
	uint64_t b = 0;
	int e = tree(path, false, &b);

	return e ? e : (int64_t)b;
}

int tg_rm_rf(const char *path)
{
	uint64_t b = 0;

	return tree(path, true, &b);
}

struct snap {
	char domain[VD_NAME_MAX];
	char time[64];
	uint64_t bytes;
};

static int by_age(const void *a, const void *b)
{
	const struct snap *x = a, *y = b;
	int c = strcmp(x->time, y->time);

	return c ? c : strcmp(x->domain, y->domain);
}

/* Every ROOT/DOMAIN/TIME into a new *@out (free it): their count, or -errno. */
static int list(const char *root, struct snap **out, uint64_t *total)
{
	DIR *r = opendir(root), *d;
	struct dirent *de, *te;
	struct snap *v = NULL;
	size_t n = 0, cap = 0;
	char path[PATH_MAX + VD_NAME_MAX];
	int e = 0;

	*out = NULL;
	if (!r)
		return errno == ENOENT ? 0 : -errno;
	while (!e && (de = readdir(r))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= VD_NAME_MAX)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", root, de->d_name) >= PATH_MAX)
			continue;
		d = opendir(path);
		if (!d)
			continue;	/* not a folder: not a domain's */
		while (!e && (te = readdir(d))) {
			char sp[PATH_MAX + 80];
			int64_t b;

			if (te->d_name[0] == '.' || strlen(te->d_name) >= sizeof(v->time))
				continue;
			if (snprintf(sp, sizeof(sp), "%s/%s", path, te->d_name) >= PATH_MAX)
				continue;	/* no path can name it */
			b = tg_du(sp);
			if (b == -ENOTDIR)
				continue;
			if (b < 0) {
				e = (int)b;
				break;
			}
			if (n == cap) {
				struct snap *nv = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*v));

				if (!nv) {
					e = -ENOMEM;
					break;
				}
				v = nv;
			}
			snprintf(v[n].domain, sizeof(v[n].domain), "%s", de->d_name);
			snprintf(v[n].time, sizeof(v[n].time), "%s", te->d_name);
			v[n].bytes = (uint64_t)b;
			*total += (uint64_t)b;
			n++;
		}
		closedir(d);
	}
	closedir(r);
	if (e) {
		free(v);
		return e;
	}
	*out = v;
	return (int)n;
}

int tg_quota(const char *root, uint64_t quota, uint64_t *total, tg_removed_fn *cb, void *ctx)
{
	struct snap *v;
	uint64_t sum = 0;
	int n = list(root, &v, &sum), removed = 0, e = 0;

	*total = 0;
	if (n < 0)
		return n;
	if (n > 0)
		qsort(v, (size_t)n, sizeof(*v), by_age);
	for (int i = 0; i < n && sum > quota; i++) {
		char path[PATH_MAX + VD_NAME_MAX + 80];

		snprintf(path, sizeof(path), "%s/%s/%s", root, v[i].domain, v[i].time);
		e = tg_rm_rf(path);
		if (e)
			break;
		sum -= v[i].bytes;
		removed++;
		if (cb)
			cb(ctx, v[i].domain, v[i].time, v[i].bytes);
	}
	free(v);
	*total = sum;
	return e ? e : removed;
}
