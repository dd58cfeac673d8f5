/* SPDX-License-Identifier: GPL-2.0 */
#ifndef VMSCOPE_GUEST_CLOCK_H
#define VMSCOPE_GUEST_CLOCK_H

#include <linux/timekeeping.h>

/*
 * The guest trace clock: monotonic, NMI-safe and cheap, so that the same
 * clock can be read from any probe context, hardirq timers included.
 */
static inline u64 vmscope_guest_clock(void)
{
	return ktime_get_mono_fast_ns();
}

#endif
