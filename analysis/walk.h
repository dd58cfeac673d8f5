/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One streaming pass over a merged trace (merge/out.h, `vmscope merge`'s
 * output) that keeps the state every report needs and hands the reports
 * what happened, in host time:
 *
 * - per VM and vCPU: in the guest (since the last kvm_entry), in an exit
 *   (since kvm_exit, with its reason and guest RIP), in a userspace exit
 *   (since kvm_userspace_exit), halted (a HLT exit) — each completed exit
 *   is passed to the exit hook with its parts;
 * - which guest task runs on each vCPU, from the VM's merged
 *   sched_switch ("vmN:sched_switch"), so that every exit carries the
 *   task it interrupted;
 * - guest and host scheduling events, as hooks for the sched report;
 * - each guest clock-sync record (vmN:sync_guest) with the guest kernel's
 *   steal time of its CPU when the trace has it (steal_ns, ABI 0.4).
 *
 * Events and their fields are found by name in the merged table through
 * merge/roles.h (traces are self-described). A host record is attributed
 * to its VM through the session's vCPU thread map and the record's thread
 * (merged traces carry the thread of each host CPU from the host's
 * sched_switch); with one VM, records of an unknown thread are that VM's;
 * kvm_userspace_exit, which has no vCPU field, belongs to the vCPU whose
 * kvm_exit was the last one on its host CPU when its thread is unknown.
 *
 * Memory does not grow with the trace's length: per vCPU state, a task
 * table of at most AN_MAX_TASKS threads (guest tasks and host threads seen
 * in sched_switch; further threads count as one "other" task) and a table of at most AN_MAX_REASONS exit reasons.
 * A loss in the trace (ring buffer drops, sub-buffer gaps, damage) ends
 * every open exit without counting it and forgets every vCPU's task: the
 * state before a hole is not carried across it.
 */
#ifndef VMSCOPE_ANALYSIS_WALK_H
#define VMSCOPE_ANALYSIS_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define AN_MAX_TASKS	4096
#define AN_MAX_REASONS	256
#define AN_MAX_VCPUS	1024
#define AN_MAX_HOST_CPUS 4096

/* an_walk_open() flag beside merge/out.h's MR_*: also open a trace the
 * reports refuse (no usable kvm_exit/kvm_entry: it has no exits; no
 * session: no VMs), for the exports, which take every merged trace and
 * their exits from this pass. */
#define AN_WALK_ANY_TRACE	(1u << 16)

struct vr_item;
struct mo_origin;
struct mr;

/* A vCPU's guest task is not known: after a loss, until a guest record
 * names it again; or, in a VM whose guest module records no cpu_task
 * (before ABI 1.2), before the vCPU's first guest sched_switch. */
#define AN_TASK_UNKNOWN	(-1)
#define AN_TASK_OTHER	(-2)	/* beyond AN_MAX_TASKS */
/* Before the VM's guest session began on that vCPU (its cpu_task). */
#define AN_TASK_BEFORE	(-3)

/* How reports name a task index below 0. */
const char *an_task_placeholder(int32_t task);

#define AN_COMM_LEN	16
#define AN_VM_HOST	UINT32_MAX	/* an_task.vm of a host thread */

/* A thread: a guest task of VM vm, or a host thread (vm AN_VM_HOST) as
 * the host's sched_switch names it. */
struct an_task {
	uint32_t vm;
	int32_t tid;
	char comm[AN_COMM_LEN + 1];	/* the latest name seen */
};

/*
 * What an exit did, from the first of the host's kvm_pio, kvm_mmio or
 * kvm_msr records on its vCPU inside it (kvm_exit .. entry; recorded by
 * the host module where KVM emulates the access, in the kernel or after
 * QEMU's part): the I/O port, the guest-physical address, or the MSR
 * index, and the direction. AN_DETAIL_NONE for the other exits.
 */
enum an_detail_kind { AN_DETAIL_NONE, AN_DETAIL_PIO, AN_DETAIL_MMIO, AN_DETAIL_MSR,
		     AN_DETAIL_NPF };

struct an_detail {
	uint8_t kind;		/* enum an_detail_kind */
	bool write;		/* out / MMIO write / wrmsr / NPF of a write */
	uint32_t size;		/* PIO: bytes per access; MMIO: bytes */
	uint64_t addr;		/* port, guest-physical address, MSR index */
};

