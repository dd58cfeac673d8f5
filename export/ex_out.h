/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An output, file or folder, written under a temporary name
 * (".NAME.partial-XXXXXX" beside it, which no command takes for NAME) and
 * renamed into place only when complete and synced, and its folder synced
 * after (noreplace.h): a killed or failed command never leaves something
 * under the asked name that looks complete. SIGINT, SIGTERM and SIGHUP
 * remove the temporary output, then end the process as the signal would
 * have (where the signal was ignored, or the command has a handler of its
 * own, neither changes); after SIGKILL or a crash the temporary name
 * stays. An existing output is refused unless @force; a forced folder is
 * replaced only when it holds nothing but the files named for it.
 */
#ifndef VMSCOPE_EXPORT_OUT_H
#define VMSCOPE_EXPORT_OUT_H

#include <stdbool.h>
#include <stddef.h>

struct ex_out {
	char *final;		/* the asked path */
	char *tmp;		/* the temporary file or folder */
	bool dir, force;
	int fd;			/* file: its descriptor; folder: the folder's
				 * (-1 for ex_out_reserve) */
	const char *const *names;	/* folder: the files it may hold */
};

/* Start a file output: @o->fd is open for writing. 0 or -errno, @err says. */
int ex_out_file(struct ex_out *o, const char *path, bool force, char *err, size_t errlen);

/* Start a folder output that will hold files named in @names (NULL
 * terminated, static): @o->fd is the folder, for openat(). */
int ex_out_dir(struct ex_out *o, const char *path, const char *const *names, bool force,
	       char *err, size_t errlen);

/*
 * Start a folder output whose writer creates the folder itself and refuses
 * an existing one (tf_trace_create): @o->tmp is a fresh name with nothing
 * at it, @o->fd -1. Never forced.
 */
int ex_out_reserve(struct ex_out *o, const char *path, const char *const *names,
		   char *err, size_t errlen);

/*
 * -EINVAL, @err naming both, when the output @out would lie inside (or be)
 * the folder @in that it is made from; 0 otherwise, also when either
 * cannot be resolved (then writing it fails with its own reason).
 */
int ex_out_inside(const char *out, const char *in, char *err, size_t errlen);

/* Sync and move into place. Closes @o->fd. 0 or -errno, @err says. */
int ex_out_commit(struct ex_out *o, char *err, size_t errlen);

/* Remove the temporary output (after a failure). */
void ex_out_abort(struct ex_out *o);

#endif
