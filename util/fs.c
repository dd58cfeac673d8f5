#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
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
