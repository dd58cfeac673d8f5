/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Stream context: the hostile-input policy around the exact segment core.
 *
 * Per-sample checks first (only the host's t2/t3 and vCPU index are
 * trusted; token, seq and t1 in the registers and the guest record are
 * claims). Then consensus: a sample that would make the current segment
 * infeasible is held back. It is dropped as an outlier once `confirm`
 * later samples agree with the segment; if instead `confirm` held-back
 * samples agree with each other, the clock relation changed: the segment
 * is closed and a new one starts from them. A segment that has not yet
 * reached `confirm` samples when that happens is discarded, so one bogus
 * first sample cannot found a segment.
 */
#include <stdlib.h>
#include <string.h>

#include "exact.h"
#include "vmscope_sync.h"

#define MAX_CONFIRM 16
#define MAX_PENDING 32

struct pending {
	struct vmscope_sync_exchange x;
	uint32_t age;  /* samples accepted by the segment since */
};

struct vcpu_state {
	bool has_seq;
	uint64_t last_seq;
};

struct vmscope_sync {
	struct vmscope_sync_config cfg;
	struct vmscope_sync_segment cur;
	struct vmscope_sync_segment trial;  /* scratch, no stack copies */
	bool confirmed;
	uint32_t n_held;  /* cookies of a not-yet-confirmed segment */
	uint64_t held[MAX_CONFIRM];
	struct pending pend[MAX_PENDING];
	uint32_t n_pend;
	uint64_t next_id;
	struct vmscope_sync_stats st;
	struct vcpu_state *vcpu;
};

static const char *const drop_names[VMSCOPE_SYNC_DROP_NREASONS] = {
	"vcpu", "token", "unpaired", "mismatch", "malformed",
	"rtt", "replay", "outlier", "overflow",
};

const char *vmscope_sync_drop_name(enum vmscope_sync_drop r)
{
	return (unsigned)r < VMSCOPE_SYNC_DROP_NREASONS ? drop_names[r] : "?";
}

static void resolve(struct vmscope_sync *c, uint64_t cookie, int64_t outcome)
{
	if (outcome >= 0)
		c->st.accepted++;
	else
		c->st.dropped[-1 - outcome]++;
	if (c->cfg.on_sample)
		c->cfg.on_sample(c->cfg.user, cookie, outcome);
}

static void drop(struct vmscope_sync *c, uint64_t cookie,
		 enum vmscope_sync_drop why)
{
	resolve(c, cookie, -1 - (int64_t)why);
}

struct vmscope_sync *vmscope_sync_new(const struct vmscope_sync_config *cfg)
{
	if (!cfg || cfg->n_vcpus == 0 || cfg->ppm > VMSCOPE_SYNC_MAX_PPM ||
	    cfg->confirm == 1 || cfg->confirm > MAX_CONFIRM)
		return NULL;
	struct vmscope_sync *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->vcpu = calloc(cfg->n_vcpus, sizeof(*c->vcpu));
	if (!c->vcpu) {
		free(c);
		return NULL;
	}
	c->cfg = *cfg;
	if (c->cfg.ppm == 0)
		c->cfg.ppm = 1000;
	if (c->cfg.confirm == 0)
		c->cfg.confirm = 4;
	vmscope_sync_segment_init(&c->cur, 0, 0, c->cfg.ppm);
	return c;
}

void vmscope_sync_free(struct vmscope_sync *c)
{
	if (!c)
		return;
	free(c->vcpu);
	free(c);
}

/* The sample is already in c->cur: report it, or hold its cookie until the
 * segment has enough agreeing samples to be trusted. */
static void accepted_into_cur(struct vmscope_sync *c, uint64_t cookie)
{
	if (c->confirmed) {
		resolve(c, cookie, (int64_t)c->cur.id);
		return;
	}
	c->held[c->n_held++] = cookie;
	if (c->cur.n_samples >= c->cfg.confirm) {
		c->confirmed = true;
		for (uint32_t i = 0; i < c->n_held; i++)
			resolve(c, c->held[i], (int64_t)c->cur.id);
		c->n_held = 0;
	}
}

static void start_segment(struct vmscope_sync *c, uint64_t g0, uint64_t h0)
{
	vmscope_sync_segment_init(&c->cur, g0, h0, c->cfg.ppm);
	c->cur.id = c->next_id++;
	c->confirmed = false;
	c->n_held = 0;
}

