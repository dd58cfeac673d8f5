// SPDX-License-Identifier: GPL-2.0
/* What the frames' parsers share: see frame_int.h. */
#include <stdarg.h>
#include <stdio.h>

#include "frame_int.h"

int ol_frame_why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}
