// SPDX-License-Identifier: GPL-2.0
/*
 * Exit reason names from the kernel's UAPI headers (Debian's
 * linux-libc-dev): asm/vmx.h and asm/svm.h define VMX_EXIT_REASONS and
 * SVM_EXIT_REASONS, the {code, "name"} lists KVM's kvm_exit tracepoint
 * prints with, so the names match what `perf kvm` and tracefs show and no
 * table is written by hand here. asm/kvm.h gives the exception vectors
 * SVM_EXIT_REASONS refers to.
 */
#include <stddef.h>

#include <asm/kvm.h>
#include <asm/svm.h>
#include <asm/vmx.h>

#include "exit_reason_name.h"

struct exit_name {
	uint32_t code;
	const char *name;
};

static const struct exit_name vmx_names[] = { VMX_EXIT_REASONS };
static const struct exit_name svm_names[] = { SVM_EXIT_REASONS };

static const char *find(const struct exit_name *t, size_t n, uint32_t code)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].code == code)
			return t[i].name;
	return NULL;
}

const char *vmscope_exit_reason_name(uint32_t isa, uint32_t reason)
{
	if (isa == VMSCOPE_ISA_VMX)
		return find(vmx_names, sizeof(vmx_names) / sizeof(vmx_names[0]),
			    reason & 0xffff);
	if (isa == VMSCOPE_ISA_SVM)
		return find(svm_names, sizeof(svm_names) / sizeof(svm_names[0]), reason);
	return NULL;
}
