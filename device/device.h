/* Opening the vmscope control devices, with errors a user can act on. */
#ifndef VMSCOPE_DEVICE_DEVICE_H
#define VMSCOPE_DEVICE_DEVICE_H

#include <vmscope/ioctl.h>

/*
 * Opens @path read-write. On failure prints why to stderr (module not
 * loaded, not root, ...) unless @quiet, and returns -1 with errno kept.
 */
int vmscope_device_open(const char *path, int quiet);

/*
 * Reads the module's version into @v and checks that its ABI major matches
 * ours. Returns 0, or -1 after printing the reason.
 */
int vmscope_device_version(int fd, const char *path, struct vmscope_version *v);

#endif
