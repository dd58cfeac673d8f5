/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Unit tests of the exact core: hull insertion edge cases and an exact
 * comparison with the brute-force oracle on random small sets, including
 * coordinates near the 2^61 range limit and origins near 0 and 2^64.
 */
#include <stdio.h>
#include <string.h>

#include "../../tests/lib/check.h"
#include "exact.h"
#include "hull.h"
#include "oracle.h"
#include "rng.h"
#include "vmscope_sync.h"

static struct vmscope_sync_point pt(int64_t g, int64_t u)
{
	return (struct vmscope_sync_point){ g, u };
}

static void test_hull_edges(void)
{
	struct vmscope_sync_hull h = { 0 };
	bool ev = false;

	/* Collinear: only the two ends stay. */
	for (int i = 0; i < 10; i++)
		hull_insert(&h, +1, pt(i * 100, i * 7), &ev);
	REQUIRE(h.n == 2, "collinear lower hull has %u vertices", h.n);
	REQUIRE(h.v[0].g == 0 && h.v[1].g == 900, "wrong ends");
	/* Collinear inserted out of order. */
	memset(&h, 0, sizeof(h));
	int order[] = { 5, 0, 9, 3, 7, 1, 8, 2, 6, 4 };
	for (int i = 0; i < 10; i++)
		hull_insert(&h, -1, pt(order[i] * 100, order[i] * 7), &ev);
	REQUIRE(h.n == 2, "collinear upper hull has %u vertices", h.n);

	/* Duplicates and same-g points keep the tighter one. */
	memset(&h, 0, sizeof(h));
	REQUIRE(hull_insert(&h, +1, pt(5, 10), &ev), "first insert");
	REQUIRE(!hull_insert(&h, +1, pt(5, 10), &ev), "duplicate changed hull");
	REQUIRE(!hull_insert(&h, +1, pt(5, 11), &ev), "looser same-g changed");
	REQUIRE(hull_insert(&h, +1, pt(5, 9), &ev) && h.n == 1 && h.v[0].u == 9,
	      "tighter same-g not taken");
	REQUIRE(hull_insert(&h, -1, pt(5, 9), &ev) == false || h.n == 1,
	      "upper on lower");

	/* Convex curve: all vertices kept up to the cap, then evictions. */
	memset(&h, 0, sizeof(h));
	ev = false;
	for (int64_t i = 0; i < 100; i++)
		hull_insert(&h, +1, pt(i * 1000, i * i), &ev);
	REQUIRE(h.n == VMSCOPE_SYNC_HULL_CAP && ev, "cap not enforced: %u", h.n);
	for (uint32_t i = 0; i + 2 < h.n; i++)
		REQUIRE(cross(h.v[i], h.v[i + 1], h.v[i + 2]) > 0,
		      "not convex at %u", i);

	/* Huge coordinates near the range limit: exact orientation. */
	memset(&h, 0, sizeof(h));
	int64_t M = VMSCOPE_SYNC_MAX_SPAN - 1;
	hull_insert(&h, +1, pt(-M, M), &ev);
	hull_insert(&h, +1, pt(M, M), &ev);
	hull_insert(&h, +1, pt(0, M - 1), &ev);  /* 1 below the chord */
	REQUIRE(h.n == 3, "lost a vertex 1 ns below a 2^62-long chord");
	hull_insert(&h, +1, pt(1, M - 1), &ev);  /* collinear-ish, above */
	REQUIRE(h.n == 3 || h.n == 4, "hull size %u", h.n);
}

