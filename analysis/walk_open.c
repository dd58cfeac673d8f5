// SPDX-License-Identifier: GPL-2.0
/* Opening a merged trace for the walk (walk.h): event roles, the session. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "walk_int.h"

static void find_switch(const struct vr_events *ev, const char *name, struct switch_fields *s,
			const struct vmscope_event_desc **d)
{
	static const char *const f[S_N] = { "prev_pid", "prev_state", "next_pid" };

	*d = mg_role_find(ev, name, f, S_N, s->f);
	s->has_comm = *d && mg_str_field_find(*d, "prev_comm", &s->prev_comm) &&
		      mg_str_field_find(*d, "next_comm", &s->next_comm);
	s->has_preempt = *d && mg_field_find(*d, "preempt", &s->preempt);
}

static void set_role(struct an_walk *w, const struct vmscope_event_desc *d, enum role r,
		     uint32_t vm)
{
	if (!d)
		return;
	w->roles[d - w->ev->desc].role = (uint8_t)r;
	w->roles[d - w->ev->desc].vm = vm;
}

static int find_roles(struct an_walk *w, char *err, size_t errlen)
{
	static const char *const fx[X_N] = { "vcpu_id", "exit_reason", "guest_rip", "isa",
					     "reason_valid" };
	static const char *const fe[1] = { "vcpu_id" };
	const struct vmscope_event_desc *d;
	char name[64];

	w->roles = calloc(w->ev->n ? w->ev->n : 1, sizeof(*w->roles));
	if (!w->roles)
		return -ENOMEM;
	d = mg_role_find(w->ev, "kvm_exit", fx, X_N, w->fx);
	if (!d && !(w->flags & AN_WALK_ANY_TRACE)) {
		snprintf(err, errlen, "the trace has no usable kvm_exit event (with %s, %s, %s, %s, %s)",
			 fx[0], fx[1], fx[2], fx[3], fx[4]);
		return -ENOENT;
	}
	set_role(w, d, R_EXIT, 0);
	d = mg_role_find(w->ev, "kvm_entry", fe, 1, &w->entry_vcpu);
	if (!d && !(w->flags & AN_WALK_ANY_TRACE)) {
		snprintf(err, errlen, "the trace has no usable kvm_entry event (with vcpu_id)");
		return -ENOENT;
	}
	set_role(w, d, R_ENTRY, 0);
	set_role(w, mg_role_find(w->ev, "kvm_userspace_exit", NULL, 0, NULL), R_USER, 0);
	find_switch(w->ev, "sched_switch", &w->host_sw, &d);
	set_role(w, d, R_HSWITCH, 0);
	if (d)
		w->roles[d - w->ev->desc].sw = &w->host_sw;
	for (uint32_t v = 0; v < w->n_vms; v++) {
		static const char *const fw[1] = { "pid" };
		const char *wake[2] = { "sched_wakeup", "sched_waking" };
		struct mg_field pid0;

		snprintf(name, sizeof(name), "vm%u:sched_switch", v);
		find_switch(w->ev, name, &w->vm[v].sw, &d);
		set_role(w, d, R_GSWITCH, v);
		w->vm[v].guest = d != NULL;
		if (d)
			w->roles[d - w->ev->desc].sw = &w->vm[v].sw;
		for (int k = 0; k < 2; k++) {
			struct mg_field pid;

			snprintf(name, sizeof(name), "vm%u:%s", v, wake[k]);
			d = mg_role_find(w->ev, name, fw, 1, &pid);
			set_role(w, d, R_GWAKE, v);
			if (d) {
				struct role_of *r = &w->roles[d - w->ev->desc];

				r->wake_pid = pid;
				r->has_wake_cpu = mg_field_find(d, "target_cpu", &r->wake_cpu);
			}
		}
		snprintf(name, sizeof(name), "vm%u:cpu_task", v);
		d = mg_role_find(w->ev, name, fw, 1, &pid0);
		set_role(w, d, R_GTASK, v);
		w->vm[v].has_cpu_task = d != NULL;
		/* the session's vCPUs, before any record */
		for (uint32_t c = 0; d && c < w->vm[v].cap; c++)
			w->vm[v].v[c].task = w->vm[v].v[c].exit_task = AN_TASK_BEFORE;
		if (d) {
			struct role_of *r = &w->roles[d - w->ev->desc];

			r->task_pid = pid0;
			r->has_task_comm = mg_field_find(d, "comm", &r->task_comm);
		}
		snprintf(name, sizeof(name), "vm%u:sync_guest", v);
		d = mg_role_find(w->ev, name, NULL, 0, NULL);
		set_role(w, d, R_GSYNC, v);
		if (d) {
			struct role_of *r = &w->roles[d - w->ev->desc];

			/* absent from traces of guest modules before ABI 0.4 */
			r->has_steal = mg_field_find(d, "steal_ns", &r->steal);
		}
	}
	return 0;
}

