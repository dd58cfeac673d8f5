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
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/trace_clock.h>
#include <vmscope/ioctl.h>
#include "../vmscope_events.h"
#include "../../ringbuf/ringbuf.h"

struct kvm_vcpu;
struct module;

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

/*
 * Probing slots: one per capture session (VMSCOPE_HOST_SESSIONS at once,
 * each with its own filter and ring buffers) and one shared slot that a
 * file without a session controls (`vmscope stats --start`), which counts
 * but records nowhere.
 */
#define VMSCOPE_SHARED_SLOT	VMSCOPE_HOST_SESSIONS
#define VMSCOPE_NR_SLOTS	(VMSCOPE_HOST_SESSIONS + 1)

/*
 * A set of slots, a bit each: more slots than a long has bits, passed by
 * value (two words in registers). Where such a set is shared, each word
 * is read and written whole (READ_ONCE/WRITE_ONCE): a probe sees each
 * slot's bit as before or after a change, as it would in one word.
 */
#define VMSCOPE_SLOT_WORDS	BITS_TO_LONGS(VMSCOPE_NR_SLOTS)
struct vmscope_slots {
	unsigned long w[VMSCOPE_SLOT_WORDS];
};

#define for_each_vmscope_slot(s, set) \
	for_each_set_bit(s, (set).w, VMSCOPE_NR_SLOTS)

static __always_inline bool vmscope_slots_any(struct vmscope_slots a)
{
	unsigned long x = 0;
	unsigned int i;

	for (i = 0; i < VMSCOPE_SLOT_WORDS; i++)
		x |= a.w[i];
	return x;
}

static __always_inline bool vmscope_slots_has(struct vmscope_slots a,
					      unsigned int s)
{
	return a.w[BIT_WORD(s)] & BIT_MASK(s);
}

static __always_inline void vmscope_slots_add(struct vmscope_slots *a,
					      unsigned int s)
{
	a->w[BIT_WORD(s)] |= BIT_MASK(s);
}

static __always_inline struct vmscope_slots
vmscope_slots_and(struct vmscope_slots a, struct vmscope_slots b)
{
	unsigned int i;

	for (i = 0; i < VMSCOPE_SLOT_WORDS; i++)
		a.w[i] &= b.w[i];
	return a;
}

static __always_inline struct vmscope_slots
vmscope_slots_or(struct vmscope_slots a, struct vmscope_slots b)
{
	unsigned int i;

	for (i = 0; i < VMSCOPE_SLOT_WORDS; i++)
		a.w[i] |= b.w[i];
	return a;
}

/* @a without slot @s */
static __always_inline struct vmscope_slots
vmscope_slots_without(struct vmscope_slots a, unsigned int s)
{
	a.w[BIT_WORD(s)] &= ~BIT_MASK(s);
	return a;
}

static __always_inline struct vmscope_slots
vmscope_slots_read(const struct vmscope_slots *p)
{
	struct vmscope_slots a;
	unsigned int i;

	for (i = 0; i < VMSCOPE_SLOT_WORDS; i++)
		a.w[i] = READ_ONCE(p->w[i]);
	return a;
}

static __always_inline void vmscope_slots_write(struct vmscope_slots *p,
						struct vmscope_slots a)
{
	unsigned int i;

	for (i = 0; i < VMSCOPE_SLOT_WORDS; i++)
		WRITE_ONCE(p->w[i], a.w[i]);
}
/* every event id has an entry in a session's route (ringbuf.h) */
static_assert(VMSCOPE_NR_EVENTS <= VMSCOPE_RB_ROUTE_IDS);

/*
 * VMSCOPE_CTL_MEASURE's timing of one tracepoint: a stamp probe above the
 * default priority sets @stamp; our payload probe (below it) adds the
 * time since (the kernel's own probes in between: perf's, ftrace's) to
 * @gap_ns and its own time to @probe_ns.
 */
struct vmscope_timing {
	u64 stamp;
	u64 n;
	u64 gap_ns;
	u64 probe_ns;
};

/*
 * Per slot and CPU: the threads the slot traces that were switched out
 * runnable on this CPU (preempted) and have neither run here nor migrated
 * away since. While any waits, every switch on this CPU goes to that
 * slot, so that the whole wait is attributed to the tasks that really ran,
 * not just to the first one. A set, not one thread: a vCPU thread waits
 * here, another traced thread (a QEMU worker) is preempted here after it
 * and moved away; the vCPU thread still waits.
 *
 * Only this CPU's sched_switch probe fills an entry (0 -> pid) and it
 * empties the entry of a thread that runs here again; sched_migrate_task,
 * on whichever CPU moves a thread off this one, empties that thread's
 * entry with cmpxchg, so it never clears an entry refilled meanwhile.
 * When a thread finds no free entry, @overflow makes every switch here go
 * to the slot until the slot ends: more records, never a wait unseen.
 */