/* Two points (one exchange): the bound is the textbook one. */
static void test_one_exchange(void)
{
	struct vmscope_sync_segment s;
	uint64_t g0 = UINT64_MAX - 1000000, h0 = 12345;
	vmscope_sync_segment_init(&s, g0, h0, 100);
	/* t1 = g0, t2 = h0 + 500, t3 = h0 + 1500, t4 = g0 + 2000. */
	REQUIRE(vmscope_sync_segment_add(&s, g0, h0 + 500, h0 + 1500, g0 + 2000) ==
	      VMSCOPE_SYNC_ADDED, "add");
	uint64_t lo, hi;
	REQUIRE(vmscope_sync_segment_bound(&s, g0, &lo, &hi) == 0, "bound");
	/* hi: t2 itself. lo: t3 - a_max*(t4 - t1) = 1500 - 2000.2 -> -501
	 * rounded down. */
	REQUIRE(hi == h0 + 500, "hi %llu", (unsigned long long)(hi - h0));
	REQUIRE(lo == h0 - 501, "lo %lld", (long long)(lo - h0));
	struct vmscope_sync_summary sum;
	vmscope_sync_segment_summary(&s, 2, &sum);
	REQUIRE(sum.verdict == VMSCOPE_SYNC_APPROXIMATE, "verdict %d", sum.verdict);
	/* One exchange only says a >= (t3-t2)/(t4-t1) = 0.5: the prior
	 * bounds the drift on both sides. */
	REQUIRE(!sum.drift_from_data_lo && !sum.drift_from_data_hi,
	      "one exchange cannot bound drift");
	/* Saturation at the top of u64 and range errors. */
	REQUIRE(vmscope_sync_segment_bound(&s, 0, &lo, &hi) == -1,
	      "g 2^64 away accepted");
	vmscope_sync_segment_init(&s, 10, UINT64_MAX - 10, 100);
	REQUIRE(vmscope_sync_segment_add(&s, 10, UINT64_MAX - 5, UINT64_MAX - 2,
				       20) == VMSCOPE_SYNC_ADDED, "top add");
	REQUIRE(vmscope_sync_segment_bound(&s, 1000000000, &lo, &hi) == 0 &&
	      hi == UINT64_MAX, "no saturation");
	REQUIRE(vmscope_sync_segment_add(&s, 10 + (1ULL << 61), 0, 1,
				       11 + (1ULL << 61)) == VMSCOPE_SYNC_RANGE,
	      "range");
	/* A one-way segment is unbounded on one side. */
	vmscope_sync_segment_init(&s, 0, 0, 100);
	vmscope_sync_segment_add_g2h(&s, 100, 200);
	REQUIRE(vmscope_sync_segment_bound(&s, 100, &lo, &hi) == 1 && lo == 0 &&
	      hi == 200, "one-way bound");
	vmscope_sync_segment_summary(&s, 2, &sum);
	REQUIRE(sum.verdict == VMSCOPE_SYNC_APPROXIMATE, "one-way verdict");
}

static void test_crossing(void)
{
	/* The second exchange says the guest clock jumped back 1 ms: no line
	 * fits both; the fit must fail and answer no queries. */
	struct vmscope_sync_exchange x[3] = {
		{ .t1 = 1000, .t2 = 5000, .t3 = 6000, .t4 = 3000 },
		{ .t1 = 1001000, .t2 = 1005000, .t3 = 1006000, .t4 = 1003000 },
		{ .t1 = 1000, .t2 = 2005000, .t3 = 2006000, .t4 = 3000 },
	};
	struct vmscope_sync_segment s;
	REQUIRE(vmscope_sync_fit(x, 2, 200, &s) == 2 && !s.failed, "consistent");
	REQUIRE(vmscope_sync_fit(x, 3, 200, &s) == 2 && s.failed, "not failed");
	uint64_t lo, hi;
	REQUIRE(vmscope_sync_segment_bound(&s, 2000, &lo, &hi) == -1,
	      "failed segment answered");
	struct vmscope_sync_summary sum;
	vmscope_sync_segment_summary(&s, 2, &sum);
	REQUIRE(sum.verdict == VMSCOPE_SYNC_FAILED, "verdict %d", sum.verdict);
}

/* Random sets against the oracle: every add decision, the exact slope
 * range and the exact bound at random guest times must match. */
