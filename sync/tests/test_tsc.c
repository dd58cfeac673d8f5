/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The TSC cross-check against simulated hardware: a host TSC, the guest
 * TSC that KVM derives from it (ratio, frac_bits, offset, with the offset
 * wrapping the guest TSC around 0 as at VM boot), and both kernels'
 * clocksource conversions (mult/shift). Exchanges are generated from those
 * clocks; the hull estimate must agree with the TSC-derived transform
 * within its bound, and the TSC-derived value is compared with the truth.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../tests/lib/check.h"
#include "rng.h"
#include "vmscope_sync.h"

struct hw {
	long double fh;        /* host TSC ticks per ns */
	uint64_t htsc0;
	struct vmscope_sync_tsc rel;
};

static uint64_t host_tsc(const struct hw *w, long double tau)
{
	return w->htsc0 + (uint64_t)floorl(tau * w->fh);
}

static uint64_t host_ns(const struct hw *w, long double tau)
{
	uint64_t d = host_tsc(w, tau) - w->rel.host_ref_tsc;
	return w->rel.host_ref_ns +
	       (uint64_t)(((unsigned __int128)d * w->rel.host_mult) >>
			  w->rel.host_shift);
}

static uint64_t guest_ns(const struct hw *w, long double tau)
{
	uint64_t h = host_tsc(w, tau);
	uint64_t g = (uint64_t)(((unsigned __int128)h * w->rel.ratio) >>
				w->rel.frac_bits) + w->rel.offset;
	uint64_t d = g - w->rel.guest_ref_tsc;
	return w->rel.guest_ref_ns +
	       (uint64_t)(((unsigned __int128)d * w->rel.guest_mult) >>
			  w->rel.guest_shift);
}

int main(void)
{
	double worst_diff = 0, worst_width = 0;
	int runs = 300, checks = 0;
	for (int run = 0; run < runs; run++) {
		struct rng r = { 0x75c0000ULL + run };
		check_seed = 0x75c0000ULL + run;
		struct hw w = { 0 };
		w.fh = rng_range(&r, 1.0, 4.0);
		w.htsc0 = rng_below(&r, 1ULL << 62);
		long double scale = rng_below(&r, 2) ? 1.0L : rng_range(&r, 0.5, 1.5);
		w.rel.frac_bits = rng_below(&r, 2) ? 48 : 32;  /* Intel, AMD */
		w.rel.ratio = (uint64_t)llroundl(scale * ldexpl(1, (int)w.rel.frac_bits));
		/* Guest TSC starts near 0: the offset wraps. */
		uint64_t g_at0 = (uint64_t)(((unsigned __int128)w.htsc0 * w.rel.ratio) >>
					    w.rel.frac_bits);
		w.rel.offset = rng_below(&r, 1ULL << 40) - g_at0;
		w.rel.host_shift = 24;
		w.rel.host_mult = (uint32_t)llroundl(ldexpl(1, 24) / w.fh);
		w.rel.host_ref_tsc = w.htsc0;
		w.rel.host_ref_ns = rng_u64(&r) >> 1;
		w.rel.guest_shift = 24;
		w.rel.guest_mult = (uint32_t)llroundl(ldexpl(1, 24) / (w.fh * scale));
		w.rel.guest_ref_tsc = w.rel.offset + g_at0;  /* guest TSC at tau 0 */
		w.rel.guest_ref_ns = (1ULL << 63) + rng_below(&r, 1ULL << 62);

		struct vmscope_sync_exchange x[400];
		int n = 100 + (int)rng_below(&r, 300);
		long double tau = 1000;
		long double period = rng_below(&r, 2) ? 1e6L : 1e8L;
		for (int i = 0; i < n; i++) {
			long double t1 = tau;
			long double t2 = t1 + 300 + rng_exp(&r, 500);
			long double t3 = t2 + 500 + rng_exp(&r, 5000);
			long double t4 = t3 + 300 + rng_exp(&r, 500);
			x[i] = (struct vmscope_sync_exchange){
				.t1 = guest_ns(&w, t1), .t2 = host_ns(&w, t2),
				.t3 = host_ns(&w, t3), .t4 = guest_ns(&w, t4),
			};
			tau = t4 + period * rng_range(&r, 0.5, 1.5);
		}
		struct vmscope_sync_segment s;
		REQUIRE(vmscope_sync_fit(x, n, 1000, &s) == (size_t)n && !s.failed,
		      "fit failed");
		for (int k = 0; k <= 20; k++) {
			long double tq = 1000 + (tau - 1000) * k / 20;
			uint64_t g = guest_ns(&w, tq);
			struct vmscope_sync_tsc_check c;
			REQUIRE(vmscope_sync_tsc_check(&s, &w.rel, g, &c) == 0, "check");
			REQUIRE(c.within, "TSC-derived %llu outside [%llu, %llu]",
			      (unsigned long long)c.h_tsc, (unsigned long long)c.lo,
			      (unsigned long long)c.hi);
			/* The TSC path is the truth up to clock granularity. */
			int64_t err = (int64_t)(c.h_tsc - host_ns(&w, tq));
			REQUIRE(err >= -3 && err <= 3, "TSC transform off by %lld ns",
			      (long long)err);
			if (fabs((double)c.diff_ns) > worst_diff)
				worst_diff = fabs((double)c.diff_ns);
			if ((double)(c.hi - c.lo) > worst_width)
				worst_width = (double)(c.hi - c.lo);
			checks++;
		}
	}
	/* A degenerate relation is refused, not divided by. */
	struct vmscope_sync_tsc bad = { 0 };
	uint64_t h;
	REQUIRE(vmscope_sync_tsc_g2h(&bad, 1, &h) == -1, "ratio 0 accepted");
	printf("tsc: %d runs, %d checks: TSC-derived time inside the hull bound "
	       "in all; worst |TSC - estimate| %.0f ns, widest bound %.0f ns\n",
	       runs, checks, worst_diff, worst_width);
	return 0;
}
