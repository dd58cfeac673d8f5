/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `report sched`: guest scheduling against what the host did to the vCPU
 * threads, from the walk's hooks (walk.h).
 *
 * Guest terms, per guest task (from the VM's merged sched_switch and
 * sched_wakeup/waking): running (switched in .. out), runnable (woken, or
 * preempted, .. switched in; on the guest CPU it was woken onto or
 * preempted on), blocked (switched out not runnable .. woken).
 *
 * Host terms, per vCPU: its thread is off its host CPU from a host
 * sched_switch away from it to the next one back to it — preempted (it
 * was still runnable: steal-like time) by the host task switched to, or
 * blocked in the host (it slept: a halted vCPU waiting, a QEMU lock).
 * A guest task that was running on that vCPU meanwhile was stalled for
 * that long, charged to that host task (or to "blocked in host"); tasks
 * runnable on that vCPU's guest CPU were stalled too (their runnable
 * stall: the queue they waited in was not served). A task's exit time is
 * the time its vCPU spent in non-HLT exits while it ran, minus any
 * off-CPU time inside those exits (already counted as stall).
 *
 * The worst stalls (a running task's vCPU off its CPU) are kept with the
 * host task, host CPU and whether it was a preemption.
 *
 * Bounded memory: per task (the walk's table) and vCPU state; per task the
 * AN_SCHED_BY host tasks that stalled it most (the rest summed as other),
 * per vCPU the AN_RUNQ runnable tasks it tracks and its last AN_OFF_RING
 * off-CPU intervals; N stalls.
 */
#ifndef VMSCOPE_ANALYSIS_SCHED_H
#define VMSCOPE_ANALYSIS_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "steal.h"
#include "topn.h"
#include "walk.h"

#define AN_SCHED_BY	4
#define AN_RUNQ		32
#define AN_OFF_RING	8

struct an_by_host {
	int32_t host_task;	/* walk task (AN_VM_HOST); AN_TASK_UNKNOWN: blocked in host */
	uint64_t ns, n;
};

enum an_tstate { AN_T_UNKNOWN, AN_T_RUNNING, AN_T_RUNNABLE, AN_T_BLOCKED };

struct an_sched_task {
	enum an_tstate st;
	uint64_t since;
	uint32_t cpu;			/* guest CPU running or runnable on */
	uint64_t running_ns, runnable_ns, blocked_ns;
	uint64_t stall_running_ns;	/* running, vCPU thread off its CPU */
	uint64_t stall_runnable_ns;	/* runnable, that vCPU's thread off */
	uint64_t exit_ns;		/* running, vCPU in a (non-HLT) exit */
	struct an_by_host by[AN_SCHED_BY];	/* largest first once sorted */
	uint64_t by_other_ns;
	bool seen;
};

struct an_sched_vcpu {
	bool off;
	uint64_t off_since;
	int32_t off_by;			/* host task switched to */
	bool off_preempted;
	uint32_t host_cpu;
	int32_t off_task;		/* guest task running when it went off */
	uint64_t preempted_ns, blocked_ns, n_preempted, n_blocked;
	struct an_by_host by[AN_SCHED_BY];
	uint64_t by_other_ns;
	int32_t runq[AN_RUNQ];
	uint32_t nrunq;
	struct { uint64_t start, end; } ring[AN_OFF_RING];
	uint32_t nring;
	struct an_steal_vcpu steal;	/* the guest's steal next to it: steal.h */
};

/* A stall: a running guest task's vCPU thread off its host CPU. */
struct an_stall {
	uint32_t vm, vcpu, host_cpu;
	int32_t task, host_task;	/* walk tasks; host_task as in an_by_host */
	uint64_t start, end;
	bool preempted;
};

struct an_sched {
	const struct an_walk *w;
	struct an_sched_task *t;	/* [AN_MAX_TASKS] */
	struct an_sched_vcpu **v;	/* [n_vms][AN_MAX_VCPUS], allocated per VM */
	uint32_t n_vms;
	struct an_topn worst;		/* struct an_stall by duration */
	uint64_t runq_overflow;
	int oom;
};

int an_sched_init(struct an_sched *s, const struct an_walk *w, size_t worst);
void an_sched_free(struct an_sched *s);

/* Hook @h up to @s (ctx and the exit, guest_switch, guest_wakeup,
 * host_switch, guest_sync, loss and end hooks). */
void an_sched_hooks(struct an_sched *s, struct an_hooks *h);

/* The vCPU's state, NULL when it was never seen. */
const struct an_sched_vcpu *an_sched_vcpu(const struct an_sched *s, uint32_t vm, uint32_t vcpu);

#endif
