/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names of VM exit reasons, for kvm_exit records (fields isa and
 * exit_reason, kvm-probes/events.def): Intel VMX basic exit reasons and
 * AMD SVM exit codes, named as the kernel's own kvm_exit tracepoint prints
 * them.
 */
#ifndef VMSCOPE_EXIT_REASON_NAME_H
#define VMSCOPE_EXIT_REASON_NAME_H

#include <stdint.h>

/* kvm_exit's isa field (arch/x86/kvm/trace.h, KVM_ISA_*) */
#define VMSCOPE_ISA_VMX	1
#define VMSCOPE_ISA_SVM	2

/* The name of @reason under @isa ("IO_INSTRUCTION", "io", ...), or NULL
 * when the kernel headers we were built with do not name it. For VMX only
 * the basic reason (low 16 bits) counts, as in the kernel's tracepoint. */
const char *vmscope_exit_reason_name(uint32_t isa, uint32_t reason);

#endif
