// SPDX-License-Identifier: GPL-2.0
/* Guest scheduling against the host's: see sched.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

struct vcpus {			/* one VM's vCPUs, grown on demand */
	struct an_sched_vcpu *v;
	uint32_t cap;
};

int an_sched_init(struct an_sched *s, const struct an_walk *w, size_t worst)
{
	memset(s, 0, sizeof(*s));
	s->w = w;
	s->n_vms = an_walk_nr_vms(w);
	s->t = calloc(AN_MAX_TASKS, sizeof(*s->t));
	s->v = calloc(s->n_vms ? s->n_vms : 1, sizeof(struct vcpus));
	if (!s->t || !s->v || an_topn_init(&s->worst, worst, sizeof(struct an_stall))) {
		an_sched_free(s);
		return -ENOMEM;
	}
	return 0;
}

void an_sched_free(struct an_sched *s)
{
	struct vcpus *vs = (struct vcpus *)s->v;

	for (uint32_t i = 0; vs && i < s->n_vms; i++) {
		for (uint32_t c = 0; c < vs[i].cap; c++) {
			free(vs[i].v[c].host_ns);
			free(vs[i].v[c].host_n);
		}
		free(vs[i].v);
	}
	free(s->v);
	free(s->t);
	an_topn_free(&s->worst);
	memset(s, 0, sizeof(*s));
}

static struct an_sched_vcpu *vcpu(struct an_sched *s, uint32_t vm, uint32_t v)
{
	struct vcpus *vs = (struct vcpus *)s->v;

	if (vm >= s->n_vms || v >= AN_MAX_VCPUS)
		return NULL;
	if (v >= vs[vm].cap) {
		uint32_t cap = vs[vm].cap ? vs[vm].cap : 4;
		struct an_sched_vcpu *n;

		while (cap <= v)
			cap *= 2;
		n = realloc(vs[vm].v, cap * sizeof(*n));
		if (!n) {
			s->oom++;
			return NULL;
		}
		memset(n + vs[vm].cap, 0, (cap - vs[vm].cap) * sizeof(*n));
		vs[vm].v = n;
		vs[vm].cap = cap;
	}
	return &vs[vm].v[v];
}

const struct an_sched_vcpu *an_sched_vcpu(const struct an_sched *s, uint32_t vm, uint32_t v)
{
	const struct vcpus *vs = (const struct vcpus *)s->v;

	return vm < s->n_vms && v < vs[vm].cap ? &vs[vm].v[v] : NULL;
}

static struct an_sched_task *task(struct an_sched *s, int32_t t)
{
	const struct an_task *k = an_walk_task(s->w, t);

	if (!k || k->vm == AN_VM_HOST)
		return NULL;
	s->t[t].seen = true;
	return &s->t[t];
}

/* Charge @ns to @host_task in @by[AN_SCHED_KEEP], keeping the largest. */
static void charge(struct an_by_host *by, uint64_t *other, int32_t host_task, uint64_t ns)
{
	int i, min = 0;

	for (i = 0; i < AN_SCHED_KEEP; i++) {
		if (by[i].n && by[i].host_task == host_task) {
			by[i].ns += ns;
			by[i].n++;
			return;
		}
		if (!by[i].n)
			break;
		if (by[i].ns < by[min].ns)
			min = i;
	}
	if (i < AN_SCHED_KEEP) {
		by[i].host_task = host_task;
		by[i].ns = ns;
		by[i].n = 1;
		return;
	}
	/* full: the smallest goes to "other" when the new one is larger */
	if (ns > by[min].ns) {
		*other += by[min].ns;
		by[min].host_task = host_task;
		by[min].ns = ns;
		by[min].n = 1;
	} else {
		*other += ns;
	}
}

