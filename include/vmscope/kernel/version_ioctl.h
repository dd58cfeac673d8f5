/* SPDX-License-Identifier: GPL-2.0 */
/*
 * VMSCOPE_IOC_GET_VERSION, answered the same way by both modules.
 */
#ifndef VMSCOPE_KERNEL_VERSION_IOCTL_H
#define VMSCOPE_KERNEL_VERSION_IOCTL_H

#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/utsname.h>
#include <vmscope/ioctl.h>
#include <vmscope/version.h>

static inline long vmscope_ioctl_get_version(void __user *arg,
					     enum vmscope_side side)
{
	struct vmscope_version v;

	memset(&v, 0, sizeof(v));
	v.abi_major = VMSCOPE_ABI_MAJOR;
	v.abi_minor = VMSCOPE_ABI_MINOR;
	v.side = side;
	strscpy(v.release, VMSCOPE_VERSION_STRING, sizeof(v.release));
	strscpy(v.kernel, utsname()->release, sizeof(v.kernel));
	if (copy_to_user(arg, &v, sizeof(v)))
		return -EFAULT;
	return 0;
}

#endif /* VMSCOPE_KERNEL_VERSION_IOCTL_H */