/* A completed exit: kvm_exit .. the vCPU's next kvm_entry. */
struct an_exit {
	uint32_t vm, vcpu;
	uint32_t reason;	/* an_walk_reason_name() */
	uint64_t start, end;	/* host time, ns */
	uint64_t user_ns;	/* of it, kvm_userspace_exit .. entry */
	bool halted;		/* a HLT exit: all of it is halted time */
	int32_t task;		/* guest task running at the exit (an_walk_task) */
	int32_t tid;		/* host thread of its kvm_exit record, -1 unknown */
	uint64_t rip;		/* guest RIP at the exit */
	int32_t sym;		/* its guest kernel symbol (an_walk_sym_name), or AN_SYM_* */
	struct an_detail detail;
	/* a nested page fault (AMD NPF, Intel EPT violation): the first
	 * kvm_page_fault record of its vCPU inside it, kind AN_DETAIL_NPF,
	 * addr its guest-physical address, write bit 1 of its error code (the
	 * same bit in AMD's NPF error code and Intel's exit qualification);
	 * AN_DETAIL_NONE otherwise */
	struct an_detail fault;
};

/* An exit's sym when its RIP names no kernel symbol: the guest was in
 * user mode (the RIP lies below the kernel's half, tracefmt/gsym.h); a
 * kernel RIP the VM's table does not cover; a VM whose trace has no
 * symbol table (no agent, or one before symbols were sent). */
#define AN_SYM_USER	(-1)
#define AN_SYM_NONE	(-2)
#define AN_SYM_NO_TABLE	(-3)

struct an_vcpu_time {
	uint64_t guest_ns;	/* kvm_entry .. kvm_exit */
	uint64_t kernel_ns;	/* exits handled in the host kernel */
	uint64_t user_ns;	/* kvm_userspace_exit .. kvm_entry */
	uint64_t halted_ns;	/* HLT exit .. kvm_entry */
	uint64_t exits;
};

/*
 * A halted vCPU's wake-up: the host's kvm_vcpu_wakeup record (the end of
 * KVM's kvm_vcpu_halt) of its thread, passed on at the vCPU's next
 * kvm_entry, or without one at a loss or the end of the trace.
 */
struct an_wakeup {
	uint32_t vm, vcpu;
	uint64_t ts;		/* host time of the record */
	uint64_t halt_ns;	/* KVM's: the whole halt, polling included */
	bool waited;		/* the vCPU thread slept; else polling saw it */
	bool valid;		/* KVM's vcpu_valid_wakeup() */
	/* time polling: all of halt_ns when not waited; when waited, from the
	 * halt's start (ts - halt_ns) to the host switch that took the vCPU
	 * thread off its CPU asleep; !poll_known when no such switch lies in
	 * the halt (not recorded, or before a loss) */
	uint64_t poll_ns;
	bool poll_known;
	/* the record .. the vCPU's next kvm_entry; !entry_known when a loss
	 * or the trace's end came first (no value is kept for "unknown": the
	 * ns come from the trace) */
	uint64_t entry_ns;
	bool entry_known;
};

/* An interrupt KVM injected into a vCPU: the host's kvm_inj_virq of its
 * thread (or of the host CPU's last kvm_exit). */
struct an_inject {
	uint32_t vm, vcpu;
	uint64_t ts;
	uint32_t vector;
	bool soft;		/* a software interrupt (the guest's INT n) */
	bool reinjected;	/* again, after its delivery was cut short */
};

/* A sched_switch, host or guest. Tasks are the walk's (guest) or host
 * thread ids with their names as the record has them. */
struct an_switch {
	uint64_t ts;
	uint32_t cpu;		/* host CPU, or guest CPU (= vCPU) */
	int32_t prev_tid, next_tid;
	uint64_t prev_state;	/* the kernel's: 0 running (preempted) */
	bool prev_runnable;	/* preempted, or prev_state 0: still runnable */
	const char *prev_comm, *next_comm;	/* AN_COMM_LEN, maybe unterminated */
};

