// SPDX-License-Identifier: GPL-2.0
/* Halt polling per vCPU from the walk's wake-ups: see halt.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "halt.h"

int an_halt_init(struct an_halt *a, const struct an_walk *w)
{
	memset(a, 0, sizeof(*a));
	a->w = w;
	a->n_vms = an_walk_nr_vms(w);
	a->vm = calloc(a->n_vms ? a->n_vms : 1, sizeof(*a->vm));
	return a->vm ? 0 : -ENOMEM;
}

void an_halt_free(struct an_halt *a)
{
	for (uint32_t vm = 0; a->vm && vm < a->n_vms; vm++) {
		for (uint32_t c = 0; c < a->vm[vm].n; c++)
			an_hist_free(&a->vm[vm].v[c].entry);
		free(a->vm[vm].v);
	}
	free(a->vm);
	a->vm = NULL;
}

static struct an_halt_vcpu *slot(struct an_halt *a, uint32_t vm, uint32_t vcpu)
{
	struct an_halt_vm *m;
	struct an_halt_vcpu *v;
	uint32_t n;

	if (vm >= a->n_vms || vcpu >= AN_MAX_VCPUS)
		return NULL;
	m = &a->vm[vm];
	if (vcpu >= m->n) {
		n = vcpu + 1;
		v = realloc(m->v, n * sizeof(*v));
		if (!v)
			return NULL;
		for (uint32_t c = m->n; c < n; c++) {
			memset(&v[c], 0, sizeof(v[c]));
			an_hist_init(&v[c].entry);
		}
		m->v = v;
		m->n = n;
	}
	return &m->v[vcpu];
}

void an_halt_add(struct an_halt *a, const struct an_wakeup *k)
{
	struct an_halt_vcpu *v = slot(a, k->vm, k->vcpu);

	if (!v) {
		a->oom = true;
		return;
	}
	v->seen = true;
	v->wakeups++;
	if (k->waited)
		v->slept++;
	else
		v->polled++;
	v->invalid += !k->valid;
	v->halted_ns += k->halt_ns;
	if (!k->poll_known)
		v->poll_unknown++;
	else
		v->poll_ns += k->poll_ns;
	if (!k->entry_known)
		v->entry_unknown++;
	else
		an_hist_add(&v->entry, k->entry_ns);
	if (v->entry.oom)
		a->oom = true;
}

static void on_wakeup(void *ctx, const struct an_wakeup *k)
{
	an_halt_add(ctx, k);
}

void an_halt_hooks(struct an_halt *a, struct an_hooks *h)
{
	h->ctx = a;
	h->wakeup = on_wakeup;
}

const struct an_halt_vcpu *an_halt_vcpu(const struct an_halt *a, uint32_t vm, uint32_t vcpu)
{
	if (vm >= a->n_vms || vcpu >= a->vm[vm].n || !a->vm[vm].v[vcpu].seen)
		return NULL;
	return &a->vm[vm].v[vcpu];
}

uint64_t an_halt_total(const struct an_halt *a)
{
	uint64_t n = 0;

	for (uint32_t vm = 0; vm < a->n_vms; vm++)
		for (uint32_t c = 0; c < a->vm[vm].n; c++)
			n += a->vm[vm].v[c].wakeups;
	return n;
}
