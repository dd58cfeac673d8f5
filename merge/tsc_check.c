// SPDX-License-Identifier: GPL-2.0
/*
 * The TSC cross-check (README.md, "TSC cross-check"): an estimate of each
 * accepted exchange's guest t1 in host time that shares no arithmetic with
 * the hull. At t1 the guest read its TSC (g_tsc, bracketed), and KVM's
 * relation gives the host TSC at that instant, h = g_tsc - offset (no TSC
 * scaling: see the README for why that is assumed and how it shows when
 * wrong); the host's own reading at t2 (t2 ns, h_tsc) and the host's TSC
 * rate turn h into host ns. The rate only scales the few microseconds
 * between t1 and t2, so its error stays far below a nanosecond.
 */
#include <math.h>
#include <stdio.h>

#include "merge.h"

#define FRAC_BITS	48	/* KVM's on AMD; any value works with ratio 1 */
#define RATE_SHIFT	24	/* mult fits 32 bits below 256 ns a tick */

static uint64_t mid(const struct mp_tsc *t)
{
	return t->a + (t->b - t->a) / 2;
}

static uint64_t absdiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

static void check_one(struct mg_tsc_vm *k, const struct mt_vm *v, const struct mg_acc *a,
		      double ns_per_tick)
{
	const struct vmscope_sync_segment *seg = mt_segment(v, a->seg);
	struct vmscope_sync_tsc_check out;
	uint32_t mult = (uint32_t)llround(ldexp(ns_per_tick, RATE_SHIFT));
	bool scaled = a->off.frac_bits > 0;
	struct vmscope_sync_tsc t = {
		.ratio = scaled ? a->off.ratio : 1ull << FRAC_BITS,
		.frac_bits = scaled ? a->off.frac_bits : FRAC_BITS, .offset = a->off.off,
		.host_ref_ns = a->t2, .host_ref_tsc = mid(&a->h_tsc),
		.host_mult = mult, .host_shift = RATE_SHIFT,
		/* evaluated at its own reference: only the pair matters */
		.guest_ref_ns = a->t1, .guest_ref_tsc = mid(&a->g_tsc),
		.guest_mult = mult, .guest_shift = RATE_SHIFT,
	};
	uint64_t slack, lo, hi, d;

	if (!a->h_tsc.valid || !a->g_tsc.valid || a->h_tsc.b < a->h_tsc.a ||
	    a->g_tsc.b < a->g_tsc.a) {
		k->no_readings++;
		return;
	}
	if (!a->off.valid) {
		k->no_offset++;
		return;
	}
	if (!seg || vmscope_sync_tsc_check(seg, &t, a->t1, &out) < 0)
		return;
	/* A write after t1 (before t2) may have changed the offset the
	 * guest's reading was taken under. */
	if (a->off.ts > out.lo) {
		k->off_changed++;
		return;
	}
	k->checked++;
	d = absdiff(out.h_tsc, out.h_est);
	k->sum_abs_diff_ns += d;
	if (d > k->max_abs_diff_ns)
		k->max_abs_diff_ns = d;
	k->within += out.within;
	/* Each side's TSC may be off its clock read by half its bracket. */
	slack = (uint64_t)ceil((double)((a->h_tsc.b - a->h_tsc.a) + (a->g_tsc.b - a->g_tsc.a)) /
			       2 * ns_per_tick);
	if (slack > k->max_slack_ns)
		k->max_slack_ns = slack;
	lo = out.lo > slack ? out.lo - slack : 0;
	hi = out.hi + slack < out.hi ? UINT64_MAX : out.hi + slack;
	if (lo <= out.h_tsc && out.h_tsc <= hi) {
		k->within_slack++;
	} else {
		d = out.h_tsc < lo ? lo - out.h_tsc : out.h_tsc - hi;
		if (d > k->max_outside_ns)
			k->max_outside_ns = d;
	}
}

void mg_tsc_check(struct mg_result *r)
{
	const struct mg_tsc_rate *rate = &r->host_rate;
	double ns_per_tick = rate->n >= 2 && rate->tsc1 > rate->tsc0 && rate->ns1 > rate->ns0
			     ? (double)(rate->ns1 - rate->ns0) / (double)(rate->tsc1 - rate->tsc0)
			     : 0;

	for (uint32_t v = 0; v < r->n_vms; v++)
		for (uint32_t cpu = 0; r->acc[v] && cpu < MP_MAX_CPUS; cpu++) {
			FILE *f = r->acc[v][cpu];
			struct mg_acc a;

			if (!f)
				continue;
			rewind(f);
			while (fread(&a, sizeof(a), 1, f) == 1) {
				if (a.seg < 0)	/* dropped (clock evidence) */
					continue;
				if (ns_per_tick > 0 && ns_per_tick < 255)
					check_one(&r->tsc[v], &r->mt.vm[v], &a, ns_per_tick);
				else
					r->tsc[v].no_readings++;
			}
			rewind(f);
		}
}
