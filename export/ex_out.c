// SPDX-License-Identifier: GPL-2.0
/* Export outputs under a temporary name, renamed when complete: ex_out.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ex_out.h"
#include "noreplace.h"
#include "trace.h"

/*
 * The outputs being written, for the signal handler: a command writes one
 * or two at a time (report's SVG, merge's folder).
 */
#define EX_OUT_MAX 4
static struct ex_out *volatile active[EX_OUT_MAX];
static const int cleanup_signals[] = { SIGINT, SIGTERM, SIGHUP };

/* Remove @o's temporary output; async-signal-safe (the handler calls it). */
static void remove_tmp(const struct ex_out *o)
{
	if (!o->dir) {
		unlink(o->tmp);
		return;
	}
	int fd = open(o->tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		for (const char *const *n = o->names; *n; n++)
			unlinkat(fd, *n, 0);
		close(fd);
	}
	rmdir(o->tmp);
}

static void on_signal(int sig)
{
	int saved = errno;

	for (int i = 0; i < EX_OUT_MAX; i++)
		if (active[i])
			remove_tmp(active[i]);
	errno = saved;
	/* the handler was reset (SA_RESETHAND): once this returns, the signal
	 * ends the process as it would have without us */
	raise(sig);
}

static void block_signals(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(cleanup_signals) / sizeof(cleanup_signals[0]); i++)
		sigaddset(&set, cleanup_signals[i]);
	sigprocmask(SIG_BLOCK, &set, old);
}

/*
 * Only where the disposition is the default: a signal ignored by whoever
 * started us (a background job of a script ignores SIGINT, nohup SIGHUP)
 * stays ignored, and a command with its own handler (capture stops on
 * SIGINT and finishes its output) keeps it.
 */
static void install_handlers(void)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESETHAND }, old;

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(cleanup_signals) / sizeof(cleanup_signals[0]); i++) {
		sigaddset(&sa.sa_mask, cleanup_signals[i]);
		if (!sigaction(cleanup_signals[i], NULL, &old) && old.sa_handler == SIG_DFL &&
		    !(old.sa_flags & SA_SIGINFO))
			sigaction(cleanup_signals[i], &sa, NULL);
	}
}

/* Called with the signals blocked. */
static void track(struct ex_out *o, bool on)
{
	for (int i = 0; i < EX_OUT_MAX; i++) {
		if (on && !active[i]) {
			active[i] = o;
			install_handlers();
			return;
		}
		if (!on && active[i] == o) {
			active[i] = NULL;
			return;
		}
	}
}

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

/* Done with @o's names (the output is in place or removed). */
static void forget(struct ex_out *o)
{
	free(o->final);
	free(o->tmp);
	o->final = o->tmp = NULL;
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
		forget(o);
		return fail(ENOMEM, err, errlen, "output", path);
	}
	return 0;
}

int ex_out_file(struct ex_out *o, const char *path, bool force, char *err, size_t errlen)
{
	int e = start(o, path, force, err, errlen);

	if (e)
		return e;
	sigset_t old;

	block_signals(&old);
	o->fd = mkstemp(o->tmp);
	if (o->fd >= 0)
		track(o, true);
	else
		e = fail(errno, err, errlen, "creating a file beside", path);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (e) {
		forget(o);
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
	sigset_t old;

	o->dir = true;
	o->names = names;
	block_signals(&old);
	if (!mkdtemp(o->tmp) || (o->fd = open(o->tmp, O_RDONLY | O_DIRECTORY)) < 0) {
		e = fail(errno, err, errlen, "creating a folder beside", path);
		rmdir(o->tmp);
	} else {
		track(o, true);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (e) {
		forget(o);
		return e;
	}
	fchmod(o->fd, 0777 & ~current_umask());	/* mkdtemp made it 0700 */
	return 0;
}

int ex_out_reserve(struct ex_out *o, const char *path, const char *const *names,
		   char *err, size_t errlen)
{
	int e = start(o, path, false, err, errlen);
	sigset_t old;

	if (e)
		return e;
	o->dir = true;
	o->names = names;
	block_signals(&old);
	/* a fresh name: the writer's own mkdir refuses it if anything takes
	 * it meanwhile */
	if (!mkdtemp(o->tmp) || rmdir(o->tmp))
		e = fail(errno, err, errlen, "choosing a temporary folder beside", path);
	else
		track(o, true);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (e) {
		forget(o);
	}
	return e;
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
	sigset_t old;
	int e = 0;

	if (o->fd < 0 && (o->fd = open(o->tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return fail(errno, err, errlen, "opening", o->tmp);
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
	/* without --force, never replace what appeared meanwhile; a signal
	 * now finds either the temporary output or the complete one */
	block_signals(&old);
	if (!e) {
		int r = o->force ? (rename(o->tmp, o->final) ? -errno : 0)
				 : ex_rename_noreplace(o->tmp, o->final);

		if (r)
			e = fail(-r, err, errlen, "renaming the output to", o->final);
		else
			track(o, false);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (e) {
		ex_out_abort(o);
		return e;
	}
	/* the new name is durable once its folder is */
	e = tf_trace_sync_parent(o->final);
	if (e)
		e = fail(-e, err, errlen, "syncing the folder of", o->final);
	forget(o);
	return e;
}

void ex_out_abort(struct ex_out *o)
{
	sigset_t old;

	if (!o->tmp)
		return;
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	block_signals(&old);
	remove_tmp(o);
	track(o, false);
	sigprocmask(SIG_SETMASK, &old, NULL);
	forget(o);
}

int ex_out_inside(const char *out, const char *in, char *err, size_t errlen)
{
	char *d = strdup(out), *b = strdup(out), rin[PATH_MAX], rdir[PATH_MAX];
	int e = 0;

	if (!d || !b) {
		e = fail(ENOMEM, err, errlen, "output", out);
	} else if (realpath(in, rin) && realpath(dirname(d), rdir)) {
		size_t n = strlen(b), k = strlen(rin);
		char p[2 * PATH_MAX];

		while (n > 1 && b[n - 1] == '/')	/* "DIR/" names DIR */
			b[--n] = 0;
		const char *base = basename(b);

		/* where the output would be: its folder's real path and its name */
		snprintf(p, sizeof(p), "%s/%s", rdir, base);
		if (!strcmp(base, "."))
			snprintf(p, sizeof(p), "%s", rdir);
		if (!strcmp(p, rin) || k == 1 || (!strncmp(p, rin, k) && p[k] == '/')) {
			snprintf(err, errlen, "the output %s would be inside the input %s (%s)",
				 out, in, rin);
			e = -EINVAL;
		}
	}
	free(d);
	free(b);
	return e;
}