static void runq_remove(struct an_sched *s, const struct an_sched_task *t, int32_t ti,
			uint32_t vm)
{
	struct an_sched_vcpu *v = t->cpu != UINT32_MAX ? vcpu(s, vm, t->cpu) : NULL;

	if (!v)
		return;
	for (uint32_t i = 0; i < v->nrunq; i++)
		if (v->runq[i] == ti) {
			v->runq[i] = v->runq[--v->nrunq];
			return;
		}
}

static void runq_add(struct an_sched *s, int32_t ti, uint32_t vm, uint32_t cpu)
{
	struct an_sched_vcpu *v = vcpu(s, vm, cpu);

	if (!v)
		return;
	for (uint32_t i = 0; i < v->nrunq; i++)
		if (v->runq[i] == ti)
			return;
	if (v->nrunq == AN_RUNQ) {
		s->runq_overflow++;
		return;
	}
	v->runq[v->nrunq++] = ti;
}

/* End the task's current state at @ts. */
static void close_state(struct an_sched_task *t, uint64_t ts)
{
	uint64_t d = ts > t->since ? ts - t->since : 0;

	switch (t->st) {
	case AN_T_RUNNING:
		t->running_ns += d;
		break;
	case AN_T_RUNNABLE:
		t->runnable_ns += d;
		break;
	case AN_T_BLOCKED:
		t->blocked_ns += d;
		break;
	default:
		break;
	}
	t->since = ts;
}

static void on_guest_switch(void *ctx, uint32_t vm, const struct an_switch *sw, int32_t prev,
			    int32_t next)
{
	struct an_sched *s = ctx;
	struct an_sched_task *p = task(s, prev), *n = task(s, next);

	if (p) {
		close_state(p, sw->ts);
		runq_remove(s, p, prev, vm);
		/* the idle thread (tid 0) is "runnable" for the kernel, but
		 * waits for nothing */
		p->st = sw->prev_runnable && sw->prev_tid ? AN_T_RUNNABLE : AN_T_BLOCKED;
		p->cpu = sw->cpu;
		if (p->st == AN_T_RUNNABLE)
			runq_add(s, prev, vm, sw->cpu);
	}
	if (n) {
		close_state(n, sw->ts);
		runq_remove(s, n, next, vm);
		n->st = AN_T_RUNNING;
		n->cpu = sw->cpu;
	}
}

static void on_guest_wakeup(void *ctx, uint32_t vm, uint64_t ts, int32_t ti, int32_t cpu)
{
	struct an_sched *s = ctx;
	struct an_sched_task *t = task(s, ti);

	if (!t || t->st == AN_T_RUNNING || t->st == AN_T_RUNNABLE)
		return;
	close_state(t, ts);
	t->st = AN_T_RUNNABLE;
	t->cpu = cpu >= 0 ? (uint32_t)cpu : UINT32_MAX;
	if (cpu >= 0)
		runq_add(s, ti, vm, (uint32_t)cpu);
}

/*
 * @ns off its CPU for @v, exactly, by @host_task (a walk task,
 * AN_TASK_UNKNOWN for blocked in host, AN_TASK_OTHER); @times: one more
 * off interval for it. The table is allocated at the vCPU's first charge.
 */
int an_by_host_charge(uint64_t **ns_tab, uint32_t **n_tab, int32_t host_task, uint64_t ns,
		      uint32_t times)
{
	size_t i = (size_t)(host_task - AN_TASK_OTHER);

	if (!*ns_tab) {
		*ns_tab = calloc(AN_HOST_SLOTS, sizeof(**ns_tab));
		*n_tab = calloc(AN_HOST_SLOTS, sizeof(**n_tab));
		if (!*ns_tab || !*n_tab) {
			free(*ns_tab);
			free(*n_tab);
			*ns_tab = NULL;
			*n_tab = NULL;
			return -ENOMEM;
		}
	}
	if (host_task < AN_TASK_OTHER || i >= AN_HOST_SLOTS)
		return 0;
	(*ns_tab)[i] += ns;
	(*n_tab)[i] += times;
	return 0;
}