struct an_hooks {
	void *ctx;
	/* every record (event, loss, gap, damage) at host time @ts, before
	 * it is handled: where an online consumer closes its windows */
	void (*tick)(void *ctx, uint64_t ts);
	void (*exit)(void *ctx, const struct an_exit *x);
	/* guest sched_switch of VM @vm; prev/next as walk task indexes */
	void (*guest_switch)(void *ctx, uint32_t vm, const struct an_switch *s,
			     int32_t prev_task, int32_t next_task);
	/* guest sched_wakeup/sched_waking of task @task at @ts, onto guest
	 * CPU @cpu (-1 unknown) */
	void (*guest_wakeup)(void *ctx, uint32_t vm, uint64_t ts, int32_t task, int32_t cpu);
	/* host sched_switch (only those the recording kept: record --pid
	 * keeps a switch when either side is a recorded process, or while a
	 * recorded thread waits preempted on that CPU); prev/next
	 * as walk tasks of AN_VM_HOST */
	void (*host_switch)(void *ctx, const struct an_switch *s, int32_t prev_task,
			    int32_t next_task);
	/* a guest's sync_guest record of guest CPU @cpu (its stream's) at
	 * @ts; @has_steal when the VM's table has steal_ns (ABI 0.4 guest
	 * modules; older traces do not), @steal_ns then the steal time that
	 * CPU's kernel had accounted, cumulative */
	void (*guest_sync)(void *ctx, uint32_t vm, uint64_t ts, uint32_t cpu, bool has_steal,
			   uint64_t steal_ns);
	/* a halted vCPU's wake-up (struct an_wakeup) */
	void (*wakeup)(void *ctx, const struct an_wakeup *k);
	/* an interrupt injected (struct an_inject) */
	void (*inject)(void *ctx, const struct an_inject *j);
	/* the guest of VM @vm entered the handler of x86 vector @vector on
	 * guest CPU @cpu (= vCPU) at @ts (its irq_vector_entry record) */
	void (*guest_vector)(void *ctx, uint32_t vm, uint32_t cpu, uint64_t ts, uint32_t vector);
	/* a loss: every open interval ends without being counted */
	void (*loss)(void *ctx, uint64_t ts);
	/* the end of the trace at @ts */
	void (*end)(void *ctx, uint64_t ts);
	/* every item read (@has_o: @o is its origin), after the walk handled
	 * it: for a consumer that writes records the walk does not interpret */
	void (*record)(void *ctx, const struct vr_item *it, const struct mo_origin *o,
		       bool has_o, uint64_t ts);
};

struct an_counts {
	uint64_t records;	/* events read */
	uint64_t exits;		/* completed exits passed on */
	uint64_t unattributed;	/* host kvm records of no known VM/vCPU */
	uint64_t open_dropped;	/* exits left open by a loss or a repeated kvm_exit */
	uint64_t open_at_end;	/* exits still open when the trace ended */
	uint64_t entries_without_exit;	/* kvm_entry with no exit before (trace start) */
	/* of exits: charged to AN_TASK_BEFORE, to AN_TASK_UNKNOWN */
	uint64_t exits_before_session, exits_task_unknown;
	uint64_t losses;	/* loss records, gaps, damage */
	uint64_t no_origin;	/* records without an origin entry */
	uint64_t reasons_other, tasks_other;	/* beyond the tables */
	/* `vmscope merge`'s clock-unreliable spans (merge/README.md): the
	 * exits that overlap one of their vCPU's (their guest task may be
	 * wrong: it comes from guest times), and the guest records in one */
	uint64_t clock_spans, exits_clock_unreliable;
	uint64_t guest_records, guest_clock_unreliable;
};

struct an_walk;
struct mg_result;

/* Whether @path is a merged trace (it has its merged stream): a raw one,
 * what `vmscope record` writes, does not. */
bool an_trace_is_merged(const char *path);
struct vr_item;
struct vr_trace;
struct mo_origin;

/*
 * Open the merged trace @path and find its events. Fails with a reason in
 * @err when it is not a merged trace or has no kvm_exit/kvm_entry events,
 * or is damaged and @flags has no MR_ACCEPT_DAMAGE (merge/out.h).
 */
int an_walk_open(struct an_walk **out, const char *path, unsigned int flags,
		 char *err, size_t errlen);

/*
 * The same for the raw trace @path (what `vmscope record` writes), merged
 * as it is read, in one pass (merge/online.h): its records come in host
 * time as a merged trace's would, guest times converted with the clock
 * segments known when they are reached (merge/README.md, "The online
 * merge"). Damage (@flags: MR_ACCEPT_DAMAGE) is the raw trace's.
 */
int an_walk_open_raw(struct an_walk **out, const char *path, unsigned int flags,
		     char *err, size_t errlen);

