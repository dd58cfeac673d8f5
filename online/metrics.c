// SPDX-License-Identifier: GPL-2.0
/* The metrics view's snapshot of one VM: see metrics.h. */
#include <stdio.h>
#include <string.h>

#include "metrics.h"

/* the frame's stall classes are the analysis's */
_Static_assert(OL_MX_STALL_STATES == AN_STALL_NSTATES && OL_MX_STALL_CAUSES == AN_STALL_NCAUSES &&
	       AN_STALL_RUNNING == 0 && AN_STALL_PREEMPTED == 0,
	       "metrics_frame.h's stall classes are analysis/sched.h's");

/* A histogram bucket [lo, lo + width) into the 4^k bucket holding it:
 * 4^k is an edge of analysis/hist.h's buckets, so none straddles one. */
static void to_pow4(void *ctx, uint64_t lo, uint64_t width, uint64_t count)
{
	struct ol_mx_reason *r = ctx;
	int k = 1;

	(void)width;
	while (k <= OL_MX_BUCKETS && lo >> (2 * k))
		k++;
	if (k <= OL_MX_BUCKETS)
		r->bucket[k - 1] += count;
}

/* The series of walk reason @reason: its own among the first
 * OL_MX_REASONS - 1, else OL_MX_OTHER's (the last). */
static struct ol_mx_reason *slot_of(struct ol_msnap *s, const struct an_walk *w,
				    uint32_t reason)
{
	const char *name = reason < OL_MX_REASONS - 1 ? an_walk_reason_name(w, reason)
						       : OL_MX_OTHER;
	struct ol_mx_reason *r;

	for (uint32_t i = 0; i < s->n_reasons; i++)
		if (!strcmp(s->r[i].name, name))
			return &s->r[i];
	if (s->n_reasons == OL_MX_REASONS)
		return &s->r[OL_MX_REASONS - 1];	/* cannot happen: at most 30 + 1 */
	r = &s->r[s->n_reasons++];
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	return r;
}

uint64_t ol_msnap_of(struct ol_msnap *s, const struct ol_report *rep, uint32_t vm)
{
	const struct ol_window *cum = rep->cum;
	const struct ol_snap *t = &cum->t;
	uint64_t no_bucket = 0;

	s->end_ns = cum->end;
	s->guest_ns = s->kernel_ns = s->user_ns = s->halted_ns = s->preempted_ns = 0;
	s->steal_ns = 0;
	s->has_steal = false;
	memset(s->stall_ns, 0, sizeof(s->stall_ns));
	/* stalls are known from the guest's scheduling: its agent's side */
	s->has_stall = vm < an_walk_nr_vms(rep->w) && an_walk_vm_has_guest(rep->w, vm);
	s->n_reasons = 0;
	for (uint32_t c = 0; vm < t->n_vms && c < t->n_vcpus[vm]; c++) {
		const struct ol_vcpu *v = &t->t[vm][c];

		s->guest_ns += v->t.guest_ns;
		s->kernel_ns += v->t.kernel_ns;
		s->user_ns += v->t.user_ns;
		s->halted_ns += v->t.halted_ns;
		s->preempted_ns += v->preempted_ns;
		/* a vCPU's steal is known once a span had two readings */
		if (v->steal_span_ns) {
			s->has_steal = true;
			s->steal_ns += v->steal_ns;
		}
		for (int st = 0; st < OL_MX_STALL_STATES && s->has_stall; st++)
			for (int k = 0; k < OL_MX_STALL_CAUSES; k++)
				s->stall_ns[st][k] += v->stall_ns[st][k];
	}
	/* the walk's reason order, so that the first 30 seen keep names */
	for (uint32_t reason = 0; reason <= AN_MAX_REASONS; reason++) {
		for (size_t i = 0; i < cum->by_reason.n; i++) {
			const struct an_group *g = &cum->by_reason.g[i];
			struct ol_mx_reason *r;

			if (g->vm != vm || g->reason != reason)
				continue;
			r = slot_of(s, rep->w, reason);
			r->count += g->h.count;
			r->sum_ns += g->h.sum;
			no_bucket += (uint64_t)g->h.oom;
			an_hist_each(&g->h, to_pow4, r);
		}
	}
	return no_bucket;
}
