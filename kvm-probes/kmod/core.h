/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal interface of the kvm-probes code inside vmscope_host.ko: the
 * per-CPU state every probe touches, the process filter, and emission.
 *
 * Probe context rules: tracepoint probes run with preemption disabled, may
 * nest (interrupts, NMIs are not traced here but irqs are), and must not
 * allocate, sleep or take locks that readers take. Everything here is
 * per-CPU or read-mostly and written only from the ioctl path.
 */
#ifndef VMSCOPE_KVM_PROBES_CORE_H
#define VMSCOPE_KVM_PROBES_CORE_H

#include <linux/bits.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/trace_clock.h>
#include "../vmscope_events.h"
#include "../../ringbuf/ringbuf.h"

/* The last payload of one event on one CPU (stand-in for the ring buffer). */
struct vmscope_last {
	u64 seq;		/* odd while being written; writes = seq / 2 */
	u64 timestamp;
	u8 payload[VMSCOPE_MAX_PAYLOAD];
};

/* Exit details that a perf overflow handler left for the kvm_exit probe. */
struct vmscope_exit_scratch {
	bool valid;
	u32 vcpu_id;
	u32 exit_reason;
	u32 intr_info;
	u32 error_code;
	u64 guest_rip;
	u64 info1;
	u64 info2;
};

struct vmscope_cpu {
	u64 seen[VMSCOPE_NR_EVENTS];
	u64 matched[VMSCOPE_NR_EVENTS];
	u64 exit_reason_missed;
	/* VMSCOPE_CTL_MEASURE: see struct vmscope_probe_stats */
	u64 exit_stamp;
	u64 exit_timing_n;
	u64 exit_timing_gap_ns;
	u64 exit_timing_probe_ns;
	struct vmscope_exit_scratch exit;
	/* Who exited last on this CPU: the vCPU id for kvm_hypercall. */
	pid_t last_exit_tid;
	u32 last_exit_vcpu;
	/*
	 * A traced thread that was switched out runnable here (preempted)
	 * and has neither run here nor migrated away since, or 0. While it
	 * waits, every switch on this CPU is recorded, so that the whole
	 * wait is attributed to the tasks that really ran, not just to the
	 * first one.
	 */
	pid_t waiting_pid;
	struct vmscope_last last[VMSCOPE_NR_EVENTS];
};

DECLARE_PER_CPU(struct vmscope_cpu, vmscope_cpu);

/* Written by the ioctl path (under vmscope_ctl_lock), read by probes. */
struct vmscope_filter {
	bool enabled;
	bool measure;			/* VMSCOPE_CTL_MEASURE */
	u64 events;			/* bit (1 << id) per selected event */
	u32 nr_pids;			/* 0: every process */
	pid_t pids[VMSCOPE_MAX_PIDS];
};
extern struct vmscope_filter vmscope_filter;

static __always_inline bool vmscope_tgid_wanted(pid_t tgid)
{
	u32 i, n = READ_ONCE(vmscope_filter.nr_pids);

	if (!n)
		return true;
	for (i = 0; i < n && i < VMSCOPE_MAX_PIDS; i++)
		if (READ_ONCE(vmscope_filter.pids[i]) == tgid)
			return true;
	return false;
}

/* Probing is on and @id selected: counted as seen. */
static __always_inline bool vmscope_probe_on(unsigned int id)
{
	if (!READ_ONCE(vmscope_filter.enabled) ||
	    !(READ_ONCE(vmscope_filter.events) & BIT_ULL(id)))
		return false;
	this_cpu_inc(vmscope_cpu.seen[id]);
	return true;
}

/*
 * Every probe starts here: false when probing is off (nothing counted) or
 * when none of @tgid_a, @tgid_b (0: unused) is traced (counted as seen).
 */
