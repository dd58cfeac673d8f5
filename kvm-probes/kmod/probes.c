// SPDX-License-Identifier: GPL-2.0
/*
 * The probes: one small function per tracepoint, filling the payload that
 * events.def defines from the tracepoint's arguments, and the table of
 * tracepoints to attach them to. Nothing else in vmscope knows an event.
 *
 * Payloads are zeroed first so that tail padding never carries stack bytes
 * to userspace.
 */
#include <linux/build_bug.h>
#include <linux/kvm_host.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/tracepoint.h>
#include <trace/events/kvm.h>
#include <trace/events/sched.h>
#include <vmscope/sync_abi.h>
#include "clock_tsc.h"
#include "core.h"
#include "exit_read.h"
#include "fill_sched.h"
#include "protos.h"

/*
 * VMSCOPE_CTL_MEASURE: the stamp probes are registered at a higher
 * priority than the kernel's probes (perf's, ftrace's), our payload
 * probes below them, so that the payload probe can time what ran in
 * between (the gap) and itself (struct vmscope_timing).
 */
static __always_inline void vmscope_timing_stamp(struct vmscope_timing __percpu *t)
{
	if (READ_ONCE(vmscope_measure))
		this_cpu_write(t->stamp, local_clock());
}

/* At the payload probe's start: its entry time, or 0 when not timing. */
static __always_inline u64 vmscope_timing_begin(struct vmscope_timing __percpu *t)
{
	u64 t_in, stamp;

	if (!READ_ONCE(vmscope_measure))
		return 0;
	t_in = local_clock();
	stamp = this_cpu_read(t->stamp);
	this_cpu_write(t->stamp, 0);
	if (!stamp || stamp > t_in)
		return 0;
	this_cpu_add(t->gap_ns, t_in - stamp);
	this_cpu_inc(t->n);
	return t_in;
}

static __always_inline void vmscope_timing_end(struct vmscope_timing __percpu *t, u64 t_in)
{
	if (t_in)
		this_cpu_add(t->probe_ns, local_clock() - t_in);
}

static void vmscope_probe_kvm_exit_stamp(void *data, struct kvm_vcpu *vcpu,
					 u32 isa)
{
	vmscope_timing_stamp(&vmscope_cpu.exit_timing);
}

static void vmscope_probe_kvm_exit(void *data, struct kvm_vcpu *vcpu, u32 isa)
{
	struct vmscope_exit_scratch *x = this_cpu_ptr(&vmscope_cpu.exit);
	u64 t_in = vmscope_timing_begin(&vmscope_cpu.exit_timing);
	struct vmscope_exit_scratch d;
	struct vmscope_ev_kvm_exit e;
	struct vmscope_slots to;
	bool have;

	/*
	 * The perf overflow handler (exit_reason.c) ran just before us in this
	 * same tracepoint call on this CPU; take its details once.
	 */
	have = READ_ONCE(x->valid) && x->vcpu_id == vcpu->vcpu_id;
	WRITE_ONCE(x->valid, false);
	this_cpu_write(vmscope_cpu.last_exit_tid, current->pid);
	this_cpu_write(vmscope_cpu.last_exit_vcpu, vcpu->vcpu_id);
	/* calibrating or verifying: KVM's record against the VMCB read */
	if (have && READ_ONCE(vmscope_exit_mode) != VMSCOPE_EXIT_MODE_DIRECT)
		vmscope_exit_compare(vcpu, isa, x);

	to = vmscope_probe_begin(VMSCOPE_EV_kvm_exit, current->tgid);
	if (!vmscope_slots_any(to))
		goto out;
	memset(&e, 0, sizeof(e));
	e.vcpu_id = vcpu->vcpu_id;
	e.isa = isa;
	if (!have && READ_ONCE(vmscope_exit_mode) == VMSCOPE_EXIT_MODE_DIRECT) {
		u32 hi;

		/* SVM inline, in this text page; VMX and a fallback out of line */
		if (isa == VMSCOPE_KVM_ISA_SVM && !vmscope_svm_read(vcpu, &d, &hi) &&
		    vmscope_svm_possible(d.exit_reason, hi)) {
			this_cpu_inc(vmscope_cpu.exit_direct);
			have = true;
		} else {
			have = vmscope_exit_direct_read(vcpu, isa, &d);
		}
		if (have)
			x = &d;
	}
	if (have) {
		e.exit_reason = x->exit_reason;
		e.guest_rip = x->guest_rip;
		e.info1 = x->info1;
		e.info2 = x->info2;
		e.intr_info = x->intr_info;
		e.error_code = x->error_code;
		e.reason_valid = 1;
	} else {
		/* SVM caches RIP at every exit; VMX only when someone read it. */
		if (vcpu->arch.regs_avail & BIT(VCPU_REGS_RIP))
			e.guest_rip = vcpu->arch.regs[VCPU_REGS_RIP];
		if (vmscope_exit_src_on())
			this_cpu_inc(vmscope_cpu.exit_reason_missed);
	}
	VMSCOPE_EMIT(to, kvm_exit, e);
out:
	vmscope_timing_end(&vmscope_cpu.exit_timing, t_in);
}