#define VMSCOPE_WAITERS 8
struct vmscope_waiters {
	pid_t pid[VMSCOPE_WAITERS];	/* 0: free */
	bool overflow;
};

/*
 * Every slot's waiters on one CPU, and @busy: a bit per slot that may
 * have a waiter here (set whenever one is added, cleared by this CPU's
 * sched_switch when it finds none), so that a switch visits only the
 * slots that trace its threads or have one waiting, not every slot on.
 * Allocated per CPU at load (alloc_percpu): with the counters below, 127
 * slots do not fit the kernel's reserve for modules' static per-CPU data
 * (PERCPU_MODULE_RESERVE, 8 KiB shared by every module).
 */
struct vmscope_cpu_waiting {
	struct vmscope_slots busy;
	struct vmscope_waiters slot[VMSCOPE_NR_SLOTS];
};
extern struct vmscope_cpu_waiting __percpu *vmscope_waiting;

struct vmscope_cpu {
	/* hits while some slot selected the event, and that some slot took */
	u64 seen[VMSCOPE_NR_EVENTS];
	u64 matched[VMSCOPE_NR_EVENTS];
	u64 exit_reason_missed;
	u64 exit_direct;	/* kvm_exit details read from the VMCB */
	/* VMSCOPE_CTL_MEASURE: see struct vmscope_probe_stats */
	struct vmscope_timing exit_timing;
	struct vmscope_timing entry_timing;
	struct vmscope_exit_scratch exit;
	/* Who exited last on this CPU: the vCPU id for kvm_hypercall. */
	pid_t last_exit_tid;
	u32 last_exit_vcpu;
	struct vmscope_last last[VMSCOPE_NR_EVENTS];
};

DECLARE_PER_CPU(struct vmscope_cpu, vmscope_cpu);

/*
 * Records handed to each session's buffers, by event: apart from struct
 * vmscope_cpu, so that a counter reset never touches a session's own.
 * Zeroed when a session takes the slot. Per CPU, allocated at load.
 */
struct vmscope_handed {
	u64 n[VMSCOPE_HOST_SESSIONS][VMSCOPE_NR_EVENTS];
};
extern struct vmscope_handed __percpu *vmscope_handed;
/* alloc_percpu() refuses more */
static_assert(sizeof(struct vmscope_handed) <= PCPU_MIN_UNIT_SIZE);
static_assert(sizeof(struct vmscope_cpu_waiting) <= PCPU_MIN_UNIT_SIZE);

/*
 * One slot's filter. Written by the ioctl path (under vmscope_ctl_lock)
 * only while the slot's bit in vmscope_slots_on is clear and a grace
 * period has passed since, so a probe that saw the bit set reads a
 * stable filter.
 */
struct vmscope_filter {
	u64 events;			/* bit (1 << id) per selected event */
	u32 nr_pids;			/* 0: every process */
	pid_t pids[VMSCOPE_MAX_PIDS];
	/*
	 * The session's channels (the one of each event id), or NULL (the
	 * shared slot, or a session not yet started). Set by the session
	 * code (kmod-session/, through host-kmod's vmscope_session_ops)
	 * before it records and cleared, followed by synchronize_rcu(),
	 * before it flushes and frees: probes run with preemption disabled,
	 * so the grace period covers every writer.
	 */
	const struct vmscope_rb_route *route;
};
extern struct vmscope_filter vmscope_filters[VMSCOPE_NR_SLOTS];
/* The slots whose probing is on; none: every probe returns at once. */
extern struct vmscope_slots vmscope_slots_on;
/* Some slot on asked for VMSCOPE_CTL_MEASURE. */
extern bool vmscope_measure;


/*
 * The filters indexed for the probes (attach.c, index_filters()): per
 * event id the slots whose filter selects it, the slots without a pid
 * list (every process), and a table of the listed thread groups, each
 * with the slots that list it (open addressing; pid 0: empty). An event
 * then costs one lookup, not a walk of every slot on and its pids: each
 * recorded domain would otherwise slow every other domain's probes
 * (bench/vm/sessions-probe-cost.sh). Rebuilt when a filter changes, only
 * then, into the table no probe reads, then published; a filter changes
 * only while its slot is off, so whichever masks and table a probe reads
 * give the same slots among those on.
 */
#define VMSCOPE_PID_TABLE	2048
static_assert(VMSCOPE_PID_TABLE >= 2 * VMSCOPE_NR_SLOTS * VMSCOPE_MAX_PIDS);
static_assert((VMSCOPE_PID_TABLE & (VMSCOPE_PID_TABLE - 1)) == 0);

