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
#define VMSCOPE_STATE_EXIT_REASON	(1u << 3)	/* perf counters for kvm_exit reasons live */

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

#endif /* VMSCOPE_EVENTS_H */
