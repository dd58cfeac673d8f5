// SPDX-License-Identifier: GPL-2.0
/* Durations as the reports print them: dur.h. */
#include <stdio.h>

#include "dur.h"

const char *an_dur(uint64_t ns, char *buf, size_t len)
{
	if (ns < 10000)
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	else if (ns < 10000000)
		snprintf(buf, len, "%.1f us", (double)ns / 1e3);
	else if (ns < 10000000000ull)
		snprintf(buf, len, "%.2f ms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.3f s", (double)ns / 1e9);
	return buf;
}