struct vmscope_pid_index {
	struct {
		pid_t tgid;
		struct vmscope_slots slots;
	} e[VMSCOPE_PID_TABLE];
};
extern struct vmscope_slots vmscope_event_slots[VMSCOPE_NR_EVENTS];
extern struct vmscope_slots vmscope_any_pid_slots;
extern struct vmscope_pid_index __rcu *vmscope_pid_index;

static __always_inline u32 vmscope_pid_hash(pid_t tgid)
{
	return hash_32((u32)tgid, ilog2(VMSCOPE_PID_TABLE));
}

/* The slots whose pid list holds @tgid. Probe context (RCU-sched). */
static __always_inline struct vmscope_slots vmscope_pid_slots(pid_t tgid)
{
	const struct vmscope_pid_index *x = rcu_dereference_sched(vmscope_pid_index);
	struct vmscope_slots none = {};
	u32 i = vmscope_pid_hash(tgid), n;

	if (!x || tgid <= 0)
		return none;
	for (n = 0; n < VMSCOPE_PID_TABLE; n++, i = (i + 1) & (VMSCOPE_PID_TABLE - 1)) {
		if (x->e[i].tgid == tgid)
			return x->e[i].slots;
		if (!x->e[i].tgid)
			break;
	}
	return none;
}

/* The slots on that selected @id; the hit counted as seen if any. */
static __always_inline struct vmscope_slots vmscope_probe_on(unsigned int id)
{
	struct vmscope_slots on = vmscope_slots_read(&vmscope_slots_on), sel;

	if (likely(!vmscope_slots_any(on)))
		return on;
	sel = vmscope_slots_and(on, vmscope_slots_read(&vmscope_event_slots[id]));
	if (vmscope_slots_any(sel))
		this_cpu_inc(vmscope_cpu.seen[id]);
	return sel;
}

/* Of @sel, the slots that trace @tgid. */
static __always_inline struct vmscope_slots
vmscope_slots_wanting(struct vmscope_slots sel, pid_t tgid)
{
	return vmscope_slots_and(sel, vmscope_slots_or(vmscope_slots_read(&vmscope_any_pid_slots),
						       vmscope_pid_slots(tgid)));
}

/*
 * Every probe starts here: the slots that take this event for a thread of
 * @tgid (none: nothing counted when probing is off, "seen" when no slot
 * traces @tgid).
 */
static __always_inline struct vmscope_slots vmscope_probe_begin(unsigned int id,
								  pid_t tgid)
{
	struct vmscope_slots sel = vmscope_probe_on(id), hit;

	if (!vmscope_slots_any(sel))
		return sel;
	hit = vmscope_slots_wanting(sel, tgid);
	if (vmscope_slots_any(hit))
		this_cpu_inc(vmscope_cpu.matched[id]);
	return hit;
}

/*
 * Publishes a filled payload. For each slot in @to with a session: one
 * record (reserve, one memcpy, commit) in this CPU's buffer of the
 * channel that session routes @id to; a drop is counted by the buffer.
 * Then one memcpy into this CPU's "last event" slot for `stats --last`,
 * stamped @ts, or when @ts is 0 with the first record's own timestamp
 * (read at its reserve), so that a probe reads the clock once, not once
 * for the record and again for the slot (a clock read is most of a
 * probe's cost in the test host). A nested probe (interrupt) that finds
 * that slot mid-write skips it rather than tear it; the counts above are
 * exact regardless.
 */
static __always_inline void vmscope_emit(struct vmscope_slots to, unsigned int id,
					 const void *payload, size_t size,
					 u64 ts)
{
	struct vmscope_last *l = this_cpu_ptr(&vmscope_cpu.last[id]);
	const struct vmscope_rb_route *route;
	struct vmscope_rb_chan *chan;
	struct vmscope_rb_ctx ctx;
	unsigned int s;
	u64 seq;

	for_each_vmscope_slot(s, to) {
		route = READ_ONCE(vmscope_filters[s].route);
		/* only session slots (< VMSCOPE_HOST_SESSIONS) have one */
		if (!route || s >= VMSCOPE_HOST_SESSIONS)
			continue;
		chan = vmscope_rb_route_chan(route, id);
		if (!chan)
			continue;
		if (!vmscope_rb_chan_reserve(chan, &ctx, id, size)) {
			memcpy(ctx.payload, payload, size);
			if (!ts)
				ts = ctx.ts;
			vmscope_rb_chan_commit(&ctx);
		}
		this_cpu_inc(vmscope_handed->n[s][id]);
	}
	seq = READ_ONCE(l->seq);
	if (seq & 1)
		return;
	if (!ts)	/* no record written: the slot still gets a time */
		ts = trace_clock_local();
	WRITE_ONCE(l->seq, seq + 1);
	smp_wmb();	/* readers on other CPUs see odd before the data changes */
	l->timestamp = ts;
	memcpy(l->payload, payload, size);
	smp_wmb();	/* the data is complete before seq turns even */
	WRITE_ONCE(l->seq, seq + 2);
}

