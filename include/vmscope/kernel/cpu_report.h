/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-CPU report ioctls of both modules (VMSCOPE_IOC_PROBE_STATS,
 * VMSCOPE_IOC_SYNC_EMITTER_STATE) begin the same way.
 */
#ifndef VMSCOPE_KERNEL_CPU_REPORT_H
#define VMSCOPE_KERNEL_CPU_REPORT_H

#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/nospec.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

/*
 * A zeroed report of @size bytes (too large for an ioctl's stack) whose
 * first field, a __u32, is the CPU the caller asks about, read from @arg:
 * it must be a possible CPU. Returns the report, that CPU in *@cpu
 * (bounded under speculation too, as it indexes per-CPU data), or an
 * ERR_PTR; the caller kfree()s it.
 */
static inline void *vmscope_ioctl_cpu_report(void __user *arg, size_t size,
					     unsigned int *cpu)
{
	u32 *r = kzalloc(size, GFP_KERNEL);

	if (!r)
		return ERR_PTR(-ENOMEM);
	if (copy_from_user(r, arg, sizeof(*r))) {
		kfree(r);
		return ERR_PTR(-EFAULT);
	}
	if (*r >= nr_cpu_ids || !cpu_possible(*r)) {
		kfree(r);
		return ERR_PTR(-EINVAL);
	}
	*cpu = array_index_nospec(*r, nr_cpu_ids);
	return r;
}

#endif /* VMSCOPE_KERNEL_CPU_REPORT_H */
