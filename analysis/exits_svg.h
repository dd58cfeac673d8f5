/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `report exits --svg`: the latency histograms of the report's groups
 * (exits.h; by exit reason unless --by says otherwise) as one SVG
 * document, one panel per group, in the report's order: bars of exit
 * counts (linear y) over log-scale latency bins on a shared x axis
 * (quarters of each power of two: edges of the histogram's own buckets,
 * hist.h, so every bar's count is exact; a bin holding any exit is at
 * least 1 px tall; each bar carries its range and count as data-lo,
 * data-hi, data-count and a tooltip), the p50 and p99 marked, the
 * title saying the group, its count, p50, p99 and max. Drawn from the
 * groups' histograms themselves: what the text and JSON report print.
 *
 * Written with libxml2's xmlwriter (already a dependency of the libvirt
 * hook), which escapes markup; text that comes from the trace (guest task
 * and VM names: hostile input) has its invalid UTF-8 and the characters
 * XML does not allow replaced by U+FFFD before that, so the document is
 * well-formed whatever the trace holds.
 */
#ifndef VMSCOPE_ANALYSIS_EXITS_SVG_H
#define VMSCOPE_ANALYSIS_EXITS_SVG_H

#include <stddef.h>

#include "hist.h"

/* Panels drawn at most; the heading says how many groups were left out. */
#define AN_SVG_MAX_PANELS	100

struct an_svg_panel {
	const char *title;		/* the group, any bytes */
	const struct an_hist *h;
};

/*
 * The document with @heading (any bytes) and the first
 * AN_SVG_MAX_PANELS of @n panels, written to @fd. 0 or -errno (-ENOMEM
 * when the document could not be built).
 */
int an_exits_svg(int fd, const char *heading, const struct an_svg_panel *p, size_t n);

#endif