static void vmscope_probe_kvm_entry_stamp(void *data, struct kvm_vcpu *vcpu,
					  bool immediate_exit)
{
	vmscope_timing_stamp(&vmscope_cpu.entry_timing);
}

static void vmscope_probe_kvm_entry(void *data, struct kvm_vcpu *vcpu,
				    bool immediate_exit)
{
	u64 t_in = vmscope_timing_begin(&vmscope_cpu.entry_timing);
	struct vmscope_ev_kvm_entry e;
	struct vmscope_slots to;

	vmscope_sync_maybe_t3(vcpu->vcpu_id);
	to = vmscope_probe_begin(VMSCOPE_EV_kvm_entry, current->tgid);
	if (!vmscope_slots_any(to))
		goto out;
	memset(&e, 0, sizeof(e));
	e.vcpu_id = vcpu->vcpu_id;
	e.immediate_exit = immediate_exit;
	if (vcpu->arch.regs_avail & BIT(VCPU_REGS_RIP))
		e.rip = vcpu->arch.regs[VCPU_REGS_RIP];
	VMSCOPE_EMIT(to, kvm_entry, e);
out:
	vmscope_timing_end(&vmscope_cpu.entry_timing, t_in);
}

static void vmscope_probe_kvm_cr(void *data, unsigned int rw, unsigned int cr,
				 unsigned long val)
{
	struct vmscope_ev_kvm_cr e;
	struct vmscope_slots to;

	to = vmscope_probe_begin(VMSCOPE_EV_kvm_cr, current->tgid);
	if (!vmscope_slots_any(to))
		return;
	memset(&e, 0, sizeof(e));
	e.val = val;
	e.cr = cr;
	e.write = rw;
	VMSCOPE_EMIT(to, kvm_cr, e);
}

static void vmscope_probe_kvm_page_fault(void *data, struct kvm_vcpu *vcpu,
					 u64 address, u64 error_code)
{
	struct vmscope_ev_kvm_page_fault e;
	struct vmscope_slots to;

	to = vmscope_probe_begin(VMSCOPE_EV_kvm_page_fault, current->tgid);
	if (!vmscope_slots_any(to))
		return;
	memset(&e, 0, sizeof(e));
	e.address = address;
	e.error_code = error_code;
	e.vcpu_id = vcpu->vcpu_id;
	VMSCOPE_EMIT(to, kvm_page_fault, e);
}

