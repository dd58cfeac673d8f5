/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Ingestion benchmark: N exchanges (default 10M) from 4 vCPUs with
 * lognormal delays and 5% forged samples, generated on the fly (no
 * storage, so memory stays flat), through the stream context; then bound
 * queries on the last segment. Prints samples/s with the generator's own
 * cost subtracted (it is timed in a separate pass with the same seed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rng.h"
#include "vmscope_sync.h"

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

struct gen {
	struct rng r;
	long double tau;
	uint64_t seq[4];
	uint64_t i;
};

static void next(struct gen *g, struct vmscope_sync_exchange *x)
{
	const uint64_t G0 = 1ULL << 62, H0 = 3ULL << 62;
	const long double a = 1.000123L;
	uint32_t v = (uint32_t)(g->i % 4);
	long double t1 = g->tau;
	long double t2 = t1 + 500 + rng_lognormal(&g->r, 6.0, 1.0);
	long double t3 = t2 + 1000 + rng_exp(&g->r, 3000);
	long double t4 = t3 + 500 + rng_lognormal(&g->r, 6.0, 1.0);
	g->tau = t4 + 20000;
	*x = (struct vmscope_sync_exchange){
		.cookie = g->i, .vcpu = v, .token = 42, .seq = ++g->seq[v],
		.t1 = G0 + (uint64_t)(t1 / a), .t2 = H0 + (uint64_t)t2,
		.t3 = H0 + (uint64_t)t3, .t4 = G0 + (uint64_t)(t4 / a),
		.guest_valid = true,
	};
	if (rng_unif(&g->r) < 0.05)
		x->token = 43;  /* forged */
	x->guest_seq = x->seq;
	x->t1_claim = x->t1;
	g->i++;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 10000000;
	struct vmscope_sync_exchange x;
	struct gen g = { { 1 }, 0, { 0 }, 0 };
	volatile uint64_t sink = 0;

	double t0 = now();
	for (uint64_t i = 0; i < n; i++) {
		next(&g, &x);
		sink += x.t2;
	}
	double gen_s = now() - t0;

	struct vmscope_sync_config cfg = { .n_vcpus = 4, .check_token = true,
					   .token = 42 };
	struct vmscope_sync *c = vmscope_sync_new(&cfg);
	if (!c)
		return 1;
	g = (struct gen){ { 1 }, 0, { 0 }, 0 };
	t0 = now();
	for (uint64_t i = 0; i < n; i++) {
		next(&g, &x);
		vmscope_sync_add(c, &x);
	}
	double tot_s = now() - t0;
	const struct vmscope_sync_segment *s = vmscope_sync_current(c);
	struct vmscope_sync_stats st;
	vmscope_sync_get_stats(c, &st);

	uint64_t lo, hi, q = 0;
	t0 = now();
	for (uint64_t gg = s->g_first; gg < s->g_last && q < 10000000;
	     gg += (s->g_last - s->g_first) / 10000000 + 1, q++)
		if (vmscope_sync_segment_bound(s, gg, &lo, &hi) == 0)
			sink += hi - lo;
	double q_s = now() - t0;

	printf("sync ingest: %llu samples (%llu accepted, %llu dropped as "
	       "token), %.3f s net of generation = %.2f M samples/s; hulls "
	       "%u/%u; bound queries %.2f M/s\n",
	       (unsigned long long)n, (unsigned long long)st.accepted,
	       (unsigned long long)st.dropped[VMSCOPE_SYNC_DROP_TOKEN],
	       tot_s - gen_s, (double)n / (tot_s - gen_s) / 1e6, s->p.n, s->q.n,
	       (double)q / q_s / 1e6);
	vmscope_sync_free(c);
	return (int)(sink & 0);
}