/* The record's own timestamp; _AT: the "last event" slot gets @ts. */
#define VMSCOPE_EMIT(to, ev, var) \
	vmscope_emit((to), VMSCOPE_EV_##ev, &(var), sizeof(var), 0)
#define VMSCOPE_EMIT_AT(to, ev, var, ts) \
	vmscope_emit((to), VMSCOPE_EV_##ev, &(var), sizeof(var), (ts))

/* attach.c */
int vmscope_probes_init(void);
void vmscope_probes_exit(void);
u64 vmscope_probes_attached(void);	/* bit per event id */
u32 vmscope_probes_state(void);		/* VMSCOPE_STATE_* */
void vmscope_probes_attach_counts(u64 *attach, u64 *detach);
/*
 * Starts/stops the probing of @owner's slot: its session's while it
 * records (vmscope_probes_session_start()), else the shared slot.
 * Process context. -EBUSY and nothing changes: for the shared slot while
 * another file's VMSCOPE_CTL_UNTIL_CLOSE enable is in force or while a
 * session probes; for VMSCOPE_CTL_RESET while another slot is on (the
 * counters are module-wide).
 */
int vmscope_probes_control(const struct vmscope_probe_ctl *ctl,
			   const void *owner);
/* A file's release: shared probing off if its UNTIL_CLOSE enable is in force. */
void vmscope_probes_release(const void *owner);
/*
 * Session slot @slot (< VMSCOPE_HOST_SESSIONS) now belongs to @owner and
 * records into @route's channels, probing off until @owner enables it; and back.
 * Process context; stop leaves the grace period to the caller.
 */
void vmscope_probes_session_start(unsigned int slot, const void *owner,
				  const struct vmscope_rb_route *route);
void vmscope_probes_session_stop(unsigned int slot);
/* @owner's session's handed counts (n of them), or -ENODATA. */
int vmscope_probes_session_counts(const void *owner, u64 *handed, unsigned int n);

/* exit_reason.c: perf counters on kvm_exit for the exit details */
int vmscope_exit_reason_start(struct module *kvm);
void vmscope_exit_reason_stop(void);
bool vmscope_exit_reason_active(void);

/*
 * exit_direct.c: the same details read from the VMCB once calibration
 * against the perf path verified the read (VMSCOPE_EXIT_MODE_*).
 */
#define VMSCOPE_EXIT_CALIB_EXITS	10000
#define VMSCOPE_EXIT_CALIB_REASONS	3
/* What the slots on ask for (VMSCOPE_CTL_EXIT_*), strongest wins. */
#define VMSCOPE_EXIT_REQ_AUTO		0
#define VMSCOPE_EXIT_REQ_PERF		1
#define VMSCOPE_EXIT_REQ_VERIFY		2
extern int vmscope_exit_mode;
/* Probe context: compares @p (perf's record) with the VMCB (calibrating, verifying). */
void vmscope_exit_compare(const struct kvm_vcpu *vcpu, u32 isa,
			  const struct vmscope_exit_scratch *p);
/* Probe context, mode DIRECT: the details into @d, or false (dropped to calibration). */
bool vmscope_exit_direct_read(const struct kvm_vcpu *vcpu, u32 isa,
			      struct vmscope_exit_scratch *d);
/* Under the control lock. */
void vmscope_exit_src_want(bool want, u32 req);
void vmscope_exit_src_sync(struct module *kvm);
void vmscope_exit_src_kvm_gone(void);
int vmscope_exit_set_layout(const struct vmscope_exit_layout *l);
void vmscope_exit_get_mode(struct vmscope_exit_mode *m);
/* Details wanted and on their way (any mode but NONE). */
bool vmscope_exit_src_on(void);
int vmscope_exit_direct_init(void);
void vmscope_exit_direct_exit(void);
/* attach.c: queue the work item that calls vmscope_exit_src_sync() */
void vmscope_exit_kick(void);
/* attach.c: the ioctls, under the control lock */
int vmscope_probes_exit_layout(const struct vmscope_exit_layout *l);
void vmscope_probes_exit_mode(struct vmscope_exit_mode *m);

/* sync_pair.c */
void vmscope_sync_t2(struct vmscope_slots to, u64 t2, u64 tsc_a, u64 tsc_b,
		     u64 token, u64 seq, u64 t1, u64 guest_cpu, u32 vcpu_id);
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