static void vmscope_probe_kvm_hypercall(void *data, unsigned long nr,
					unsigned long a0, unsigned long a1,
					unsigned long a2, unsigned long a3)
{
	struct vmscope_ev_kvm_hypercall e;
	u64 tsc_a = 0, tsc_b = 0;
	/* a sync exchange's t2 (and the slot's time); else the record's own */
	u64 ts = nr == VMSCOPE_SYNC_HC_NR ? vmscope_clock_tsc(&tsc_a, &tsc_b) : 0;
	u32 vcpu_id = U32_MAX;
	struct vmscope_slots to = {};

	if (nr == VMSCOPE_SYNC_HC_NR)
		to = vmscope_probe_begin(VMSCOPE_EV_sync_t2, current->tgid);
	if (vmscope_slots_any(to)) {
		/* Our kvm_exit probe saw this thread's VMMCALL exit just now. */
		if (this_cpu_read(vmscope_cpu.last_exit_tid) == current->pid)
			vcpu_id = this_cpu_read(vmscope_cpu.last_exit_vcpu);
		vmscope_sync_t2(to, ts, tsc_a, tsc_b, a0, a1, a2, a3, vcpu_id);
	}
	to = vmscope_probe_begin(VMSCOPE_EV_kvm_hypercall, current->tgid);
	if (!vmscope_slots_any(to))
		return;
	memset(&e, 0, sizeof(e));
	e.nr = nr;
	e.a0 = a0;
	e.a1 = a1;
	e.a2 = a2;
	e.a3 = a3;
	VMSCOPE_EMIT_AT(to, kvm_hypercall, e, ts);
}

static void vmscope_probe_kvm_pio(void *data, unsigned int rw,
				  unsigned int port, unsigned int size,
				  unsigned int count, const void *val)
{
	struct vmscope_ev_kvm_pio e;
	struct vmscope_slots to;

	to = vmscope_probe_begin(VMSCOPE_EV_kvm_pio, current->tgid);
	if (!vmscope_slots_any(to))
		return;
	memset(&e, 0, sizeof(e));
	e.write = rw;
	e.port = port;
	e.size = size;
	e.count = count;
	/* As KVM's own TP_fast_assign: the first element, sized by @size. */
	if (val && size == 1)
		e.val = *(const u8 *)val;
	else if (val && size == 2)
		e.val = *(const u16 *)val;
	else if (val)
		e.val = *(const u32 *)val;
	VMSCOPE_EMIT(to, kvm_pio, e);
}

static void vmscope_probe_kvm_mmio(void *data, int type, int len, u64 gpa,
				   void *val)
{
	struct vmscope_ev_kvm_mmio e;
	struct vmscope_slots to;

	to = vmscope_probe_begin(VMSCOPE_EV_kvm_mmio, current->tgid);
	if (!vmscope_slots_any(to))
		return;
	memset(&e, 0, sizeof(e));
	e.gpa = gpa;
	e.type = type;
	e.len = len;
	/* NULL for reads not yet satisfied by userspace. */
	if (val && len > 0)
		memcpy(&e.val, val, min_t(u32, sizeof(e.val), len));
	VMSCOPE_EMIT(to, kvm_mmio, e);
}

static void vmscope_probe_kvm_msr(void *data, unsigned int write, u32 ecx,
				  u64 val, bool exception)
{
	struct vmscope_ev_kvm_msr e;
	struct vmscope_slots to;

	to = vmscope_probe_begin(VMSCOPE_EV_kvm_msr, current->tgid);
	if (!vmscope_slots_any(to))
		return;
	memset(&e, 0, sizeof(e));
	e.data = val;
	e.ecx = ecx;
	e.write = write;
	e.exception = exception;
	VMSCOPE_EMIT(to, kvm_msr, e);
}

static void vmscope_probe_kvm_inj_virq(void *data, unsigned int vector,
				       bool soft, bool reinjected)
{
	struct vmscope_ev_kvm_inj_virq e;
	struct vmscope_slots to;

	to = vmscope_probe_begin(VMSCOPE_EV_kvm_inj_virq, current->tgid);
	if (!vmscope_slots_any(to))
		return;
	memset(&e, 0, sizeof(e));
	e.vector = vector;
	e.soft = soft;
	e.reinjected = reinjected;
	VMSCOPE_EMIT(to, kvm_inj_virq, e);
}