static __always_inline bool vmscope_probe_begin(unsigned int id, pid_t tgid_a,
						pid_t tgid_b)
{
	if (!vmscope_probe_on(id))
		return false;
	if (!vmscope_tgid_wanted(tgid_a) && !(tgid_b && vmscope_tgid_wanted(tgid_b)))
		return false;
	this_cpu_inc(vmscope_cpu.matched[id]);
	return true;
}

/*
 * The recording session's per-CPU buffers, or NULL. Set by the session
 * code (kmod-session/session.c, through host-kmod's vmscope_session_ops)
 * before it starts and cleared, followed by synchronize_rcu(), before it
 * flushes and frees: probes run with preemption disabled, so the grace
 * period covers every writer.
 */
extern struct vmscope_rb_chan *vmscope_rec_chan;

/*
 * Publishes a filled payload. With a session: one record (reserve, one
 * memcpy, commit) in this CPU's buffer; a drop is counted by the buffer.
 * Always: one memcpy into this CPU's "last event" slot for `stats --last`.
 * A nested probe (interrupt) that finds that slot mid-write skips it rather
 * than tear it; the counts above are exact regardless.
 */
static __always_inline void vmscope_emit(unsigned int id, const void *payload,
					 size_t size, u64 ts)
{
	struct vmscope_rb_chan *chan = READ_ONCE(vmscope_rec_chan);
	struct vmscope_last *l = this_cpu_ptr(&vmscope_cpu.last[id]);
	u64 seq;

	if (chan)
		vmscope_rb_chan_write(chan, id, payload, size);
	seq = READ_ONCE(l->seq);
	if (seq & 1)
		return;
	WRITE_ONCE(l->seq, seq + 1);
	smp_wmb();	/* readers on other CPUs see odd before the data changes */
	l->timestamp = ts;
	memcpy(l->payload, payload, size);
	smp_wmb();	/* the data is complete before seq turns even */
	WRITE_ONCE(l->seq, seq + 2);
}

#define VMSCOPE_EMIT(ev, var, ts) \
	vmscope_emit(VMSCOPE_EV_##ev, &(var), sizeof(var), (ts))

/* attach.c */
int vmscope_probes_init(void);
void vmscope_probes_exit(void);
u64 vmscope_probes_attached(void);	/* bit per event id */
u32 vmscope_probes_state(void);		/* VMSCOPE_STATE_* */
void vmscope_probes_attach_counts(u64 *attach, u64 *detach);
/*
 * Starts/stops probing; filter as given. Process context. owner: the
 * issuing file, remembered with VMSCOPE_CTL_UNTIL_CLOSE.
 */
int vmscope_probes_control(const struct vmscope_probe_ctl *ctl,
			   const void *owner);
/* A file's release: probing off if its UNTIL_CLOSE enable is in force. */
void vmscope_probes_release(const void *owner);

/* exit_reason.c: perf counters on kvm_exit for the exit details */
int vmscope_exit_reason_start(struct module *kvm);
void vmscope_exit_reason_stop(void);
bool vmscope_exit_reason_active(void);

/* sync_pair.c */
void vmscope_sync_t2(u64 t2, u64 tsc_a, u64 tsc_b, u64 token, u64 seq,
		     u64 t1, u64 guest_cpu, u32 vcpu_id);
void vmscope_sync_maybe_t3(u32 vcpu_id);
void vmscope_sync_reset(void);
u64 vmscope_sync_collisions(void);

/* probes.c: one entry per tracepoint we attach to */
struct vmscope_tp_probe {
	const char *name;	/* tracepoint */
	bool in_kvm;		/* lives in kvm.ko (else vmlinux) */
	int prio;		/* tracepoint probe priority */
	void *probe;
	u64 events;		/* bits of the event ids this probe emits */
	struct tracepoint *tp;	/* non-NULL while attached (attach.c) */
};
extern struct vmscope_tp_probe vmscope_tp_probes[];
extern const unsigned int vmscope_nr_tp_probes;

#endif /* VMSCOPE_KVM_PROBES_CORE_H */
