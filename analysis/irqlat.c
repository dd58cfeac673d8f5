// SPDX-License-Identifier: GPL-2.0
/* Interrupt delivery latency per VM and vector: see irqlat.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "irqlat.h"

/*
 * Linux's x86 system vectors whose handlers have an irq_vectors *_entry
 * tracepoint that vmscope_guest records (arch/x86/include/asm/irq_vectors.h,
 * guest-kmod/probes.c).
 */
static const struct { uint32_t vector; const char *name; } traced[] = {
	{ 0xec, "LOCAL_TIMER" },
	{ 0xf6, "IRQ_WORK" },
	{ 0xf7, "X86_PLATFORM_IPI" },
	{ 0xfb, "CALL_FUNCTION_SINGLE" },
	{ 0xfc, "CALL_FUNCTION" },
	{ 0xfd, "RESCHEDULE" },
	{ 0xfe, "ERROR_APIC" },
	{ 0xff, "SPURIOUS_APIC" },
};

const char *const an_irq_miss_names[AN_IRQ_MISS_N] = {
	"next_injection_first", "before_guest_records", "after_guest_records", "loss", "trace_end", "no_guest_tracepoint", "no_guest_records",
	"soft",
};

bool an_irq_traced(uint32_t vector)
{
	return an_irq_vector_name(vector) != NULL;
}

const char *an_irq_vector_name(uint32_t vector)
{
	for (size_t i = 0; i < sizeof(traced) / sizeof(traced[0]); i++)
		if (traced[i].vector == vector)
			return traced[i].name;
	return NULL;
}

int an_irq_init(struct an_irq *a, const struct an_walk *w)
{
	memset(a, 0, sizeof(*a));
	a->w = w;
	a->n_vms = an_walk_nr_vms(w);
	a->vm = calloc(a->n_vms ? a->n_vms : 1, sizeof(*a->vm));
	return a->vm ? 0 : -ENOMEM;
}

void an_irq_free(struct an_irq *a)
{
	for (uint32_t vm = 0; a->vm && vm < a->n_vms; vm++) {
		for (uint32_t v = 0; a->vm[vm].row && v <= AN_IRQ_VECTORS; v++)
			an_hist_free(&a->vm[vm].row[v].lat);
		free(a->vm[vm].row);
		for (uint32_t c = 0; c < a->vm[vm].n; c++)
			free(a->vm[vm].wait[c].tail);
		free(a->vm[vm].wait);
	}
	free(a->vm);
	a->vm = NULL;
}

static struct an_irq_row *row(struct an_irq *a, uint32_t vm, uint32_t vector)
{
	struct an_irq_vm *m;

	if (vm >= a->n_vms)
		return NULL;
	m = &a->vm[vm];
	if (!m->row) {
		m->row = calloc(AN_IRQ_VECTORS + 1, sizeof(*m->row));
		if (!m->row) {
			a->oom = true;
			return NULL;
		}
		for (uint32_t v = 0; v <= AN_IRQ_VECTORS; v++)
			an_hist_init(&m->row[v].lat);
	}
	vector = vector < AN_IRQ_VECTORS ? vector : AN_IRQ_VECTORS;
	m->row[vector].seen = true;
	return &m->row[vector];
}

static struct an_irq_wait *wait_of(struct an_irq *a, uint32_t vm, uint32_t vcpu)
{
	struct an_irq_vm *m;
	struct an_irq_wait *p;

	if (vm >= a->n_vms || vcpu >= AN_MAX_VCPUS)
		return NULL;
	m = &a->vm[vm];
	if (vcpu >= m->n) {
		p = realloc(m->wait, (vcpu + 1) * sizeof(*p));
		if (!p) {
			a->oom = true;
			return NULL;
		}
		memset(p + m->n, 0, (vcpu + 1 - m->n) * sizeof(*p));
		m->wait = p;
		m->n = vcpu + 1;
	}
	return &m->wait[vcpu];
}

/* The injection waiting on @q ends unmatched, for @why. */
static void miss(struct an_irq *a, uint32_t vm, struct an_irq_wait *q, enum an_irq_miss why)
{
	uint32_t v = q->vector < AN_IRQ_VECTORS ? q->vector : AN_IRQ_VECTORS;
	struct an_irq_row *r;

	if (!q->on)
		return;
	q->on = false;
	if (!(r = row(a, vm, q->vector)))
		return;
	if (why == AN_IRQ_NEXT && !q->guest_seen) {
		r->unmatched[AN_IRQ_BEFORE]++;
	} else if (why == AN_IRQ_NEXT) {
		/* held until the vCPU's next guest record says it was recording */
		if (!q->tail && !(q->tail = calloc(AN_IRQ_VECTORS + 1, sizeof(*q->tail)))) {
			a->oom = true;
			return;
		}
		q->tail[v]++;
	} else {
		r->unmatched[why]++;
	}
}

