/* SPDX-License-Identifier: GPL-2.0 */
/*
 * VMSCOPE_IOC_GET_EVENT_DESC, answered the same way by both modules from
 * the one compiled-in table (events.def); each descriptor says which
 * module records the event (sides).
 */
#ifndef VMSCOPE_KVM_PROBES_DESC_IOCTL_H
#define VMSCOPE_KVM_PROBES_DESC_IOCTL_H

#include <linux/uaccess.h>
#include "../vmscope_events.h"

static inline long vmscope_ioctl_get_event_desc(void __user *arg)
{
	struct vmscope_event_desc_req req;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	req.nr_events = VMSCOPE_NR_EVENTS;
	if (req.index >= VMSCOPE_NR_EVENTS)
		return -ENOENT;
	req.desc = vmscope_event_descs[req.index];
	return copy_to_user(arg, &req, sizeof(req)) ? -EFAULT : 0;
}

#endif /* VMSCOPE_KVM_PROBES_DESC_IOCTL_H */
