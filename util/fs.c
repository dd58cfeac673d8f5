#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util_fs.h"

ssize_t util_read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, total = 0;

	if (fd < 0)
		return -errno;
	while ((size_t)total < len - 1 && (n = read(fd, buf + total, len - 1 - total)) > 0)
		total += n;
	close(fd);
	buf[total] = 0;
	return total;
}

uint8_t *util_read_all(int dirfd, const char *path, size_t *len)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	uint8_t *b = NULL;
	int err = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0) {
		err = errno;
	} else if (!(b = malloc((size_t)st.st_size + 1))) {
		err = ENOMEM;
	} else if (pread(fd, b, (size_t)st.st_size, 0) != st.st_size) {
		/* a short read is a file that changed under us */
		err = errno ? errno : EIO;
		free(b);
		b = NULL;
	} else {
		*len = (size_t)st.st_size;
		b[*len] = 0;
	}
	close(fd);
	errno = err;
	return b;
}

int util_mkdir_p(const char *path, mode_t mode)
{
	char tmp[PATH_MAX];

	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, mode) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return mkdir(tmp, mode) && errno != EEXIST ? -errno : 0;
}

void util_fsync_path(const char *path, int flags)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | flags);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

void util_fsync_dir_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[PATH_MAX];

	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_type == DT_REG &&
		    snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) < (int)sizeof(p))
			util_fsync_path(p, 0);
	closedir(d);
	util_fsync_path(dir, O_DIRECTORY);
}

int util_write_file(const char *path, const char *text)
{
	char tmp[PATH_MAX], dir[PATH_MAX];
	int fd, e = 0;
	size_t len = strlen(text);
	char *slash;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len || fsync(fd))
		e = errno ? -errno : -EIO;
	close(fd);
	if (!e && rename(tmp, path))
		e = -errno;
	if (e) {
		unlink(tmp);
		return e;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		util_fsync_path(dir, O_DIRECTORY);
	}
	return 0;
}
