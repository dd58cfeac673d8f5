/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tracepoint prototypes (TP_PROTO) our probes are written against, and
 * the compile-time checks that they are this kernel's.
 *
 * A probe is registered through a void pointer, so a prototype mismatch
 * would not be a compile error by itself but a crash at run time. Hence:
 * - vmlinux and generic KVM tracepoints (include/trace/events/{sched,kvm}.h
 *   are in the headers package): each probe's type is checked against the
 *   header's trace_<name>() with static_assert;
 * - x86 KVM tracepoints (arch/x86/kvm/trace.h is NOT in the headers
 *   package): the prototypes below are copied from the source of the
 *   supported kernels, and any other kernel version is an #error, not a
 *   guess. See kvm-probes/README.md for how to add a version.
 */
#ifndef VMSCOPE_KVM_PROBES_PROTOS_H
#define VMSCOPE_KVM_PROBES_PROTOS_H

#include <linux/version.h>
#include "protos_vmlinux.h"

/*
 * Checked against linux-source-6.1 6.1.192 (Debian 6.1.0-57): that stable
 * series carries the backports that changed kvm_entry (force_immediate_exit)
 * and kvm_inj_virq (soft, reinjected), so older 6.1.y differ. Debian clamps
 * sublevels above 255 to 255, which stays inside this range.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 192) || \
	LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#error "kvm-probes: x86 KVM tracepoint prototypes are only verified for 6.1.192 to 6.1.255; see kvm-probes/README.md"
#endif

/* arch/x86/kvm/trace.h, 6.1.192 */
#define VMSCOPE_TP_kvm_exit		struct kvm_vcpu *, u32
#define VMSCOPE_TP_kvm_entry		struct kvm_vcpu *, bool
#define VMSCOPE_TP_kvm_cr		unsigned int, unsigned int, unsigned long
#define VMSCOPE_TP_kvm_page_fault	struct kvm_vcpu *, u64, u64
#define VMSCOPE_TP_kvm_hypercall	unsigned long, unsigned long, \
	unsigned long, unsigned long, unsigned long
#define VMSCOPE_TP_kvm_pio		unsigned int, unsigned int, \
	unsigned int, unsigned int, const void *
#define VMSCOPE_TP_kvm_msr		unsigned int, u32, u64, bool
#define VMSCOPE_TP_kvm_inj_virq		unsigned int, bool, bool
#define VMSCOPE_TP_kvm_write_tsc_offset	unsigned int, __u64, __u64
/* kvm_exit's isa argument (trace.h's KVM_ISA_VMX, KVM_ISA_SVM) */
#define VMSCOPE_KVM_ISA_VMX		1
#define VMSCOPE_KVM_ISA_SVM		2

/* include/trace/events/kvm.h: also checked against the header */
#define VMSCOPE_TP_kvm_mmio		int, int, u64, void *
#define VMSCOPE_TP_kvm_userspace_exit	__u32, int
#define VMSCOPE_TP_kvm_vcpu_wakeup	__u64, bool, bool

#endif /* VMSCOPE_KVM_PROBES_PROTOS_H */
