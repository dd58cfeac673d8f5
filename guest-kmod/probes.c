// SPDX-License-Identifier: GPL-2.0
/*
 * The guest probes: one small function per tracepoint, filling the payload
 * that kvm-probes/events.def defines (sides GUEST or BOTH), and attaching
 * them for the length of a session only.
 *
 * Attach happens in the session's start hook (process context, before the
 * channel is published), detach in its stop hook (after it is unpublished);
 * the session code's synchronize_rcu() then waits for every probe still
 * running (tracepoint probes run with preemption disabled). So no probe
 * costs anything while no session records, and the high-rate syscall
 * probes only when selected.
 *
 * Probe context: no allocation, no sleeping, no locks; one record per call
 * (reserve, one memcpy, commit); a full buffer drops and counts.
 */
#include <linux/binfmts.h>
#include <linux/interrupt.h>
#include <linux/mutex.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <asm/syscall.h>
#include <asm/trace/irq_vectors.h>
#include <trace/events/irq.h>
#include <trace/events/sched.h>
#include <trace/events/syscalls.h>
#include "../kvm-probes/kmod/fill_sched.h"
#include "../kvm-probes/kmod/protos_vmlinux.h"
#include "probes.h"
#include "record.h"

#define GUEST_EMIT(ev, var) \
	vmscope_guest_record(VMSCOPE_EV_##ev, &(var), sizeof(var))

static void vmscope_probe_sched_switch(void *data, bool preempt,
				       struct task_struct *prev,
				       struct task_struct *next,
				       unsigned int prev_state)
{
	struct vmscope_ev_sched_switch e;

	vmscope_fill_sched_switch(&e, preempt, prev, next, prev_state);
	GUEST_EMIT(sched_switch, e);
}

#define VMSCOPE_GUEST_WAKE_PROBE(ev) \
static void vmscope_probe_##ev(void *data, struct task_struct *p) \
{ \
	struct vmscope_ev_##ev e; \
	\
	vmscope_fill_sched_wake((struct vmscope_ev_sched_waking *)&e, p); \
	GUEST_EMIT(ev, e); \
}
VMSCOPE_GUEST_WAKE_PROBE(sched_waking)
VMSCOPE_GUEST_WAKE_PROBE(sched_wakeup)

static void vmscope_probe_sched_migrate_task(void *data, struct task_struct *p,
					     int dest_cpu)
{
	struct vmscope_ev_sched_migrate_task e;

	vmscope_fill_sched_migrate_task(&e, p, dest_cpu);
	GUEST_EMIT(sched_migrate_task, e);
}

/* The task running on this CPU, as a cpu_task record. */
static void vmscope_guest_fill_cpu_task(struct vmscope_ev_cpu_task *e)
{
	memset(e, 0, sizeof(*e));
	e->pid = current->pid;
	e->tgid = current->tgid;
	e->kthread = !!(current->flags & PF_KTHREAD);
	memcpy(e->comm, current->comm, TASK_COMM_LEN);
}

void vmscope_guest_write_cpu_task(struct vmscope_rb_buf *buf)
{
	struct vmscope_ev_cpu_task e;

	vmscope_guest_fill_cpu_task(&e);
	vmscope_rb_write(buf, VMSCOPE_EV_cpu_task, &e, sizeof(e));
}

/* Runs on each CPU in the cross-call's interrupt: current is what ran there. */
static void vmscope_guest_cpu_task(void *unused)
{
	struct vmscope_ev_cpu_task e;

	vmscope_guest_fill_cpu_task(&e);
	GUEST_EMIT(cpu_task, e);
}

/* Process context, after the route is published: one record per CPU. */
void vmscope_guest_record_cpu_tasks(void)
{
	on_each_cpu(vmscope_guest_cpu_task, NULL, 1);
}

static void vmscope_probe_sched_process_fork(void *data,
					     struct task_struct *parent,
					     struct task_struct *child)
{
	struct vmscope_ev_sched_process_fork e;

	memset(&e, 0, sizeof(e));
	e.parent_pid = parent->pid;
	e.child_pid = child->pid;
	e.child_tgid = child->tgid;
	memcpy(e.parent_comm, parent->comm, TASK_COMM_LEN);
	memcpy(e.child_comm, child->comm, TASK_COMM_LEN);
	GUEST_EMIT(sched_process_fork, e);
}

static void vmscope_probe_sched_process_exec(void *data, struct task_struct *p,
					     pid_t old_pid,
					     struct linux_binprm *bprm)
{
	struct vmscope_ev_sched_process_exec e;

	memset(&e, 0, sizeof(e));
	e.pid = p->pid;
	e.tgid = p->tgid;
	e.old_pid = old_pid;
	memcpy(e.comm, p->comm, TASK_COMM_LEN);
	/* the tail of a long path says more than its head */
	if (bprm->filename) {
		size_t n = strlen(bprm->filename);
		const char *f = bprm->filename;

		if (n >= sizeof(e.filename))
			f += n - (sizeof(e.filename) - 1);
		strscpy(e.filename, f, sizeof(e.filename));
	}
	GUEST_EMIT(sched_process_exec, e);
}

static void vmscope_probe_sched_process_exit(void *data, struct task_struct *p)
{
	struct vmscope_ev_sched_process_exit e;

	memset(&e, 0, sizeof(e));
	e.pid = p->pid;
	e.tgid = p->tgid;
	e.prio = p->prio;
	memcpy(e.comm, p->comm, TASK_COMM_LEN);
	GUEST_EMIT(sched_process_exit, e);
}

static void vmscope_probe_irq_handler_entry(void *data, int irq,
					    struct irqaction *action)
{
	struct vmscope_ev_irq_handler_entry e = { .irq = irq };

	GUEST_EMIT(irq_handler_entry, e);
}

static void vmscope_probe_irq_handler_exit(void *data, int irq,
					   struct irqaction *action, int ret)
{
	struct vmscope_ev_irq_handler_exit e = { .irq = irq, .ret = ret };

	GUEST_EMIT(irq_handler_exit, e);
}

/* Every x86_irq_vector *_entry tracepoint: the vector whose handler runs. */
static void vmscope_probe_irq_vector_entry(void *data, int vector)
{
	struct vmscope_ev_irq_vector_entry e = { .vector = vector };

	GUEST_EMIT(irq_vector_entry, e);
}

static void vmscope_probe_softirq_entry(void *data, unsigned int vec)
{
	struct vmscope_ev_softirq_entry e = { .vec = vec };

	GUEST_EMIT(softirq_entry, e);
}

static void vmscope_probe_softirq_exit(void *data, unsigned int vec)
{
	struct vmscope_ev_softirq_exit e = { .vec = vec };

	GUEST_EMIT(softirq_exit, e);
}

static void vmscope_probe_sys_enter(void *data, struct pt_regs *regs, long id)
{
	struct vmscope_ev_sys_enter e;
	unsigned long args[6];

	syscall_get_arguments(current, regs, args);
	e.nr = id;
	e.arg0 = args[0];
	e.arg1 = args[1];
	e.arg2 = args[2];
	e.arg3 = args[3];
	e.arg4 = args[4];
	e.arg5 = args[5];
	GUEST_EMIT(sys_enter, e);
}

static void vmscope_probe_sys_exit(void *data, struct pt_regs *regs, long ret)
{
	struct vmscope_ev_sys_exit e;

	e.nr = syscall_get_nr(current, regs);
	e.ret = ret;
	GUEST_EMIT(sys_exit, e);
}

VMSCOPE_CHECK_PROBE(sched_switch);
VMSCOPE_CHECK_PROBE(sched_waking);
VMSCOPE_CHECK_PROBE(sched_wakeup);
VMSCOPE_CHECK_PROBE(sched_migrate_task);
VMSCOPE_CHECK_PROBE(sched_process_fork);
VMSCOPE_CHECK_PROBE(sched_process_exec);
VMSCOPE_CHECK_PROBE(sched_process_exit);
VMSCOPE_CHECK_PROBE(irq_handler_entry);
VMSCOPE_CHECK_PROBE(irq_handler_exit);
VMSCOPE_CHECK_PROBE(irq_vector_entry);
VMSCOPE_CHECK_PROBE(softirq_entry);
VMSCOPE_CHECK_PROBE(softirq_exit);
VMSCOPE_CHECK_PROBE(sys_enter);
VMSCOPE_CHECK_PROBE(sys_exit);
VMSCOPE_CHECK_HEADER(sched_switch);
VMSCOPE_CHECK_HEADER(sched_waking);
VMSCOPE_CHECK_HEADER(sched_wakeup);
VMSCOPE_CHECK_HEADER(sched_migrate_task);
VMSCOPE_CHECK_HEADER(sched_process_fork);
VMSCOPE_CHECK_HEADER(sched_process_exec);
VMSCOPE_CHECK_HEADER(sched_process_exit);
VMSCOPE_CHECK_HEADER(irq_handler_entry);
VMSCOPE_CHECK_HEADER(irq_handler_exit);
/* each tracepoint the vector probe attaches to has its prototype */
#define VMSCOPE_CHECK_VECTOR_TP(tp) \
	static_assert(__same_type(&trace_##tp, \
				  (void (*)(VMSCOPE_TP_irq_vector_entry))NULL), \
		      "TP_PROTO of " #tp " changed in this kernel")
VMSCOPE_CHECK_VECTOR_TP(local_timer_entry);
VMSCOPE_CHECK_VECTOR_TP(reschedule_entry);
VMSCOPE_CHECK_VECTOR_TP(call_function_entry);
VMSCOPE_CHECK_VECTOR_TP(call_function_single_entry);
VMSCOPE_CHECK_VECTOR_TP(irq_work_entry);
VMSCOPE_CHECK_VECTOR_TP(x86_platform_ipi_entry);
VMSCOPE_CHECK_VECTOR_TP(error_apic_entry);
VMSCOPE_CHECK_VECTOR_TP(spurious_apic_entry);
VMSCOPE_CHECK_HEADER(softirq_entry);
VMSCOPE_CHECK_HEADER(softirq_exit);
VMSCOPE_CHECK_HEADER(sys_enter);
VMSCOPE_CHECK_HEADER(sys_exit);

/*
 * A tracepoint and its probe: the one its event's descriptor names, or
 * @name (irq_vector_entry's, one event for several tracepoints).
 */
struct guest_tp {
	unsigned int ev;
	void *probe;
	const char *name;	/* NULL: the descriptor's tracepoint */
	struct tracepoint *tp;	/* found at load; NULL if this kernel lacks it */
	bool attached;
};

#define GUEST_TP(name) { .ev = VMSCOPE_EV_##name, .probe = vmscope_probe_##name }
#define GUEST_TP_VECTOR(tp) { .ev = VMSCOPE_EV_irq_vector_entry, \
	.probe = vmscope_probe_irq_vector_entry, .name = #tp }
static struct guest_tp guest_tps[] = {
	GUEST_TP(sched_switch),
	GUEST_TP(sched_waking),
	GUEST_TP(sched_wakeup),
	GUEST_TP(sched_migrate_task),
	GUEST_TP(sched_process_fork),
	GUEST_TP(sched_process_exec),
	GUEST_TP(sched_process_exit),
	GUEST_TP(irq_handler_entry),
	GUEST_TP(irq_handler_exit),
	GUEST_TP_VECTOR(local_timer_entry),
	GUEST_TP_VECTOR(reschedule_entry),
	GUEST_TP_VECTOR(call_function_entry),
	GUEST_TP_VECTOR(call_function_single_entry),
	GUEST_TP_VECTOR(irq_work_entry),
	GUEST_TP_VECTOR(x86_platform_ipi_entry),
	GUEST_TP_VECTOR(error_apic_entry),
	GUEST_TP_VECTOR(spurious_apic_entry),
	GUEST_TP(softirq_entry),
	GUEST_TP(softirq_exit),
	GUEST_TP(sys_enter),
	GUEST_TP(sys_exit),
};

/* Under the session lock (start/stop hooks) or at load/unload. */
static DEFINE_MUTEX(guest_events_lock);
static u64 guest_events_selected = VMSCOPE_GUEST_EVENTS_DEFAULT;

static const char *guest_tp_name(const struct guest_tp *g)
{
	return g->name ? g->name : vmscope_event_descs[g->ev].tracepoint;
}

static void guest_find_tp(struct tracepoint *tp, void *priv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(guest_tps); i++)
		if (!strcmp(tp->name, guest_tp_name(&guest_tps[i])))
			guest_tps[i].tp = tp;
}

void vmscope_guest_probes_init(void)
{
	unsigned int i;

	for_each_kernel_tracepoint(guest_find_tp, NULL);
	for (i = 0; i < ARRAY_SIZE(guest_tps); i++)
		if (!guest_tps[i].tp)
			pr_info("vmscope_guest: no tracepoint %s in this kernel\n",
				guest_tp_name(&guest_tps[i]));
}

int vmscope_guest_events_select(u64 *mask)
{
	u64 all = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(guest_tps); i++)
		all |= BIT_ULL(guest_tps[i].ev);
	all |= BIT_ULL(VMSCOPE_EV_sync_guest) | BIT_ULL(VMSCOPE_EV_cpu_task);
	if (!*mask)
		*mask = VMSCOPE_GUEST_EVENTS_DEFAULT;
	if (*mask & ~all)
		return -EINVAL;
	mutex_lock(&guest_events_lock);
	for (i = 0; i < ARRAY_SIZE(guest_tps); i++) {
		if (guest_tps[i].attached) {
			mutex_unlock(&guest_events_lock);
			return -EBUSY;	/* a session records */
		}
	}
	guest_events_selected = *mask;
	mutex_unlock(&guest_events_lock);
	return 0;
}

void vmscope_guest_probes_detach(void)
{
	unsigned int i;

	mutex_lock(&guest_events_lock);
	for (i = 0; i < ARRAY_SIZE(guest_tps); i++) {
		if (!guest_tps[i].attached)
			continue;
		tracepoint_probe_unregister(guest_tps[i].tp, guest_tps[i].probe,
					    NULL);
		guest_tps[i].attached = false;
	}
	mutex_unlock(&guest_events_lock);
}

int vmscope_guest_probes_attach(void)
{
	unsigned int i;
	int ret = 0;

	mutex_lock(&guest_events_lock);
	for (i = 0; i < ARRAY_SIZE(guest_tps); i++) {
		struct guest_tp *g = &guest_tps[i];

		if (!(guest_events_selected & BIT_ULL(g->ev)))
			continue;
		if (!g->tp && g->name)
			continue;	/* one vector's tracepoint: the others still record */
		if (!g->tp) {
			ret = -ENOENT;
			break;
		}
		ret = tracepoint_probe_register(g->tp, g->probe, NULL);
		if (ret)
			break;
		g->attached = true;
	}
	mutex_unlock(&guest_events_lock);
	if (ret)
		vmscope_guest_probes_detach();
	return ret;
}
