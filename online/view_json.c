// SPDX-License-Identifier: GPL-2.0
/* The pipeline's intervals as JSON lines (json-c): see view.h, README.md. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "exits_json.h"
#include "view.h"

static json_object *jcounts(const struct an_counts *c)
{
	json_object *o = json_object_new_object();

	an_json_counts(o, c);
	return o;
}

/* One group of a window's exits: `report exits --json`'s fields and its rate. */
static json_object *jgroup(const struct an_group *g, double secs)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "vm", json_object_new_int((int)g->vm));
	an_json_group(j, g, NULL);
	json_object_object_add(j, "rate_per_s",
			       json_object_new_double(secs > 0 ? (double)g->h.count / secs : 0));
	return j;
}

static json_object *jreasons(const struct an_walk *w, const struct ol_window *win)
{
	json_object *a = json_object_new_array();
	double secs = (double)(win->end - win->start) / 1e9;

	for (size_t i = 0; i < win->by_reason.n; i++) {
		const struct an_group *g = &win->by_reason.g[i];
		json_object *j = jgroup(g, secs);

		json_object_object_add(j, "reason", json_object_new_string(
			an_walk_reason_name(w, g->reason)));
		json_object_array_add(a, j);
	}
	return a;
}

/* The first @n task groups of VMs that have a guest side. */
static json_object *jtasks(const struct an_walk *w, const struct ol_window *win, size_t n)
{
	json_object *a = json_object_new_array();
	double secs = (double)(win->end - win->start) / 1e9;

	for (size_t i = 0, k = 0; i < win->by_task.n && k < n; i++) {
		const struct an_group *g = &win->by_task.g[i];
		json_object *j;

		if (!an_walk_vm_has_guest(w, g->vm))
			continue;
		j = jgroup(g, secs);
		json_object_object_add(j, "task", an_json_task(w, g->task));
		json_object_object_add(j, "reasons", an_json_reason_shares(w, g));
		json_object_array_add(a, j);
		k++;
	}
	return a;
}

static json_object *jvms(const struct ol_report *r, const struct ol_snap *t)
{
	const struct an_walk *w = r->w;
	json_object *vms = json_object_new_array();

	for (uint32_t vm = 0; vm < t->n_vms; vm++) {
		json_object *v = json_object_new_object(), *cpus = json_object_new_array();
		enum ol_sync_state st;
		uint64_t bound = 0;

		json_object_object_add(v, "vm", json_object_new_int((int)vm));
		json_object_object_add(v, "name", json_object_new_string(an_walk_vm_name(w, vm)));
		json_object_object_add(v, "agent", json_object_new_boolean(
			an_walk_vm_has_guest(w, vm)));
		st = ol_sync_of(r, vm, &bound);
		json_object_object_add(v, "sync", json_object_new_string(ol_sync_names[st]));
		if (st == OL_SYNC_BOUNDED)
			an_json_u64(v, "sync_bound_ns", bound);
		else
			json_object_object_add(v, "sync_bound_ns", NULL);
		for (uint32_t c = 0; c < t->n_vcpus[vm]; c++) {
			const struct ol_vcpu *x = &t->t[vm][c];
			json_object *j = json_object_new_object();

			json_object_object_add(j, "vcpu", json_object_new_int((int)c));
			json_object_object_add(j, "tid", json_object_new_int(
				an_walk_vcpu_tid(w, vm, c)));
			an_json_u64(j, "exits", x->t.exits);
			an_json_u64(j, "guest_ns", x->t.guest_ns);
			an_json_u64(j, "kernel_ns", x->t.kernel_ns);
			an_json_u64(j, "user_ns", x->t.user_ns);
			an_json_u64(j, "halted_ns", x->t.halted_ns);
			an_json_u64(j, "preempted_ns", x->preempted_ns);
			an_json_u64(j, "preemptions", x->preemptions);
			an_json_u64(j, "blocked_ns", x->blocked_ns);
			an_json_u64(j, "blocks", x->blocks);
			/* the guest's own steal needs its side (and ABI 0.4 readings) */
			if (an_walk_vm_has_guest(w, vm))
				an_json_u64(j, "steal_readings", x->steal_readings);
			if (an_walk_vm_has_guest(w, vm) && x->steal_readings) {
				an_json_u64(j, "guest_steal_ns", x->steal_ns);
				an_json_u64(j, "preempted_in_steal_span_ns", x->steal_host_ns);
				an_json_u64(j, "steal_span_ns", x->steal_span_ns);
			} else {
				json_object_object_add(j, "guest_steal_ns", NULL);
			}
			json_object_array_add(cpus, j);
		}
		json_object_object_add(v, "vcpus", cpus);
		json_object_array_add(vms, v);
	}
	return vms;
}

