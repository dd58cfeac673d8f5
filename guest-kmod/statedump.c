// SPDX-License-Identifier: GPL-2.0
/*
 * The state dump at session start, read by ioctl rather than written as
 * records: the agent needs it before any data (the stream's handshake
 * carries it), it must never compete with events for buffer space (a lost
 * task name makes a trace unreadable, a lost event does not), and it is
 * bounded per call (VMSCOPE_GUEST_DUMP_MAX entries, paged by the caller).
 * Called after SESSION_START, it misses nothing: a task born after the
 * dump passed its pid is recorded by the fork probe.
 *
 * Only exported interfaces: find_ge_pid()/pid_task() under RCU for tasks,
 * irq_get_irq_data() + the public struct irq_desc under its lock for IRQs.
 */
#include <linux/cpumask.h>
#include <linux/irq.h>
#include <linux/irqdesc.h>
#include <linux/interrupt.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <vmscope/ioctl.h>
#include "probes.h"

long vmscope_guest_dump_tasks(void __user *arg)
{
	struct vmscope_guest_tasks_req *r;
	u32 start;
	long ret = 0;

	r = kzalloc(sizeof(*r), GFP_KERNEL);	/* 2 KiB: not on the stack */
	if (!r)
		return -ENOMEM;
	if (get_user(start, (u32 __user *)arg)) {
		ret = -EFAULT;
		goto out;
	}
	/* pids are below PID_MAX_LIMIT (4M): start + 1 cannot overflow */
	start = clamp_t(u32, start, 1, PID_MAX_LIMIT);
	rcu_read_lock();
	while (r->nr < VMSCOPE_GUEST_DUMP_MAX) {
		struct vmscope_guest_task *t = &r->tasks[r->nr];
		struct task_struct *p;
		struct pid *pid;

		pid = find_ge_pid(start, &init_pid_ns);
		if (!pid) {
			start = 0;	/* done */
			break;
		}
		start = pid_nr(pid) + 1;
		p = pid_task(pid, PIDTYPE_PID);
		if (!p)
			continue;
		t->pid = p->pid;
		t->tgid = p->tgid;
		t->ppid = task_tgid_nr(rcu_dereference(p->real_parent));
		if (p->flags & PF_KTHREAD)
			t->flags |= VMSCOPE_GUEST_TASK_KTHREAD;
		/* as the probes copy it: a racing rename may tear it */
		strscpy_pad(t->comm, p->comm, sizeof(t->comm));
		r->nr++;
	}
	rcu_read_unlock();
	r->next = start;
	if (copy_to_user(arg, r, sizeof(*r)))
		ret = -EFAULT;
out:
	kfree(r);
	return ret;
}

long vmscope_guest_dump_irqs(void __user *arg)
{
	struct vmscope_guest_irqs_req *r;
	unsigned int irq;
	long ret = 0;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	if (get_user(irq, (u32 __user *)arg)) {
		ret = -EFAULT;
		goto out;
	}
	r->nr_cpus = num_online_cpus();
	for (; irq < nr_irqs && r->nr < VMSCOPE_GUEST_DUMP_MAX; irq++) {
		struct vmscope_guest_irq *e = &r->irqs[r->nr];
		struct irq_data *d;
		struct irqaction *a;
		struct irq_desc *desc;
		unsigned long flags;

		/* descriptors are freed after an RCU grace period */
		rcu_read_lock();
		d = irq_get_irq_data(irq);
		if (!d) {
			rcu_read_unlock();
			continue;
		}
		desc = irq_data_to_desc(d);
		/* free_irq() unlinks actions under this lock */
		raw_spin_lock_irqsave(&desc->lock, flags);
		for (a = desc->action; a; a = a->next) {
			if (!e->nr_actions++ && a->name)
				strscpy(e->name, a->name, sizeof(e->name));
		}
		raw_spin_unlock_irqrestore(&desc->lock, flags);
		rcu_read_unlock();
		if (e->nr_actions) {
			e->irq = irq;
			r->nr++;
		}
	}
	r->next = irq < nr_irqs ? irq : 0;
	if (copy_to_user(arg, r, sizeof(*r)))
		ret = -EFAULT;
out:
	kfree(r);
	return ret;
}
