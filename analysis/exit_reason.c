// SPDX-License-Identifier: GPL-2.0
/* Exit reason names: see exit_reason.h; the table is kvm-probes/exit_reason_name.c. */
#include <stdio.h>

#include <asm/svm.h>
#include <asm/vmx.h>

#include "exit_reason.h"
#include "exit_reason_name.h"

const char *an_exit_reason_name(uint32_t isa, uint32_t code, char *buf, size_t len)
{
	const char *name;

	name = vmscope_exit_reason_name(isa, code);
	if (isa == AN_ISA_SVM) {
		if (name)
			snprintf(buf, len, "%s", name);
		else
			snprintf(buf, len, "svm_0x%x", code);
	} else if (isa == AN_ISA_VMX) {
		if (name)
			snprintf(buf, len, "%s%s", name,
				 code & VMX_EXIT_REASONS_FAILED_VMENTRY ? "+entry_fail" : "");
		else
			snprintf(buf, len, "vmx_%u", code);
	} else {
		snprintf(buf, len, "isa%u_0x%x", isa, code);
	}
	return buf;
}

const char *an_exit_label(uint32_t isa, uint32_t code, bool valid, char *buf, size_t len)
{
	if (!valid) {
		snprintf(buf, len, "unknown");
		return buf;
	}
	return an_exit_reason_name(isa, code, buf, len);
}

bool an_exit_is_hlt(uint32_t isa, uint32_t code)
{
	return (isa == AN_ISA_SVM && code == SVM_EXIT_HLT) ||
	       (isa == AN_ISA_VMX && (code & 0xffff) == EXIT_REASON_HLT);
}

bool an_exit_is_npf(uint32_t isa, uint32_t code)
{
	return (isa == AN_ISA_SVM && code == SVM_EXIT_NPF) ||
	       (isa == AN_ISA_VMX && (code & 0xffff) == EXIT_REASON_EPT_VIOLATION);
}
