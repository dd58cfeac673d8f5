/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Payload fills of the scheduler events that both modules record (sides
 * BOTH in events.def): the host's probes (probes.c) and the guest's
 * (guest-kmod/probes.c) call these, so each payload is filled in one place.
 * Payloads are zeroed first so that tail padding never carries stack bytes
 * to userspace.
 */
#ifndef VMSCOPE_KVM_PROBES_FILL_SCHED_H
#define VMSCOPE_KVM_PROBES_FILL_SCHED_H

#include <linux/build_bug.h>
#include <linux/sched.h>
#include <linux/string.h>
#include "../vmscope_events.h"

static_assert(sizeof(((struct vmscope_ev_sched_switch *)0)->prev_comm) == TASK_COMM_LEN);

static __always_inline void
vmscope_fill_sched_switch(struct vmscope_ev_sched_switch *e, bool preempt,
			  struct task_struct *prev, struct task_struct *next,
			  unsigned int prev_state)
{
	memset(e, 0, sizeof(*e));
	e->prev_pid = prev->pid;
	e->prev_tgid = prev->tgid;
	e->prev_state = prev_state;
	e->preempt = preempt;
	e->next_pid = next->pid;
	e->next_tgid = next->tgid;
	e->prev_prio = prev->prio;
	e->next_prio = next->prio;
	memcpy(e->prev_comm, prev->comm, TASK_COMM_LEN);
	memcpy(e->next_comm, next->comm, TASK_COMM_LEN);
}

/* sched_waking and sched_wakeup share the payload layout, not the id. */
static_assert(sizeof(struct vmscope_ev_sched_waking) ==
	      sizeof(struct vmscope_ev_sched_wakeup));

static __always_inline void
vmscope_fill_sched_wake(struct vmscope_ev_sched_waking *e,
			struct task_struct *p)
{
	memset(e, 0, sizeof(*e));
	e->pid = p->pid;
	e->tgid = p->tgid;
	e->target_cpu = task_cpu(p);
	memcpy(e->comm, p->comm, TASK_COMM_LEN);
}

static __always_inline void
vmscope_fill_sched_migrate_task(struct vmscope_ev_sched_migrate_task *e,
				struct task_struct *p, int dest_cpu)
{
	memset(e, 0, sizeof(*e));
	e->pid = p->pid;
	e->tgid = p->tgid;
	e->orig_cpu = task_cpu(p);
	e->dest_cpu = dest_cpu;
	memcpy(e->comm, p->comm, TASK_COMM_LEN);
}

#endif /* VMSCOPE_KVM_PROBES_FILL_SCHED_H */