static void test_oracle(int runs)
{
	struct vmscope_sync_point P[64], Q[64];
	unsigned long added = 0, rejected = 0, queries = 0, bounded = 0;
	for (int run = 0; run < runs; run++) {
		struct rng r = { 0x5eed0000ULL + run };
		check_seed = 0x5eed0000ULL + run;
		int scale_bits = 4 + (int)rng_below(&r, 57);  /* up to 2^60 */
		int64_t scale = (int64_t)1 << scale_bits;
		uint32_t ppm = 1 + (uint32_t)rng_below(&r, 2000);
		/* True line u = dn/1e6 * g + b. */
		int64_t dn = (int64_t)rng_below(&r, 2 * ppm + 1) - ppm;
		int64_t b = (int64_t)rng_below(&r, 1000) - 500;
		double noise = rng_range(&r, 0, 1) < 0.3 ? 0.2 : 0;
		/* Origins anywhere that keeps origin +- 2^61 inside u64
		 * (times do not wrap; edge origins are tested above). */
		uint64_t g0 = (1ULL << 61) + rng_below(&r, 3ULL << 62);
		uint64_t h0 = (1ULL << 61) + rng_below(&r, 3ULL << 62);
		struct vmscope_sync_segment s;
		vmscope_sync_segment_init(&s, g0, h0, ppm);
		int np = 0, nq = 0, n = 4 + (int)rng_below(&r, 20);
		for (int i = 0; i < n; i++) {
			int64_t g = (int64_t)(rng_unif(&r) * (double)scale) -
				    scale / 2;
			i128 line = (i128)dn * g / 1000000 + b;
			int64_t delay = (int64_t)rng_below(&r, 1 + scale / 1000 + 50);
			bool isp = rng_below(&r, 2);
			if (noise > 0 && rng_unif(&r) < noise)
				delay = -delay - 1;  /* lie: may be infeasible */
			int64_t u = (int64_t)(line + (isp ? delay : -delay));
			if (u >= VMSCOPE_SYNC_MAX_SPAN || u <= -VMSCOPE_SYNC_MAX_SPAN)
				continue;
			struct vmscope_sync_point v = pt(g, u);
			/* Raw times: g = g0 + g', h = h0 + g' + u (mod 2^64,
			 * which rebase undoes exactly). */
			uint64_t tg = g0 + (uint64_t)g;
			uint64_t th = h0 + (uint64_t)g + (uint64_t)u;
			if (isp)
				P[np] = v;
			else
				Q[nq] = v;
			struct oracle o = oracle_range(P, np + isp, Q, nq + !isp, ppm);
			enum vmscope_sync_add_result res =
				isp ? vmscope_sync_segment_add_g2h(&s, tg, th)
				    : vmscope_sync_segment_add_h2g(&s, th, tg);
			/* |g'| < 2^61 and the u offset can push h' past it. */
			if (res == VMSCOPE_SYNC_RANGE)
				continue;
			REQUIRE((res == VMSCOPE_SYNC_ADDED) == o.feasible,
			      "add %d: hull says %d, oracle %d", i, res, o.feasible);
			if (res != VMSCOPE_SYNC_ADDED) {
				rejected++;
				continue;
			}
			added++;
			np += isp;
			nq += !isp;
			REQUIRE(ratio_cmp(s.dmin, o.dmin) == 0 &&
			      ratio_cmp(s.dmax, o.dmax) == 0,
			      "slope range differs at add %d", i);
			for (int k = 0; k < 4; k++) {
				int64_t qg = (int64_t)(rng_unif(&r) * (double)scale) -
					     scale / 2;
				uint64_t lo, hi;
				int br = vmscope_sync_segment_bound(&s, g0 + (uint64_t)qg,
								    &lo, &hi);
				REQUIRE(br >= 0, "bound failed n=%llu failed=%d qg=%lld", (unsigned long long)s.n_samples, s.failed, (long long)qg);
				if (np) {
					i128 ohi = oracle_bound(P, np, o, qg, +1);
					REQUIRE(hi == unbase(h0, (i128)qg + ohi),
					      "hi differs at add %d", i);
				}
				if (nq) {
					i128 olo = oracle_bound(Q, nq, o, qg, -1);
					REQUIRE(lo == unbase(h0, (i128)qg + olo),
					      "lo differs at add %d", i);
				}
				queries++;
				if (br == 0) {
					bounded++;
					REQUIRE(lo <= hi, "lo > hi");
				}
			}
		}
	}
	printf("oracle: %d sets, %lu adds, %lu rejected as infeasible, "
	       "%lu exact bound queries (%lu two-sided) all equal\n",
	       runs, added, rejected, queries, bounded);
}

