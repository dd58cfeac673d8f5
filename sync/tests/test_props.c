/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Property tests on simulated clocks (sim.h): random origins anywhere in
 * u64, drift up to +-200 ppm, asymmetric heavy-tailed delays with
 * preemption spikes, 1-8 vCPUs, signalled and unsignalled clock steps,
 * and forged samples of every kind. For every run (fixed seed list):
 *
 *  P1 every sample is resolved exactly once;
 *  P2 every forged sample is dropped (identified), and with no clock step
 *     no honest sample is dropped;
 *  P3 every sample in an emitted segment is true of the segment's clock
 *     piece (the piece most of its samples come from): a sample of
 *     another piece is there only if the true line of this piece
 *     satisfies it too, as when its round trip exceeds the step, and then
 *     it lies after the segment's h_certain_end (flagged ambiguous);
 *  P4 containment: the true host time lies in the segment's guaranteed
 *     [lo, hi] at every accepted sample's t1 and t4, at the span ends and
 *     a quarter-span beyond them (extrapolation);
 *  P5 width. W(g) = hi(g) - lo(g), so W/2 is the worst error of the
 *     central estimate; R = the segment's smallest round trip
 *     (t4 - t1) - (t3 - t2) (the classic error bound of one exchange is
 *     R/2). Asserted:
 *     a) at the exchange with round trip R, W <= R + ceil(ppm_prior *
 *        1e-6 * (t4 - t1)) + 2: never looser than the best exchange;
 *     b) segments with >= 32 samples: on the middle half of the guest
 *        span (51 evenly spaced points), W/2 <= 2 * R/2;
 *     c) segments with >= 8 samples: everywhere on the span (accepted
 *        samples' t1, t4 and 101 evenly spaced points), W/2 <= 3 * R/2.
 *     Near the ends of short segments the drift uncertainty dominates and
 *     the 2x of (b) does not hold; the worst ratios are printed;
 *  P6 an offline fit through all honest samples across an unsignalled
 *     step reports FAILED, never a line.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tests/lib/check.h"
#include "sim.h"

/* Set by a third argument: report the width ratios (b) and (c) of other
 * seed ranges instead of asserting them (they are empirical, see README). */
static int measure_only;

/* Set by a fourth argument "kink": every run is scenario 6 (drift changes
 * without a jump or a break). The linear model is then false, so
 * containment is counted and reported, not asserted. */
static int kink_mode;

#define MAX_SEGS 64

struct run {
	struct sim *sim;
	int64_t *outcome;
	int *resolved;
	struct vmscope_sync_segment seg[MAX_SEGS];
	int n_seg;
};

static void on_sample(void *user, uint64_t cookie, int64_t outcome)
{
	struct run *r = user;
	REQUIRE(cookie < (uint64_t)r->sim->n, "bad cookie");
	r->resolved[cookie]++;
	r->outcome[cookie] = outcome;
}

static void on_segment(void *user, const struct vmscope_sync_segment *s)
{
	struct run *r = user;
	REQUIRE(r->n_seg < MAX_SEGS, "too many segments");
	r->seg[r->n_seg++] = *s;
}

/* Global tallies for the report. */
static struct {
	unsigned long runs, samples, forged, honest_dropped, segments,
		queries, width_segs, accurate, approx, detected, fails_checked;
	unsigned long forged_by[SIM_NKINDS];
	unsigned long reason_by[SIM_NKINDS][VMSCOPE_SYNC_DROP_NREASONS];
	double worst_full, sum_full, worst_mid, worst_best;
	unsigned long over2_full, over3_full, kink_misses, kink_foreign;
	double kink_worst, foreign_miss;
	unsigned long long kink_worst_seed;
	unsigned long long worst_full_seed;
	unsigned long mid_segs, foreign_ok;
	unsigned max_hull;
} T;

static void check_contains(const struct run *r,
			   const struct vmscope_sync_segment *s, int piece,
			   uint64_t g, const char *what)
{
	uint64_t lo, hi;
	int rc = vmscope_sync_segment_bound(s, g, &lo, &hi);
	REQUIRE(rc == 0, "segment %llu: no two-sided bound at %s",
	      (unsigned long long)s->id, what);
	REQUIRE(lo <= hi, "lo > hi");
	if (kink_mode)
		piece = sim_piece_of(r->sim, g);
	long double truth = sim_truth_minus(r->sim, piece, g, lo);
	long double width = (long double)(hi - lo);
	/* 1e-3 ns: the long double evaluation of the truth, not the bound,
	 * is approximate. */
	if (kink_mode) {
		/* Only inside the span: beyond a kink a segment is not meant
		 * to extrapolate. */
		if (g < s->g_first || g > s->g_last)
			return;
		long double out = truth < 0 ? -truth
			: truth > width ? truth - width : 0;
		if (out > 1e-3L) {
			T.kink_misses++;
			if ((double)out > T.kink_worst) {
				T.kink_worst = (double)out;
				T.kink_worst_seed = check_seed;
			}
		}
		T.queries++;
		return;
	}
	REQUIRE(truth >= -1e-3L && truth <= width + 1e-3L,
	      "segment %llu: truth outside bound at %s: lo+%.3Lf, width %Lf",
	      (unsigned long long)s->id, what, truth, width);
	uint64_t est;
	REQUIRE(vmscope_sync_segment_estimate(s, g, &est) == 0 && est >= lo &&
	      est <= hi, "estimate outside bound");
	T.queries++;
}

static double width_at(const struct vmscope_sync_segment *s, uint64_t g)
{
	uint64_t lo, hi;
	REQUIRE(vmscope_sync_segment_bound(s, g, &lo, &hi) == 0, "no bound");
	return (double)(hi - lo);
}

/* P5 (see the header). W_samples is the max width at accepted t1/t4. */
static void check_width(const struct run *r,
			const struct vmscope_sync_segment *s,
			uint64_t W_samples, uint64_t seed)
{
	double R = (double)s->min_rtt;
	REQUIRE(s->min_rtt > 0, "min rtt %lld", (long long)s->min_rtt);
	/* a) at the best exchange */
	for (int i = 0; i < r->sim->n; i++) {
		const struct vmscope_sync_exchange *x = &r->sim->s[i].x;
		if (r->outcome[i] != (int64_t)s->id ||
		    (int64_t)((x->t4 - x->t1) - (x->t3 - x->t2)) != s->min_rtt)
			continue;
		double slack = ceil(1e-6 * s->ppm * (double)(x->t4 - x->t1)) + 2;
		double w = width_at(s, x->t1);
		REQUIRE(w <= R + slack, "width %.0f at the best exchange > R %.0f + %.0f",
		      w, R, slack);
		if (w / R > T.worst_best)
			T.worst_best = w / R;
		break;
	}
	/* c) everywhere on the span */
	double full = (double)W_samples, mid = 0;
	uint64_t span = s->g_last - s->g_first;
	for (int k = 0; k <= 100; k++) {
		double w = width_at(s, s->g_first + span / 100 * (uint64_t)k);
		if (w > full)
			full = w;
		if (k >= 25 && k <= 75 && w > mid)
			mid = w;
	}
	REQUIRE(measure_only || full / 2 <= 3 * R / 2, "half-width %.1f > 3 x R/2 = %.1f",
	      full / 2, 3 * R / 2);
	if (full / R > T.worst_full) {
		T.worst_full = full / R;
		T.worst_full_seed = seed;
	}
	T.sum_full += full / R;
	T.over2_full += full / R > 2;
	T.over3_full += full / R > 3;
	T.width_segs++;
	/* b) middle half of well-sampled segments */
	if (s->n_samples >= 32) {
		REQUIRE(measure_only || mid / 2 <= 2 * R / 2, "mid-span half-width %.1f > 2 x R/2 "
		      "= %.1f", mid / 2, R);
		if (mid / R > T.worst_mid)
			T.worst_mid = mid / R;
		T.mid_segs++;
	}
}

/* P1: every sample resolved once; the counts add up. */
static void check_p1(const struct sim *sim, const struct run *r,
		     const struct vmscope_sync_stats *st)
{
	uint64_t dropped = 0;
	for (int k = 0; k < VMSCOPE_SYNC_DROP_NREASONS; k++)
		dropped += st->dropped[k];
	REQUIRE(st->submitted == (uint64_t)sim->n &&
	      st->accepted + dropped == st->submitted, "stats do not add up");
	for (int i = 0; i < sim->n; i++)
		REQUIRE(r->resolved[i] == 1, "sample %d resolved %d times", i,
		      r->resolved[i]);
}

/* P2: no forged sample accepted; no honest one dropped without a step. */
static void check_p2(const struct sim *sim, const struct run *r, const struct sim_params *p,
		     const struct vmscope_sync_stats *st)
{
	int honest_dropped = 0;
	for (int i = 0; i < sim->n; i++) {
		enum sim_kind k = sim->s[i].kind;
		if (k != SIM_HONEST) {
			REQUIRE(r->outcome[i] < 0, "forged sample %d (%s) accepted into "
			      "segment %lld", i, sim_kind_name[k],
			      (long long)r->outcome[i]);
			T.forged_by[k]++;
			T.reason_by[k][-1 - r->outcome[i]]++;
		} else if (r->outcome[i] < 0) {
			honest_dropped++;
		}
	}
	if (p->n_steps == 0)
		REQUIRE(honest_dropped == 0, "%d honest samples dropped (first "
		      "reason ...)", honest_dropped);
	T.honest_dropped += honest_dropped;
	T.forged += sim->n_forged;
	T.samples += sim->n;
	T.detected += st->breaks_detected;
}

/*
 * The samples of segment @s from a piece other than its own @piece: only
 * if true of its piece too, and flagged as after its certain end; how far
 * the bound misses their own piece is reported.
 */
static void check_foreign(const struct run *r, const struct sim *sim,
			  const struct vmscope_sync_segment *s, int piece)
{
	for (int i = 0; i < sim->n; i++) {
		const struct vmscope_sync_exchange *x = &sim->s[i].x;
		if (r->outcome[i] != (int64_t)s->id ||
		    sim->s[i].piece == piece)
			continue;
		bool ok = sim_truth_minus(sim, piece, x->t1, x->t2) <= 1e-3L &&
			  sim_truth_minus(sim, piece, x->t4, x->t3) >= -1e-3L;
		if (kink_mode && !ok) {
			T.kink_foreign++;
			continue;
		}
		REQUIRE(ok,
		      "segment %llu (piece %d) holds a sample of piece %d "
		      "that contradicts it", (unsigned long long)s->id,
		      piece, sim->s[i].piece);
		T.foreign_ok++;
		REQUIRE(kink_mode || x->t2 > s->h_certain_end, "segment %llu: sample of "
		      "piece %d not flagged as after its certain end",
		      (unsigned long long)s->id, sim->s[i].piece);
		/* Its own piece's relation at its time is what a merge
		 * would need there; report how far the bound misses it. */
		uint64_t flo, fhi;
		vmscope_sync_segment_bound(s, x->t1, &flo, &fhi);
		long double own = sim_truth_minus(sim, sim->s[i].piece, x->t1, flo);
		long double miss = own < 0 ? -own
			: own > (long double)(fhi - flo) ? own - (fhi - flo) : 0;
		if ((double)miss > T.foreign_miss)
			T.foreign_miss = (double)miss;
	}
}

/* P3, P4, P5 of segment @s: its samples, its bound, its verdict. */
static void check_segment_props(const struct run *r, const struct sim *sim,
				const struct vmscope_sync_segment *s, uint64_t seed)
{
	/* The segment's clock piece is the one most of its samples
	 * come from. A sample of another piece may be in it only if
	 * it is true of this piece too (e.g. an exchange whose round
	 * trip is longer than the step). */
	int votes[8] = { 0 }, piece = 0, n_in = 0;
	uint64_t W = 0;
	for (int i = 0; i < sim->n; i++)
		if (r->outcome[i] == (int64_t)s->id) {
			votes[sim->s[i].piece]++;
			n_in++;
		}
	for (int k = 1; k < sim->n_pieces; k++)
		if (votes[k] > votes[piece])
			piece = k;
	check_foreign(r, sim, s, piece);
	REQUIRE(n_in == (int)s->n_samples, "segment count %d vs %llu", n_in,
	      (unsigned long long)s->n_samples);
	for (int i = 0; i < sim->n; i++) {
		if (r->outcome[i] != (int64_t)s->id)
			continue;
		const struct vmscope_sync_exchange *x = &sim->s[i].x;
		check_contains(r, s, piece, x->t1, "t1");
		check_contains(r, s, piece, x->t4, "t4");
		uint64_t lo, hi;
		vmscope_sync_segment_bound(s, x->t1, &lo, &hi);
		if (hi - lo > W)
			W = hi - lo;
		vmscope_sync_segment_bound(s, x->t4, &lo, &hi);
		if (hi - lo > W)
			W = hi - lo;
	}
	uint64_t span = s->g_last - s->g_first;
	check_contains(r, s, piece, s->g_first, "g_first");
	check_contains(r, s, piece, s->g_last, "g_last");
	check_contains(r, s, piece, s->g_first - span / 4 - 1000000,
		       "before span");
	check_contains(r, s, piece, s->g_last + span / 4 + 1000000,
		       "after span");
	struct vmscope_sync_summary sum;
	vmscope_sync_segment_summary(s, 4, &sum);
	REQUIRE(sum.verdict == VMSCOPE_SYNC_ACCURATE ||
	      sum.verdict == VMSCOPE_SYNC_APPROXIMATE, "verdict %d",
	      sum.verdict);
	if (sum.verdict == VMSCOPE_SYNC_ACCURATE)
		T.accurate++;
	else
		T.approx++;
	if (s->p.n > T.max_hull)
		T.max_hull = s->p.n;
	if (s->q.n > T.max_hull)
		T.max_hull = s->q.n;
	if (s->n_samples >= 8)
		check_width(r, s, W, seed);
	T.segments++;
}

/* P6: a fit across an unsignalled step fails, and answers nothing. */
static void check_p6(const struct sim *sim, const struct sim_params *p)
{
	if (p->n_steps > 0 && !p->steps_signalled && !kink_mode) {
		struct vmscope_sync_exchange *hx = calloc(sim->n, sizeof(*hx));
		int nh = 0;
		for (int i = 0; i < sim->n; i++)
			if (sim->s[i].kind == SIM_HONEST)
				hx[nh++] = sim->s[i].x;
		struct vmscope_sync_segment fit;
		vmscope_sync_fit(hx, nh, p->ppm_prior, &fit);
		struct vmscope_sync_summary sum;
		vmscope_sync_segment_summary(&fit, 4, &sum);
		REQUIRE(sum.verdict == VMSCOPE_SYNC_FAILED,
		      "fit across an unsignalled step did not fail");
		uint64_t lo, hi;
		REQUIRE(vmscope_sync_segment_bound(&fit, hx[0].t1, &lo, &hi) == -1,
		      "failed fit answered a query");
		T.fails_checked++;
		free(hx);
	}
}

static void one_run(uint64_t seed)
{
	struct sim_params p;
	struct sim sim;
	check_seed = seed;
	sim_params_random(&p, seed, kink_mode ? 6 : (int)(seed % 6));
	REQUIRE(sim_generate(&sim, &p) == 0, "sim");

	static struct run r;
	r.sim = &sim;
	r.n_seg = 0;
	r.outcome = calloc(sim.n, sizeof(*r.outcome));
	r.resolved = calloc(sim.n, sizeof(*r.resolved));
	REQUIRE(r.outcome && r.resolved, "oom");

	struct vmscope_sync_config cfg = {
		.ppm = p.ppm_prior, .n_vcpus = (uint32_t)p.n_vcpus,
		.check_token = true, .token = p.token, .user = &r,
		.on_sample = on_sample, .on_segment = on_segment,
	};
	struct vmscope_sync *ctx = vmscope_sync_new(&cfg);
	REQUIRE(ctx, "new");
	for (int i = 0; i < sim.n; i++) {
		if (sim.s[i].break_before)
			vmscope_sync_break(ctx, false);
		vmscope_sync_add(ctx, &sim.s[i].x);
	}
	vmscope_sync_finish(ctx);
	struct vmscope_sync_stats st;
	vmscope_sync_get_stats(ctx, &st);
	vmscope_sync_free(ctx);

	check_p1(&sim, &r, &st);
	check_p2(&sim, &r, &p, &st);
	for (int j = 0; j < r.n_seg; j++)
		check_segment_props(&r, &sim, &r.seg[j], seed);
	check_p6(&sim, &p);
	T.runs++;
	free(r.outcome);
	free(r.resolved);
	sim_free(&sim);
}

int main(int argc, char **argv)
{
	unsigned long first = 1, runs = 3000;
	if (argc > 1)
		runs = strtoul(argv[1], NULL, 0);
	if (argc > 2)
		first = strtoul(argv[2], NULL, 0);
	if (argc > 3)
		measure_only = 1;
	if (argc > 4 && strcmp(argv[4], "kink") == 0)
		kink_mode = 1;
	for (unsigned long seed = first; seed < first + runs; seed++)
		one_run(seed);

	printf("runs %lu (seeds %lu..%lu), samples %lu, segments %lu "
	       "(accurate %lu, approximate %lu), steps detected %lu\n",
	       T.runs, first, first + runs - 1, T.samples, T.segments,
	       T.accurate, T.approx, T.detected);
	if (kink_mode)
		printf("kink mode: %lu/%lu bound queries missed the truth, worst "
		       "by %.1f ns (seed %llu); %lu samples contradict their "
		       "segment's piece\n", T.kink_misses, T.queries,
		       T.kink_worst, T.kink_worst_seed, T.kink_foreign);
	else
		printf("containment: %lu/%lu bound queries contained the truth "
		       "(100%%)\n", T.queries, T.queries);
	printf("width W/R (W = hi - lo, R = smallest round trip):\n"
	       "  a) at the best exchange: worst %.3f (asserted <= 1 + drift "
	       "term)\n"
	       "  b) middle half, %lu segments with >= 32 samples: worst %.3f "
	       "(asserted <= 2)\n"
	       "  c) whole span, %lu segments with >= 8 samples: worst %.3f "
	       "(seed %llu), mean of per-segment worst %.3f (asserted <= 3)\n",
	       T.worst_best, T.mid_segs, T.worst_mid, T.width_segs,
	       T.worst_full, T.worst_full_seed,
	       T.width_segs ? T.sum_full / T.width_segs : 0.0);
	printf("  whole span: %lu segments above 2, %lu above 3\n",
	       T.over2_full, T.over3_full);
	printf("forged: %lu, all identified; honest dropped: %lu (only in runs "
	       "with steps)\n", T.forged, T.honest_dropped);
	for (int k = 1; k < SIM_NKINDS; k++) {
		printf("  %-9s %6lu:", sim_kind_name[k], T.forged_by[k]);
		for (int d = 0; d < VMSCOPE_SYNC_DROP_NREASONS; d++)
			if (T.reason_by[k][d])
				printf(" %s=%lu", vmscope_sync_drop_name(d),
				       T.reason_by[k][d]);
		printf("\n");
	}
	printf("failed fits across unsignalled steps: %lu/%lu FAILED\n",
	       T.fails_checked, T.fails_checked);
	printf("samples of another piece in a segment (true of its piece too): "
	       "%lu; the bound at such a sample's time misses its own piece's "
	       "relation by up to %.0f ns\n", T.foreign_ok, T.foreign_miss);
	printf("largest hull: %u vertices\n", T.max_hull);
	return 0;
}
