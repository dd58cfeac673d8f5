// SPDX-License-Identifier: GPL-2.0
/* A window of the online pipeline: see window.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "window.h"

/* struct an_counts is a list of u64 counters: differences field by field */
_Static_assert(sizeof(struct an_counts) % sizeof(uint64_t) == 0,
	       "an_counts holds only u64 counters");
#define NCOUNTS (sizeof(struct an_counts) / sizeof(uint64_t))

void ol_snap_free(struct ol_snap *s)
{
	for (uint32_t v = 0; v < s->n_vms && s->t; v++)
		free(s->t[v]);
	free(s->t);
	free(s->n_vcpus);
	memset(s, 0, sizeof(*s));
}

void ol_snap_swap(struct ol_snap *a, struct ol_snap *b)
{
	struct ol_snap t = *a;

	*a = *b;
	*b = t;
}

/* @s shaped for @n_vms VMs of @n_vcpus vCPUs each, times zeroed. */
static int snap_shape(struct ol_snap *s, uint32_t n_vms, const uint32_t *n_vcpus)
{
	if (s->n_vms != n_vms) {
		ol_snap_free(s);
		s->t = calloc(n_vms ? n_vms : 1, sizeof(*s->t));
		s->n_vcpus = calloc(n_vms ? n_vms : 1, sizeof(*s->n_vcpus));
		if (!s->t || !s->n_vcpus) {
			ol_snap_free(s);
			return -ENOMEM;
		}
		s->n_vms = n_vms;
	}
	for (uint32_t v = 0; v < n_vms; v++) {
		/* a VM of no vCPU yet (none exited) still gets its one slot:
		 * calloc left it without */
		if (s->n_vcpus[v] != n_vcpus[v] || !s->t[v]) {
			struct ol_vcpu *t = realloc(s->t[v], (n_vcpus[v] ? n_vcpus[v] : 1) *
						    sizeof(*t));

			if (!t)
				return -ENOMEM;
			s->t[v] = t;
			s->n_vcpus[v] = n_vcpus[v];
		}
		memset(s->t[v], 0, (n_vcpus[v] ? n_vcpus[v] : 1) * sizeof(*s->t[v]));
	}
	return 0;
}

static void vcpu_sub(struct ol_vcpu *d, const struct ol_vcpu *a, const struct ol_vcpu *b)
{
	d->t.guest_ns = a->t.guest_ns - b->t.guest_ns;
	d->t.kernel_ns = a->t.kernel_ns - b->t.kernel_ns;
	d->t.user_ns = a->t.user_ns - b->t.user_ns;
	d->t.halted_ns = a->t.halted_ns - b->t.halted_ns;
	d->t.exits = a->t.exits - b->t.exits;
	d->preempted_ns = a->preempted_ns - b->preempted_ns;
	d->preemptions = a->preemptions - b->preemptions;
	d->blocked_ns = a->blocked_ns - b->blocked_ns;
	d->blocks = a->blocks - b->blocks;
	d->steal_readings = a->steal_readings - b->steal_readings;
	d->steal_ns = a->steal_ns - b->steal_ns;
	d->steal_host_ns = a->steal_host_ns - b->steal_host_ns;
	d->steal_span_ns = a->steal_span_ns - b->steal_span_ns;
	for (int i = 0; i < AN_STALL_NSTATES; i++)
		for (int k = 0; k < AN_STALL_NCAUSES; k++)
			d->stall_ns[i][k] = a->stall_ns[i][k] - b->stall_ns[i][k];
}

static void vcpu_of(struct ol_vcpu *o, const struct an_walk *w, const struct an_sched *sched,
		    uint32_t vm, uint32_t c)
{
	const struct an_sched_vcpu *v = sched ? an_sched_vcpu(sched, vm, c) : NULL;
	struct an_steal st;

	memset(o, 0, sizeof(*o));
	o->t = *an_walk_vcpu_time(w, vm, c);
	if (!v)
		return;
	o->preempted_ns = v->preempted_ns;
	o->preemptions = v->n_preempted;
	o->blocked_ns = v->blocked_ns;
	o->blocks = v->n_blocked;
	an_steal_result(v, &st);
	o->steal_readings = st.n;
	o->steal_ns = st.guest_ns;
	o->steal_host_ns = st.host_ns;
	o->steal_span_ns = st.span_ns;
	memcpy(o->stall_ns, v->stall_ns, sizeof(o->stall_ns));
}

