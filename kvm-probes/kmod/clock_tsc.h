/* SPDX-License-Identifier: GPL-2.0 */
#ifndef VMSCOPE_KMOD_CLOCK_TSC_H
#define VMSCOPE_KMOD_CLOCK_TSC_H

#include <linux/trace_clock.h>
#include <asm/msr.h>

/*
 * The trace clock, bracketed by two TSC reads: one (ns, TSC) pair per
 * side of a sync exchange, from which the merge maps a guest instant to
 * host time through the TSC offset KVM programmed, independently of the
 * hull estimate (sync/README.md, "TSC cross-check"). The width
 * *tsc_b - *tsc_a says how far apart the reads were (an interrupt or a
 * VM exit between them widens it); the merge widens its tolerance by it.
 * Both modules use this one definition.
 */
static __always_inline u64 vmscope_clock_tsc(u64 *tsc_a, u64 *tsc_b)
{
	u64 ns;

	*tsc_a = rdtsc_ordered();
	ns = trace_clock_local();
	*tsc_b = rdtsc_ordered();
	return ns;
}

#endif