/* Close the current segment. `trusted`: the boundary is explicit (break,
 * span limit, end of input), so even a short segment is emitted;
 * otherwise a short one is discarded as the product of outliers. */
static void close_segment(struct vmscope_sync *c, bool trusted)
{
	if (c->cur.n_samples == 0)
		return;
	if (!c->confirmed && !trusted) {
		for (uint32_t i = 0; i < c->n_held; i++)
			drop(c, c->held[i], VMSCOPE_SYNC_DROP_OUTLIER);
		c->st.discarded_segments++;
	} else {
		for (uint32_t i = 0; i < c->n_held; i++)
			resolve(c, c->held[i], (int64_t)c->cur.id);
		c->st.segments++;
		if (c->cfg.on_segment)
			c->cfg.on_segment(c->cfg.user, &c->cur);
	}
	c->n_held = 0;
	c->confirmed = false;
	vmscope_sync_segment_init(&c->cur, 0, 0, c->cfg.ppm);
}

static void drop_pending(struct vmscope_sync *c, uint32_t i,
			 enum vmscope_sync_drop why)
{
	drop(c, c->pend[i].x.cookie, why);
	memmove(&c->pend[i], &c->pend[i + 1],
		(c->n_pend - i - 1) * sizeof(c->pend[0]));
	c->n_pend--;
}

static void drop_all_pending(struct vmscope_sync *c)
{
	while (c->n_pend)
		drop_pending(c, 0, VMSCOPE_SYNC_DROP_OUTLIER);
}

static enum vmscope_sync_add_result add_x(struct vmscope_sync_segment *s,
					  const struct vmscope_sync_exchange *x)
{
	return vmscope_sync_segment_add(s, x->t1, x->t2, x->t3, x->t4);
}

/* The newest held-back sample contradicts the segment. Greedily collect,
 * newest first, the held-back samples consistent with it; if there are
 * `confirm` of them, the relation changed. */
static void try_consensus(struct vmscope_sync *c)
{
	struct vmscope_sync_exchange *x = &c->pend[c->n_pend - 1].x;
	bool member[MAX_PENDING] = { false };
	struct vmscope_sync_segment *t = &c->trial;

	vmscope_sync_segment_init(t, x->t1, x->t2, c->cfg.ppm);
	if (add_x(t, x) != VMSCOPE_SYNC_ADDED)
		return;  /* unreachable: the RTT check admits x alone */
	member[c->n_pend - 1] = true;
	uint32_t n = 1;
	for (uint32_t i = c->n_pend - 1; i-- > 0;) {
		if (add_x(t, &c->pend[i].x) == VMSCOPE_SYNC_ADDED) {
			member[i] = true;
			n++;
		}
	}
	if (n < c->cfg.confirm)
		return;

	c->st.breaks_detected++;
	close_segment(c, false);
	uint64_t id = c->next_id++;
	c->cur = *t;
	c->cur.id = id;
	c->confirmed = false;
	c->n_held = 0;
	/* Members are in the new segment; the rest contradict both. */
	for (uint32_t i = 0; i < c->n_pend; i++) {
		if (member[i])
			accepted_into_cur(c, c->pend[i].x.cookie);
		else
			drop(c, c->pend[i].x.cookie, VMSCOPE_SYNC_DROP_OUTLIER);
	}
	c->n_pend = 0;
}

