// SPDX-License-Identifier: GPL-2.0
/* Triggers: see trigger.h. */
#include <stdio.h>
#include <string.h>

#include "trigger.h"

unsigned int ol_trig_scan(const struct ol_report *r, uint32_t vm, const struct ol_trig_cfg *c,
			  struct ol_trig out[2])
{
	const struct ol_window *iv = r->iv;
	unsigned int n = 0;

	if (vm >= OL_WIN_VMS)
		return 0;
	if (c->stall_ns && (iv->has_worst & 1u << vm) &&
	    iv->worst[vm].end - iv->worst[vm].start > c->stall_ns) {
		const struct an_stall *st = &iv->worst[vm];
		struct ol_trig *t = &out[n++];

		memset(t, 0, sizeof(*t));
		t->kind = OL_TG_STALL;
		t->vcpu = st->vcpu;
		t->start_ns = st->start;
		t->dur_ns = st->end - st->start;
		t->threshold_ns = c->stall_ns;
		snprintf(t->what, sizeof(t->what), "running, %s",
			 st->preempted ? "preempted" : "blocked in host");
		an_walk_task_label(r->w, st->task, t->task, sizeof(t->task));
		if (st->host_task == AN_TASK_UNKNOWN)
			snprintf(t->host_task, sizeof(t->host_task), "(blocked in host)");
		else
			an_walk_task_label(r->w, st->host_task, t->host_task, sizeof(t->host_task));
	}
	if (c->exit_ns && (iv->has_busy & 1u << vm) &&
	    iv->busy[vm].end - iv->busy[vm].start > c->exit_ns) {
		const struct an_exit *e = &iv->busy[vm];
		struct ol_trig *t = &out[n++];

		memset(t, 0, sizeof(*t));
		t->kind = OL_TG_EXIT;
		t->vcpu = e->vcpu;
		t->start_ns = e->start;
		t->dur_ns = e->end - e->start;
		t->threshold_ns = c->exit_ns;
		snprintf(t->what, sizeof(t->what), "%s", an_walk_reason_name(r->w, e->reason));
		an_walk_task_label(r->w, e->task, t->task, sizeof(t->task));
		snprintf(t->host_task, sizeof(t->host_task), "vCPU thread/%d", (int)e->tid);
	}
	return n;
}
