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
/* ABI 0.1's PROBE_CTL, without .events: still accepted, selects every event */
#define VMSCOPE_IOC_PROBE_CTL_V1	_IOC(_IOC_WRITE, VMSCOPE_IOC_MAGIC, 0x11, \
					     __builtin_offsetof(struct vmscope_probe_ctl, events))
#define VMSCOPE_IOC_GET_STATS		_IOWR(VMSCOPE_IOC_MAGIC, 0x12, struct vmscope_probe_stats)
#define VMSCOPE_IOC_GET_LAST		_IOWR(VMSCOPE_IOC_MAGIC, 0x13, struct vmscope_last_event)
#define VMSCOPE_IOC_GET_SESSION_COUNTS	_IOR(VMSCOPE_IOC_MAGIC, 0x14, struct vmscope_session_counts)
/* ABI 1.1: the kvm_exit details' source (vmscope/events.h) */
#define VMSCOPE_IOC_SET_EXIT_LAYOUT	_IOW(VMSCOPE_IOC_MAGIC, 0x15, struct vmscope_exit_layout)
#define VMSCOPE_IOC_GET_EXIT_MODE	_IOR(VMSCOPE_IOC_MAGIC, 0x16, struct vmscope_exit_mode)

/*
 * The periodic clock-sync emitter of the guest module: while enabled, every
 * online CPU issues one sync hypercall (vmscope/sync_abi.h) per period from
 * a pinned hrtimer, with a per-CPU sequence number and a per-session token.
 */
#define VMSCOPE_SYNC_PERIOD_MIN_NS	1000000ULL	/* 1 ms */
#define VMSCOPE_SYNC_PERIOD_MAX_NS	1000000000ULL	/* 1 s */
#define VMSCOPE_SYNC_PERIOD_DEFAULT_NS	10000000ULL	/* 10 ms */
/*
 * Recent samples each CPU keeps for SYNC_EMITTER_STATE (the recording
 * session, if any, gets every exchange as a sync_guest record).
 */
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

/*
 * Capture sessions (host): per-CPU ring buffers, allocated at
 * VMSCOPE_IOC_SESSION_START on the file that starts it; the probes record
 * into them until VMSCOPE_IOC_SESSION_STOP (which flushes every buffer) or
 * until that file is closed. A file has one session; the host module
 * records VMSCOPE_HOST_SESSIONS sessions at once (each with its own
 * buffers, and its own probe filter: VMSCOPE_IOC_PROBE_CTL on its file),
 * the guest module one; one more start gets -EBUSY. After a stop the
 * buffers stay readable on that file until it is closed and every mapping
 * is gone.
 *
 * Channels: a session has 1..VMSCOPE_SESSION_CHANNELS of them, each one
 * buffer per CPU with its own geometry and mode, so that one session can
 * mix modes (say, high-rate KVM events in a flight-recorder channel that
 * overwrites, clock-sync records in a discard channel that never does).
 * Channel k >= 1 records the event ids of its .events mask (disjoint, not
 * empty); channel 0 every other one.
 *
 * Buffers are numbered b = channel * nr_cpu_ids + cpu; GET_SUBBUF,
 * PUT_SUBBUF and FLUSH take that number (with one channel, the CPU).
 *
 * mmap: buffer (k, c) is at file offset chan[k].offset + c * chan[k].cpu_stride,
 * read-only (PROT_WRITE is refused), at most cpu_stride bytes. Inside it,
 * the control area (struct vmscope_rb_ctrl, vmscope/ringbuf_abi.h) is at 0
 * and physical sub-buffer p at ctrl_size + p * subbuf_size. The reader
 * takes a delivered sub-buffer with GET_SUBBUF (which returns its physical
 * index), reads it in place, and gives it back with PUT_SUBBUF before the
 * next GET on that buffer. poll() reports POLLIN when any buffer has one
 * to get; a periodic flush (flush_ms) delivers partly filled sub-buffers,
 * so a quiet buffer still reaches the reader within about flush_ms.
 */
#define VMSCOPE_HOST_SESSIONS			127	/* with the shared slot: 128 probing slots */
#define VMSCOPE_SESSION_CHANNELS		4
#define VMSCOPE_SESSION_SUBBUF_SHIFT_DEF	16	/* 64 KiB */
#define VMSCOPE_SESSION_SUBBUF_SHIFT_MIN	12	/* one page */
#define VMSCOPE_SESSION_SUBBUF_SHIFT_MAX	22	/* 4 MiB */
#define VMSCOPE_SESSION_NR_SHIFT_DEF		5	/* 32 sub-buffers */
#define VMSCOPE_SESSION_NR_SHIFT_MIN		1
#define VMSCOPE_SESSION_NR_SHIFT_MAX		10
#define VMSCOPE_SESSION_CPU_BYTES_MAX		(64ull << 20)	/* per CPU, all channels */
#define VMSCOPE_SESSION_FLUSH_MS_DEF		200
#define VMSCOPE_SESSION_FLUSH_MS_MIN		10
#define VMSCOPE_SESSION_FLUSH_MS_MAX		10000

/* One channel of a session (in: 0 = default; out: what was chosen). */
struct vmscope_chan_cfg {
	__u32 subbuf_shift;	/* sub-buffer size = 1 << subbuf_shift */
	__u32 nr_subbuf_shift;	/* N = 1 << nr_subbuf_shift sub-buffers */
	__u32 mode;		/* VMSCOPE_RB_MODE_DISCARD / _FLIGHT */
	__u32 ctrl_size;	/* out: bytes before physical sub-buffer 0 */
	/* channel >= 1, in: its event ids (bit per id); 0, out: the rest */
	__u64 events;
	__u64 cpu_bytes;	/* out: bytes of one CPU's buffer */
	__u64 cpu_stride;	/* out: CPU c's buffer at offset + c * cpu_stride */
	__u64 offset;		/* out: mmap offset of the channel's CPU 0 */
};