static void vmscope_probe_kvm_write_tsc_offset(void *data, unsigned int vcpu_id,
					       __u64 previous, __u64 next)
{
	struct vmscope_ev_kvm_write_tsc_offset e;
	struct vmscope_slots to;

	to = vmscope_probe_begin(VMSCOPE_EV_kvm_write_tsc_offset, current->tgid);
	if (!vmscope_slots_any(to))
		return;
	memset(&e, 0, sizeof(e));
	e.previous_tsc_offset = previous;
	e.next_tsc_offset = next;
	e.vcpu_id = vcpu_id;
	VMSCOPE_EMIT(to, kvm_write_tsc_offset, e);
}

static void vmscope_probe_kvm_userspace_exit(void *data, __u32 reason, int err)
{
	struct vmscope_ev_kvm_userspace_exit e;
	struct vmscope_slots to;

	to = vmscope_probe_begin(VMSCOPE_EV_kvm_userspace_exit, current->tgid);
	if (!vmscope_slots_any(to))
		return;
	memset(&e, 0, sizeof(e));
	e.reason = reason;
	e.errno_val = err;
	VMSCOPE_EMIT(to, kvm_userspace_exit, e);
}

/* kvm_vcpu_halt()'s end, on the vCPU thread (virt/kvm/kvm_main.c). */
static void vmscope_probe_kvm_vcpu_wakeup(void *data, __u64 ns, bool waited,
					  bool valid)
{
	struct vmscope_ev_kvm_vcpu_wakeup e;
	struct vmscope_slots to;

	to = vmscope_probe_begin(VMSCOPE_EV_kvm_vcpu_wakeup, current->tgid);
	if (!vmscope_slots_any(to))
		return;
	memset(&e, 0, sizeof(e));
	e.ns = ns;
	e.waited = waited;
	e.valid = valid;
	VMSCOPE_EMIT(to, kvm_vcpu_wakeup, e);
}

/*
 * One switch on this CPU for one slot's waiters (struct vmscope_waiters):
 * @next runs here again, so it no longer waits; @prev waits now when
 * @prev_waits. Returns whether any thread waited here before the switch;
 * *@left whether any waits after it (or the set overflowed).
 */
static __always_inline bool vmscope_waiters_switch(struct vmscope_waiters *w,
						   pid_t prev, bool prev_waits,
						   pid_t next, bool next_traced,
						   bool *left)
{
	bool any = READ_ONCE(w->overflow), after = any;
	int i, free = -1;

	for (i = 0; i < VMSCOPE_WAITERS; i++) {
		pid_t p = READ_ONCE(w->pid[i]);

		if (p && next_traced && p == next) {
			WRITE_ONCE(w->pid[i], 0);
			any = true;
			p = 0;
		} else if (p) {
			any = true;
			after = true;
			if (p == prev)
				prev_waits = false;	/* already there */
		}
		if (!p && free < 0)
			free = i;
	}
	if (prev_waits) {
		if (free >= 0)
			WRITE_ONCE(w->pid[free], prev);
		else
			WRITE_ONCE(w->overflow, true);
		after = true;
	}
	*left = after;
	return any;
}

/*
 * Both sides of a switch: who preempted a vCPU thread, and whom it
 * preempted; and, while a traced thread waits preempted on this CPU, every
 * switch here (see struct vmscope_waiters): a preempted vCPU often
 * yields to a short kernel thread first and to the real culprit after.
 * The slots visited are those that trace @prev or @next, and those with a
 * waiter here (@busy): with many sessions on, a switch of two threads no
 * one traces costs two lookups, not a walk of every slot.
 */
