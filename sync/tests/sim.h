/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Simulated guest and host clocks exchanging sync hypercalls.
 *
 * Real time tau (ns, long double). Host clock: h = H0 + floor(tau). Guest
 * clock in piece k: g = G_k + floor(off_k + tau / a_k), so the true
 * transform in piece k is h = H0 + a_k * (g - G_k - off_k) (up to the
 * truncation of readings, which the positive delays absorb). A step moves
 * the guest clock by a jump and may change the drift.
 */
#ifndef VMSCOPE_SYNC_TEST_SIM_H
#define VMSCOPE_SYNC_TEST_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "vmscope_sync.h"

enum sim_kind {
	SIM_HONEST = 0,
	SIM_F_TOKEN,     /* unprivileged forger: no token, plausible times */
	SIM_F_UNPAIRED,  /* no guest record */
	SIM_F_MISMATCH,  /* steals the next seq; t1 claim != guest record */
	SIM_F_REPLAY,    /* an earlier honest exchange fed again */
	SIM_F_ORDER,     /* a seq that goes backwards */
	SIM_F_RTT,       /* claims a guest round trip shorter than host's */
	SIM_F_WILD,      /* valid credentials, guest times off by >= 10 ms */
	SIM_NKINDS
};

extern const char *const sim_kind_name[SIM_NKINDS];

struct sim_piece {
	uint64_t G;          /* integer part of the guest base */
	long double off;     /* fractional/small part */
	long double a;       /* drift */
	uint64_t g_start;    /* guest reading when the piece began */
};

struct sim_sample {
	struct vmscope_sync_exchange x;  /* cookie = index in the array */
	enum sim_kind kind;
	int piece;           /* honest: the piece its readings belong to */
	bool break_before;   /* the caller signals a break before it */
};

struct sim_params {
	uint64_t seed;
	int n_vcpus;
	int n_target;            /* honest exchanges, about */
	long double period_ns;   /* per-vCPU gap between exchanges */
	int delay_kind;          /* 0 exp, 1 pareto, 2 lognormal */
	double fwd_base, bwd_base, tail;  /* ns */
	double alpha, sigma;
	double spike_p;          /* probability of a 1 ms preemption delay */
	int n_steps;
	bool steps_signalled;
	bool kink;               /* steps change only the drift */
	double forge_rate;       /* forged samples per honest one */
	uint64_t token;
	uint32_t ppm_prior;
};

struct sim {
	struct sim_params p;
	uint64_t H0;
	int n_pieces;
	struct sim_piece piece[8];
	int n;
	struct sim_sample *s;    /* sorted by t2 */
	int n_forged;
};

/* Random parameters for scenario `scenario` from the seed. */
void sim_params_random(struct sim_params *p, uint64_t seed, int scenario);
int sim_generate(struct sim *sim, const struct sim_params *p);
void sim_free(struct sim *sim);

/* True host time for guest time g in piece k, minus `base` (long double;
 * exact to ~1e-6 ns for spans below days). */
long double sim_truth_minus(const struct sim *sim, int k, uint64_t g,
			    uint64_t base);

/* With kinks only (continuous guest clock): the piece in effect at g. */
int sim_piece_of(const struct sim *sim, uint64_t g);

#endif