/* SESSION_START (in/out) and GEOMETRY (out). */
struct vmscope_session_cfg {
	__u32 nr_chans;		/* 1..VMSCOPE_SESSION_CHANNELS (in: 0 = 1) */
	__u32 flush_ms;		/* period of the flush timer */
	__u32 nr_cpu_ids;	/* out: CPUs 0..nr_cpu_ids-1; mmap of an impossible one fails (ENXIO) */
	__u32 reserved;		/* 0 */
	struct vmscope_chan_cfg chan[VMSCOPE_SESSION_CHANNELS];
};

/* GET_SUBBUF: in buf; out the sub-buffer taken and its header facts. */
struct vmscope_subbuf_req {
	__u32 buf;		/* in: channel * nr_cpu_ids + cpu */
	__u32 phys;		/* out: physical index */
	__u64 seq;		/* out: sub-buffer sequence */
	__u64 offset;		/* out: bytes from the start of the buffer's mapping */
	__u64 lost_before;	/* out: header copies, for convenience; the */
	__u32 data_size;	/*      mapped header is authoritative */
	__u32 records;
	__u64 lost_total;	/* out: the buffer's losses so far (all causes) */
};

/*
 * GET_RB_STATS: one CPU's ring-buffer counters (in: cpu), summed over
 * channels: of the file's own session while it records, else summed over
 * the recording sessions.
 */
struct vmscope_rb_stats {
	__u32 cpu;		/* in */
	__u32 active;		/* out: how many sessions the counters cover */
	__u64 lost_full;
	__u64 lost_too_big;
	__u64 lost_overwritten;
	__u64 subbufs_delivered;
	__u64 subbufs_overwritten;
};

#define VMSCOPE_IOC_SESSION_START	_IOWR(VMSCOPE_IOC_MAGIC, 0x20, struct vmscope_session_cfg)
#define VMSCOPE_IOC_SESSION_STOP	_IO(VMSCOPE_IOC_MAGIC, 0x21)
#define VMSCOPE_IOC_GEOMETRY		_IOR(VMSCOPE_IOC_MAGIC, 0x22, struct vmscope_session_cfg)
#define VMSCOPE_IOC_GET_SUBBUF		_IOWR(VMSCOPE_IOC_MAGIC, 0x23, struct vmscope_subbuf_req)
#define VMSCOPE_IOC_PUT_SUBBUF		_IOW(VMSCOPE_IOC_MAGIC, 0x24, __u32)
#define VMSCOPE_IOC_FLUSH		_IOW(VMSCOPE_IOC_MAGIC, 0x25, __u32)
#define VMSCOPE_IOC_GET_RB_STATS	_IOWR(VMSCOPE_IOC_MAGIC, 0x26, struct vmscope_rb_stats)

/*
 * Guest module only. GUEST_EVENTS chooses the events a guest session
 * records (a bit per event id of the guest side; 0 = the default, every
 * guest event but sys_enter/sys_exit); -EBUSY while a session records,
 * -EINVAL for an id the guest does not record. It takes effect at the
 * next SESSION_START. out: the mask in effect.
 *
 * GUEST_TASKS and GUEST_IRQS are the state dump: call them after
 * SESSION_START (the fork/exec/exit probes then cover whatever the dump
 * misses). Each answers at most VMSCOPE_GUEST_DUMP_MAX entries from @start
 * on and sets @next to where to continue (0: done).
 */
#define VMSCOPE_GUEST_DUMP_MAX	64
#define VMSCOPE_GUEST_IRQ_NAME_LEN	24

struct vmscope_guest_task {
	__s32 pid;		/* thread id */
	__s32 tgid;		/* process id */
	__s32 ppid;		/* parent's tgid */
	__u32 flags;		/* VMSCOPE_GUEST_TASK_* */
	char comm[16];
};
#define VMSCOPE_GUEST_TASK_KTHREAD	(1u << 0)

struct vmscope_guest_tasks_req {
	__u32 start;		/* in: first pid to look at */
	__u32 next;		/* out: continue from here; 0 = done */
	__u32 nr;		/* out: valid entries */
	__u32 reserved;
	struct vmscope_guest_task tasks[VMSCOPE_GUEST_DUMP_MAX];
};

struct vmscope_guest_irq {
	__s32 irq;
	__u32 nr_actions;	/* handlers sharing it; name is the first's */
	char name[VMSCOPE_GUEST_IRQ_NAME_LEN];
};

struct vmscope_guest_irqs_req {
	__u32 start;		/* in: first irq number to look at */
	__u32 next;		/* out: continue from here; 0 = done */
	__u32 nr;		/* out: valid entries (irqs with a handler) */
	__u32 nr_cpus;		/* out: online CPUs */
	struct vmscope_guest_irq irqs[VMSCOPE_GUEST_DUMP_MAX];
};

#define VMSCOPE_IOC_GUEST_EVENTS	_IOWR(VMSCOPE_IOC_MAGIC, 0x50, __u64)
#define VMSCOPE_IOC_GUEST_TASKS		_IOWR(VMSCOPE_IOC_MAGIC, 0x51, struct vmscope_guest_tasks_req)
#define VMSCOPE_IOC_GUEST_IRQS		_IOWR(VMSCOPE_IOC_MAGIC, 0x52, struct vmscope_guest_irqs_req)

#endif /* VMSCOPE_IOCTL_H */
