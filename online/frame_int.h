/* SPDX-License-Identifier: GPL-2.0 */
/* What the frames' parsers share (metrics_frame.c, trigger_frame.c). Not an API. */
#ifndef VMSCOPE_ONLINE_FRAME_INT_H
#define VMSCOPE_ONLINE_FRAME_INT_H

#include <stddef.h>

/* A refusal: the reason (printf-style) into @why; returns -1. */
__attribute__((format(printf, 3, 4)))
int ol_frame_why(char *why, size_t len, const char *fmt, ...);

#endif