static void charge_exact(struct an_sched *s, struct an_sched_vcpu *v, int32_t host_task,
			 uint64_t ns, bool times)
{
	if (an_by_host_charge(&v->host_ns, &v->host_n, host_task, ns, times))
		s->oom++;
}

/* The host task that ran on a preempted vCPU's CPU since seg_start ends at @ts. */
static void end_segment(struct an_sched *s, struct an_sched_vcpu *v, uint64_t ts, int32_t next)
{
	if (ts > v->seg_start) {
		/* once per task and off interval: its first segment in it */
		bool first = true;

		for (int i = 0; i < AN_SCHED_KEEP && v->cur[i].n; i++)
			if (v->cur[i].host_task == v->seg_task)
				first = false;
		charge(v->cur, &v->cur_other_ns, v->seg_task, ts - v->seg_start);
		charge_exact(s, v, v->seg_task, ts - v->seg_start, first);
	}
	v->seg_task = next;
	v->seg_start = ts;
}

/* Move one off interval's charges @cur (and @other) into @by. */
static void charge_all(struct an_by_host *by, uint64_t *by_other, const struct an_by_host *cur,
		       uint64_t other)
{
	for (int i = 0; i < AN_SCHED_KEEP && cur[i].n; i++)
		charge(by, by_other, cur[i].host_task, cur[i].ns);
	*by_other += other;
}

/* The host task that had the CPU longest in this off interval. */
static int32_t main_culprit(const struct an_sched_vcpu *v)
{
	int best = 0;

	for (int i = 1; i < AN_SCHED_KEEP && v->cur[i].n; i++)
		if (v->cur[i].ns > v->cur[best].ns)
			best = i;
	return v->cur[best].n ? v->cur[best].host_task : AN_TASK_UNKNOWN;
}

/* The vCPU thread of (vm, vcpu) comes back after being off since v->off_since. */
static void back_on(struct an_sched *s, uint32_t vm, uint32_t vc, struct an_sched_vcpu *v,
		    uint64_t ts)
{
	uint64_t d = ts - v->off_since;
	int32_t by = AN_TASK_UNKNOWN;
	struct an_sched_task *t = task(s, v->off_task);
	struct an_stall st;
	struct an_off off;
	enum an_stall_cause cause;

	v->off = false;
	if (v->off_preempted) {
		end_segment(s, v, ts, AN_TASK_UNKNOWN);
		by = main_culprit(v);
		v->preempted_ns += d;
		v->n_preempted++;
	} else {
		/* blocked in host: one charge, to "blocked in host" */
		memset(v->cur, 0, sizeof(v->cur));
		v->cur_other_ns = 0;
		charge(v->cur, &v->cur_other_ns, AN_TASK_UNKNOWN, d);
		charge_exact(s, v, AN_TASK_UNKNOWN, d, true);
		v->blocked_ns += d;
		v->n_blocked++;
	}
	v->ring[v->nring % AN_OFF_RING].start = v->off_since;
	v->ring[v->nring % AN_OFF_RING].end = ts;
	v->nring++;
	off = (struct an_off){ .vm = vm, .vcpu = vc, .preempted = v->off_preempted,
			       .start = v->off_since, .end = ts, .by = v->cur,
			       .by_other_ns = v->cur_other_ns };
	cause = v->off_preempted ? AN_STALL_PREEMPTED : AN_STALL_BLOCKED;
	/* the task that was running there, if it still is in guest terms */
	if (t && t->st == AN_T_RUNNING && t->cpu == vc) {
		const struct an_task *k = an_walk_task(s->w, v->off_task);

		st = (struct an_stall){ .vm = vm, .vcpu = vc, .host_cpu = v->host_cpu,
					.task = v->off_task, .host_task = by,
					.start = v->off_since, .end = ts,
					.preempted = v->off_preempted };
		t->stall_running_ns += d;
		charge_all(t->by, &t->by_other_ns, v->cur, v->cur_other_ns);
		if (k && k->tid != 0) {	/* the idle task is not stalled */
			an_topn_add(&s->worst, d, &st);
			off.stall = &st;
			v->stall_ns[AN_STALL_RUNNING][cause] += d;
		}
	}
	if (s->on_off)
		s->on_off(s->off_ctx, &off);
	for (uint32_t i = 0; i < v->nrunq; i++) {
		struct an_sched_task *q = task(s, v->runq[i]);
		const struct an_task *k = an_walk_task(s->w, v->runq[i]);

		if (q && q->st == AN_T_RUNNABLE) {
			q->stall_runnable_ns += d;
			if (k && k->tid != 0)
				v->stall_ns[AN_STALL_RUNNABLE][cause] += d;
		}
	}
}

