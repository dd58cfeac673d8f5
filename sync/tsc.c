/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Independent cross-check: the guest→host map implied by the TSC relation
 * KVM programmed (kvm_write_tsc_offset) and each side's clocksource
 * conversion. It shares no input with the hull estimate except the
 * clocks themselves, so agreement within the bound is real evidence.
 */
#include <math.h>

#include "exact.h"

int vmscope_sync_tsc_g2h(const struct vmscope_sync_tsc *t, uint64_t g,
			 uint64_t *h)
{
	if (t->ratio == 0 || t->frac_bits > 63 || t->host_mult == 0 ||
	    t->guest_mult == 0 || t->host_shift > 63 || t->guest_shift > 63)
		return -1;
	/* Guest ns → guest TSC: invert ns = ref + (dtsc * mult >> shift).
	 * long double holds the tick count to well under one tick for any
	 * offset below 2^64 ticks. */
	/* Subtract in integers first: near 2^64 a long double has a 2-4 ns
	 * step. */
	long double dg = g >= t->guest_ref_ns
				 ? (long double)(g - t->guest_ref_ns)
				 : -(long double)(t->guest_ref_ns - g);
	long double dtsc = dg * ldexpl(1.0L, (int)t->guest_shift) /
			   (long double)t->guest_mult;
	if (fabsl(dtsc) >= 0x1p63L)
		return -1;
	uint64_t gtsc = t->guest_ref_tsc + (uint64_t)(int64_t)llroundl(dtsc);
	/* Guest TSC → host TSC: guest = (host * ratio >> frac) + offset. */
	uint64_t scaled = gtsc - t->offset;  /* mod 2^64, as the hardware */
	i128 htsc = ((i128)scaled << t->frac_bits) / (i128)t->ratio;
	/* Host TSC → host ns. */
	i128 dh = htsc - (i128)t->host_ref_tsc;
	if (dh > ((i128)1 << 64) || dh < -((i128)1 << 64))
		return -1;
	i128 prod = dh * (i128)t->host_mult;  /* < 2^97 */
	/* Arithmetic shift with rounding to nearest. */
	i128 ns = (prod + ((i128)1 << t->host_shift >> 1)) >> t->host_shift;
	i128 v = (i128)t->host_ref_ns + ns;
	if (v < 0 || v > (i128)UINT64_MAX)
		return -1;
	*h = (uint64_t)v;
	return 0;
}

int vmscope_sync_tsc_check(const struct vmscope_sync_segment *s,
			   const struct vmscope_sync_tsc *t, uint64_t g,
			   struct vmscope_sync_tsc_check *out)
{
	if (vmscope_sync_tsc_g2h(t, g, &out->h_tsc) < 0 ||
	    vmscope_sync_segment_locate(s, g, &out->h_est, &out->lo, &out->hi) < 0)
		return -1;
	i128 d = (i128)out->h_tsc - (i128)out->h_est;
	out->diff_ns = d > INT64_MAX ? INT64_MAX
		       : d < INT64_MIN ? INT64_MIN : (int64_t)d;
	out->within = out->lo <= out->h_tsc && out->h_tsc <= out->hi;
	return 0;
}
