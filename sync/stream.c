/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Stream context: the hostile-input policy around the exact segment core.
 *
 * Per-sample checks first (only the host's t2/t3 and vCPU index are
 * trusted; token, seq and t1 in the registers and the guest record are
 * claims), then consensus over samples that contradict the current
 * segment (consensus.c). A segment that has not yet reached `confirm`
 * samples when it is contradicted is discarded, so one bogus first sample
 * cannot found a segment.
 */
#include <stdlib.h>
#include <string.h>

#include "exact.h"
#include "stream_internal.h"

static const char *const drop_names[VMSCOPE_SYNC_DROP_NREASONS] = {
	"vcpu", "token", "unpaired", "mismatch", "malformed",
	"rtt", "replay", "outlier", "overflow",
};

const char *vmscope_sync_drop_name(enum vmscope_sync_drop r)
{
	return (unsigned)r < VMSCOPE_SYNC_DROP_NREASONS ? drop_names[r] : "?";
}

static void report(struct vmscope_sync *c, uint64_t cookie, int64_t outcome)
{
	if (outcome >= 0)
		c->st.accepted++;
	else
		c->st.dropped[-1 - outcome]++;
	if (c->cfg.on_sample)
		c->cfg.on_sample(c->cfg.user, cookie, outcome);
}

void sync_drop(struct vmscope_sync *c, uint64_t cookie,
	       enum vmscope_sync_drop why)
{
	report(c, cookie, -1 - (int64_t)why);
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
void sync_accepted(struct vmscope_sync *c,
		   const struct vmscope_sync_exchange *x)
{
	uint64_t cookie = x->cookie;
	c->recent[c->recent_next] = *x;
	c->recent_next = (c->recent_next + 1) % MAX_PENDING;
	if (c->n_recent < MAX_PENDING)
		c->n_recent++;
	if (c->confirmed) {
		report(c, cookie, (int64_t)c->cur.id);
		return;
	}
	c->held[c->n_held++] = cookie;
	if (c->cur.n_samples >= c->cfg.confirm) {
		c->confirmed = true;
		for (uint32_t i = 0; i < c->n_held; i++)
			report(c, c->held[i], (int64_t)c->cur.id);
		c->n_held = 0;
	}
}

void sync_mark_certain_end(struct vmscope_sync *c,
			   const struct vmscope_sync_segment *next)
{
	/* Newest first: the first sample that does not fit `next` is the
	 * last one that certainly belongs here. If none of the recent ones
	 * is, nothing is certain (conservative). */
	c->cur.h_certain_end = c->cur.h_first;
	for (uint32_t k = 1; k <= c->n_recent; k++) {
		const struct vmscope_sync_exchange *x =
			&c->recent[(c->recent_next + MAX_PENDING - k) % MAX_PENDING];
		c->trial = *next;
		if (vmscope_sync_segment_add(&c->trial, x->t1, x->t2, x->t3,
					     x->t4) != VMSCOPE_SYNC_ADDED) {
			c->cur.h_certain_end = x->t3;
			break;
		}
	}
}

void sync_start(struct vmscope_sync *c, const struct vmscope_sync_exchange *x)
{
	vmscope_sync_segment_init(&c->cur, x->t1, x->t2, c->cfg.ppm);
	c->cur.id = c->next_id++;
	c->confirmed = false;
	c->n_held = 0;
	c->n_recent = 0;
	if (vmscope_sync_segment_add(&c->cur, x->t1, x->t2, x->t3, x->t4) !=
	    VMSCOPE_SYNC_ADDED) {
		/* Unreachable after the RTT check, which is exactly the
		 * condition for one exchange to admit a line; kept so that a
		 * sample is never reported as accepted by nothing. */
		vmscope_sync_segment_init(&c->cur, 0, 0, c->cfg.ppm);
		sync_drop(c, x->cookie, VMSCOPE_SYNC_DROP_RTT);
		return;
	}
	sync_accepted(c, x);
}

/* Close the current segment. `trusted`: the boundary is explicit (break,
 * span limit, end of input), so even a short segment is emitted;
 * otherwise a short one is discarded as the product of outliers. */
void sync_close(struct vmscope_sync *c, bool trusted)
{
	if (c->cur.n_samples == 0)
		return;
	if (!c->confirmed && !trusted) {
		for (uint32_t i = 0; i < c->n_held; i++)
			sync_drop(c, c->held[i], VMSCOPE_SYNC_DROP_OUTLIER);
		c->st.discarded_segments++;
	} else {
		if (trusted)
			c->cur.h_certain_end = c->cur.h_last;
		for (uint32_t i = 0; i < c->n_held; i++)
			report(c, c->held[i], (int64_t)c->cur.id);
		c->st.segments++;
		if (c->cfg.on_segment)
			c->cfg.on_segment(c->cfg.user, &c->cur);
	}
	c->n_held = 0;
	c->confirmed = false;
	c->n_recent = 0;
	vmscope_sync_segment_init(&c->cur, 0, 0, c->cfg.ppm);
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
		sync_drop(c, x->cookie, (enum vmscope_sync_drop)why);
		return;
	}
	/* Consumed even if later held back, so replays of held-back samples
	 * are caught too. */
	c->vcpu[x->vcpu].has_seq = true;
	c->vcpu[x->vcpu].last_seq = x->seq;

	if (c->cur.n_samples && c->cfg.max_segment_ns &&
	    x->t2 > c->cur.h_first &&
	    x->t2 - c->cur.h_first > c->cfg.max_segment_ns) {
		consensus_resolve(c, true);
		sync_close(c, true);
		c->st.breaks_span++;
	}
	/* consensus_resolve() leaves at most MAX_PENDING - 1 waiting. */
	c->pend[c->n_pend++] = *x;
	consensus_resolve(c, false);
}

void vmscope_sync_break(struct vmscope_sync *c, bool reset_seq)
{
	consensus_resolve(c, true);
	sync_close(c, true);
	c->st.breaks_explicit++;
	if (reset_seq)
		memset(c->vcpu, 0, c->cfg.n_vcpus * sizeof(*c->vcpu));
}

void vmscope_sync_finish(struct vmscope_sync *c)
{
	consensus_resolve(c, true);
	sync_close(c, true);
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
