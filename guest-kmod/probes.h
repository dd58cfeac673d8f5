/* SPDX-License-Identifier: GPL-2.0 */
#ifndef VMSCOPE_GUEST_PROBES_H
#define VMSCOPE_GUEST_PROBES_H

#include <linux/bits.h>
#include <linux/types.h>
#include "../kvm-probes/vmscope_events.h"

/* Every guest event but the high-rate sys_enter/sys_exit. */
#define VMSCOPE_GUEST_EVENTS_DEFAULT \
	(BIT_ULL(VMSCOPE_EV_sched_switch) | BIT_ULL(VMSCOPE_EV_sched_waking) | \
	 BIT_ULL(VMSCOPE_EV_sched_wakeup) | \
	 BIT_ULL(VMSCOPE_EV_sched_migrate_task) | \
	 BIT_ULL(VMSCOPE_EV_sched_process_fork) | \
	 BIT_ULL(VMSCOPE_EV_sched_process_exec) | \
	 BIT_ULL(VMSCOPE_EV_sched_process_exit) | \
	 BIT_ULL(VMSCOPE_EV_irq_handler_entry) | \
	 BIT_ULL(VMSCOPE_EV_irq_handler_exit) | \
	 BIT_ULL(VMSCOPE_EV_irq_vector_entry) | \
	 BIT_ULL(VMSCOPE_EV_softirq_entry) | BIT_ULL(VMSCOPE_EV_softirq_exit) | \
	 BIT_ULL(VMSCOPE_EV_sync_guest) | BIT_ULL(VMSCOPE_EV_cpu_task))

/* probes.c: finds the tracepoints at load (no attach yet). */
void vmscope_guest_probes_init(void);
/* Session start/stop hooks: attach the selected probes / detach them. */
int vmscope_guest_probes_attach(void);
void vmscope_guest_probes_detach(void);
/* Publish hook, a session starting: each online CPU's current task. */
void vmscope_guest_record_cpu_tasks(void);
/* VMSCOPE_IOC_GUEST_EVENTS: 0 selects the default; mask out = in effect. */
int vmscope_guest_events_select(u64 *mask);

/* statedump.c: VMSCOPE_IOC_GUEST_TASKS / _IRQS */
long vmscope_guest_dump_tasks(void __user *arg);
long vmscope_guest_dump_irqs(void __user *arg);

#endif
