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

/*
 * The periodic clock-sync emitter of the guest module: while enabled, every
 * online CPU issues one sync hypercall (vmscope/sync_abi.h) per period from
 * a pinned hrtimer, with a per-CPU sequence number and a per-session token.
 */
#define VMSCOPE_SYNC_PERIOD_MIN_NS	1000000ULL	/* 1 ms */
#define VMSCOPE_SYNC_PERIOD_MAX_NS	1000000000ULL	/* 1 s */
#define VMSCOPE_SYNC_PERIOD_DEFAULT_NS	10000000ULL	/* 10 ms */
/* Samples each CPU keeps until the guest ring buffer takes them. */
#define VMSCOPE_SYNC_SAMPLES		64

struct vmscope_sync_emitter_ctl {
	__u64 period_ns;	/* in: VMSCOPE_SYNC_PERIOD_MIN_NS..MAX_NS */
	__u64 token;		/* out: the session token chosen at enable */
};

/* One exchange as the guest saw it. */
struct vmscope_sync_sample {
	__u64 seq;
	__u64 t1;		/* guest clock just before the hypercall */
	__u64 t4;		/* guest clock just after it returned */
	__s64 ret;		/* hypervisor's answer (-VMSCOPE_KVM_ENOSYS) */
};

#define VMSCOPE_SYNC_EMITTER_ENABLED	(1U << 0)
#define VMSCOPE_SYNC_CPU_ONLINE		(1U << 1)

struct vmscope_sync_emitter_state {
	__u32 cpu;		/* in: which CPU's counters and samples */
	__u32 flags;		/* out: VMSCOPE_SYNC_EMITTER_*, VMSCOPE_SYNC_CPU_* */
	__u64 token;		/* out: current or last session's token */
	__u64 period_ns;	/* out: current or last session's period */
	__u64 issued;		/* out: hypercalls this CPU issued this session */
	__u64 missed;		/* out: periods skipped because the timer ran late */
	__u64 starts;		/* out: times this CPU's timer was started */
	__u64 stops;		/* out: times it was stopped (disable, offline) */
	__u32 nr_cpu_ids;	/* out: CPU numbers are below this */
	__u32 nsamples;		/* out: valid entries in samples[], oldest first */
	struct vmscope_sync_sample samples[VMSCOPE_SYNC_SAMPLES];
};

#define VMSCOPE_IOC_SYNC_EMITTER_ENABLE	_IOWR(VMSCOPE_IOC_MAGIC, 0x41, struct vmscope_sync_emitter_ctl)
#define VMSCOPE_IOC_SYNC_EMITTER_DISABLE	_IO(VMSCOPE_IOC_MAGIC, 0x42)
#define VMSCOPE_IOC_SYNC_EMITTER_STATE	_IOWR(VMSCOPE_IOC_MAGIC, 0x43, struct vmscope_sync_emitter_state)

#endif /* VMSCOPE_IOCTL_H */