static json_object *jlongest(const struct an_walk *w, const struct ol_window *win)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < win->n_longest; i++) {
		const struct an_exit *e = an_topn_item(&win->by_reason.top, i);

		json_object_array_add(a, an_json_exit(w, e, an_walk_vm_has_guest(w, e->vm)));
	}
	return a;
}

static json_object *jhost(const struct an_walk *w, const struct an_by_host *b)
{
	json_object *j = json_object_new_object();

	if (b->host_task == AN_TASK_UNKNOWN)
		json_object_object_add(j, "blocked_in_host", json_object_new_boolean(1));
	else
		json_object_object_add(j, "host_task", an_json_task(w, b->host_task));
	an_json_u64(j, "ns", b->ns);
	an_json_u64(j, "times", b->n);
	return j;
}

/* The first @n host tasks of the window's off-CPU time; NULL out of memory. */
static json_object *jpreemptors(const struct an_walk *w, const struct ol_window *win, size_t n)
{
	struct an_by_host *by;
	size_t nb = ol_window_preemptors(win, &by);
	json_object *a;

	if (!by && win->host_ns)
		return NULL;
	a = json_object_new_array();
	for (size_t i = 0; i < nb && i < n; i++)
		json_object_array_add(a, jhost(w, &by[i]));
	free(by);
	return a;
}

static json_object *jstalls(const struct an_walk *w, const struct ol_window *win)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < win->n_stalls; i++) {
		const struct an_stall *st = an_topn_item(&win->stalls, i);
		json_object *j = json_object_new_object();

		json_object_object_add(j, "vm", json_object_new_int((int)st->vm));
		json_object_object_add(j, "vcpu", json_object_new_int((int)st->vcpu));
		json_object_object_add(j, "thread", an_json_task(w, st->task));
		json_object_object_add(j, "preempted", json_object_new_boolean(st->preempted));
		if (st->host_task == AN_TASK_UNKNOWN)
			json_object_object_add(j, "blocked_in_host", json_object_new_boolean(1));
		else
			json_object_object_add(j, "host_task", an_json_task(w, st->host_task));
		json_object_object_add(j, "host_cpu", json_object_new_int((int)st->host_cpu));
		an_json_u64(j, "start_ns", st->start);
		an_json_u64(j, "duration_ns", st->end - st->start);
		json_object_array_add(a, j);
	}
	return a;
}

int ol_view_json(void *ctx, const struct ol_report *r)
{
	const struct ol_view *v = ctx;
	json_object *o = json_object_new_object(), *cum = json_object_new_object();
	int e = 0;

	an_json_u64(o, "interval", r->index);
	an_json_u64(o, "start_ns", r->iv->start);
	an_json_u64(o, "end_ns", r->iv->end);
	json_object_object_add(o, "final", json_object_new_boolean(r->final));
	json_object_object_add(o, "host_cpus", an_walk_host_cpus(r->w) ?
			       json_object_new_int((int)an_walk_host_cpus(r->w)) : NULL);
	json_object_object_add(o, "counts", jcounts(&r->iv->t.counts));
	json_object_object_add(o, "vms", jvms(r, &r->iv->t));
	json_object_object_add(o, "reasons", jreasons(r->w, r->iv));
	json_object_object_add(o, "tasks", jtasks(r->w, r->iv, v->tasks));
	json_object_object_add(o, "longest", jlongest(r->w, r->iv));
	json_object_object_add(o, "preemptors", jpreemptors(r->w, r->iv, v->tasks));
	an_json_u64(o, "preemptors_other_ns", r->iv->off_other_ns);
	json_object_object_add(o, "stalls", jstalls(r->w, r->iv));
	an_json_u64(cum, "start_ns", r->cum->start);
	an_json_u64(cum, "end_ns", r->cum->end);
	json_object_object_add(cum, "counts", jcounts(&r->cum->t.counts));
	json_object_object_add(cum, "reasons", jreasons(r->w, r->cum));
	json_object_object_add(o, "cumulative", cum);
	if (fprintf(v->out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
		    JSON_C_TO_STRING_NOSLASHESCAPE)) < 0 || fflush(v->out))
		e = -EIO;
	json_object_put(o);
	return e;
}
