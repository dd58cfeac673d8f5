/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Consensus over held-back samples.
 *
 * Samples are committed in arrival order. A sample that would make the
 * current segment S infeasible stops the flow: it and everything after it
 * wait. The head is then decided by evidence:
 *  - outlier: `confirm` later samples fit S and contradict the head
 *    (samples that fit both are no evidence either way);
 *  - clock change: `confirm` waiting samples that contradict S agree with
 *    each other. The change is placed at the oldest of them: samples
 *    before it are committed to S (or dropped if they contradict S), S is
 *    closed, the agreeing samples start the new segment, and the samples
 *    after the change point are tried again against the new segment — so
 *    a sample that fits both (a round trip longer than the step) lands on
 *    the side of the change it arrived on.
 */
#include "stream_internal.h"

static bool fits(struct vmscope_sync_segment *scratch,
		 const struct vmscope_sync_segment *s,
		 const struct vmscope_sync_exchange *x)
{
	*scratch = *s;
	return vmscope_sync_segment_add(scratch, x->t1, x->t2, x->t3, x->t4) ==
	       VMSCOPE_SYNC_ADDED;
}

static bool contradict(struct vmscope_sync *c,
		       const struct vmscope_sync_exchange *a,
		       const struct vmscope_sync_exchange *b)
{
	struct vmscope_sync_segment *s = &c->pair;
	vmscope_sync_segment_init(s, a->t1, a->t2, c->cfg.ppm);
	return vmscope_sync_segment_add(s, a->t1, a->t2, a->t3, a->t4) !=
		       VMSCOPE_SYNC_ADDED ||
	       vmscope_sync_segment_add(s, b->t1, b->t2, b->t3, b->t4) !=
		       VMSCOPE_SYNC_ADDED;
}

static void pop(struct vmscope_sync *c, uint32_t i)
{
	for (uint32_t j = i; j + 1 < c->n_pend; j++)
		c->pend[j] = c->pend[j + 1];
	c->n_pend--;
}

/* Commit the head to S if it fits. */
static bool commit_head(struct vmscope_sync *c)
{
	const struct vmscope_sync_exchange *x = &c->pend[0];
	if (c->cur.n_samples == 0) {
		sync_start(c, x);
	} else {
		if (!fits(&c->trial, &c->cur, x))
			return false;
		c->cur = c->trial;
		sync_accepted(c, x);
	}
	pop(c, 0);
	return true;
}

/* Look for `confirm` waiting samples that contradict S and agree with
 * each other (greedy, newest first). On success switch segments. */
static bool try_change(struct vmscope_sync *c, const bool *fits_s)
{
	bool member[MAX_PENDING] = { false };
	struct vmscope_sync_segment *t = &c->alt;
	uint32_t n = 0, first = 0;

	for (uint32_t i = c->n_pend; i-- > 0;) {
		if (fits_s[i])
			continue;
		const struct vmscope_sync_exchange *x = &c->pend[i];
		if (n == 0) {
			vmscope_sync_segment_init(t, x->t1, x->t2, c->cfg.ppm);
		}
		if (vmscope_sync_segment_add(t, x->t1, x->t2, x->t3, x->t4) ==
		    VMSCOPE_SYNC_ADDED) {
			member[i] = true;
			first = i;
			n++;
		}
	}
	if (n < c->cfg.confirm)
		return false;

	/* Before the change point: into S if they still fit, else drop. */
	for (uint32_t i = 0; i < first; i++) {
		const struct vmscope_sync_exchange *x = &c->pend[i];
		if (fits(&c->trial, &c->cur, x)) {
			c->cur = c->trial;
			sync_accepted(c, x);
		} else {
			sync_drop(c, x->cookie, VMSCOPE_SYNC_DROP_OUTLIER);
		}
	}
	c->st.breaks_detected++;
	sync_mark_certain_end(c, t);
	sync_close(c, false);
	c->cur = *t;
	c->cur.id = c->next_id++;
	c->confirmed = false;
	c->n_held = 0;
	c->n_recent = 0;
	uint32_t keep = 0;
	for (uint32_t i = first; i < c->n_pend; i++) {
		if (member[i])
			sync_accepted(c, &c->pend[i]);
		else
			c->pend[keep++] = c->pend[i];  /* retried against T */
	}
	c->n_pend = keep;
	return true;
}

void consensus_resolve(struct vmscope_sync *c, bool final)
{
	bool fits_s[MAX_PENDING];

	while (c->n_pend) {
		if (commit_head(c))
			continue;
		if (final) {
			sync_drop(c, c->pend[0].cookie, VMSCOPE_SYNC_DROP_OUTLIER);
			pop(c, 0);
			continue;
		}
		/* The head contradicts S: weigh the evidence. */
		for (uint32_t i = 0; i < c->n_pend; i++)
			fits_s[i] = i > 0 && fits(&c->trial, &c->cur, &c->pend[i]);
		if (try_change(c, fits_s))
			continue;
		uint32_t against = 0;
		for (uint32_t i = 1; i < c->n_pend; i++)
			if (fits_s[i] && contradict(c, &c->pend[0], &c->pend[i]))
				against++;
		if (against >= c->cfg.confirm) {
			sync_drop(c, c->pend[0].cookie, VMSCOPE_SYNC_DROP_OUTLIER);
			pop(c, 0);
			continue;
		}
		if (c->n_pend == MAX_PENDING) {
			sync_drop(c, c->pend[0].cookie, VMSCOPE_SYNC_DROP_OVERFLOW);
			pop(c, 0);
			continue;
		}
		break;  /* wait for more samples */
	}
}
