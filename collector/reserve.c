// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "reserve.h"

uint64_t rec_reserve_need(uint64_t session_bytes, unsigned int max_streams)
{
	return 2 * session_bytes + (uint64_t)max_streams * REC_RESERVE_PER_STREAM +
	       REC_RESERVE_BASE;
}

int rec_reserve_hold(struct rec_reserve *rs, int dirfd, uint64_t bytes)
{
	int fd, e;

	if (rs->dirfd >= 0 && rs->bytes >= bytes)
		return 0;
	fd = openat(dirfd, REC_RESERVE_NAME, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
		    0600);
	if (fd < 0)
		return -errno;
	/* allocated blocks, not a sparse size: glibc writes zeros where
	 * the file system has no fallocate */
	e = posix_fallocate(fd, 0, (off_t)bytes);
	close(fd);
	rs->dirfd = dirfd;
	if (e)
		return -e;
	rs->bytes = bytes;
	return 0;
}

int rec_reserve_release(struct rec_reserve *rs)
{
	int dirfd = rs->dirfd;

	if (dirfd < 0)
		return 0;
	rs->dirfd = -1;
	rs->bytes = 0;
	return unlinkat(dirfd, REC_RESERVE_NAME, 0) ? -errno : 0;
}