/* Checks that need no clock model. Returns -1 or a drop reason. */
static int check_sample(struct vmscope_sync *c,
			const struct vmscope_sync_exchange *x)
{
	if (x->vcpu >= c->cfg.n_vcpus)
		return VMSCOPE_SYNC_DROP_VCPU;
	if (c->cfg.check_token && x->token != c->cfg.token)
		return VMSCOPE_SYNC_DROP_TOKEN;
	if (!x->guest_valid)
		return VMSCOPE_SYNC_DROP_UNPAIRED;
	if (x->guest_seq != x->seq || x->t1 != x->t1_claim)
		return VMSCOPE_SYNC_DROP_MISMATCH;
	if (x->t4 < x->t1 || x->t3 < x->t2 ||
	    x->t4 - x->t1 >= (uint64_t)1 << 60 ||
	    x->t3 - x->t2 >= (uint64_t)1 << 60)
		return VMSCOPE_SYNC_DROP_MALFORMED;
	/* t1 → t2 → t3 → t4 are causally ordered, so the guest's interval
	 * contains the host's: a*(t4 - t1) >= t3 - t2 with a <= 1 + ppm/1e6.
	 * This is exactly the condition for the exchange alone to admit a
	 * line, so no slack: honest exchanges pass it by the two one-way
	 * delays. */
	i128 lhs = (i128)(x->t4 - x->t1) * (1000000 + c->cfg.ppm);
	i128 rhs = (i128)(x->t3 - x->t2) * 1000000;
	if (lhs < rhs)
		return VMSCOPE_SYNC_DROP_RTT;
	struct vcpu_state *v = &c->vcpu[x->vcpu];
	if (v->has_seq && x->seq <= v->last_seq)
		return VMSCOPE_SYNC_DROP_REPLAY;
	return -1;
}

void vmscope_sync_add(struct vmscope_sync *c,
		      const struct vmscope_sync_exchange *x)
{
	c->st.submitted++;
	int why = check_sample(c, x);
	if (why >= 0) {
		drop(c, x->cookie, (enum vmscope_sync_drop)why);
		return;
	}
	/* Consumed even if later held back, so replays of held-back samples
	 * are caught too. */
	c->vcpu[x->vcpu].has_seq = true;
	c->vcpu[x->vcpu].last_seq = x->seq;

	if (c->cur.n_samples && c->cfg.max_segment_ns &&
	    x->t2 > c->cur.h_first &&
	    x->t2 - c->cur.h_first > c->cfg.max_segment_ns) {
		drop_all_pending(c);
		close_segment(c, true);
		c->st.breaks_span++;
	}
	if (c->cur.n_samples == 0 && c->n_pend == 0) {
		start_segment(c, x->t1, x->t2);
		if (add_x(&c->cur, x) != VMSCOPE_SYNC_ADDED) {
			/* Unreachable after the checks above; kept so that a
			 * sample is never reported as accepted by nothing. */
			drop(c, x->cookie, VMSCOPE_SYNC_DROP_RTT);
			return;
		}
		accepted_into_cur(c, x->cookie);
		return;
	}

	c->trial = c->cur;
	if (c->cur.n_samples && add_x(&c->trial, x) == VMSCOPE_SYNC_ADDED) {
		c->cur = c->trial;
		accepted_into_cur(c, x->cookie);
		for (uint32_t i = 0; i < c->n_pend;) {
			if (++c->pend[i].age >= c->cfg.confirm)
				drop_pending(c, i, VMSCOPE_SYNC_DROP_OUTLIER);
			else
				i++;
		}
		return;
	}
	if (c->n_pend == MAX_PENDING)
		drop_pending(c, 0, VMSCOPE_SYNC_DROP_OVERFLOW);
	c->pend[c->n_pend].x = *x;
	c->pend[c->n_pend].age = 0;
	c->n_pend++;
	try_consensus(c);
}

void vmscope_sync_break(struct vmscope_sync *c, bool reset_seq)
{
	drop_all_pending(c);
	close_segment(c, true);
	c->st.breaks_explicit++;
	if (reset_seq)
		memset(c->vcpu, 0, c->cfg.n_vcpus * sizeof(*c->vcpu));
}

void vmscope_sync_finish(struct vmscope_sync *c)
{
	drop_all_pending(c);
	close_segment(c, true);
}

const struct vmscope_sync_segment *
vmscope_sync_current(const struct vmscope_sync *c)
{
	return &c->cur;
}

void vmscope_sync_get_stats(const struct vmscope_sync *c,
			    struct vmscope_sync_stats *out)
{
	*out = c->st;
}

int vmscope_sync_run(const struct vmscope_sync_config *cfg,
		     const struct vmscope_sync_exchange *x, size_t n,
		     struct vmscope_sync_stats *stats)
{
	struct vmscope_sync *c = vmscope_sync_new(cfg);
	if (!c)
		return -1;
	for (size_t i = 0; i < n; i++)
		vmscope_sync_add(c, &x[i]);
	vmscope_sync_finish(c);
	if (stats)
		vmscope_sync_get_stats(c, stats);
	vmscope_sync_free(c);
	return 0;
}