/* A host switch on a CPU where vCPU threads wait preempted: the CPU changes hands. */
static void preempted_switch(struct an_sched *s, const struct an_switch *sw, int32_t next)
{
	struct vcpus *vs = (struct vcpus *)s->v;

	for (uint32_t vm = 0; vm < s->n_vms; vm++)
		for (uint32_t c = 0; c < vs[vm].cap; c++) {
			struct an_sched_vcpu *v = &vs[vm].v[c];

			if (v->off && v->off_preempted && v->host_cpu == sw->cpu)
				end_segment(s, v, sw->ts, next);
		}
}

static void on_host_switch(void *ctx, const struct an_switch *sw, int32_t prev, int32_t next)
{
	struct an_sched *s = ctx;
	uint32_t vm, vc;
	struct an_sched_vcpu *v;

	(void)prev;
	preempted_switch(s, sw, next);
	if (an_walk_thread_vcpu(s->w, sw->prev_tid, &vm, &vc) && (v = vcpu(s, vm, vc))) {
		v->off = true;
		v->off_since = sw->ts;
		v->off_preempted = sw->prev_runnable;
		v->host_cpu = sw->cpu;
		v->off_task = an_walk_vcpu_task(s->w, vm, vc);
		v->seg_task = next;
		v->seg_start = sw->ts;
		memset(v->cur, 0, sizeof(v->cur));
		v->cur_other_ns = 0;
	}
	if (an_walk_thread_vcpu(s->w, sw->next_tid, &vm, &vc) && (v = vcpu(s, vm, vc)) && v->off)
		back_on(s, vm, vc, v, sw->ts);
}

/* Off-CPU time of @v inside [start, end] (its last AN_OFF_RING intervals). */
static uint64_t off_within(const struct an_sched_vcpu *v, uint64_t start, uint64_t end)
{
	uint64_t sum = 0;
	uint32_t n = v->nring < AN_OFF_RING ? v->nring : AN_OFF_RING;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = v->ring[i].start > start ? v->ring[i].start : start;
		uint64_t b = v->ring[i].end < end ? v->ring[i].end : end;

		if (b > a)
			sum += b - a;
	}
	return sum;
}

static void on_exit_done(void *ctx, const struct an_exit *x)
{
	struct an_sched *s = ctx;
	struct an_sched_task *t = task(s, x->task);
	struct an_sched_vcpu *v = vcpu(s, x->vm, x->vcpu);
	uint64_t d = x->end - x->start, off = v ? off_within(v, x->start, x->end) : 0;

	if (!t || x->halted)
		return;
	t->exit_ns += d > off ? d - off : 0;
}

static void on_guest_sync(void *ctx, uint32_t vm, uint64_t ts, uint32_t cpu, bool has_steal,
			  uint64_t steal_ns)
{
	struct an_sched *s = ctx;
	struct an_sched_vcpu *v = has_steal ? vcpu(s, vm, cpu) : NULL;

	if (v)
		an_steal_sample(v, ts, steal_ns);
}

