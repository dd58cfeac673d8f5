/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Views of the online pipeline's intervals (pipe.h): JSON lines and plain
 * text. The JSON fields are documented in README.md ("JSON lines").
 */
#ifndef VMSCOPE_ONLINE_VIEW_H
#define VMSCOPE_ONLINE_VIEW_H

#include <stdio.h>

#include "pipe.h"

struct ol_view {
	FILE *out;
	size_t tasks;		/* guest tasks shown per interval */
};

/* One JSON object per interval, one line each (ctx = struct ol_view). */
int ol_view_json(void *ctx, const struct ol_report *r);
/* A plain-text block per interval (ctx = struct ol_view). */
int ol_view_text(void *ctx, const struct ol_report *r);

#endif
