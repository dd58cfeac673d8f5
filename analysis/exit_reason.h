/* SPDX-License-Identifier: GPL-2.0 */
/*
 * VM exit reasons as the reports show them: kvm_exit's `isa` field says
 * whether the code is Intel VMX or AMD SVM; the names are the kernel's own
 * (kvm-probes/exit_reason_name.h, from the UAPI lists), so a report says
 * what `trace-cmd` or `perf kvm stat` would; codes without a name are
 * still told apart.
 */
#ifndef VMSCOPE_ANALYSIS_EXIT_REASON_H
#define VMSCOPE_ANALYSIS_EXIT_REASON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exit_reason_name.h"

#define AN_ISA_VMX	VMSCOPE_ISA_VMX
#define AN_ISA_SVM	VMSCOPE_ISA_SVM

/*
 * The name of exit @code of @isa into @buf (always terminated): the
 * kernel's name, or "svm_0x..."/"vmx_N"/"isaN_0x..." for a code the
 * table does not know. Intel's code keeps the basic reason in its low 16
 * bits (bit 31 marks a failed VM entry, said as "+entry_fail").
 */
const char *an_exit_reason_name(uint32_t isa, uint32_t code, char *buf, size_t len);

/*
 * The label of an exit wherever it is shown (reports, exports):
 * an_exit_reason_name, or "unknown" when its details were missed
 * (kvm_exit's reason_valid 0: @isa and @code then mean nothing).
 */
const char *an_exit_label(uint32_t isa, uint32_t code, bool valid, char *buf, size_t len);

/* The exit is a HLT (the vCPU is halted until its next entry). */
bool an_exit_is_hlt(uint32_t isa, uint32_t code);

/* The exit is a nested page fault: AMD's NPF, Intel's EPT violation (the
 * guest touched a guest-physical page the host's nested page tables do
 * not map as it asked; kvm_page_fault's address is then guest-physical). */
bool an_exit_is_npf(uint32_t isa, uint32_t code);

#endif
