/* SPDX-License-Identifier: GPL-2.0 */
#ifndef VMSCOPE_GUEST_CLOCK_H
#define VMSCOPE_GUEST_CLOCK_H

#include "../ringbuf/ringbuf.h"

/*
 * The guest trace clock: the ring buffer's (rb_clock(), trace_clock_local():
 * NMI-safe, cheap, monotonic per CPU), so that the sync exchanges' t1/t4
 * and the timestamps of every guest record are one clock, which the host
 * aligns to its own.
 */
static inline u64 vmscope_guest_clock(void)
{
	return rb_clock();
}

#endif
