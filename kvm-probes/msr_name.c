// SPDX-License-Identifier: GPL-2.0
/* MSR names: msr_name.h. The table is msr_names.py's output, by index. */
#include <stddef.h>

#include "msr_name.h"

struct msr_name {
	uint32_t index;
	const char *name;
};

static const struct msr_name names[] = {
#include "msr_names.inc"
	{ 0, NULL }	/* the end, so that an empty table still compiles */
};

const char *vmscope_msr_name(uint32_t index)
{
	size_t lo = 0, hi = sizeof(names) / sizeof(names[0]) - 1;

	while (lo < hi) {	/* names[0 .. hi) sorted by index */
		size_t mid = lo + (hi - lo) / 2;

		if (names[mid].index < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < sizeof(names) / sizeof(names[0]) - 1 && names[lo].index == index ?
	       names[lo].name : NULL;
}
