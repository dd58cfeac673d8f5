/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The prototypes (TP_PROTO) of the vmlinux tracepoints our probes attach
 * to, host (kvm-probes/kmod/probes.c) and guest (guest-kmod/probes.c), and
 * the compile-time checks. All of these tracepoints are declared in
 * include/trace/events/ of the headers package, so every probe is checked
 * against the header too (VMSCOPE_CHECK_HEADER): a kernel that changed one
 * fails the build instead of calling a probe with the wrong arguments.
 * protos.h adds the x86 KVM ones, which are not in the headers package.
 */
#ifndef VMSCOPE_KVM_PROBES_PROTOS_VMLINUX_H
#define VMSCOPE_KVM_PROBES_PROTOS_VMLINUX_H

/* include/trace/events/sched.h */
#define VMSCOPE_TP_sched_switch		bool, struct task_struct *, \
	struct task_struct *, unsigned int
#define VMSCOPE_TP_sched_waking		struct task_struct *
#define VMSCOPE_TP_sched_wakeup		struct task_struct *
#define VMSCOPE_TP_sched_migrate_task	struct task_struct *, int

/* The probe vmscope_probe_<tp> has the type the tracepoint will call. */
#define VMSCOPE_CHECK_PROBE(tp) \
	static_assert(__same_type(&vmscope_probe_##tp, \
				  (void (*)(void *, VMSCOPE_TP_##tp))NULL), \
		      "probe for " #tp " does not match its TP_PROTO")

/* Our prototype is the one in the kernel's header (trace_<tp>()). */
#define VMSCOPE_CHECK_HEADER(tp) \
	static_assert(__same_type(&trace_##tp, \
				  (void (*)(VMSCOPE_TP_##tp))NULL), \
		      "TP_PROTO of " #tp " changed in this kernel")

#define VMSCOPE_TP_sched_process_fork	struct task_struct *, \
	struct task_struct *
#define VMSCOPE_TP_sched_process_exec	struct task_struct *, pid_t, \
	struct linux_binprm *
#define VMSCOPE_TP_sched_process_exit	struct task_struct *

/* include/trace/events/irq.h */
#define VMSCOPE_TP_irq_handler_entry	int, struct irqaction *
#define VMSCOPE_TP_irq_handler_exit	int, struct irqaction *, int
#define VMSCOPE_TP_softirq_entry	unsigned int
#define VMSCOPE_TP_softirq_exit		unsigned int

/*
 * arch/x86/include/asm/trace/irq_vectors.h: class x86_irq_vector, every
 * <name>_entry of it (guest-kmod/probes.c)
 */
#define VMSCOPE_TP_irq_vector_entry	int

/* include/trace/events/syscalls.h */
#define VMSCOPE_TP_sys_enter		struct pt_regs *, long
#define VMSCOPE_TP_sys_exit		struct pt_regs *, long

#endif /* VMSCOPE_KVM_PROBES_PROTOS_VMLINUX_H */