static int load_session(struct an_walk *w, const Vmscope__Trace__SessionMetadata *s)
{
	size_t nth = 0;

	w->sess = s;
	for (uint32_t v = 0; s && v < s->n_vms; v++)
		w->n.clock_spans += s->vms[v]->n_clock_unreliable;
	w->n_vms = s ? (uint32_t)s->n_vms : 0;
	w->vm = calloc(w->n_vms ? w->n_vms : 1, sizeof(*w->vm));
	if (!w->vm)
		return -ENOMEM;
	for (uint32_t v = 0; v < w->n_vms; v++) {
		snprintf(w->vm[v].name, sizeof(w->vm[v].name), "%s",
			 s->vms[v]->name && s->vms[v]->name[0] ? s->vms[v]->name : "?");
		nth += s->vms[v]->n_vcpus;
	}
	w->th = calloc(nth ? nth : 1, sizeof(*w->th));
	if (!w->th)
		return -ENOMEM;
	for (uint32_t v = 0; v < w->n_vms; v++)
		for (size_t i = 0; i < s->vms[v]->n_vcpus; i++) {
			const Vmscope__Trace__VcpuThread *t = s->vms[v]->vcpus[i];

			if (!t)
				continue;
			w->th[w->nth].tid = t->tid;
			w->th[w->nth].vm = v;
			w->th[w->nth].vcpu = t->vcpu;
			w->nth++;
		}
	qsort(w->th, w->nth, sizeof(*w->th), an_walk_cmp_thread);
	return 0;
}

int an_walk_open(struct an_walk **out, const char *path, unsigned int flags,
		 char *err, size_t errlen)
{
	struct an_walk *w = calloc(1, sizeof(*w));
	const Vmscope__Trace__SessionMetadata *s;
	int e;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->task = calloc(AN_MAX_TASKS, sizeof(*w->task));
	if (!w->task) {
		free(w);
		return -ENOMEM;
	}
	w->flags = flags;
	e = mr_open(&w->mr, path, flags & ~AN_WALK_ANY_TRACE, err, errlen);
	if (e)
		goto fail;
	s = vr_trace_session(mr_trace(w->mr));
	w->ev = vr_trace_events(mr_trace(w->mr), VMSCOPE__TRACE__SIDE__SIDE_HOST, 0);
	if (!w->ev || (!s && !(flags & AN_WALK_ANY_TRACE))) {
		const char *why = vr_trace_problem(mr_trace(w->mr));

		snprintf(err, errlen, "%s: no usable session metadata%s%s", path,
			 why ? ": " : "", why ? why : "");
		e = -EINVAL;
		goto fail;
	}
	w->clock = s ? s->host_clock : NULL;
	e = load_session(w, s);
	if (!e)
		e = find_roles(w, err, errlen);
	if (e) {
		if (e == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		goto fail;
	}
	*out = w;
	return 0;
fail:
	an_walk_close(w);
	return e;
}

void an_walk_close(struct an_walk *w)
{
	if (!w)
		return;
	mr_close(w->mr);
	for (uint32_t v = 0; v < w->n_vms && w->vm; v++)
		free(w->vm[v].v);
	free(w->vm);
	free(w->th);
	free(w->hc);
	free(w->roles);
	free(w->task);
	free(w);
}

