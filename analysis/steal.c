// SPDX-License-Identifier: GPL-2.0
/* The guest's steal time next to the host's preempted time: see steal.h. */
#include <string.h>

#include "sched.h"
#include "steal.h"

/* The vCPU thread's preempted (or blocked) time up to @ts, the interval
 * in progress included. */
static uint64_t off_at(const struct an_sched_vcpu *v, uint64_t ts, bool preempted)
{
	uint64_t open = v->off && v->off_preempted == preempted && ts > v->off_since ?
			ts - v->off_since : 0;

	return (preempted ? v->preempted_ns : v->blocked_ns) + open;
}

static void close_span(struct an_steal_vcpu *s)
{
	if (!s->open)
		return;
	s->guest_ns += s->last_steal - s->first_steal;
	s->host_ns += s->last_host - s->first_host;
	s->blocked_ns += s->last_blocked - s->first_blocked;
	s->span_ns += s->last_ts - s->first_ts;
	s->open = false;
}

void an_steal_sample(struct an_sched_vcpu *v, uint64_t ts, uint64_t steal_ns)
{
	struct an_steal_vcpu *s = &v->steal;
	uint64_t host = off_at(v, ts, true), blocked = off_at(v, ts, false);

	s->n++;
	/* a guest going back, or a host total that did (cannot: losses end
	 * spans first), starts over rather than subtract across it */
	if (s->open && (steal_ns < s->last_steal || host < s->last_host ||
			blocked < s->last_blocked || ts < s->last_ts)) {
		s->backwards++;
		close_span(s);
	}
	if (!s->open) {
		s->open = true;
		s->spans++;
		s->first_ts = ts;
		s->first_steal = steal_ns;
		s->first_host = host;
		s->first_blocked = blocked;
	}
	s->last_ts = ts;
	s->last_steal = steal_ns;
	s->last_host = host;
	s->last_blocked = blocked;
}

void an_steal_break(struct an_sched_vcpu *v)
{
	close_span(&v->steal);
}

void an_steal_result(const struct an_sched_vcpu *v, struct an_steal *r)
{
	struct an_steal_vcpu s = v->steal;

	close_span(&s);
	memset(r, 0, sizeof(*r));
	r->guest_ns = s.guest_ns;
	r->host_ns = s.host_ns;
	r->blocked_ns = s.blocked_ns;
	r->span_ns = s.span_ns;
	r->n = s.n;
	r->spans = s.spans;
	r->backwards = s.backwards;
	r->known = s.span_ns > 0;
}
