// SPDX-License-Identifier: GPL-2.0
/* Rename without replacing, with a fallback where the kernel's flag is
 * missing: noreplace.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "noreplace.h"

static int link_file(const char *from, const char *to)
{
	if (link(from, to))
		return -errno;
	if (unlink(from)) {
		int e = -errno;

		/* both names hold it now: take back the asked one, so that a
		 * failure leaves nothing under it */
		unlink(to);
		return e;
	}
	return 0;
}

static int claim_folder(const char *from, const char *to)
{
	if (mkdir(to, 0700))
		return -errno;
	if (rename(from, to)) {
		int e = -errno;

		rmdir(to);
		return e;
	}
	return 0;
}

int ex_rename_noreplace(const char *from, const char *to)
{
	struct stat st;

	if (!renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL)
		return -errno;
	if (lstat(from, &st))
		return -errno;
	return S_ISDIR(st.st_mode) ? claim_folder(from, to) : link_file(from, to);
}
