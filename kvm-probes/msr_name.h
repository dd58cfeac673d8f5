/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names of MSRs, for kvm_msr records (field ecx): the kernel's own
 * msr-index.h names ("MSR_EFER", "MSR_IA32_TSC_DEADLINE"), generated at
 * build time from the linux-headers package (msr_names.py).
 */
#ifndef VMSCOPE_MSR_NAME_H
#define VMSCOPE_MSR_NAME_H

#include <stdint.h>

/* The name of MSR @index, or NULL when msr-index.h has none (or the
 * build found no headers package). */
const char *vmscope_msr_name(uint32_t index);

#endif
