/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Self-description of vmscope events, as exported by a module
 * (VMSCOPE_IOC_GET_EVENT_DESC) and stored in traces: a reader decodes any
 * payload from these descriptors alone, without version-specific tables.
 *
 * Fixed-size types and fixed-size arrays only, so that kernel, 32- and
 * 64-bit userspace and trace files share one layout.
 */
#ifndef VMSCOPE_EVENTS_H
#define VMSCOPE_EVENTS_H

#include <linux/types.h>

#define VMSCOPE_MAX_EVENTS	32	/* event ids are 0..VMSCOPE_MAX_EVENTS-1 */
#define VMSCOPE_MAX_FIELDS	12
#define VMSCOPE_MAX_PAYLOAD	72	/* bytes; the largest payload must fit (64 before ABI 0.4) */
/*
 * GET_LAST's payload: host events only, which all fit 64 bytes (checked in
 * vmscope_events.h), so the ioctl kept its ABI 0.3 size when sync_guest
 * grew past it.
 */
#define VMSCOPE_LAST_PAYLOAD	64
#define VMSCOPE_NAME_LEN	32
#define VMSCOPE_FORMAT_LEN	160

/* A field's C type; its size is in the descriptor as well. */
enum vmscope_field_type {
	VMSCOPE_FT_u8 = 1,
	VMSCOPE_FT_u16,
	VMSCOPE_FT_u32,
	VMSCOPE_FT_u64,
	VMSCOPE_FT_s32,
	VMSCOPE_FT_s64,
	VMSCOPE_FT_str,		/* char[size], NUL-padded, maybe unterminated */
};

struct vmscope_field_desc {
	char name[VMSCOPE_NAME_LEN];
	__u16 type;		/* enum vmscope_field_type */
	__u16 offset;		/* bytes from the start of the payload */
	__u16 size;		/* bytes */
	__u16 reserved;
};

/* Which module records an event (bits: enum vmscope_side of ioctl.h). */
#define VMSCOPE_SIDES_HOST	1u
#define VMSCOPE_SIDES_GUEST	2u
#define VMSCOPE_SIDES_BOTH	3u

struct vmscope_event_desc {
	__u32 id;		/* event id, index in the table */
	__u32 payload_size;	/* bytes */
	__u32 nr_fields;
	__u32 sides;		/* VMSCOPE_SIDES_*: which module records it */
	char name[VMSCOPE_NAME_LEN];
	char system[VMSCOPE_NAME_LEN];		/* source: "kvm", "sched", "vmscope" */
	char tracepoint[VMSCOPE_NAME_LEN];	/* source tracepoint */
	/* printf-like; conversions consume the fields in order, one each */
	char format[VMSCOPE_FORMAT_LEN];
	struct vmscope_field_desc fields[VMSCOPE_MAX_FIELDS];
};

/* VMSCOPE_IOC_GET_EVENT_DESC: in index, out desc; -ENOENT past the last. */
struct vmscope_event_desc_req {
	__u32 index;
	__u32 nr_events;	/* out: how many events the module has */
	struct vmscope_event_desc desc;
};

/* Bits of vmscope_probe_stats.attached / vmscope_probe_ctl.flags. */
#define VMSCOPE_CTL_ENABLE	(1u << 0)	/* probes do work (else return at once) */
/* zero all counters first; EBUSY while another session or file probes */
#define VMSCOPE_CTL_RESET	(1u << 1)
/* kvm_exit without reason/info (no perf counters): to measure their cost */
#define VMSCOPE_CTL_NO_EXIT_REASON (1u << 2)
/* time kvm_exit's and kvm_entry's probes (*_timing_* in the stats) */
#define VMSCOPE_CTL_MEASURE	(1u << 3)
/* only the events whose bit (1 << id) is set in vmscope_probe_ctl.events */
#define VMSCOPE_CTL_EVENTS	(1u << 4)
/*
 * For the shared probing (a file without a recording session), with
 * VMSCOPE_CTL_ENABLE: probing lasts until the file that issued this is
 * closed (also by the death of its process) or issues another
 * VMSCOPE_IOC_PROBE_CTL; until then a PROBE_CTL from any other file
 * without a session, even one that only resets the counters, fails with
 * EBUSY. Without it, shared probing stays on and any such file may change
 * or stop it. A session's probing always ends with its session.
 */
#define VMSCOPE_CTL_UNTIL_CLOSE	(1u << 5)
/*
 * ABI 1.1. kvm_exit details: by default from the perf path until
 * calibration verified the direct VMCB read (struct vmscope_exit_mode),
 * then direct. EXIT_PERF: the perf path only, never direct (a slot on
 * with it keeps every slot on perf). EXIT_VERIFY: the perf path, and every
 * exit's direct read compared with KVM's record (mismatches counted);
 * never direct. VERIFY wins over PERF, PERF over the default.
 */