static void vmscope_probe_sched_switch(void *data, bool preempt,
				       struct task_struct *prev,
				       struct task_struct *next,
				       unsigned int prev_state)
{
	struct vmscope_slots sel = vmscope_probe_on(VMSCOPE_EV_sched_switch), to;
	struct vmscope_slots prev_slots, next_slots, visit, busy;
	/* still on the runqueue: preempted, or switched out while running */
	bool runnable = preempt || prev_state == TASK_RUNNING;
	struct vmscope_ev_sched_switch e;
	struct vmscope_cpu_waiting *cw;
	bool left;
	unsigned int s;

	if (!vmscope_slots_any(sel))
		return;
	cw = this_cpu_ptr(vmscope_waiting);
	prev_slots = vmscope_slots_wanting(sel, prev->tgid);
	next_slots = vmscope_slots_wanting(sel, next->tgid);
	to = vmscope_slots_or(prev_slots, next_slots);
	busy = vmscope_slots_read(&cw->busy);
	visit = vmscope_slots_and(busy, sel);
	if (runnable)
		visit = vmscope_slots_or(visit, prev_slots);
	for_each_vmscope_slot(s, visit) {
		if (vmscope_waiters_switch(&cw->slot[s], prev->pid,
					   runnable && vmscope_slots_has(prev_slots, s),
					   next->pid, vmscope_slots_has(next_slots, s),
					   &left))
			vmscope_slots_add(&to, s);
		if (left)
			vmscope_slots_add(&busy, s);
		else
			busy = vmscope_slots_without(busy, s);
	}
	/* only this CPU writes its @busy, here, interrupts off (unchanged if no slot visited) */
	if (vmscope_slots_any(visit))
		vmscope_slots_write(&cw->busy, busy);
	if (!vmscope_slots_any(to))
		return;
	this_cpu_inc(vmscope_cpu.matched[VMSCOPE_EV_sched_switch]);
	vmscope_fill_sched_switch(&e, preempt, prev, next, prev_state);
	VMSCOPE_EMIT(to, sched_switch, e);
}

