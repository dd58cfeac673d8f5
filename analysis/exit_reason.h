/* SPDX-License-Identifier: GPL-2.0 */
/*
 * VM exit reason names for both x86 virtualization extensions: kvm_exit's
 * `isa` field says which one the code belongs to (KVM's KVM_ISA_VMX 1 and
 * KVM_ISA_SVM 2, from arch/x86/kvm/trace.h, which no UAPI header
 * exports). The names are the kernel's own (SVM_EXIT_REASONS and
 * VMX_EXIT_REASONS from the UAPI headers <asm/svm.h>, <asm/vmx.h>), so a
 * report says what `trace-cmd` or `perf kvm stat` would.
 */
#ifndef VMSCOPE_ANALYSIS_EXIT_REASON_H
#define VMSCOPE_ANALYSIS_EXIT_REASON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AN_ISA_VMX	1
#define AN_ISA_SVM	2

/*
 * The name of exit @code of @isa into @buf (always terminated): the
 * kernel's name, or "svm_0x..."/"vmx_N"/"isaN_0x..." for a code the
 * table does not know. Intel's code keeps the basic reason in its low 16
 * bits (bit 31 marks a failed VM entry, said as "+entry_fail").
 */
const char *an_exit_reason_name(uint32_t isa, uint32_t code, char *buf, size_t len);

/* The exit is a HLT (the vCPU is halted until its next entry). */
bool an_exit_is_hlt(uint32_t isa, uint32_t code);

#endif
