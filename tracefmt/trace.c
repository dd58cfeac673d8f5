/* SPDX-License-Identifier: GPL-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace.h"

int tf_trace_sync_parent(const char *path)
{
	char parent[PATH_MAX];
	const char *slash;
	size_t n;
	int fd, r = 0;

	/* strip trailing slashes, then the last component */
	n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	slash = memrchr(path, '/', n);
	if (!slash) {
		strcpy(parent, ".");
	} else {
		n = slash == path ? 1 : (size_t)(slash - path);
		if (n >= sizeof(parent))
			return -ENAMETOOLONG;
		memcpy(parent, path, n);
		parent[n] = '\0';
	}
	fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		r = -errno;
	close(fd);
	return r;
}

int tf_trace_create(const char *path, int *dirfd)
{
	int fd, r;

	*dirfd = -1;
	if (mkdir(path, 0755) < 0)
		return -errno;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = tf_trace_sync_parent(path);
	if (r) {
		close(fd);
		return r;
	}
	*dirfd = fd;
	return 0;
}

int tf_trace_open(const char *path, int *dirfd)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	*dirfd = fd;
	return fd < 0 ? -errno : 0;
}

int tf_trace_host_name(char *buf, size_t len, uint32_t chan, uint32_t cpu)
{
	if (chan)
		return snprintf(buf, len, "host-ch%u-cpu%u" TF_TRACE_SUFFIX, chan, cpu);
	return snprintf(buf, len, "host-cpu%u" TF_TRACE_SUFFIX, cpu);
}

int tf_trace_guest_name(char *buf, size_t len, uint32_t vm, uint32_t cpu)
{
	return snprintf(buf, len, "guest%u-cpu%u" TF_TRACE_SUFFIX, vm, cpu);
}

int tf_trace_sync_name(char *buf, size_t len, uint32_t vm)
{
	return snprintf(buf, len, "sync-guest%u" TF_TRACE_SUFFIX, vm);
}
