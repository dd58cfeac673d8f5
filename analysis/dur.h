/* SPDX-License-Identifier: GPL-2.0 */
/* Durations as the reports print them (text tables, SVG titles). */
#ifndef VMSCOPE_ANALYSIS_DUR_H
#define VMSCOPE_ANALYSIS_DUR_H

#include <stddef.h>
#include <stdint.h>

/* "812 ns", "12.3 us", "4.56 ms", "1.234 s" into @buf; returns @buf. */
const char *an_dur(uint64_t ns, char *buf, size_t len);

#endif
