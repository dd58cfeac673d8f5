/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ioctl interface of /dev/vmscope-host and /dev/vmscope-guest.
 *
 * Only fixed-size types from <linux/types.h>, so that the same structures
 * have the same layout in the kernel and in 32- or 64-bit userspace.
 */
#ifndef VMSCOPE_IOCTL_H
#define VMSCOPE_IOCTL_H

#include <linux/ioctl.h>
#include <linux/types.h>
#include <vmscope/events.h>

#define VMSCOPE_HOST_DEVICE  "/dev/vmscope-host"
#define VMSCOPE_GUEST_DEVICE "/dev/vmscope-guest"

/* 0xB7 is not listed in the kernel's ioctl-number.rst. */
#define VMSCOPE_IOC_MAGIC 0xB7

/* Which module answered VMSCOPE_IOC_GET_VERSION. */
enum vmscope_side {
	VMSCOPE_SIDE_HOST = 1,
	VMSCOPE_SIDE_GUEST = 2,
};

struct vmscope_version {
	__u32 abi_major;
	__u32 abi_minor;
	__u32 side;		/* enum vmscope_side */
	__u32 reserved;
	char release[32];	/* VMSCOPE_VERSION_STRING, NUL-terminated */
	char kernel[64];	/* utsname release of the running kernel */
};

/*
 * One clock-sync hypercall issued by the guest module on the calling CPU,
 * for tests and diagnostics. The caller chooses token and sequence; the
 * module fills in the rest.
 */
struct vmscope_sync_once {
	__u64 token;		/* in: session token (a0) */
	__u64 seq;		/* in: sequence number (a1) */
	__u64 t1;		/* out: guest clock just before the hypercall */
	__u64 t4;		/* out: guest clock just after it returned */
	__s64 ret;		/* out: value the hypervisor returned in rax */
	__u32 cpu;		/* out: CPU the hypercall ran on */
	__u32 reserved;
};

#define VMSCOPE_IOC_GET_VERSION	_IOR(VMSCOPE_IOC_MAGIC, 0x00, struct vmscope_version)
#define VMSCOPE_IOC_SYNC_ONCE	_IOWR(VMSCOPE_IOC_MAGIC, 0x40, struct vmscope_sync_once)

/* Event descriptors, probe control and counters (vmscope/events.h). */
#define VMSCOPE_IOC_GET_EVENT_DESC	_IOWR(VMSCOPE_IOC_MAGIC, 0x10, struct vmscope_event_desc_req)
#define VMSCOPE_IOC_PROBE_CTL		_IOW(VMSCOPE_IOC_MAGIC, 0x11, struct vmscope_probe_ctl)
#define VMSCOPE_IOC_GET_STATS		_IOWR(VMSCOPE_IOC_MAGIC, 0x12, struct vmscope_probe_stats)
#define VMSCOPE_IOC_GET_LAST		_IOWR(VMSCOPE_IOC_MAGIC, 0x13, struct vmscope_last_event)

#endif /* VMSCOPE_IOCTL_H */
