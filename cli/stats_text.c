/* `vmscope stats`'s text lines (stats_view.h). */
#include <stdio.h>

#include "exit_layout.h"
#include "stats_view.h"

const char *stats_layout_name(unsigned int layout)
{
	return layout == VMSCOPE_EXIT_LAYOUT_MATCH ? "btf-match" :
	       layout == VMSCOPE_EXIT_LAYOUT_MISMATCH ? "btf-mismatch" : "no-btf";
}

static void print_exit_mode(const struct vmscope_exit_mode *m)
{
	const char *refused = exit_refused_name(m->refused);

	printf("exit_mode %s compared %llu mismatches %llu reasons %u calibrations %llu "
	       "fallbacks %llu direct_exits %llu layout %s refused %s%s%s%s\n",
	       exit_mode_name(m->mode), (unsigned long long)m->compared,
	       (unsigned long long)m->mismatches, m->reasons,
	       (unsigned long long)m->calibrations, (unsigned long long)m->fallbacks,
	       (unsigned long long)m->direct_exits, stats_layout_name(m->layout),
	       refused ? refused : "no", m->why[0] ? " (" : "", m->why, m->why[0] ? ")" : "");
}

static void print_rb(const struct stats_rb *rb)
{
	if (!rb->active) {
		printf("ringbuf: no session recording\n");
		return;
	}
	printf("ringbuf: recording (%u session%s), lost %llu (full %llu too_big %llu "
	       "overwritten %llu) subbufs_delivered %llu\n", rb->active,
	       rb->active == 1 ? "" : "s", rb->full + rb->too_big + rb->overwritten,
	       rb->full, rb->too_big, rb->overwritten, rb->delivered);
}

static void print_head(const struct stats_view *v)
{
	unsigned int s = v->first.state;

	printf("state:%s%s%s%s\n", s & VMSCOPE_STATE_ENABLED ? " enabled" : " disabled",
	       s & VMSCOPE_STATE_KVM_ATTACHED ? " kvm-attached" : " kvm-not-attached",
	       s & VMSCOPE_STATE_SCHED_ATTACHED ? " sched-attached" : "",
	       s & VMSCOPE_STATE_EXIT_REASON ? " exit-reasons" : "");
	printf("kvm_attach_count %llu kvm_detach_count %llu sync_collisions %llu "
	       "exit_reason_missed %llu\n",
	       (unsigned long long)v->first.attach_count,
	       (unsigned long long)v->first.detach_count,
	       (unsigned long long)v->first.sync_collisions, v->exit_reason_missed);
	for (int k = 0; k < 2; k++)
		if (v->timing_n[k])
			printf("%s_timing n %llu gap_ns_avg %.1f probe_ns_avg %.1f\n",
			       k ? "entry" : "exit", v->timing_n[k],
			       (double)v->timing_gap_ns[k] / v->timing_n[k],
			       (double)v->timing_probe_ns[k] / v->timing_n[k]);
}

void stats_view_print(const struct stats_view *v)
{
	for (size_t i = 0; i < v->n_per_cpu; i++) {
		const struct stats_cpu_count *c = &v->per_cpu[i];

		printf("cpu %-3u %-22s seen %llu matched %llu\n", c->cpu,
		       v->descs[c->event].name, c->seen, c->matched);
	}
	print_head(v);
	if (v->have_exit_mode)
		print_exit_mode(&v->exit_mode);
	print_rb(&v->rb);
	printf("%-22s %-8s %14s %14s\n", "event", "attached", "seen", "matched");
	for (unsigned int e = 0; e < v->nev; e++)
		printf("%-22s %-8s %14llu %14llu\n", v->descs[e].name,
		       v->first.attached >> e & 1 ? "yes" : "no", v->seen[e], v->matched[e]);
	for (size_t i = 0; i < v->n_last; i++) {
		const struct stats_last *l = &v->last[i];

		printf("last %s cpu %u ts %llu: %s\n", v->descs[l->event].name, l->cpu, l->ts,
		       l->text);
	}
}
