/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The direct read of kvm_exit's details from the VMCB (AMD SVM), inline:
 * exit_direct.c compares it with KVM's record and decides when it is
 * trusted; probes.c calls it in direct mode, in the probe's own text.
 * See exit_direct.c for why these offsets hold and how they are checked.
 */
#ifndef VMSCOPE_KVM_PROBES_EXIT_READ_H
#define VMSCOPE_KVM_PROBES_EXIT_READ_H

#include <linux/kvm_host.h>
#include <linux/uaccess.h>
#include <asm/svm.h>
#include "core.h"

/* test only (module parameter test_vmcb_skew): bytes added to the offset */
extern int vmscope_test_vmcb_skew;

/* The head of struct vcpu_svm (arch/x86/kvm/svm/svm.h, 5.10 to 6.12). */
struct vmscope_svm_head {
	struct kvm_vcpu vcpu;
	struct vmcb *vmcb;
};
static_assert(offsetof(struct vmscope_svm_head, vcpu) == 0);

/* What svm_get_exit_info() reads: contiguous in the control area. */
struct vmscope_svm_exit_area {
	u32 exit_code;
	u32 exit_code_hi;
	u64 exit_info_1;
	u64 exit_info_2;
	u32 exit_int_info;
	u32 exit_int_info_err;
};

#define VMCB_CTL(f) offsetof(struct vmcb_control_area, f)
/* AMD APM vol. 2, table B-1 (VMCB control area) */
static_assert(offsetof(struct vmcb, control) == 0);
static_assert(VMCB_CTL(exit_code) == 0x70);
static_assert(VMCB_CTL(exit_code_hi) == 0x74);
static_assert(VMCB_CTL(exit_info_1) == 0x78);
static_assert(VMCB_CTL(exit_info_2) == 0x80);
static_assert(VMCB_CTL(exit_int_info) == 0x88);
static_assert(VMCB_CTL(exit_int_info_err) == 0x8c);
#define AREA(f) offsetof(struct vmscope_svm_exit_area, f)
static_assert(AREA(exit_code_hi) == VMCB_CTL(exit_code_hi) - VMCB_CTL(exit_code));
static_assert(AREA(exit_info_1) == VMCB_CTL(exit_info_1) - VMCB_CTL(exit_code));
static_assert(AREA(exit_info_2) == VMCB_CTL(exit_info_2) - VMCB_CTL(exit_code));
static_assert(AREA(exit_int_info) == VMCB_CTL(exit_int_info) - VMCB_CTL(exit_code));
static_assert(AREA(exit_int_info_err) == VMCB_CTL(exit_int_info_err) - VMCB_CTL(exit_code));
static_assert(sizeof(struct vmscope_svm_exit_area) ==
	      VMCB_CTL(nested_ctl) - VMCB_CTL(exit_code));

/*
 * What copy_from_kernel_nofault() allows on x86 (a canonical kernel-half
 * address), so that a wrong pointer is refused before it is loaded from.
 * The width from the paging mode (a patched branch), not from
 * boot_cpu_data: no data page of its own to touch in the probe (under
 * TCG, every page first touched after an exit costs a TLB fill).
 */
#define VMSCOPE_VIRT_BITS (pgtable_l5_enabled() ? 57 : 48)
static __always_inline bool vmscope_kernel_addr_ok(const void *p, size_t len)
{
	unsigned long a = (unsigned long)p;

	return a >= TASK_SIZE_MAX + PAGE_SIZE && a + len > a &&
	       __is_canonical_address(a, VMSCOPE_VIRT_BITS) &&
	       __is_canonical_address(a + len - 1, VMSCOPE_VIRT_BITS);
}

/*
 * Reads what svm_get_exit_info() would return for @vcpu, and the exit
 * code's high word. Probe context; 0 or -EFAULT. The loads are
 * copy_from_kernel_nofault()'s own (__get_kernel_nofault() with page
 * faults disabled, after its address check), inlined: five 8-byte loads
 * instead of two calls that copy in loops (it was the direct mode's
 * largest cost in the bench).
 */
static __always_inline int vmscope_svm_read(const struct kvm_vcpu *vcpu,
				    struct vmscope_exit_scratch *d, u32 *hi)
{
	const void *slot = (const char *)vcpu +
			   offsetof(struct vmscope_svm_head, vmcb) +
			   vmscope_test_vmcb_skew;
	unsigned long vmcb;	/* struct vmcb * */
	const char *area;
	u64 code, info1, info2, intr;

	if (!vmscope_kernel_addr_ok(slot, sizeof(struct vmcb *)))
		return -EFAULT;
	pagefault_disable();
	__get_kernel_nofault(&vmcb, slot, unsigned long, fault);
	area = (const char *)vmcb + offsetof(struct vmcb, control) +
	       VMCB_CTL(exit_code);
	if (!vmscope_kernel_addr_ok(area, sizeof(struct vmscope_svm_exit_area)))
		goto fault;
	/* exit_code + exit_code_hi, ..., exit_int_info + exit_int_info_err */
	__get_kernel_nofault(&code, area, u64, fault);
	__get_kernel_nofault(&info1, area + AREA(exit_info_1), u64, fault);
	__get_kernel_nofault(&info2, area + AREA(exit_info_2), u64, fault);
	__get_kernel_nofault(&intr, area + AREA(exit_int_info), u64, fault);
	pagefault_enable();
	d->exit_reason = lower_32_bits(code);
	*hi = upper_32_bits(code);
	d->info1 = info1;
	d->info2 = info2;
	d->intr_info = lower_32_bits(intr);
	/* exactly svm_get_exit_info() */
	if ((d->intr_info & SVM_EXITINTINFO_VALID) &&
	    (d->intr_info & SVM_EXITINTINFO_VALID_ERR))
		d->error_code = upper_32_bits(intr);
	else
		d->error_code = 0;
	/* the trace's kvm_rip_read(): SVM caches RIP at every exit */
	d->guest_rip = (vcpu->arch.regs_avail & BIT(VCPU_REGS_RIP)) ?
		       vcpu->arch.regs[VCPU_REGS_RIP] : 0;
	d->vcpu_id = vcpu->vcpu_id;
	return 0;
fault:
	pagefault_enable();
	return -EFAULT;
}
static_assert(AREA(exit_code) == 0 && AREA(exit_int_info) + 8 ==
	      sizeof(struct vmscope_svm_exit_area));

/* An exit code KVM's VMCB can hold at kvm_exit (asm/svm.h's range). */
static __always_inline bool vmscope_svm_possible(u32 code, u32 hi)
{
	if (code == (u32)SVM_EXIT_ERR)
		return hi == (u32)SVM_EXIT_ERR;
	return !hi && code <= SVM_EXIT_VMGEXIT;
}

#endif /* VMSCOPE_KVM_PROBES_EXIT_READ_H */