#define VMSCOPE_CTL_EXIT_PERF	(1u << 6)
#define VMSCOPE_CTL_EXIT_VERIFY	(1u << 7)

#define VMSCOPE_MAX_PIDS	8

/*
 * VMSCOPE_IOC_PROBE_CTL: start/stop probing and choose the processes and
 * events. On a file whose session records (VMSCOPE_IOC_SESSION_START), it
 * controls what that session records, apart from every other session;
 * on any other file it controls the shared probing, which only counts
 * (`vmscope stats`) and is refused (EBUSY) while a session probes. The
 * counters (vmscope_probe_stats) are module-wide: seen and matched count
 * hits that some slot selected and that some slot took. nr_pids == 0 traces every process; otherwise events of threads
 * whose thread group is one of pids[] (for sched_switch: either side, or
 * any switch on a CPU where such a thread waits preempted)
 * match. Without VMSCOPE_CTL_EVENTS every event is recorded; with it, only
 * those with their bit set in events (bits of ids the module does not have
 * are rejected with EINVAL, so a typo cannot silently record nothing).
 * An unselected event costs one predictable branch in its probe; kvm_exit's
 * perf counters exist only while kvm_exit is selected.
 */
struct vmscope_probe_ctl {
	__u32 flags;
	__u32 nr_pids;
	__s32 pids[VMSCOPE_MAX_PIDS];
	__u64 events;		/* VMSCOPE_CTL_EVENTS: bit (1 << id) per event */
};

/* Bits of vmscope_probe_stats.state. */
#define VMSCOPE_STATE_ENABLED		(1u << 0)
#define VMSCOPE_STATE_KVM_ATTACHED	(1u << 1)	/* kvm.ko's tracepoints attached */
#define VMSCOPE_STATE_SCHED_ATTACHED	(1u << 2)
/* kvm_exit details on: perf counters live, or direct (VMSCOPE_IOC_GET_EXIT_MODE) */
#define VMSCOPE_STATE_EXIT_REASON	(1u << 3)

/*
 * VMSCOPE_IOC_GET_STATS: counters of one CPU (in: cpu). seen counts probe
 * hits while enabled, matched those that passed the process filter.
 * attached[] has one bit per event id: its tracepoint has our probe now.
 */
struct vmscope_probe_stats {
	__u32 cpu;		/* in; -EINVAL when >= nr_cpu_ids */
	__u32 nr_cpu_ids;	/* out */
	__u32 nr_events;	/* out */
	__u32 state;		/* out: VMSCOPE_STATE_* */
	__u64 attached;		/* out: bit per event id */
	__u64 attach_count;	/* out: times kvm's probes were attached since load */
	__u64 detach_count;	/* out: ... and detached */
	__u64 sync_collisions;	/* out: sync exchanges dropped, no free slot */
	__u64 exit_reason_missed; /* out: kvm_exit without a perf record (this CPU) */
	/*
	 * out, with VMSCOPE_CTL_MEASURE: kvm_exit calls timed, total ns from
	 * our first (highest priority) kvm_exit probe to our payload probe,
	 * i.e. the kernel's own probes in between (perf's, with exit reasons),
	 * and total ns inside the payload probe.
	 */
	__u64 exit_timing_n;
	__u64 exit_timing_gap_ns;
	__u64 exit_timing_probe_ns;
	/* out, with VMSCOPE_CTL_MEASURE: the same for kvm_entry (ABI 1.0) */
	__u64 entry_timing_n;
	__u64 entry_timing_gap_ns;
	__u64 entry_timing_probe_ns;
	__u64 seen[VMSCOPE_MAX_EVENTS];
	__u64 matched[VMSCOPE_MAX_EVENTS];
};

/*
 * VMSCOPE_IOC_GET_SESSION_COUNTS, on a file whose session records (else
 * -ENODATA): how many records of each event the probes handed to this
 * session's buffers since it started, summed over CPUs: each one is in
 * the buffers or counted lost there. Unlike matched, they are the
 * session's own, whatever other sessions record; read them after probing
 * off and before VMSCOPE_IOC_SESSION_STOP for the final counts.
 */
struct vmscope_session_counts {
	__u32 nr_events;	/* out */
	__u32 reserved;
	__u64 handed[VMSCOPE_MAX_EVENTS];	/* out, by event id */
};

/*
 * VMSCOPE_IOC_GET_LAST: the payload of the last matched event @event on
 * @cpu (a stand-in for the ring buffer until it is wired in). seq is 0 when
 * there was none. Host events only (the host module's table), the first
 * VMSCOPE_LAST_PAYLOAD bytes.
 */
