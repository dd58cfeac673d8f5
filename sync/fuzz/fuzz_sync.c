/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libFuzzer target: arbitrary exchange sequences, as a hostile guest could
 * produce them, through the stream context and the offline fit. Beyond
 * "no crash, no UB" it asserts the invariants that make the bound
 * trustworthy:
 *  - every sample is resolved exactly once and the stats add up;
 *  - an emitted segment is feasible, lo <= estimate <= hi;
 *  - with no hull eviction, its exact slope range equals a brute-force
 *    recomputation over exactly the samples it accepted (pruning lost
 *    nothing), and every accepted constraint holds at the bound:
 *    hi(t1) <= t2 and lo(t4) >= t3.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../tests/lib/fuzz_input.h"
#include "../tests/oracle.h"
#include "vmscope_sync.h"

#define MAX_OPS 512

struct state {
	struct vmscope_sync_exchange x[MAX_OPS];
	int64_t outcome[MAX_OPS];
	int resolved[MAX_OPS];
	int n;
	struct vmscope_sync_point P[MAX_OPS], Q[MAX_OPS];
};

static void on_sample(void *user, uint64_t cookie, int64_t outcome)
{
	struct state *st = user;
	ASSERT(cookie < (uint64_t)st->n);
	st->resolved[cookie]++;
	st->outcome[cookie] = outcome;
}

#ifdef FUZZ_STATS
#include <stdio.h>
static unsigned long fuzz_stats[3];
__attribute__((destructor)) static void print_stats(void)
{
	fprintf(stderr, "oracle-checked segments: <4 %lu, 4-7 %lu, >=8 %lu\n",
		fuzz_stats[0], fuzz_stats[1], fuzz_stats[2]);
}
#endif

static int64_t rb(uint64_t t, uint64_t o)
{
	return (int64_t)(t - o);  /* in range: the segment accepted it */
}

static void check_segment(const struct vmscope_sync_segment *s,
			  const struct state *st, bool stream)
{
	struct vmscope_sync_summary sum;
	vmscope_sync_segment_summary(s, 4, &sum);
	ASSERT(sum.verdict == VMSCOPE_SYNC_ACCURATE ||
	       sum.verdict == VMSCOPE_SYNC_APPROXIMATE);
	ASSERT(ratio_cmp(s->dmin, s->dmax) <= 0);
	uint64_t gs[3] = { s->g_first, s->g_last,
			   s->g_first + (s->g_last - s->g_first) / 2 };
	for (int k = 0; k < 3; k++) {
		uint64_t lo, hi, est;
		int r = vmscope_sync_segment_bound(s, gs[k], &lo, &hi);
		ASSERT(r >= 0);
		ASSERT(lo <= hi);
		ASSERT(vmscope_sync_segment_estimate(s, gs[k], &est) == 0);
		ASSERT(lo <= est && est <= hi);
	}
	if (stream)
		ASSERT(s->h_first <= s->h_certain_end &&
		       s->h_certain_end <= s->h_last);
	if (!stream || s->evictions)
		return;

	/* Recompute from the samples this segment accepted. */
	struct vmscope_sync_point P[MAX_OPS], Q[MAX_OPS];
	int np = 0;
	for (int i = 0; i < st->n; i++) {
		if (st->outcome[i] != (int64_t)s->id || st->resolved[i] != 1)
			continue;
		const struct vmscope_sync_exchange *x = &st->x[i];
		P[np] = (struct vmscope_sync_point){ rb(x->t1, s->g0),
			rb(x->t2, s->h0) - rb(x->t1, s->g0) };
		Q[np] = (struct vmscope_sync_point){ rb(x->t4, s->g0),
			rb(x->t3, s->h0) - rb(x->t4, s->g0) };
		np++;
		uint64_t lo, hi;
		ASSERT(vmscope_sync_segment_bound(s, x->t1, &lo, &hi) >= 0);
		ASSERT(hi <= x->t2);
		ASSERT(vmscope_sync_segment_bound(s, x->t4, &lo, &hi) >= 0);
		ASSERT(lo >= x->t3);
	}
	ASSERT((uint64_t)np == s->n_samples);
#ifdef FUZZ_STATS
	fuzz_stats[np >= 8 ? 2 : np >= 4 ? 1 : 0]++;
#endif
	struct oracle o = oracle_range(P, np, Q, np, s->ppm);
	ASSERT(o.feasible);
	ASSERT(ratio_cmp(o.dmin, s->dmin) == 0);
	ASSERT(ratio_cmp(o.dmax, s->dmax) == 0);
}

static void on_segment(void *user, const struct vmscope_sync_segment *s)
{
	check_segment(s, user, true);
}

/* The TSC helper's relation, every field from the input. */
static void take_tsc(struct in *in, struct vmscope_sync_tsc *t)
{
	/* Separate statements: initializer-list evaluation order is
	 * unspecified. */
	t->ratio = take(in, 8);
	t->frac_bits = (uint32_t)take(in, 1);
	t->offset = take(in, 8);
	t->host_ref_ns = take(in, 8);
	t->host_ref_tsc = take(in, 8);
	t->host_mult = (uint32_t)take(in, 4);
	t->host_shift = (uint32_t)take(in, 1);
	t->guest_ref_ns = take(in, 8);
	t->guest_ref_tsc = take(in, 8);
	t->guest_mult = (uint32_t)take(in, 4);
	t->guest_shift = (uint32_t)take(in, 1);
}

/* Running bases and seqs of the structured exchanges. */
struct bases {
	uint64_t gb, hb, seq[4];
};

/*
 * The next op from the input into @x: 1 an exchange to add, 0 an op
 * done here (a break, the bases moved).
 */
