/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Simulated exchanges for the sync property tests (see sim.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "sim.h"

const char *const sim_kind_name[SIM_NKINDS] = {
	"honest", "token", "unpaired", "mismatch", "replay", "order", "rtt",
	"wild",
};

void sim_params_random(struct sim_params *p, uint64_t seed, int scenario)
{
	struct rng r = { seed * 0x2545f4914f6cdd1dULL + 17 };
	memset(p, 0, sizeof(*p));
	p->seed = seed;
	p->n_vcpus = rng_below(&r, 3) == 0 ? 1 : 1 + (int)rng_below(&r, 8);
	p->n_target = 60 + (int)rng_below(&r, 400);
	static const long double periods[] = { 1e5L, 1e6L, 1e7L, 1e9L };
	p->period_ns = periods[rng_below(&r, 4)];
	p->delay_kind = (int)rng_below(&r, 3);
	/* Asymmetric bases: one direction may be 10x the other. */
	p->fwd_base = rng_range(&r, 200, 3000);
	p->bwd_base = rng_range(&r, 200, 3000);
	p->tail = exp(rng_range(&r, log(20.0), log(5000.0)));
	p->alpha = rng_range(&r, 1.1, 2.5);
	p->sigma = rng_range(&r, 0.3, 1.5);
	p->spike_p = rng_unif(&r) < 0.5 ? 0.01 : 0;
	p->token = rng_u64(&r) | 1;
	p->ppm_prior = 1000;
	/* Scenarios: 0 plain, 1 signalled steps, 2 unsignalled steps,
	 * 3 forgeries, 4 forgeries and unsignalled steps, 5 forgeries and
	 * signalled steps. */
	/* Scenario 6 (only on request, see test_props): unsignalled drift
	 * changes with no jump, the case a single line stops fitting. */
	if (scenario == 6) {
		p->n_steps = 1 + (int)rng_below(&r, 3);
		p->kink = true;
		return;
	}
	switch (scenario % 6) {
	case 1:
	case 5:
		p->n_steps = 1 + (int)rng_below(&r, 3);
		p->steps_signalled = true;
		break;
	case 2:
	case 4:
		p->n_steps = 1 + (int)rng_below(&r, 3);
		break;
	default:
		break;
	}
	if (scenario % 6 >= 3)
		p->forge_rate = rng_range(&r, 0.02, 0.3);
}

static double one_delay(struct rng *r, const struct sim_params *p,
			double base)
{
	double t;
	switch (p->delay_kind) {
	case 0:
		t = rng_exp(r, p->tail);
		break;
	case 1:
		t = rng_pareto(r, p->tail, p->alpha) - p->tail;
		break;
	default:
		t = rng_lognormal(r, log(p->tail), p->sigma);
		break;
	}
	if (p->spike_p > 0 && rng_unif(r) < p->spike_p)
		t += 1e6;
	return base + t;
}

/* A vCPU's exchange in real time, before clock readings. */
struct ev {
	long double tau[4];
	int vcpu;
	enum sim_kind kind;
	int src;          /* replay: index of the copied exchange */
	long double shift;
};

static int cmp_ev(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;
	if (x->tau[1] != y->tau[1])
		return x->tau[1] < y->tau[1] ? -1 : 1;
	return (x->vcpu > y->vcpu) - (x->vcpu < y->vcpu);
}

static int piece_at(const long double *step_tau, int n_steps, long double t)
{
	int k = 0;
	while (k < n_steps && t >= step_tau[k])
		k++;
	return k;
}

static uint64_t guest_read(const struct sim *s, int k, long double tau)
{
	const struct sim_piece *pc = &s->piece[k];
	return pc->G + (uint64_t)(int64_t)floorl(pc->off + tau / pc->a);
}

static uint64_t host_read(const struct sim *s, long double tau)
{
	return s->H0 + (uint64_t)floorl(tau);
}

long double sim_truth_minus(const struct sim *sim, int k, uint64_t g,
			    uint64_t base)
{
	const struct sim_piece *pc = &sim->piece[k];
	long double x = (long double)(int64_t)(g - pc->G) - pc->off;
	return (long double)(int64_t)(sim->H0 - base) + pc->a * x;
}

/*
 * The clocks: the host's origin, the guest's first piece and one more
 * per step (evenly spread, @step_tau their true times). Returns the
 * trace's span of true time, with room.
 */
static long double make_pieces(struct sim *sim, const struct sim_params *p, struct rng *rng,
			       long double *step_tau)
{
	/* Clock origins anywhere in u64, leaving room for the trace and
	 * for jumps of up to a few days either way. */
	long double span = p->period_ns * ((long double)p->n_target /
					   p->n_vcpus + 2) * 1.6L;
	uint64_t room = (uint64_t)span + (1ULL << 50);
	sim->H0 = room + rng_below(rng, UINT64_MAX - 2 * room);
	sim->n_pieces = 1 + p->n_steps;
	sim->piece[0].G = room + rng_below(rng, UINT64_MAX - 2 * room);
	sim->piece[0].off = 0;
	sim->piece[0].a = 1 + rng_range(rng, -200e-6, 200e-6);

	/* Steps evenly spread, each piece gets enough exchanges. */
	for (int k = 0; k < p->n_steps; k++) {
		step_tau[k] = span * (k + 1) / (p->n_steps + 1) *
			      (long double)rng_range(rng, 0.9, 1.1) / 1.6L;
		long double a2 = 1 + rng_range(rng, -200e-6, 200e-6);
		/* Unsignalled jumps must stand out of the bound (>= 50 us plus
		 * what the drift prior allows over one period); signalled ones
		 * may be tiny. */
		double lo = p->steps_signalled ? 0.0 : log(5e4 + 2e-3 * (double)p->period_ns);
		double mag = exp(rng_range(rng, lo, log(2.6e14)));
		long double jump = (rng_below(rng, 2) ? 1 : -1) * floorl(mag);
		if (p->kink)
			jump = 0;
		struct sim_piece *o = &sim->piece[k], *nw = &sim->piece[k + 1];
		nw->a = a2;
		nw->G = o->G + (uint64_t)(int64_t)jump;
		nw->off = o->off + step_tau[k] / o->a - step_tau[k] / a2;
		nw->g_start = guest_read(sim, k + 1, step_tau[k]);
	}

	return span;
}

/*
 * The exchanges in true time, per vCPU one a period or so, each in one
 * piece, with forged calls in the gaps at the forge rate. Returns how
 * many of @cap went into @ev.
 */
static int make_events(const struct sim_params *p, struct rng *rng, const long double *step_tau,
		       long double span, struct ev *ev, int cap)
{
	int n = 0;

	for (int v = 0; v < p->n_vcpus; v++) {
		long double t = rng_range(rng, 0, (double)p->period_ns);
		for (;;) {
			long double tau[4];
			tau[0] = t;
			tau[1] = tau[0] + one_delay(rng, p, p->fwd_base);
			tau[2] = tau[1] + exp(rng_range(rng, log(300.0), log(1e5)));
			tau[3] = tau[2] + one_delay(rng, p, p->bwd_base);
			/* No exchange straddles a step. */
			int k0 = piece_at(step_tau, p->n_steps, tau[0] - 1);
			int k3 = piece_at(step_tau, p->n_steps, tau[3] + 1);
			if (k0 != k3) {
				t = step_tau[k3 - 1] + 1000;
				continue;
			}
			if (tau[3] > span / 1.6L || n >= cap - 8)
				break;
			ev[n].vcpu = v;
			memcpy(ev[n].tau, tau, sizeof(tau));
			ev[n].kind = SIM_HONEST;
			n++;
			long double gap = p->period_ns * rng_range(rng, 0.5, 1.5);
			/* A forged call in the gap, from the same vCPU. */
			if (p->forge_rate > 0 && rng_unif(rng) < p->forge_rate &&
			    gap > 2e5L && n > 1) {
				struct ev *f = &ev[n];
				f->vcpu = v;
				f->kind = 1 + (enum sim_kind)rng_below(rng, SIM_NKINDS - 1);
				f->tau[0] = tau[3] + gap / 3;
				f->tau[1] = f->tau[0] + one_delay(rng, p, p->fwd_base);
				f->tau[2] = f->tau[1] + exp(rng_range(rng, log(300.0), log(1e5)));
				f->tau[3] = f->tau[2] + one_delay(rng, p, p->bwd_base);
				f->src = n - 1;
				f->shift = (rng_below(rng, 2) ? 1 : -1) *
					   floorl(exp(rng_range(rng, log(1e7), log(8.64e13))));
				int a = piece_at(step_tau, p->n_steps, f->tau[0] - 1);
				int b = piece_at(step_tau, p->n_steps, f->tau[3] + 1);
				int c = piece_at(step_tau, p->n_steps, tau[3] + gap + 1);
				if (a == b && a == c && f->tau[3] < tau[3] + gap * 0.9L)
					n++;
			}
			t = tau[3] + gap;
		}
	}
	return n;
}

/*
 * The samples as each clock read them, honest or forged by kind (a
 * forgery that cannot be made here becomes honest). @seq, @last_honest:
 * per vCPU, zeroed.
 */
static void make_samples(struct sim *sim, const struct sim_params *p, struct rng *rng,
			 const long double *step_tau, const struct ev *ev, int n, uint64_t *seq,
			 int *last_honest)
{
	for (int v = 0; v < p->n_vcpus; v++)
		last_honest[v] = -1;
	int prev_piece = 0;
	for (int i = 0; i < n; i++) {
		const struct ev *e = &ev[i];
		struct sim_sample *s = &sim->s[i];
		int k = piece_at(step_tau, p->n_steps, e->tau[0]);
		s->kind = e->kind;
		s->piece = k;
		if (p->steps_signalled && k != prev_piece)
			s->break_before = true;
		prev_piece = k;
		struct vmscope_sync_exchange *x = &s->x;
		x->cookie = (uint64_t)i;
		x->vcpu = (uint32_t)e->vcpu;
		x->token = p->token;
		x->guest_valid = true;
		x->t2 = host_read(sim, e->tau[1]);
		x->t3 = host_read(sim, e->tau[2]);
		x->t1 = guest_read(sim, k, e->tau[0]);
		x->t4 = guest_read(sim, k, e->tau[3]);
		int lh = last_honest[e->vcpu];
		switch (e->kind) {
		case SIM_HONEST:
			x->seq = ++seq[e->vcpu];
			last_honest[e->vcpu] = i;
			break;
		case SIM_F_TOKEN:
			/* Claims that, if believed, would pin the offset: sent
			 * "just before" it arrived, received "just after". */
			x->token = p->token ^ (1 + rng_below(rng, UINT64_MAX - 1));
			x->seq = seq[e->vcpu] + 1;
			x->t1 = guest_read(sim, k, e->tau[1]) - 1;
			x->t4 = guest_read(sim, k, e->tau[2]) + 1;
			break;
		case SIM_F_UNPAIRED:
			x->seq = seq[e->vcpu] + 1;
			x->guest_valid = false;
			break;
		case SIM_F_MISMATCH:
			/* Paired with the guest record of the next real call
			 * (whose t1 it cannot know exactly). */
			x->seq = seq[e->vcpu] + 1;
			x->t1 = x->t1 + 1 + rng_below(rng, 1000);
			break;
		case SIM_F_REPLAY:
			if (lh < 0)
				goto honest_instead;
			*x = sim->s[lh].x;
			x->cookie = (uint64_t)i;
			s->piece = sim->s[lh].piece;
			break;
		case SIM_F_ORDER:
			if (seq[e->vcpu] < 1)
				goto honest_instead;
			x->seq = seq[e->vcpu] - rng_below(rng, seq[e->vcpu]);
			break;
		case SIM_F_RTT:
			x->seq = ++seq[e->vcpu];
			x->t1 = guest_read(sim, k, e->tau[1] + (e->tau[2] - e->tau[1]) / 4);
			x->t4 = guest_read(sim, k, e->tau[2] - (e->tau[2] - e->tau[1]) / 4);
			break;
		case SIM_F_WILD:
			x->seq = ++seq[e->vcpu];
			x->t1 += (uint64_t)(int64_t)e->shift;
			x->t4 += (uint64_t)(int64_t)e->shift;
			break;
		default:
		honest_instead:
			s->kind = SIM_HONEST;
			x->seq = ++seq[e->vcpu];
			last_honest[e->vcpu] = i;
			break;
		}
		x->guest_seq = x->seq;
		x->t1_claim = x->t1;
		if (e->kind == SIM_F_MISMATCH && s->kind != SIM_HONEST)
			x->t1_claim = x->t1 - 1 - rng_below(rng, 1000);
		if (s->kind != SIM_HONEST)
			sim->n_forged++;
	}
}

int sim_generate(struct sim *sim, const struct sim_params *p)
{
	struct rng r = { p->seed ^ 0xd1b54a32d192ed03ULL };
	long double step_tau[8], span;

	memset(sim, 0, sizeof(*sim));
	sim->p = *p;
	span = make_pieces(sim, p, &r, step_tau);

	int cap = p->n_target * 3 + 64;
	struct ev *ev = calloc(cap, sizeof(*ev));
	if (!ev)
		return -1;
	int n = make_events(p, &r, step_tau, span, ev, cap);

	/* Replays copy an honest exchange fed earlier: keep their host times
	 * (a replay re-feeds a record) but sort them at the forger's time. */
	qsort(ev, n, sizeof(*ev), cmp_ev);

	sim->s = calloc(n, sizeof(*sim->s));
	uint64_t *seq = calloc(p->n_vcpus, sizeof(uint64_t));
	int *last_honest = calloc(p->n_vcpus, sizeof(int));
	if (!sim->s || !seq || !last_honest) {
		free(ev);
		free(seq);
		free(last_honest);
		return -1;
	}
	make_samples(sim, p, &r, step_tau, ev, n, seq, last_honest);
	sim->n = n;
	free(ev);
	free(seq);
	free(last_honest);
	return 0;
}

int sim_piece_of(const struct sim *sim, uint64_t g)
{
	int k = 0;
	while (k + 1 < sim->n_pieces && g >= sim->piece[k + 1].g_start)
		k++;
	return k;
}

void sim_free(struct sim *sim)
{
	free(sim->s);
	sim->s = NULL;
}
