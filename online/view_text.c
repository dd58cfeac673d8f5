// SPDX-License-Identifier: GPL-2.0
/* The pipeline's intervals as plain text (`top --batch`): see view.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "dur.h"
#include "view.h"

static double per_s(uint64_t n, double secs)
{
	return secs > 0 ? (double)n / secs : 0;
}

static void vcpus(FILE *f, const struct an_walk *w, const struct ol_snap *t, uint32_t vm,
		  double secs)
{
	char b[7][32];

	fprintf(f, "  %-5s %8s %10s %10s %10s %10s %10s %10s %10s %12s\n", "vcpu", "thread",
		"exits/s", "in guest", "kernel", "userspace", "halted", "preempted", "blocked",
		"guest steal");
	for (uint32_t c = 0; c < t->n_vcpus[vm]; c++) {
		const struct ol_vcpu *x = &t->t[vm][c];

		fprintf(f, "  %-5u %8d %10.0f %10s %10s %10s %10s %10s %10s %12s\n", c,
			an_walk_vcpu_tid(w, vm, c), per_s(x->t.exits, secs),
			an_dur(x->t.guest_ns, b[0], sizeof(b[0])),
			an_dur(x->t.kernel_ns, b[1], sizeof(b[1])),
			an_dur(x->t.user_ns, b[2], sizeof(b[2])),
			an_dur(x->t.halted_ns, b[3], sizeof(b[3])),
			an_dur(x->preempted_ns, b[4], sizeof(b[4])),
			an_dur(x->blocked_ns, b[5], sizeof(b[5])),
			!an_walk_vm_has_guest(w, vm) ? "no agent" : !x->steal_readings ? "n/a" :
			an_dur(x->steal_ns, b[6], sizeof(b[6])));
	}
}

static void reasons(FILE *f, const struct an_walk *w, const struct ol_window *iv, uint32_t vm,
		    double secs)
{
	char b[4][32];

	fprintf(f, "  %-24s %10s %10s %10s %10s %10s\n", "exit reason", "exits/s", "total",
		"p50", "p99", "max");
	for (size_t i = 0; i < iv->by_reason.n; i++) {
		const struct an_group *g = &iv->by_reason.g[i];

		if (g->vm != vm)
			continue;
		fprintf(f, "  %-24s %10.0f %10s %10s %10s %10s\n", an_walk_reason_name(w, g->reason),
			per_s(g->h.count, secs), an_dur(g->h.sum, b[0], sizeof(b[0])),
			an_dur(an_hist_quantile(&g->h, 0.5), b[1], sizeof(b[1])),
			an_dur(an_hist_quantile(&g->h, 0.99), b[2], sizeof(b[2])),
			an_dur(g->h.max, b[3], sizeof(b[3])));
	}
}

static void tasks(FILE *f, const struct an_walk *w, const struct ol_window *iv, uint32_t vm,
		  size_t n)
{
	char b[2][32], t[64];

	if (!an_walk_vm_has_guest(w, vm)) {
		fprintf(f, "  guest tasks: no agent (the trace has no guest side of this VM)\n");
		return;
	}
	fprintf(f, "  %-24s %10s %10s %10s\n", "guest task", "exits", "exit time", "p99");
	for (size_t i = 0, k = 0; i < iv->by_task.n && k < n; i++) {
		const struct an_group *g = &iv->by_task.g[i];

		if (g->vm != vm)
			continue;
		fprintf(f, "  %-24s %10" PRIu64 " %10s %10s\n", an_walk_task_label(w, g->task, t, sizeof(t)),
			g->h.count, an_dur(g->h.sum, b[0], sizeof(b[0])),
			an_dur(an_hist_quantile(&g->h, 0.99), b[1], sizeof(b[1])));
		k++;
	}
}

int ol_view_text(void *ctx, const struct ol_report *r)
{
	const struct ol_view *v = ctx;
	const struct ol_window *iv = r->iv;
	const struct an_counts *c = &iv->t.counts;
	double secs = (double)(iv->end - iv->start) / 1e9;
	char b[32];

	fprintf(v->out, "interval %" PRIu64 "%s: host time %" PRIu64 ".%09" PRIu64 " + %s, "
		"%.0f records/s, %.0f exits/s, lost %" PRIu64 " (losses in the trace), "
		"not counted: %" PRIu64 " cut exits, %" PRIu64 " unattributed\n",
		r->index, r->final ? " (last)" : "", iv->start / 1000000000, iv->start % 1000000000,
		an_dur(iv->end - iv->start, b, sizeof(b)), per_s(c->records, secs),
		per_s(c->exits, secs), c->losses, c->open_dropped, c->unattributed);
	for (uint32_t vm = 0; vm < iv->t.n_vms; vm++) {
		uint64_t bound = 0;
		enum ol_sync_state st = ol_sync_of(r, vm, &bound);

		fprintf(v->out, "VM %u %s%s, sync bound: %s\n", vm, an_walk_vm_name(r->w, vm),
			an_walk_vm_has_guest(r->w, vm) ? "" : " (no agent)",
			st == OL_SYNC_BOUNDED ? an_dur(bound, b, sizeof(b)) : ol_sync_names[st]);
		vcpus(v->out, r->w, &iv->t, vm, secs);
		reasons(v->out, r->w, iv, vm, secs);
		tasks(v->out, r->w, iv, vm, v->tasks);
	}
	if (fprintf(v->out, "\n") < 0 || fflush(v->out))
		return -EIO;
	return 0;
}