/* @q's held misses, as @why. */
static void flush_tail(struct an_irq *a, uint32_t vm, struct an_irq_wait *q, enum an_irq_miss why)
{
	if (!q->tail)
		return;
	for (uint32_t v = 0; v <= AN_IRQ_VECTORS; v++) {
		if (q->tail[v] && a->vm[vm].row)
			a->vm[vm].row[v].unmatched[why] += q->tail[v];
		q->tail[v] = 0;
	}
}

void an_irq_inject(struct an_irq *a, const struct an_inject *j)
{
	struct an_irq_row *r = row(a, j->vm, j->vector);
	struct an_irq_wait *q = wait_of(a, j->vm, j->vcpu);

	if (!r || !q)
		return;
	r->injections++;
	if (j->reinjected && q->on && q->vector == j->vector) {
		r->reinjections++;
		return;
	}
	miss(a, j->vm, q, AN_IRQ_NEXT);
	if (j->soft) {
		r->unmatched[AN_IRQ_SOFT]++;
	} else if (!an_irq_traced(j->vector)) {
		r->unmatched[AN_IRQ_UNTRACED]++;
	} else if (!an_walk_vm_has_vector(a->w, j->vm)) {
		r->unmatched[AN_IRQ_NO_GUEST]++;
	} else {
		q->on = true;
		q->vector = j->vector;
		q->ts = j->ts;
	}
}

void an_irq_guest(struct an_irq *a, uint32_t vm, uint32_t cpu, uint64_t ts, uint32_t vector)
{
	struct an_irq_row *r = row(a, vm, vector);
	struct an_irq_wait *q = wait_of(a, vm, cpu);
	uint64_t lat;

	if (!r || !q)
		return;
	q->guest_seen = true;
	flush_tail(a, vm, q, AN_IRQ_NEXT);
	if (!q->on || q->vector != vector || ts < q->ts) {
		r->guest_unmatched++;
		return;
	}
	q->on = false;
	lat = ts - q->ts;
	r->matched++;
	if (!r->lat.count || lat > r->lat.max) {
		r->worst_vcpu = cpu;
		r->worst_ts = q->ts;
		r->worst_task = an_walk_vcpu_task(a->w, vm, cpu);
	}
	an_hist_add(&r->lat, lat);
	if (r->lat.oom)
		a->oom = true;
}

static void miss_all(struct an_irq *a, enum an_irq_miss why)
{
	for (uint32_t vm = 0; vm < a->n_vms; vm++)
		for (uint32_t c = 0; c < a->vm[vm].n; c++)
			miss(a, vm, &a->vm[vm].wait[c], why);
}

void an_irq_loss(struct an_irq *a)
{
	miss_all(a, AN_IRQ_LOSS);
}

void an_irq_end(struct an_irq *a)
{
	miss_all(a, AN_IRQ_END);
	for (uint32_t vm = 0; vm < a->n_vms; vm++)
		for (uint32_t c = 0; c < a->vm[vm].n; c++)
			flush_tail(a, vm, &a->vm[vm].wait[c], AN_IRQ_AFTER);
}

const struct an_irq_row *an_irq_row(const struct an_irq *a, uint32_t vm, uint32_t vector)
{
	if (vm >= a->n_vms || !a->vm[vm].row || vector > AN_IRQ_VECTORS ||
	    !a->vm[vm].row[vector].seen)
		return NULL;
	return &a->vm[vm].row[vector];
}

uint64_t an_irq_unmatched(const struct an_irq_row *r)
{
	uint64_t n = 0;

	for (int k = 0; k < AN_IRQ_MISS_N; k++)
		n += r->unmatched[k];
	return n;
}

static void on_inject(void *ctx, const struct an_inject *j)
{
	an_irq_inject(ctx, j);
}

static void on_guest(void *ctx, uint32_t vm, uint32_t cpu, uint64_t ts, uint32_t vector)
{
	an_irq_guest(ctx, vm, cpu, ts, vector);
}

static void on_loss(void *ctx, uint64_t ts)
{
	(void)ts;
	an_irq_loss(ctx);
}

static void on_end(void *ctx, uint64_t ts)
{
	(void)ts;
	an_irq_end(ctx);
}

void an_irq_hooks(struct an_irq *a, struct an_hooks *h)
{
	h->ctx = a;
	h->inject = on_inject;
	h->guest_vector = on_guest;
	h->loss = on_loss;
	h->end = on_end;
}
