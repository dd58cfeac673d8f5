// SPDX-License-Identifier: GPL-2.0
/* Exit reason names: see exit_reason.h. */
#include <stdio.h>

#include <linux/kvm.h>	/* the *_VECTOR numbers <asm/svm.h>'s table uses */
#include <asm/svm.h>
#include <asm/vmx.h>

#include "exit_reason.h"

struct reason_name {
	uint32_t code;
	const char *name;
};

static const struct reason_name svm_names[] = { SVM_EXIT_REASONS };
static const struct reason_name vmx_names[] = { VMX_EXIT_REASONS };

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *lookup(const struct reason_name *t, size_t n, uint32_t code)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].code == code)
			return t[i].name;
	return NULL;
}

const char *an_exit_reason_name(uint32_t isa, uint32_t code, char *buf, size_t len)
{
	const char *name;

	if (isa == AN_ISA_SVM) {
		name = lookup(svm_names, N(svm_names), code);
		if (name)
			snprintf(buf, len, "%s", name);
		else
			snprintf(buf, len, "svm_0x%x", code);
	} else if (isa == AN_ISA_VMX) {
		name = lookup(vmx_names, N(vmx_names), code & 0xffff);
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

bool an_exit_is_hlt(uint32_t isa, uint32_t code)
{
	return (isa == AN_ISA_SVM && code == SVM_EXIT_HLT) ||
	       (isa == AN_ISA_VMX && (code & 0xffff) == EXIT_REASON_HLT);
}
