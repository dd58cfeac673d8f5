// SPDX-License-Identifier: GPL-2.0
/* Triggers: see trigger.h. */
#include <stdio.h>
#include <string.h>

#include "trigger.h"

/* A trigger of @kind on @vcpu over [@start, @end), crossing @threshold:
 * what both kinds say alike; the caller adds its texts. */
static struct ol_trig *trig(struct ol_trig *t, uint8_t kind, uint32_t vcpu, uint64_t start,
			    uint64_t end, uint64_t threshold)
{
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->vcpu = vcpu;
	t->start_ns = start;
	t->dur_ns = end - start;
	t->threshold_ns = threshold;
	return t;
}

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
		struct ol_trig *t = trig(&out[n++], OL_TG_STALL, st->vcpu, st->start, st->end,
					 c->stall_ns);

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
		struct ol_trig *t = trig(&out[n++], OL_TG_EXIT, e->vcpu, e->start, e->end,
					 c->exit_ns);

		snprintf(t->what, sizeof(t->what), "%s", an_walk_reason_name(r->w, e->reason));
		an_walk_task_label(r->w, e->task, t->task, sizeof(t->task));
		snprintf(t->host_task, sizeof(t->host_task), "vCPU thread/%d", (int)e->tid);
	}
	return n;
}
