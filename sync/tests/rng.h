/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Deterministic PRNG and delay distributions for the sync tests. */
#ifndef VMSCOPE_SYNC_TEST_RNG_H
#define VMSCOPE_SYNC_TEST_RNG_H

#include <math.h>
#include <stdint.h>

struct rng {
	uint64_t s;
};

/* splitmix64: tiny, full period, good enough for test data. */
static inline uint64_t rng_u64(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double rng_unif(struct rng *r)
{
	return (double)(rng_u64(r) >> 11) * 0x1p-53;
}

static inline double rng_range(struct rng *r, double lo, double hi)
{
	return lo + (hi - lo) * rng_unif(r);
}

static inline uint64_t rng_below(struct rng *r, uint64_t n)
{
	return n ? rng_u64(r) % n : 0;
}

static inline double rng_exp(struct rng *r, double mean)
{
	return -mean * log(1.0 - rng_unif(r));
}

/* Pareto with scale xm and shape alpha (heavy tail for alpha <= 2). */
static inline double rng_pareto(struct rng *r, double xm, double alpha)
{
	return xm / pow(1.0 - rng_unif(r), 1.0 / alpha);
}

static inline double rng_normal(struct rng *r)
{
	double u = 1.0 - rng_unif(r), v = rng_unif(r);
	return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

static inline double rng_lognormal(struct rng *r, double mu, double sigma)
{
	return exp(mu + sigma * rng_normal(r));
}

#endif
