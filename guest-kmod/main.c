// SPDX-License-Identifier: GPL-2.0
/*
 * vmscope_guest.ko: the guest side of vmscope.
 *
 * It owns the control device /dev/vmscope-guest, answers the version ioctl,
 * issues single clock-sync hypercalls on request, runs the periodic sync
 * emitter (sync_emitter.c) and capture sessions with per-CPU ring buffers
 * read through mmap (kmod-session/, the same code as the host module's).
 */
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/smp.h>
#include <linux/tracepoint.h>
#include <asm/kvm_para.h>
#include <vmscope/kernel/version_ioctl.h>
#include <vmscope/sync_abi.h>
#include "../kmod-session/session.h"
#include "../kvm-probes/kmod/desc_ioctl.h"
#include "clock.h"
#include "probes.h"
#include "record.h"
#include "sync_emitter.h"

static bool vmscope_on_kvm;

const struct vmscope_rb_route *vmscope_guest_rec_route;

static void vmscope_guest_publish(unsigned int slot, const void *owner,
				  const struct vmscope_rb_route *route)
{
	WRITE_ONCE(vmscope_guest_rec_route, route);
	if (route)
		vmscope_guest_record_cpu_tasks();
}

static long vmscope_guest_events(void __user *arg)
{
	u64 mask;
	int ret;

	if (get_user(mask, (u64 __user *)arg))
		return -EFAULT;
	ret = vmscope_guest_events_select(&mask);
	if (ret)
		return ret;
	return put_user(mask, (u64 __user *)arg);
}

static long vmscope_guest_sync_once(void __user *arg)
{
	struct vmscope_sync_once s;
	unsigned int cpu;
	long ret;

	if (!vmscope_on_kvm)
		return -EOPNOTSUPP;
	if (copy_from_user(&s, arg, sizeof(s)))
		return -EFAULT;

	/* t1, the hypercall and t4 must all happen on one CPU. */
	preempt_disable();
	cpu = smp_processor_id();
	s.t1 = vmscope_guest_clock();
	ret = kvm_hypercall4(VMSCOPE_SYNC_HC_NR, s.token, s.seq, s.t1, cpu);
	s.t4 = vmscope_guest_clock();
	preempt_enable();

	s.ret = ret;
	s.cpu = cpu;
	s.reserved = 0;
	if (copy_to_user(arg, &s, sizeof(s)))
		return -EFAULT;
	return 0;
}

/* The commands of /dev/vmscope-guest that are not the session's */
static long vmscope_guest_ioctl(struct file *file, unsigned int cmd,
				unsigned long arg)
{
	switch (cmd) {
	case VMSCOPE_IOC_GET_VERSION:
		return vmscope_ioctl_get_version((void __user *)arg,
						 VMSCOPE_SIDE_GUEST);
	case VMSCOPE_IOC_SYNC_ONCE:
		return vmscope_guest_sync_once((void __user *)arg);
	case VMSCOPE_IOC_GET_EVENT_DESC:
		return vmscope_ioctl_get_event_desc((void __user *)arg);
	case VMSCOPE_IOC_GUEST_EVENTS:
		return vmscope_guest_events((void __user *)arg);
	case VMSCOPE_IOC_GUEST_TASKS:
		return vmscope_guest_dump_tasks((void __user *)arg);
	case VMSCOPE_IOC_GUEST_IRQS:
		return vmscope_guest_dump_irqs((void __user *)arg);
	default:
		return vmscope_sync_emitter_ioctl(cmd, (void __user *)arg);
	}
}

/*
 * One session at a time (the agent's). The probes are attached only while
 * it records (probes.c).
 */
const struct vmscope_session_ops vmscope_session_ops = {
	.max_sessions = 1,
	.publish = vmscope_guest_publish,
	.start = vmscope_guest_probes_attach,
	.stop = vmscope_guest_probes_detach,
	.dev_name = "vmscope-guest",
	.ioctl = vmscope_guest_ioctl,
};

static int __init vmscope_guest_init(void)
{
	int ret;

	vmscope_on_kvm = kvm_para_available();
	vmscope_guest_probes_init();
	ret = vmscope_sync_emitter_init(vmscope_on_kvm);
	if (ret) {
		pr_err("vmscope_guest: cannot set up the sync emitter: %d\n",
		       ret);
		return ret;
	}
	ret = vmscope_session_dev_register();
	if (ret) {
		vmscope_sync_emitter_exit();
		return ret;
	}
	if (!vmscope_on_kvm)
		pr_info("vmscope_guest: not running on KVM, clock sync with a host is impossible\n");
	return 0;
}

static void __exit vmscope_guest_exit(void)
{
	vmscope_session_dev_deregister();
	vmscope_sync_emitter_exit();
	/* no probe of ours may still run when our text goes away */
	tracepoint_synchronize_unregister();
	pr_info("vmscope_guest: unloaded\n");
}

module_init(vmscope_guest_init);
module_exit(vmscope_guest_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vmscope: guest-aware KVM tracing, guest side");
MODULE_VERSION(VMSCOPE_VERSION_STRING);
