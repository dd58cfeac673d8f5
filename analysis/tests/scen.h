/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Merged traces with a known story, written directly through merge/out.h
 * (mo_create/mo_event: the same writer `vmscope merge` uses, so the
 * reports read exactly what they would read after a merge) for the
 * analysis tests and the report benchmark.
 *
 * The input trace (the merged one's metadata source) is a synthetic
 * session (merge/tests/synth.h) with the real event tables on both sides.
 * Each vCPU runs this story, in host time: guest sched_switch to one of
 * three guest tasks (tids 100.., "alpha" "beta" "gamma", per VM), then
 * exits: kvm_exit with a reason (io, cpuid, hlt, npf on AMD for even VMs;
 * their Intel codes for odd VMs), io exits go to userspace
 * (kvm_userspace_exit) before their kvm_entry; durations are random
 * (heavy-tailed). Host records carry their vCPU thread (as merge gives it
 * from the host's sched_switch), or no thread with `unknown_tids`.
 * With `hog`, one in 8 non-io exits of VM 0's vCPU 0 is preempted inside
 * by a host task "hog" (tid SCEN_HOG_TID): host sched_switch away from the
 * vCPU thread (preempted) and back, 1-3 ms later; one in 4 of those is
 * instead the vCPU thread blocking (switch to the idle task, not
 * runnable). Half of the preempted ones switch to a "kworker/0:1" (tid
 * SCEN_KWORKER_TID) first, which sleeps after 20-60 us and hands the CPU
 * to the hog: the preempted time is the kworker's and then the hog's.
 *
 * Generation is streaming (O(1) memory) and deterministic; the story's
 * exact totals are accumulated into `struct scen_expect` as records are
 * written.
 */
#ifndef VMSCOPE_ANALYSIS_SCEN_H
#define VMSCOPE_ANALYSIS_SCEN_H

#include <stdbool.h>
#include <stdint.h>

#include "session.pb-c.h"

#define SCEN_VMS	2
#define SCEN_VCPUS	4
#define SCEN_TASKS	3
#define SCEN_REASONS	4	/* io, cpuid, hlt, npf */
#define SCEN_HOG_TID	4242
#define SCEN_KWORKER_TID	4343

struct scen_expect {
	uint64_t count[SCEN_VMS][SCEN_TASKS][SCEN_REASONS];
	uint64_t total[SCEN_VMS][SCEN_TASKS][SCEN_REASONS];
	uint64_t guest_ns[SCEN_VMS][SCEN_VCPUS], kernel_ns[SCEN_VMS][SCEN_VCPUS];
	uint64_t user_ns[SCEN_VMS][SCEN_VCPUS], halted_ns[SCEN_VMS][SCEN_VCPUS];
	uint64_t min[SCEN_VMS][SCEN_REASONS], max[SCEN_VMS][SCEN_REASONS];
	uint64_t exits;
	/* every duration per (vm, reason) when keep is set (tests) */
	bool keep;
	uint64_t *dur[SCEN_VMS][SCEN_REASONS];
	uint64_t ndur[SCEN_VMS][SCEN_REASONS];
	/* with `hog`: per VM 0 task, the time VM 0 vCPU 0's thread was
	 * preempted by the host hog while that task ran there, the number of
	 * times, the longest */
	uint64_t hog_ns[SCEN_TASKS], hog_n, hog_max;
	uint64_t hog_hlt_ns[SCEN_TASKS];	/* of hog_ns, inside HLT exits */
	uint64_t kworker_ns[SCEN_TASKS];	/* of hog_ns, the kworker's part */
	/* with `hog`, the same for the times the vCPU thread blocked in the
	 * host instead (switched away not runnable, to the idle task) */
	uint64_t block_ns[SCEN_TASKS], block_n, block_hlt_ns[SCEN_TASKS];
	/* with one vCPU per VM: guest terms per task (tasks of a VM share
	 * tids across its vCPUs, so only then are they well defined) */
	uint64_t running_ns[SCEN_VMS][SCEN_TASKS], blocked_ns[SCEN_VMS][SCEN_TASKS];
};

struct scen {
	uint64_t seed;
	unsigned int n_vms, vcpus;	/* <= SCEN_VMS, SCEN_VCPUS */
	uint64_t n_records;		/* stop after about this many */
	bool unknown_tids;		/* host records without a thread */
	bool hog;			/* see above */
	bool cpu_task;			/* each vCPU's first task from a cpu_task
					 * record (a guest session's start), not
					 * a sched_switch */
	bool last_vm_no_agent;		/* the last VM has no guest side (no
					 * agent): no guest table, no guest
					 * records, so no guest task is known */
	uint64_t loss_after;		/* 0, or: a loss record inside the first
					 * exit of VM 0 vCPU 0 after this many
					 * records; that exit is not expected */
	bool loss_done;
	uint64_t records;		/* written */
	uint64_t last_ts;		/* of the last record */
	struct scen_expect x;
};

/* SVM and VMX codes of the scenario's reasons, and their report names. */
extern const uint32_t scen_svm_code[SCEN_REASONS], scen_vmx_code[SCEN_REASONS];
extern const char *const scen_svm_name[SCEN_REASONS], *const scen_vmx_name[SCEN_REASONS];
extern const char *const scen_task_comm[SCEN_TASKS];

/* Write @dir/in (the input session) and @dir/merged. 0 or negative errno. */
int scen_write(struct scen *s, const char *dir);
void scen_free(struct scen *s);

/* ---- the writer underneath, for hand-made merged traces (fuzzing) ---- */

#define SCEN_H0		((uint64_t)1 << 40)	/* host time of the session start */

struct scen_out;
struct mo_origin;

/* @dir/in: a session of @n_vms VMs with @vcpus vCPUs each (threads
 * 1000 * (vm + 1) + 1 + vcpu), real event tables; @dir/merged opened. */
int scen_out_open(struct scen_out **o, const char *dir, unsigned int n_vms,
		  unsigned int vcpus);
/* The same with the guests' table as ABI 0.3 had it when @guest_abi03
 * (sync_guest without steal_ns: kvm-probes/events_compat.h); payloads of
 * such events are then written in that layout. */
int scen_out_open_abi(struct scen_out **o, const char *dir, unsigned int n_vms,
		      unsigned int vcpus, bool guest_abi03);
/* The same with @spans as VM 0's clock-unreliable spans (as `vmscope
 * merge` writes them into the metadata). */
/* The same with the last VM's guest side absent when @last_vm_no_agent. */
int scen_out_open_vms(struct scen_out **o, const char *dir, unsigned int n_vms,
		      unsigned int vcpus, bool guest_abi03, Vmscope__Trace__ClockSpan **spans,
		      size_t n_spans, bool last_vm_no_agent);
/* The same with @syms as VM 0's guest symbols (its agent's, as record
 * keeps them in the metadata). */
int scen_out_open_syms(struct scen_out **o, const char *dir, unsigned int n_vms,
		       unsigned int vcpus, Vmscope__Trace__GuestSymbols *syms);
int scen_out_open_spans(struct scen_out **o, const char *dir, unsigned int n_vms,
			unsigned int vcpus, bool guest_abi03,
			Vmscope__Trace__ClockSpan **spans, size_t n_spans);
/* Event @ev (VMSCOPE_EV_*) of origin @origin (0 host, n VM n-1); errors
 * are kept for scen_out_close. */
void scen_out_event(struct scen_out *o, uint32_t origin, unsigned int ev, uint64_t ts,
		    const void *p, uint16_t size, const struct mo_origin *mo);
void scen_out_loss(struct scen_out *o, uint64_t ts);
/* A loss of origin @origin's (0 host, n VM n-1) CPU @cpu. */
void scen_out_loss_at(struct scen_out *o, uint32_t origin, uint32_t cpu, uint64_t ts);
int scen_out_close(struct scen_out *o);

#endif