/*
 * The same for the raw trace @path, merged EXACTLY as `vmscope merge`
 * merges it: pass 1 (merge.h mg_sync, its exchanges spilled to temporary
 * files in @spill_dir, NULL: /tmp) on open, then pass 2's records read by
 * the walk as they come instead of written (mg_p2_next): what the walk
 * reads is what it would read from the merged trace, clock-unreliable
 * spans included. Damage found by pass 1 fails the open (-EBADMSG, @err
 * names it as `vmscope merge` does) unless @flags has MR_ACCEPT_DAMAGE.
 */
int an_walk_open_raw_exact(struct an_walk **out, const char *path, unsigned int flags,
			   const char *spill_dir, char *err, size_t errlen);

/* The two-pass merge's result of a walk opened with
 * an_walk_open_raw_exact (its clock segments and bounds, for mg_report),
 * else NULL. */
const struct mg_result *an_walk_merge_result(const struct an_walk *w);

/* Of a walk opened with an_walk_open_raw_exact: print what `vmscope
 * merge` prints of its first pass to @f (merge.h mg_report: per VM its
 * clock segments with their bounds, the pairing, the TSC cross-check, the
 * clock-unreliable spans); nothing otherwise. */
void an_walk_merge_report(FILE *f, const struct an_walk *w);

/*
 * A walk whose records are fed to it one at a time, in host-time order
 * (an_walk_feed), instead of read: `vmscope top`'s live source. @path is
 * a recording being written (its metadata is read; its stream files, if
 * any, are not). Records are host records (origin 0) whose descriptors
 * are those of an_walk_fed_trace()'s host table, and guest records
 * (origin 1 + vm) with that trace's guest tables or the one given by
 * an_walk_fed_guest_table.
 */
int an_walk_open_fed(struct an_walk **out, const char *path, char *err, size_t errlen);
/* A fed walk's VM @vm takes its guest records with the descriptors of
 * @ev (its agent's hello, which came after the metadata was read; @ev
 * lives until an_walk_close): its guest roles found again. 0, -EINVAL,
 * -ENOMEM. */
struct vr_events;
int an_walk_fed_guest_table(struct an_walk *w, uint32_t vm, const struct vr_events *ev);
/* The trace whose metadata a fed walk read (its tables, its session). */
struct vr_trace *an_walk_fed_trace(const struct an_walk *w);
/* One record, as an_walk_run() reads one: the hooks, counts and state
 * (ignored after an_walk_stop()). */
void an_walk_feed(struct an_walk *w, const struct an_hooks *h, const struct vr_item *it,
		  const struct mo_origin *o);
/* No fed record will be earlier than @ts: the tick hook told so (a view
 * ends its intervals before it), once a record was fed and when @ts is
 * past the last one's time. */
void an_walk_feed_time(struct an_walk *w, const struct an_hooks *h, uint64_t ts);
/* The end of the fed records: the exits still open counted and the end
 * hook, as at the end of an_walk_run(). */
void an_walk_feed_end(struct an_walk *w, const struct an_hooks *h);

/* After an_walk_run(): what is wrong with the trace (MR_ACCEPT_DAMAGE let
 * it be read), or NULL. */
const char *an_walk_damage(const struct an_walk *w);

/* After an_walk_run() of a raw trace: what the online merge left out
 * (guest records of a VM without a clock segment, as `vmscope merge`
 * leaves them), or NULL. */
const char *an_walk_note(const struct an_walk *w);

/* Read the whole trace once, calling @h. 0 when the merged stream ended
 * cleanly; 1 when it ended otherwise (torn, corrupt: @err says how; what
 * was read is still reported); negative errno on failure. */
int an_walk_run(struct an_walk *w, const struct an_hooks *h, char *err, size_t errlen);

void an_walk_close(struct an_walk *w);

/* The merged trace being read: its session, tables and end state; NULL
 * for a raw trace. */
struct mr *an_walk_reader(const struct an_walk *w);

/* The table of the records the walk reads of a merged trace, or of a raw
 * one through the two passes: the merged trace's one table (guest events
 * "vmN:name"), which the records' descriptors point into; of a raw one
 * merged online, the host's. NULL without metadata. */
struct vr_events;
const struct vr_events *an_walk_events(const struct an_walk *w);
/* The session as the merged trace's metadata has it (with the spans of
 * the two passes), or NULL. */
