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

/* mkdir -p @path with @mode: 0 (also when it exists) or -errno. */
int util_mkdir_p(const char *path, mode_t mode);

/* fsync @path, opened with O_RDONLY | @flags (O_DIRECTORY for a folder); best effort. */
void util_fsync_path(const char *path, int flags);

/* fsync every regular file of @dir (one level) and @dir itself; best effort. */
void util_fsync_dir_files(const char *dir);

/*
 * @text as the whole of @path, atomically and durably: PATH.tmp written
 * (mode 0640) and fsynced, renamed over @path, its folder fsynced.
 * 0 or -errno (PATH.tmp removed).
 */
int util_write_file(const char *path, const char *text);

#endif
