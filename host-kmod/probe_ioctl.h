/* SPDX-License-Identifier: GPL-2.0 */
/* The probe-related ioctls of /dev/vmscope-host (vmscope/events.h). */
#ifndef VMSCOPE_HOST_PROBE_IOCTL_H
#define VMSCOPE_HOST_PROBE_IOCTL_H

struct file;

/* Returns -ENOTTY for commands that are not about probes. */
long vmscope_probe_ioctl(struct file *file, unsigned int cmd, void __user *arg);

#endif