int ol_snap_take(struct ol_snap *s, const struct an_walk *w, const struct an_sched *sched)
{
	uint32_t n = an_walk_nr_vms(w);
	uint32_t *nc = calloc(n ? n : 1, sizeof(*nc));
	int e;

	if (!nc)
		return -ENOMEM;
	for (uint32_t v = 0; v < n; v++)
		nc[v] = an_walk_nr_vcpus(w, v);
	e = snap_shape(s, n, nc);
	free(nc);
	if (e)
		return e;
	s->counts = *an_walk_counts(w);
	for (uint32_t v = 0; v < n; v++)
		for (uint32_t c = 0; c < s->n_vcpus[v]; c++)
			vcpu_of(&s->t[v][c], w, sched, v, c);
	return 0;
}

int ol_snap_diff(struct ol_snap *d, const struct ol_snap *now, const struct ol_snap *base)
{
	const uint64_t *a = (const uint64_t *)&now->counts, *b = (const uint64_t *)&base->counts;
	uint64_t *o = (uint64_t *)&d->counts;
	int e = snap_shape(d, now->n_vms, now->n_vcpus);

	if (e)
		return e;
	for (size_t i = 0; i < NCOUNTS; i++)
		o[i] = a[i] - b[i];
	for (uint32_t v = 0; v < now->n_vms; v++)
		for (uint32_t c = 0; c < now->n_vcpus[v]; c++) {
			static const struct ol_vcpu zero;
			const struct ol_vcpu *bt = v < base->n_vms && c < base->n_vcpus[v] ?
						   &base->t[v][c] : &zero;

			vcpu_sub(&d->t[v][c], &now->t[v][c], bt);
		}
	return 0;
}

int ol_window_init(struct ol_window *win, uint64_t start, size_t top)
{
	memset(win, 0, sizeof(*win));
	win->start = win->end = start;
	if (an_exits_init(&win->by_reason, AN_BY_REASON, top) ||
	    an_exits_init(&win->by_task, AN_BY_TASK, 0) ||
	    an_exits_init(&win->by_vcpu, AN_BY_VCPU, 0) ||
	    an_topn_init(&win->stalls, top, sizeof(struct an_stall))) {
		ol_window_free(win);
		return -ENOMEM;
	}
	return 0;
}

void ol_window_free(struct ol_window *win)
{
	an_exits_free(&win->by_reason);
	an_exits_free(&win->by_task);
	an_exits_free(&win->by_vcpu);
	an_topn_free(&win->stalls);
	free(win->host_ns);
	free(win->host_n);
	ol_snap_free(&win->t);
}

void ol_window_exit(void *ctx, const struct an_exit *e)
{
	struct ol_window *win = ctx;

	an_exits_add(&win->by_reason, e);
	an_exits_add(&win->by_task, e);
	an_exits_add(&win->by_vcpu, e);
	if (!e->halted && e->vm < OL_WIN_VMS && (!(win->has_busy & 1u << e->vm) ||
	    e->end - e->start > win->busy[e->vm].end - win->busy[e->vm].start)) {
		win->busy[e->vm] = *e;
		win->has_busy |= 1u << e->vm;
	}
}

int ol_window_oom(const struct ol_window *win)
{
	return win->by_reason.oom + win->by_task.oom + win->by_vcpu.oom + win->oom;
}

void ol_window_off(void *ctx, const struct an_off *o)
{
	struct ol_window *win = ctx;

	if (o->stall) {
		const struct an_stall *st = o->stall;

		an_topn_add(&win->stalls, st->end - st->start, st);
		if (st->vm < OL_WIN_VMS && (!(win->has_worst & 1u << st->vm) ||
		    st->end - st->start > win->worst[st->vm].end - win->worst[st->vm].start)) {
			win->worst[st->vm] = *st;
			win->has_worst |= 1u << st->vm;
		}
	}
	/* times: the off intervals it had a part in */
	for (int i = 0; i < AN_SCHED_KEEP && o->by[i].n; i++)
		if (an_by_host_charge(&win->host_ns, &win->host_n, o->by[i].host_task, o->by[i].ns,
				      1))
			win->oom++;
	win->off_other_ns += o->by_other_ns;
}

size_t ol_window_preemptors(const struct ol_window *win, struct an_by_host **out)
{
	return an_by_host_list(win->host_ns, win->host_n, out);
}

void ol_window_close(struct ol_window *win, uint64_t end)
{
	win->end = end;
	win->n_longest = an_topn_sort(&win->by_reason.top);
	win->n_stalls = an_topn_sort(&win->stalls);
}
