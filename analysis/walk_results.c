// SPDX-License-Identifier: GPL-2.0
/*
 * What a walk answers about the trace it read (walk.h): VMs, vCPUs, reasons,
 * tasks and counts. Apart from walk.c because none of it is the pass itself:
 * the reports and online/ read these while or after the pass runs.
 */
#include <stdio.h>

#include "walk_int.h"

uint32_t an_walk_nr_vms(const struct an_walk *w)
{
	return w->n_vms;
}

uint32_t an_walk_host_cpus(const struct an_walk *w)
{
	return w->sess && w->sess->host && w->sess->host->kernel ?
	       w->sess->host->kernel->nr_cpus : 0;
}

bool an_walk_has_wakeup(const struct an_walk *w)
{
	return w->has_wakeup;
}

bool an_walk_has_inject(const struct an_walk *w)
{
	return w->has_inj;
}

bool an_walk_vm_has_vector(const struct an_walk *w, uint32_t vm)
{
	return vm < w->n_vms && w->vm[vm].has_vector;
}

bool an_walk_vm_has_guest(const struct an_walk *w, uint32_t vm)
{
	return vm < w->n_vms && w->vm[vm].guest;
}

const char *an_walk_vm_name(const struct an_walk *w, uint32_t vm)
{
	return vm < w->n_vms ? w->vm[vm].name : "?";
}

uint32_t an_walk_nr_vcpus(const struct an_walk *w, uint32_t vm)
{
	return vm < w->n_vms ? w->vm[vm].n : 0;
}

const struct an_vcpu_time *an_walk_vcpu_time(const struct an_walk *w, uint32_t vm,
					     uint32_t vcpu)
{
	return vm < w->n_vms && vcpu < w->vm[vm].n ? &w->vm[vm].v[vcpu].t : NULL;
}

int32_t an_walk_vcpu_task(const struct an_walk *w, uint32_t vm, uint32_t vcpu)
{
	return vm < w->n_vms && vcpu < w->vm[vm].n ? w->vm[vm].v[vcpu].task : AN_TASK_UNKNOWN;
}

int32_t an_walk_vcpu_tid(const struct an_walk *w, uint32_t vm, uint32_t vcpu)
{
	for (size_t i = 0; i < w->nth; i++)
		if (w->th[i].vm == vm && w->th[i].vcpu == vcpu)
			return w->th[i].tid;
	return -1;
}

const char *an_walk_reason_name(const struct an_walk *w, uint32_t reason)
{
	return reason < w->nreason ? w->reason[reason].name : "(other reasons)";
}

bool an_walk_reason_code(const struct an_walk *w, uint32_t reason, uint32_t *isa,
			 uint32_t *code)
{
	if (reason >= w->nreason || !w->reason[reason].valid)
		return false;
	*isa = w->reason[reason].isa;
	*code = w->reason[reason].code;
	return true;
}

uint32_t an_walk_nr_reasons(const struct an_walk *w)
{
	return w->nreason + (w->n.reasons_other ? 1 : 0);
}

const struct an_task *an_walk_task(const struct an_walk *w, int32_t i)
{
	return i >= 0 && (uint32_t)i < w->ntask ? &w->task[i] : NULL;
}

uint32_t an_walk_nr_tasks(const struct an_walk *w)
{
	return w->ntask;
}

const char *an_walk_task_label(const struct an_walk *w, int32_t i, char *buf, size_t len)
{
	const struct an_task *t = an_walk_task(w, i);

	if (t)
		snprintf(buf, len, "%s/%d", t->comm, t->tid);
	else
		snprintf(buf, len, "%s", an_task_placeholder(i));
	return buf;
}

const struct an_counts *an_walk_counts(const struct an_walk *w)
{
	return &w->n;
}

void an_walk_span(const struct an_walk *w, uint64_t *first, uint64_t *last)
{
	*first = w->first_ts;
	*last = w->last_ts;
}
