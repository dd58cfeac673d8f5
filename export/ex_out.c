// SPDX-License-Identifier: GPL-2.0
/* Export outputs under a temporary name, renamed when complete: ex_out.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ex_out.h"
#include "noreplace.h"

static mode_t current_umask(void)
{
	mode_t m = umask(0);

	umask(m);
	return m;
}

static int fail(int e, char *err, size_t errlen, const char *what, const char *path)
{
	snprintf(err, errlen, "%s %s: %s", what, path, strerror(e));
	return -e;
}

/* ".BASE.partial-XXXXXX" in the folder of @path. */
static char *tmp_name(const char *path)
{
	char *a = strdup(path), *b = strdup(path), *t = NULL;

	if (a && b) {
		size_t n = strlen(b);

		while (n > 1 && b[n - 1] == '/')	/* "DIR/" names DIR */
			b[--n] = 0;
		const char *d = dirname(a), *base = basename(b);
		size_t len = strlen(d) + strlen(base) + 32;

		t = malloc(len);
		if (t)
			snprintf(t, len, "%s/.%s.partial-XXXXXX", d, base);
	}
	free(a);
	free(b);
	return t;
}

static int start(struct ex_out *o, const char *path, bool force, char *err, size_t errlen)
{
	struct stat st;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->force = force;
	if (!force && !lstat(path, &st))
		return fail(EEXIST, err, errlen, "output", path);
	o->final = strdup(path);
	o->tmp = tmp_name(path);
	if (!o->final || !o->tmp) {
		free(o->final);
		free(o->tmp);
		return fail(ENOMEM, err, errlen, "output", path);
	}
	return 0;
}

int ex_out_file(struct ex_out *o, const char *path, bool force, char *err, size_t errlen)
{
	int e = start(o, path, force, err, errlen);

	if (e)
		return e;
	o->fd = mkstemp(o->tmp);
	if (o->fd < 0) {
		e = fail(errno, err, errlen, "creating a file beside", path);
		free(o->final);
		free(o->tmp);
		return e;
	}
	fchmod(o->fd, 0666 & ~current_umask());	/* as open(O_CREAT) would */
	return 0;
}

int ex_out_dir(struct ex_out *o, const char *path, const char *const *names, bool force,
	       char *err, size_t errlen)
{
	int e = start(o, path, force, err, errlen);

	if (e)
		return e;
	o->dir = true;
	o->names = names;
	if (!mkdtemp(o->tmp) || (o->fd = open(o->tmp, O_RDONLY | O_DIRECTORY)) < 0) {
		e = fail(errno, err, errlen, "creating a folder beside", path);
		rmdir(o->tmp);
		free(o->final);
		free(o->tmp);
		return e;
	}
	fchmod(o->fd, 0777 & ~current_umask());	/* mkdtemp made it 0700 */
	return 0;
}

static bool ours(const struct ex_out *o, const char *name)
{
	for (const char *const *n = o->names; *n; n++)
		if (!strcmp(*n, name))
			return true;
	return false;
}

/* Empty the folder @path if it holds only files an export writes. */
static int clear_old_dir(const struct ex_out *o, const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int e = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && !ours(o, de->d_name))
			e = -ENOTEMPTY;
	if (!e) {
		rewinddir(d);
		while ((de = readdir(d)))
			if (ours(o, de->d_name) && unlinkat(dirfd(d), de->d_name, 0))
				e = -errno;
	}
	closedir(d);
	return e ? e : (rmdir(path) ? -errno : 0);
}

int ex_out_commit(struct ex_out *o, char *err, size_t errlen)
{
	int e = 0;

	if (fsync(o->fd))
		e = fail(errno, err, errlen, "syncing", o->tmp);
	if (close(o->fd) && !e)
		e = fail(errno, err, errlen, "closing", o->tmp);
	o->fd = -1;
	if (!e && o->dir && o->force) {
		int c = clear_old_dir(o, o->final);

		if (c)
			e = fail(-c, err, errlen, "replacing (not an export's folder?)", o->final);
	}
	/* without --force, never replace what appeared meanwhile */
	if (!e) {
		int r = o->force ? (rename(o->tmp, o->final) ? -errno : 0)
				 : ex_rename_noreplace(o->tmp, o->final);

		if (r)
			e = fail(-r, err, errlen, "renaming the output to", o->final);
	}
	if (e) {
		ex_out_abort(o);
		return e;
	}
	free(o->final);
	free(o->tmp);
	o->final = o->tmp = NULL;
	return 0;
}

void ex_out_abort(struct ex_out *o)
{
	if (!o->tmp)
		return;
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->dir) {
		char p[4096];

		for (const char *const *n = o->names; *n; n++) {
			snprintf(p, sizeof(p), "%s/%s", o->tmp, *n);
			unlink(p);
		}
		rmdir(o->tmp);
	} else {
		unlink(o->tmp);
	}
	free(o->final);
	free(o->tmp);
	o->final = o->tmp = NULL;
}