struct Vmscope__Trace__SessionMetadata;
const struct Vmscope__Trace__SessionMetadata *an_walk_session(const struct an_walk *w);

/* From a hook: end an_walk_run() after this record, as if the trace ended
 * there (the end hook still runs; the rest is not read). */
void an_walk_stop(struct an_walk *w);

uint32_t an_walk_nr_vms(const struct an_walk *w);
/* The host's CPUs as the session metadata says, 0 when it does not. */
uint32_t an_walk_host_cpus(const struct an_walk *w);
/* Whether the trace's host table has kvm_vcpu_wakeup (host modules of
 * ABI 1.3 on): without it no halt's end is known. */
bool an_walk_has_wakeup(const struct an_walk *w);
/* Whether the host table has kvm_inj_virq, and whether VM @vm's guest
 * table has irq_vector_entry (guest modules of ABI 1.3 on). */
bool an_walk_has_inject(const struct an_walk *w);
bool an_walk_vm_has_vector(const struct an_walk *w, uint32_t vm);
/* Whether the trace has @vm's guest side (its merged vmN:sched_switch):
 * without it (no agent streamed) no exit has a guest task. */
bool an_walk_vm_has_guest(const struct an_walk *w, uint32_t vm);
const char *an_walk_vm_name(const struct an_walk *w, uint32_t vm);
/* vCPUs of @vm seen (index bound), and their time split. */
uint32_t an_walk_nr_vcpus(const struct an_walk *w, uint32_t vm);
const struct an_vcpu_time *an_walk_vcpu_time(const struct an_walk *w, uint32_t vm,
					     uint32_t vcpu);
/* The guest task running on (vm, vcpu) now (during a hook), or
 * AN_TASK_UNKNOWN. */
int32_t an_walk_vcpu_task(const struct an_walk *w, uint32_t vm, uint32_t vcpu);
/* The vCPU thread of (vm, vcpu) from the session's map, or -1. */
int32_t an_walk_vcpu_tid(const struct an_walk *w, uint32_t vm, uint32_t vcpu);
/* The (vm, vcpu) of host thread @tid, false when it is no vCPU thread. */
bool an_walk_thread_vcpu(const struct an_walk *w, int32_t tid, uint32_t *vm,
			 uint32_t *vcpu);

const char *an_walk_reason_name(const struct an_walk *w, uint32_t reason);
/* The kvm_exit isa and exit_reason of reason @reason; false when the
 * probe missed them ("unknown") or it is beyond the table. */
bool an_walk_reason_code(const struct an_walk *w, uint32_t reason, uint32_t *isa,
			 uint32_t *code);
uint32_t an_walk_nr_reasons(const struct an_walk *w);
/* Task @i (>= 0), or NULL for AN_TASK_UNKNOWN / AN_TASK_OTHER. */
const struct an_task *an_walk_task(const struct an_walk *w, int32_t i);
uint32_t an_walk_nr_tasks(const struct an_walk *w);
/* "comm/tid" of task @i into @buf, or "(unknown task)" / "(other tasks)". */
const char *an_walk_task_label(const struct an_walk *w, int32_t i, char *buf, size_t len);

const struct an_counts *an_walk_counts(const struct an_walk *w);

/*
 * The guest kernel symbols of VM @vm (its agent's, VmInfo.guest_symbols;
 * walk_syms.c). an_walk_vm_symbols: how many (0: none; *dropped the
 * agent left out by its bound, *note what it said, "" if nothing).
 * an_walk_sym_name: symbol @sym's name and its module (NULL: the
 * kernel's own), false for an AN_SYM_* value. an_walk_rip_label: @rip
 * of an exit whose symbol is @sym as the reports print it:
 * "name+0x1f [module]", "0x401000 (user)", or the bare hex.
 */
size_t an_walk_vm_symbols(const struct an_walk *w, uint32_t vm, uint64_t *dropped,
			  const char **note);
bool an_walk_sym_name(const struct an_walk *w, uint32_t vm, int32_t sym, const char **name,
		      const char **module);
const char *an_walk_rip_label(const struct an_walk *w, uint32_t vm, int32_t sym, uint64_t rip,
			      char *buf, size_t len);
/* Host time of the first and last record (ns). */
void an_walk_span(const struct an_walk *w, uint64_t *first, uint64_t *last);

#endif
