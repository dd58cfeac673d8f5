// SPDX-License-Identifier: GPL-2.0
/*
 * vmscope_host.ko: the host side of vmscope.
 *
 * It owns the control device /dev/vmscope-host, attaches the KVM and
 * scheduler probes (kvm-probes/), answers the version and probe ioctls,
 * and runs capture sessions (kmod-session/: per-CPU ring buffers, mmap).
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
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

const struct vmscope_session_ops vmscope_session_ops = {
	.max_sessions = VMSCOPE_HOST_SESSIONS,
	.publish = vmscope_host_publish,
};

static long vmscope_host_ioctl(struct file *file, unsigned int cmd,
			       unsigned long arg)
{
	long ret;

	switch (cmd) {
	case VMSCOPE_IOC_GET_VERSION:
		return vmscope_ioctl_get_version((void __user *)arg,
						 VMSCOPE_SIDE_HOST);
	default:
		break;
	}
	ret = vmscope_session_ioctl(file, cmd, (void __user *)arg);
	if (ret != -ENOTTY)
		return ret;
	return vmscope_probe_ioctl(file, cmd, (void __user *)arg);
}

static int vmscope_host_open(struct inode *inode, struct file *file)
{
	/* misc_open() left the miscdevice here; ours is the session */
	file->private_data = NULL;
	return 0;
}

static int vmscope_host_release(struct inode *inode, struct file *file)
{
	/*
	 * A recorder that dies (kill -9) leaves no probing behind: probes
	 * off first, as an orderly stop does, then its session.
	 */
	vmscope_probes_release(file);
	vmscope_session_release(file);
	return 0;
}

static const struct file_operations vmscope_host_fops = {
	.owner = THIS_MODULE,
	.open = vmscope_host_open,
	.release = vmscope_host_release,
	.poll = vmscope_session_poll,
	.mmap = vmscope_session_mmap,
	.unlocked_ioctl = vmscope_host_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice vmscope_host_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "vmscope-host",
	.fops = &vmscope_host_fops,
	.mode = 0600,	/* tracing the host is for root only */
};

static int __init vmscope_host_init(void)
{
	int ret = vmscope_probes_init();

	if (ret) {
		pr_err("vmscope_host: cannot attach probes: %d\n", ret);
		return ret;
	}
	ret = misc_register(&vmscope_host_dev);
	if (ret) {
		pr_err("vmscope_host: cannot register /dev/vmscope-host: %d\n",
		       ret);
		vmscope_probes_exit();
		return ret;
	}
	pr_info("vmscope_host: version %s (ABI %d.%d) loaded\n",
		VMSCOPE_VERSION_STRING, VMSCOPE_ABI_MAJOR, VMSCOPE_ABI_MINOR);
	return 0;
}

static void __exit vmscope_host_exit(void)
{
	misc_deregister(&vmscope_host_dev);
	vmscope_probes_exit();
	pr_info("vmscope_host: unloaded\n");
}

module_init(vmscope_host_init);
module_exit(vmscope_host_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vmscope: guest-aware KVM tracing, host side");
MODULE_VERSION(VMSCOPE_VERSION_STRING);
