/*
 * Exit reason names: the codes a workload causes on each vendor map to the
 * kernel's names, VMX flag bits are ignored as the kernel does, and what is
 * not known gives NULL (callers print the number).
 */
#include <stdio.h>
#include <string.h>

#include "exit_reason_name.h"

#include "../../tests/lib/check.h"

static void name_is(uint32_t isa, uint32_t reason, const char *want)
{
	const char *got = vmscope_exit_reason_name(isa, reason);

	EXPECT(got && !strcmp(got, want), "isa %u reason %#x: %s, want %s", isa, reason,
	       got ? got : "NULL", want);
}

int main(void)
{
	/* Intel SDM appendix C basic exit reasons */
	name_is(VMSCOPE_ISA_VMX, 10, "CPUID");
	name_is(VMSCOPE_ISA_VMX, 12, "HLT");
	name_is(VMSCOPE_ISA_VMX, 30, "IO_INSTRUCTION");
	name_is(VMSCOPE_ISA_VMX, 48, "EPT_VIOLATION");
	name_is(VMSCOPE_ISA_VMX, 0x80000000u | 33, "INVALID_STATE");	/* failed entry flag */
	/* AMD APM vol. 2 appendix C exit codes */
	name_is(VMSCOPE_ISA_SVM, 0x72, "cpuid");
	name_is(VMSCOPE_ISA_SVM, 0x78, "hlt");
	name_is(VMSCOPE_ISA_SVM, 0x7b, "io");
	name_is(VMSCOPE_ISA_SVM, 0x400, "npf");
	EXPECT(!vmscope_exit_reason_name(VMSCOPE_ISA_SVM, 0x7fff), "unknown SVM code named");
	EXPECT(!vmscope_exit_reason_name(VMSCOPE_ISA_VMX, 0xfff), "unknown VMX reason named");
	EXPECT(!vmscope_exit_reason_name(0, 10), "isa 0 named");
	EXPECT(!vmscope_exit_reason_name(3, 10), "isa 3 named");
	return check_result("test_exit_reason_name");
}