static int take_op(struct in *in, struct vmscope_sync *c, const struct vmscope_sync_config *cfg,
		   struct bases *b, struct vmscope_sync_exchange *x)
{
	uint8_t op = (uint8_t)take(in, 1);

	memset(x, 0, sizeof(*x));
	switch (op % 8) {
	case 6:
		vmscope_sync_break(c, op & 0x80);
		if (op & 0x80)
			memset(b->seq, 0, sizeof(b->seq));
		return 0;
	case 7:
		b->gb += (uint64_t)(int64_t)(int32_t)take(in, 4) * 1000;
		b->hb += take(in, 3) * 1000;
		return 0;
	case 5:
		x->vcpu = (uint32_t)take(in, 1) % 5;
		x->token = take(in, 1) ? cfg->token : take(in, 8);
		x->seq = take(in, 8);
		x->t1_claim = take(in, 8);
		x->t2 = take(in, 8);
		x->t3 = take(in, 8);
		x->guest_valid = take(in, 1) & 1;
		x->guest_seq = take(in, 1) ? x->seq : take(in, 8);
		x->t1 = take(in, 1) ? x->t1_claim : take(in, 8);
		x->t4 = take(in, 8);
		return 1;
	default: {
		uint8_t f = (uint8_t)take(in, 1);
		x->vcpu = (uint32_t)(op >> 3) % 5;
		x->token = (f & 1) ? 1 : cfg->token;
		uint32_t v = x->vcpu % 4;
		b->seq[v] += (f & 2) ? (uint64_t)-(int64_t)take(in, 1) : 1;
		x->seq = b->seq[v];
		b->gb += take(in, 2) * 16;
		b->hb += take(in, 2) * 16;
		x->t1 = b->gb;
		x->t2 = b->hb + take(in, 1);
		x->t3 = x->t2 + take(in, 2);
		x->t4 = x->t1 + (x->t3 - x->t2) + take(in, 2);
		x->t1_claim = (f & 4) ? x->t1 + 1 : x->t1;
		x->guest_valid = !(f & 8);
		x->guest_seq = x->seq;
		return 1;
	}
	}
}

/* Offline fit through everything: a line or FAILED, never a line
 * that violates an input. */
static void check_fit(struct state *st, uint32_t ppm, const struct vmscope_sync_tsc *t)
{
	struct vmscope_sync_segment fit;
	size_t added = vmscope_sync_fit(st->x, (size_t)st->n, ppm, &fit);

	if (!fit.failed && added) {
		check_segment(&fit, st, false);
		if (!fit.evictions)
			for (size_t i = 0; i < added; i++) {
				uint64_t lo, hi;
				ASSERT(vmscope_sync_segment_bound(&fit, st->x[i].t1, &lo,
								  &hi) >= 0);
				ASSERT(hi <= st->x[i].t2);
				ASSERT(vmscope_sync_segment_bound(&fit, st->x[i].t4, &lo,
								  &hi) >= 0);
				ASSERT(lo >= st->x[i].t3);
			}
		struct vmscope_sync_tsc_check tc;
		if (vmscope_sync_tsc_check(&fit, t, fit.g_first, &tc) == 0)
			ASSERT(tc.within == (tc.lo <= tc.h_tsc && tc.h_tsc <= tc.hi));
	} else if (fit.failed) {
		uint64_t lo, hi;
		ASSERT(vmscope_sync_segment_bound(&fit, st->x[0].t1, &lo, &hi) == -1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct state st;
	struct in in = { data, size };
	memset(&st, 0, sizeof(st));

	struct vmscope_sync_config cfg = { 0 };
	cfg.ppm = (uint32_t)(take(&in, 2) % 3000) + 1;
	cfg.n_vcpus = (uint32_t)(take(&in, 1) % 4) + 1;
	uint8_t flags = (uint8_t)take(&in, 1);
	cfg.check_token = flags & 1;
	cfg.token = 0x5157;
	cfg.confirm = (flags >> 1) & 1 ? 2 + (flags >> 2) % 6 : 0;
	cfg.max_segment_ns = (flags & 0x80) ? take(&in, 2) * 1000 : 0;
	cfg.user = &st;
	cfg.on_sample = on_sample;
	cfg.on_segment = on_segment;
	/* The TSC helper on arbitrary relations (read first so the ops
	 * cannot starve it): no UB; a check that succeeds is consistent. */
	struct vmscope_sync_tsc t;
	take_tsc(&in, &t);
	uint64_t th;
	(void)vmscope_sync_tsc_g2h(&t, take(&in, 8), &th);

	struct vmscope_sync *c = vmscope_sync_new(&cfg);
	ASSERT(c);

	/* Structured ops stay near running bases so that many samples are
	 * mutually consistent and reach the hull; raw ops hit the edges. */
	struct bases b = { 0 };

	b.gb = take(&in, 8);
	b.hb = take(&in, 8);
	while (in.n && st.n < MAX_OPS) {
		struct vmscope_sync_exchange *x = &st.x[st.n];

		if (!take_op(&in, c, &cfg, &b, x))
			continue;
		x->cookie = (uint64_t)st.n;
		st.n++;
		vmscope_sync_add(c, x);
	}
	vmscope_sync_finish(c);
	struct vmscope_sync_stats stats;
	vmscope_sync_get_stats(c, &stats);
	vmscope_sync_free(c);

	uint64_t dropped = 0;
	for (int k = 0; k < VMSCOPE_SYNC_DROP_NREASONS; k++)
		dropped += stats.dropped[k];
	ASSERT(stats.submitted == (uint64_t)st.n);
	ASSERT(stats.accepted + dropped == stats.submitted);
	for (int i = 0; i < st.n; i++)
		ASSERT(st.resolved[i] == 1);
	check_fit(&st, cfg.ppm, &t);
	return 0;
}
