// SPDX-License-Identifier: GPL-2.0
/*
 * MSR names (msr_name.h) as msr-index.h gives them. Argument: the header
 * the build generated the table from, "" when it found none: then every
 * name is NULL (reports print the index alone).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../../tests/lib/check.h"
#include "msr_name.h"

static void name_is(uint32_t index, const char *want)
{
	const char *n = vmscope_msr_name(index);

	if (!want) {
		CHECK(n == NULL);
		return;
	}
	CHECK(n != NULL && !strcmp(n, want));
	if (!n || strcmp(n, want))
		fprintf(stderr, "MSR %#x: %s, want %s\n", index, n ? n : "(none)", want);
}

int main(int argc, char **argv)
{
	bool have = argc > 1 && argv[1][0];

	name_is(0xc0000080, have ? "MSR_EFER" : NULL);
	name_is(0x6e0, have ? "MSR_IA32_TSC_DEADLINE" : NULL);
	name_is(0x10, have ? "MSR_IA32_TSC" : NULL);
	name_is(0xc0010015, have ? "MSR_K7_HWCR" : NULL);
	/* the table's first entry is found too */
	name_is(0, have ? "MSR_IA32_P5_MC_ADDR" : NULL);
	name_is(0x12345, NULL);
	name_is(0xffffffff, NULL);
	printf("msr names from %s: %s\n", have ? argv[1] : "(none)",
	       check_failures ? "FAIL" : "ok");
	return check_failures ? 1 : 0;
}
