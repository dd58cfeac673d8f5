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
 * was still runnable: steal-like time), or blocked in the host (it slept:
 * a halted vCPU waiting, a QEMU lock). A preempted interval is split
 * among the host tasks that ran on that host CPU meanwhile, from every
 * host sched_switch there (the host module records all of them while a
 * traced thread waits preempted on a CPU); a trace without them charges
 * the whole interval to the task switched to first. A guest task that was
 * running on that vCPU meanwhile was stalled for that long, charged the
 * same way (or to "blocked in host"); tasks
 * runnable on that vCPU's guest CPU were stalled too (their runnable
 * stall: the queue they waited in was not served). A task's exit time is
 * the time its vCPU spent in non-HLT exits while it ran, minus any
 * off-CPU time inside those exits (already counted as stall).
 *
 * The worst stalls (a running task's vCPU off its CPU) are kept with the
 * host task, host CPU and whether it was a preemption.
 *
 * Bounded memory: per task (the walk's table) and vCPU state; per task the
 * AN_SCHED_KEEP host tasks that stalled it, exactly (past that many, a
 * host task enters the table with a charge larger than the smallest kept,
 * which goes to other: then the list is a heuristic top, its sum still
 * exact); per vCPU an
 * exact table by host task (12 bytes per walk task slot, 48 KiB), the
 * AN_RUNQ runnable tasks it tracks and its last AN_OFF_RING off-CPU
 * intervals; N stalls.
 */
#ifndef VMSCOPE_ANALYSIS_SCHED_H
#define VMSCOPE_ANALYSIS_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "steal.h"
#include "topn.h"
#include "walk.h"

#define AN_SCHED_BY	4	/* host tasks shown per thread / vCPU */
#define AN_SCHED_KEEP	32	/* host tasks kept per thread, exactly */
#define AN_RUNQ		32
#define AN_OFF_RING	8
#define AN_HOST_SLOTS	(AN_MAX_TASKS - AN_TASK_OTHER)

struct an_by_host {
	int32_t host_task;	/* walk task (AN_VM_HOST); AN_TASK_UNKNOWN: blocked in host */
	uint64_t ns, n;
};

enum an_tstate { AN_T_UNKNOWN, AN_T_RUNNING, AN_T_RUNNABLE, AN_T_BLOCKED };

/* A stall's classes, as the report's columns and charges name them: the
 * guest thread's state (running: "stalled:run", runnable: "stalled:rq")
 * and why its vCPU thread was off its CPU (preempted by a host task, or
 * blocked in the host: "(blocked in host)"). */
enum an_stall_state { AN_STALL_RUNNING, AN_STALL_RUNNABLE, AN_STALL_NSTATES };
enum an_stall_cause { AN_STALL_PREEMPTED, AN_STALL_BLOCKED, AN_STALL_NCAUSES };

struct an_sched_task {
	enum an_tstate st;
	uint64_t since;
	uint32_t cpu;			/* guest CPU running or runnable on */
	uint64_t running_ns, runnable_ns, blocked_ns;
	uint64_t stall_running_ns;	/* running, vCPU thread off its CPU */
	uint64_t stall_runnable_ns;	/* runnable, that vCPU's thread off */
	uint64_t exit_ns;		/* running, vCPU in a (non-HLT) exit */
	struct an_by_host by[AN_SCHED_KEEP];	/* largest first once sorted */
	uint64_t by_other_ns;
	bool seen;
};

struct an_sched_vcpu {
	bool off;
	uint64_t off_since;
	bool off_preempted;
	uint32_t host_cpu;		/* the CPU it went off on */
	int32_t off_task;		/* guest task running when it went off */
	/* preempted: the host task on host_cpu since seg_start, and this
	 * off interval's time by host task so far */
	int32_t seg_task;
	uint64_t seg_start;
	struct an_by_host cur[AN_SCHED_KEEP];
	uint64_t cur_other_ns;
	uint64_t preempted_ns, blocked_ns, n_preempted, n_blocked;
	/* exact time off by host task, [AN_HOST_SLOTS] (index host_task -
	 * AN_TASK_OTHER), and in how many off intervals; NULL until the
	 * first; by[] and by_other_ns are made from them at the end */
	uint64_t *host_ns;
	uint32_t *host_n;
	struct an_by_host by[AN_SCHED_BY];	/* largest first, at the end */
	uint64_t by_other_ns;
	int32_t runq[AN_RUNQ];
	uint32_t nrunq;
	struct { uint64_t start, end; } ring[AN_OFF_RING];
	uint32_t nring;
	struct an_steal_vcpu steal;	/* the guest's steal next to it: steal.h */
	/* the stalls of the guest threads on this vCPU but its idle thread
	 * (tid 0, never a stall: it waits for nothing), by class: summed
	 * over a VM's vCPUs, its threads' stall_running_ns and
	 * stall_runnable_ns but the idle thread's */
	uint64_t stall_ns[AN_STALL_NSTATES][AN_STALL_NCAUSES];
};

/* A stall: a running guest task's vCPU thread off its host CPU. */
struct an_stall {
	uint32_t vm, vcpu, host_cpu;
	/* walk tasks; host_task as in an_by_host: the one that had the CPU
	 * longest during the stall */
	int32_t task, host_task;
	uint64_t start, end;
	bool preempted;
};

/* A vCPU thread back on its host CPU after [start, end) off it (the
 * optional an_sched.on_off hook): which host tasks had that CPU (the
 * charges of @by with n > 0, AN_SCHED_KEEP at most, the rest in
 * by_other_ns), and the stall of the guest task running there, if one. */
struct an_off {
	uint32_t vm, vcpu;
	bool preempted;			/* else blocked in the host */
	uint64_t start, end;
	const struct an_by_host *by;	/* [AN_SCHED_KEEP] */
	uint64_t by_other_ns;
	const struct an_stall *stall;	/* NULL: no running task (or the idle one) */
};

struct an_sched {
	const struct an_walk *w;
	/* optional: each completed off-CPU interval, as it is counted */
	void (*on_off)(void *ctx, const struct an_off *o);
	void *off_ctx;
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

/* Every host task that kept @v off its CPU, largest first, into a new
 * array *@out (free it); their count (0: none, or out of memory). */
size_t an_sched_vcpu_by_all(const struct an_sched_vcpu *v, struct an_by_host **out);

/* Charge @ns and @times to @host_task in the table by host task *@ns_tab,
 * *@n_tab ([AN_HOST_SLOTS] each, allocated at the first charge); -ENOMEM
 * (nothing charged) or 0. */
int an_by_host_charge(uint64_t **ns_tab, uint32_t **n_tab, int32_t host_task, uint64_t ns,
		      uint32_t times);

/* The same from a table by host task ([AN_HOST_SLOTS], index host_task -
 * AN_TASK_OTHER: time and times; @ns NULL is an empty table). */
size_t an_by_host_list(const uint64_t *ns, const uint32_t *times, struct an_by_host **out);

#endif