/* Evictions only loosen: with more binding vertices than the cap, the
 * slope range and every bound contain the oracle's over all points. */
static void test_eviction_superset(void)
{
	struct vmscope_sync_point P[200], Q[1];
	struct vmscope_sync_segment s;
	check_seed = 0xe71c;
	vmscope_sync_segment_init(&s, 1ULL << 62, 1ULL << 62, 1000);
	/* 60 P on u = g^2 / 4e9 for g in [-2e6, 2e6]: edge slopes stay within
	 * +-1000 ppm, so every point binds somewhere. One Q point far below
	 * keeps the set feasible. */
	Q[0] = pt(0, -1000000);
	REQUIRE(vmscope_sync_segment_add_h2g(&s, (1ULL << 62) + (uint64_t)Q[0].u,
					   1ULL << 62) == VMSCOPE_SYNC_ADDED, "q");
	int n = 0;
	for (int i = 0; i < 60; i++) {
		int64_t g = -2000000 + (int64_t)i * 66000 + (i * 7919) % 1000;
		P[n] = pt(g, (int64_t)((i128)g * g / 4000000000LL));
		uint64_t tg = (1ULL << 62) + (uint64_t)g;
		uint64_t th = (1ULL << 62) + (uint64_t)g + (uint64_t)P[n].u;
		REQUIRE(vmscope_sync_segment_add_g2h(&s, tg, th) == VMSCOPE_SYNC_ADDED,
		      "p %d", i);
		n++;
	}
	REQUIRE(s.evictions > 0 && s.p.n == VMSCOPE_SYNC_HULL_CAP,
	      "no evictions (%llu, hull %u)", (unsigned long long)s.evictions,
	      s.p.n);
	struct oracle o = oracle_range(P, n, Q, 1, 1000);
	REQUIRE(ratio_cmp(s.dmin, o.dmin) <= 0 && ratio_cmp(s.dmax, o.dmax) >= 0,
	      "slope range shrank");
	unsigned looser = 0;
	/* The oracle is O(n^3) per query: 121 points. */
	for (int64_t g = -3000000; g <= 3000000; g += 50000) {
		uint64_t lo, hi;
		REQUIRE(vmscope_sync_segment_bound(&s, (1ULL << 62) + (uint64_t)g, &lo,
						 &hi) == 0, "bound");
		uint64_t ohi = unbase(1ULL << 62, (i128)g + oracle_bound(P, n, o, g, +1));
		uint64_t olo = unbase(1ULL << 62, (i128)g + oracle_bound(Q, 1, o, g, -1));
		REQUIRE(lo <= olo && hi >= ohi, "bound at %lld tighter than the "
		      "oracle's", (long long)g);
		looser += hi > ohi;
	}
	printf("eviction: %llu evictions, bound looser than the oracle at "
	       "%u/121 points, never tighter\n",
	       (unsigned long long)s.evictions, looser);
}

int main(void)
{
	test_hull_edges();
	test_one_exchange();
	test_crossing();
	test_eviction_superset();
	test_oracle(20000);
	printf("sync hull: all checks passed\n");
	return 0;
}