#define VMSCOPE_WAKE_PROBE(ev) \
static void vmscope_probe_##ev(void *data, struct task_struct *p) \
{ \
	struct vmscope_ev_##ev e; \
	struct vmscope_slots to = vmscope_probe_begin(VMSCOPE_EV_##ev, p->tgid); \
	\
	if (!vmscope_slots_any(to)) \
		return; \
	vmscope_fill_sched_wake((struct vmscope_ev_sched_waking *)&e, p); \
	VMSCOPE_EMIT(to, ev, e); \
}
VMSCOPE_WAKE_PROBE(sched_waking)
VMSCOPE_WAKE_PROBE(sched_wakeup)

static void vmscope_probe_sched_migrate_task(void *data, struct task_struct *p,
					     int dest_cpu)
{
	struct vmscope_slots on = vmscope_slots_read(&vmscope_slots_on), to, busy;
	struct vmscope_ev_sched_migrate_task e;
	struct vmscope_cpu_waiting *cw;
	int orig_cpu = task_cpu(p);
	unsigned int s, i;

	if (!vmscope_slots_any(on))
		return;
	/*
	 * A waiting thread that leaves its CPU no longer waits there. Its
	 * entry and that CPU's @busy bit were written when it was switched
	 * out there, before it could be moved; the bit stays for that CPU's
	 * next switch to clear.
	 */
	cw = per_cpu_ptr(vmscope_waiting, orig_cpu);
	busy = vmscope_slots_and(on, vmscope_slots_read(&cw->busy));
	if (orig_cpu != dest_cpu)
		for_each_vmscope_slot(s, busy) {
			struct vmscope_waiters *w = &cw->slot[s];

			for (i = 0; i < VMSCOPE_WAITERS; i++)
				if (READ_ONCE(w->pid[i]) == p->pid)
					cmpxchg(&w->pid[i], p->pid, 0);
		}
	to = vmscope_probe_begin(VMSCOPE_EV_sched_migrate_task, p->tgid);
	if (!vmscope_slots_any(to))
		return;
	vmscope_fill_sched_migrate_task(&e, p, dest_cpu);
	VMSCOPE_EMIT(to, sched_migrate_task, e);
}

VMSCOPE_CHECK_PROBE(kvm_exit);
static_assert(__same_type(&vmscope_probe_kvm_exit_stamp, &vmscope_probe_kvm_exit));
static_assert(__same_type(&vmscope_probe_kvm_entry_stamp, &vmscope_probe_kvm_entry));
VMSCOPE_CHECK_PROBE(kvm_entry);
VMSCOPE_CHECK_PROBE(kvm_cr);
VMSCOPE_CHECK_PROBE(kvm_page_fault);
VMSCOPE_CHECK_PROBE(kvm_hypercall);
VMSCOPE_CHECK_PROBE(kvm_pio);
VMSCOPE_CHECK_PROBE(kvm_mmio);
VMSCOPE_CHECK_PROBE(kvm_msr);
VMSCOPE_CHECK_PROBE(kvm_inj_virq);
VMSCOPE_CHECK_PROBE(kvm_write_tsc_offset);
VMSCOPE_CHECK_PROBE(kvm_userspace_exit);
VMSCOPE_CHECK_PROBE(kvm_vcpu_wakeup);
VMSCOPE_CHECK_PROBE(sched_switch);
VMSCOPE_CHECK_PROBE(sched_waking);
VMSCOPE_CHECK_PROBE(sched_wakeup);
VMSCOPE_CHECK_PROBE(sched_migrate_task);
VMSCOPE_CHECK_HEADER(kvm_mmio);
VMSCOPE_CHECK_HEADER(kvm_userspace_exit);
VMSCOPE_CHECK_HEADER(kvm_vcpu_wakeup);
VMSCOPE_CHECK_HEADER(sched_switch);
VMSCOPE_CHECK_HEADER(sched_waking);
VMSCOPE_CHECK_HEADER(sched_wakeup);
VMSCOPE_CHECK_HEADER(sched_migrate_task);

/*
 * After the kernel's own probes on the same tracepoint (perf's, which
 * leaves the kvm_exit details for us), hence below the default priority.
 */
#define VMSCOPE_PROBE_PRIO (TRACEPOINT_DEFAULT_PRIO - 1)

#define VMSCOPE_TP(tp, kvm, ev_bits) \
	{ .name = #tp, .in_kvm = kvm, .probe = vmscope_probe_##tp, \
	  .events = ev_bits, .prio = VMSCOPE_PROBE_PRIO }
#define EVB(ev) BIT_ULL(VMSCOPE_EV_##ev)

struct vmscope_tp_probe vmscope_tp_probes[] = {
	VMSCOPE_TP(kvm_exit, true, EVB(kvm_exit)),
	{ .name = "kvm_exit", .in_kvm = true, .probe = vmscope_probe_kvm_exit_stamp,
	  .prio = TRACEPOINT_DEFAULT_PRIO + 1 },
	VMSCOPE_TP(kvm_entry, true, EVB(kvm_entry) | EVB(sync_t3)),
	{ .name = "kvm_entry", .in_kvm = true, .probe = vmscope_probe_kvm_entry_stamp,
	  .prio = TRACEPOINT_DEFAULT_PRIO + 1 },
	VMSCOPE_TP(kvm_cr, true, EVB(kvm_cr)),
	VMSCOPE_TP(kvm_page_fault, true, EVB(kvm_page_fault)),
	VMSCOPE_TP(kvm_hypercall, true, EVB(kvm_hypercall) | EVB(sync_t2)),
	VMSCOPE_TP(kvm_pio, true, EVB(kvm_pio)),
	VMSCOPE_TP(kvm_mmio, true, EVB(kvm_mmio)),
	VMSCOPE_TP(kvm_msr, true, EVB(kvm_msr)),
	VMSCOPE_TP(kvm_inj_virq, true, EVB(kvm_inj_virq)),
	VMSCOPE_TP(kvm_write_tsc_offset, true, EVB(kvm_write_tsc_offset)),
	VMSCOPE_TP(kvm_userspace_exit, true, EVB(kvm_userspace_exit)),
	VMSCOPE_TP(kvm_vcpu_wakeup, true, EVB(kvm_vcpu_wakeup)),
	VMSCOPE_TP(sched_switch, false, EVB(sched_switch)),
	VMSCOPE_TP(sched_waking, false, EVB(sched_waking)),
	VMSCOPE_TP(sched_wakeup, false, EVB(sched_wakeup)),
	VMSCOPE_TP(sched_migrate_task, false, EVB(sched_migrate_task)),
};
const unsigned int vmscope_nr_tp_probes = ARRAY_SIZE(vmscope_tp_probes);