static void on_loss(void *ctx, uint64_t ts)
{
	struct an_sched *s = ctx;
	struct vcpus *vs = (struct vcpus *)s->v;

	(void)ts;
	/* nothing open is carried across a hole */
	for (uint32_t i = 0; i < AN_MAX_TASKS; i++)
		if (s->t[i].seen)
			s->t[i].st = AN_T_UNKNOWN;
	for (uint32_t vm = 0; vm < s->n_vms; vm++)
		for (uint32_t c = 0; c < vs[vm].cap; c++) {
			an_steal_break(&vs[vm].v[c]);
			vs[vm].v[c].off = false;
			vs[vm].v[c].nrunq = 0;
		}
}

static int by_ns_desc(const void *a, const void *b)
{
	const struct an_by_host *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : x->host_task - y->host_task;
}

/* Largest charge first: the used entries of @by[AN_SCHED_KEEP]. */
static void sort_by(struct an_by_host *by)
{
	size_t n = 0;

	while (n < AN_SCHED_KEEP && by[n].n)
		n++;
	qsort(by, n, sizeof(*by), by_ns_desc);
}

size_t an_by_host_list(const uint64_t *ns, const uint32_t *times, struct an_by_host **out)
{
	size_t n = 0, k = 0;

	*out = NULL;
	for (size_t i = 0; ns && i < AN_HOST_SLOTS; i++)
		n += times[i] != 0;
	if (!n || !(*out = calloc(n, sizeof(**out))))
		return 0;
	for (size_t i = 0; i < AN_HOST_SLOTS; i++)
		if (times[i])
			(*out)[k++] = (struct an_by_host){ .host_task = (int32_t)i + AN_TASK_OTHER,
							   .ns = ns[i], .n = times[i] };
	qsort(*out, n, sizeof(**out), by_ns_desc);
	return n;
}

size_t an_sched_vcpu_by_all(const struct an_sched_vcpu *v, struct an_by_host **out)
{
	return an_by_host_list(v->host_ns, v->host_n, out);
}

/* A vCPU's exact charges: the AN_SCHED_BY largest in by[], the rest in other. */
static void vcpu_top(struct an_sched_vcpu *v)
{
	memset(v->by, 0, sizeof(v->by));
	v->by_other_ns = 0;
	for (size_t i = 0; v->host_ns && i < AN_HOST_SLOTS; i++) {
		struct an_by_host e = { .host_task = (int32_t)i + AN_TASK_OTHER,
					.ns = v->host_ns[i], .n = v->host_n[i] };
		int k = AN_SCHED_BY - 1;

		if (!e.n)
			continue;
		if (v->by[k].n) {
			if (v->by[k].ns >= e.ns) {
				v->by_other_ns += e.ns;
				continue;
			}
			v->by_other_ns += v->by[k].ns;
		}
		while (k > 0 && (!v->by[k - 1].n || v->by[k - 1].ns < e.ns)) {
			v->by[k] = v->by[k - 1];
			k--;
		}
		v->by[k] = e;
	}
}

static void on_end(void *ctx, uint64_t ts)
{
	struct an_sched *s = ctx;
	struct vcpus *vs = (struct vcpus *)s->v;

	for (uint32_t i = 0; i < AN_MAX_TASKS; i++)
		if (s->t[i].seen) {
			close_state(&s->t[i], ts);
			sort_by(s->t[i].by);
		}
	for (uint32_t vm = 0; vm < s->n_vms; vm++)
		for (uint32_t c = 0; c < vs[vm].cap; c++)
			vcpu_top(&vs[vm].v[c]);
}

void an_sched_hooks(struct an_sched *s, struct an_hooks *h)
{
	h->ctx = s;
	h->exit = on_exit_done;
	h->guest_switch = on_guest_switch;
	h->guest_wakeup = on_guest_wakeup;
	h->host_switch = on_host_switch;
	h->guest_sync = on_guest_sync;
	h->loss = on_loss;
	h->end = on_end;
}