struct vmscope_last_event {
	__u32 cpu;		/* in */
	__u32 event;		/* in */
	__u64 seq;		/* out: the matched count when it was written */
	__u64 timestamp;	/* out: trace clock (ns) */
	__u8 payload[VMSCOPE_LAST_PAYLOAD];
};

/*
 * ABI 1.1: where kvm_exit's reason/info/intr_info/error_code come from
 * (kvm-probes/README.md, "Exit reasons read from the VMCB").
 *
 * VMSCOPE_IOC_SET_EXIT_LAYOUT: userspace's reading of the running
 * kernel's BTF (vmlinux + kvm_amd): byte offsets and sizes. The module
 * compares them with its own compile-time layout; any difference refuses
 * direct mode (GET_EXIT_MODE says which field). flags 0: no BTF was
 * found, calibration alone decides. Each call replaces the last verdict.
 */
#define VMSCOPE_EXIT_LAYOUT_SVM	(1u << 0)	/* the fields below are set */

struct vmscope_exit_layout {
	__u32 flags;
	__u32 vcpu_svm_vcpu;		/* offsetof(struct vcpu_svm, vcpu) */
	__u32 vcpu_svm_vmcb;		/* offsetof(struct vcpu_svm, vmcb) */
	__u32 vcpu_svm_vmcb_size;	/* its size; 0: not a struct vmcb * */
	__u32 vmcb_control;		/* offsetof(struct vmcb, control) */
	/* offsets in struct vmcb_control_area */
	__u32 exit_code;
	__u32 exit_code_hi;
	__u32 exit_info_1;
	__u32 exit_info_2;
	__u32 exit_int_info;
	__u32 exit_int_info_err;
	__u32 reserved;
};

/* vmscope_exit_mode.mode */
#define VMSCOPE_EXIT_MODE_NONE		0	/* no details (not wanted, or no kvm) */
#define VMSCOPE_EXIT_MODE_PERF		1	/* perf path only */
#define VMSCOPE_EXIT_MODE_CALIBRATING	2	/* perf path; direct read compared beside */
#define VMSCOPE_EXIT_MODE_DIRECT	3	/* read from the VMCB; no perf counter */
#define VMSCOPE_EXIT_MODE_VERIFY	4	/* perf path; every exit compared */
#define VMSCOPE_EXIT_MODE_RECAL		5	/* direct dropped; calibration starts */
/* vmscope_exit_mode.refused: why direct mode is not allowed */
#define VMSCOPE_EXIT_REFUSED_NONE	0
#define VMSCOPE_EXIT_REFUSED_DISABLED	1	/* module parameter exit_direct=0 */
#define VMSCOPE_EXIT_REFUSED_LAYOUT	2	/* BTF disagrees (why) */
#define VMSCOPE_EXIT_REFUSED_MISMATCH	3	/* a compared exit differed: perf for good */
#define VMSCOPE_EXIT_REFUSED_ASKED	4	/* a slot asked for VMSCOPE_CTL_EXIT_PERF */
/* vmscope_exit_mode.layout */
#define VMSCOPE_EXIT_LAYOUT_NONE	0	/* no BTF passed */
#define VMSCOPE_EXIT_LAYOUT_MATCH	1
#define VMSCOPE_EXIT_LAYOUT_MISMATCH	2
#define VMSCOPE_EXIT_WHY_LEN		64

/* VMSCOPE_IOC_GET_EXIT_MODE (out) */
struct vmscope_exit_mode {
	__u32 mode;		/* VMSCOPE_EXIT_MODE_* */
	__u32 refused;		/* VMSCOPE_EXIT_REFUSED_* */
	__u32 layout;		/* VMSCOPE_EXIT_LAYOUT_* */
	__u32 reasons;		/* distinct reasons of this calibration */
	__u64 compared;		/* exits compared in this calibration or verify run */
	__u64 mismatches;	/* of those, that differed (or could not be read) */
	__u64 calibrations;	/* calibrations started since the module loaded */
	__u64 fallbacks;	/* direct mode left for an impossible value */
	__u64 direct_exits;	/* exits read directly (a CTL_RESET zeroes it) */
	__u64 direct_since_ts;	/* trace clock when direct began (mode DIRECT) */
	__u32 calib_exits;	/* what calibration needs: exits ... */
	__u32 calib_reasons;	/* ... of this many distinct reasons */
	char why[VMSCOPE_EXIT_WHY_LEN];	/* REFUSED_LAYOUT: which field */
};

#endif /* VMSCOPE_EVENTS_H */
