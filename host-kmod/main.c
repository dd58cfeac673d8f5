// SPDX-License-Identifier: GPL-2.0
/*
 * vmscope_host.ko: the host side of vmscope.
 *
 * It owns the control device /dev/vmscope-host, attaches the KVM and
 * scheduler probes (kvm-probes/), answers the version and probe ioctls,
 * and runs capture sessions (kmod-session/: per-CPU ring buffers, mmap).
 */
#include <linux/fs.h>
#include <linux/module.h>
#include <vmscope/kernel/version_ioctl.h>
#include "../kvm-probes/kmod/core.h"
#include "probe_ioctl.h"
#include "../kmod-session/session.h"

/*
 * A session's slot is also its probing slot (kvm-probes/kmod/core.h): its
 * file's VMSCOPE_IOC_PROBE_CTL sets its filter, its probes write to its
 * channels.
 */
static void vmscope_host_publish(unsigned int slot, const void *owner,
				 const struct vmscope_rb_route *route)
{
	if (route)
		vmscope_probes_session_start(slot, owner, route);
	else
		vmscope_probes_session_stop(slot);
}

/* The commands of /dev/vmscope-host that are not the session's */
static long vmscope_host_ioctl(struct file *file, unsigned int cmd,
			       unsigned long arg)
{
	if (cmd == VMSCOPE_IOC_GET_VERSION)
		return vmscope_ioctl_get_version((void __user *)arg,
						 VMSCOPE_SIDE_HOST);
	return vmscope_probe_ioctl(file, cmd, (void __user *)arg);
}

/*
 * A recorder that dies (kill -9) leaves no probing behind: its file's
 * release turns its probes off, as an orderly stop does.
 */
const struct vmscope_session_ops vmscope_session_ops = {
	.max_sessions = VMSCOPE_HOST_SESSIONS,
	.publish = vmscope_host_publish,
	.dev_name = "vmscope-host",
	.ioctl = vmscope_host_ioctl,
	.release = vmscope_probes_release,
};

static int __init vmscope_host_init(void)
{
	int ret = vmscope_probes_init();

	if (ret) {
		pr_err("vmscope_host: cannot attach probes: %d\n", ret);
		return ret;
	}
	ret = vmscope_session_dev_register();
	if (ret)
		vmscope_probes_exit();
	return ret;
}

static void __exit vmscope_host_exit(void)
{
	vmscope_session_dev_deregister();
	vmscope_probes_exit();
	pr_info("vmscope_host: unloaded\n");
}

module_init(vmscope_host_init);
module_exit(vmscope_host_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vmscope: guest-aware KVM tracing, host side");
MODULE_VERSION(VMSCOPE_VERSION_STRING);
