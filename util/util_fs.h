/* Reading whole files. */
#ifndef VMSCOPE_UTIL_FS_H
#define VMSCOPE_UTIL_FS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * At most @len - 1 bytes of @path (a small /proc or /sys file) into @buf,
 * NUL-terminated; @len > 0. Returns the bytes read or -errno.
 */
ssize_t util_read_small(const char *path, char *buf, size_t len);

/*
 * All of @path, @dirfd relative (AT_FDCWD for the current folder), in a
 * malloc'd buffer with a NUL after its *@len bytes; NULL with errno set
 * when it cannot be opened, sized or read whole.
 */
uint8_t *util_read_all(int dirfd, const char *path, size_t *len);

#endif
