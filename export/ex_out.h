/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An export's output, file or folder, written under a temporary name
 * (".NAME.partial-XXXXXX" beside it) and renamed into place only when
 * complete and synced (noreplace.h): a killed or failed export never
 * leaves something under the asked name that looks complete. An existing output is refused
 * unless @force; a forced folder is replaced only when it holds nothing
 * but the files an export writes.
 */
#ifndef VMSCOPE_EXPORT_OUT_H
#define VMSCOPE_EXPORT_OUT_H

#include <stdbool.h>
#include <stddef.h>

struct ex_out {
	char *final;		/* the asked path */
	char *tmp;		/* the temporary file or folder */
	bool dir, force;
	int fd;			/* file: its descriptor; folder: the folder's */
	const char *const *names;	/* folder: the files it may hold */
};

/* Start a file output: @o->fd is open for writing. 0 or -errno, @err says. */
int ex_out_file(struct ex_out *o, const char *path, bool force, char *err, size_t errlen);

/* Start a folder output that will hold files named in @names (NULL
 * terminated, static): @o->fd is the folder, for openat(). */
int ex_out_dir(struct ex_out *o, const char *path, const char *const *names, bool force,
	       char *err, size_t errlen);

/* Sync and move into place. Closes @o->fd. 0 or -errno, @err says. */
int ex_out_commit(struct ex_out *o, char *err, size_t errlen);

/* Remove the temporary output (after a failure). */
void ex_out_abort(struct ex_out *o);

#endif
