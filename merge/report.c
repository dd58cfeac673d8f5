// SPDX-License-Identifier: GPL-2.0
/* The merge's text report (merge.h). */
#include <inttypes.h>
#include <stdio.h>

#include "merge.h"

static const char *verdict(enum vmscope_sync_verdict v)
{
	switch (v) {
	case VMSCOPE_SYNC_ACCURATE: return "accurate";
	case VMSCOPE_SYNC_APPROXIMATE: return "approximate";
	case VMSCOPE_SYNC_FAILED: return "FAILED";
	default: return "empty";
	}
}

static void report_tsc(FILE *f, const struct mg_tsc_vm *k)
{
	fprintf(f, "  tsc cross-check: ");
	if (!k->checked) {
		fprintf(f, "not available (%" PRIu64 " exchanges without TSC readings, %"
			PRIu64 " without a known TSC offset, %" PRIu64 " with the offset "
			"rewritten during the exchange)\n",
			k->no_readings, k->no_offset, k->off_changed);
		return;
	}
	fprintf(f, "%" PRIu64 " exchanges, TSC-derived t1 inside the hull bound %" PRIu64
		", inside it widened by the TSC reads (at most %" PRIu64 " ns) %" PRIu64
		" (farthest outside %" PRIu64 " ns); |TSC - hull estimate| mean %.1f ns, "
		"max %" PRIu64 " ns; not checked: %" PRIu64 " without readings, %" PRIu64
		" without offset, %" PRIu64 " offset rewritten\n",
		k->checked, k->within, k->max_slack_ns, k->within_slack, k->max_outside_ns,
		(double)k->sum_abs_diff_ns / (double)k->checked, k->max_abs_diff_ns,
		k->no_readings, k->no_offset, k->off_changed);
}


static void span_time(FILE *f, uint64_t t, const char *none)
{
	if (t == 0 || t == UINT64_MAX)
		fprintf(f, "%s", none);
	else
		fprintf(f, "%" PRIu64, t);
}

/* README.md, "Clock-unreliable spans". */
static void report_clock(FILE *f, const struct mg_result *r, uint32_t v, uint32_t max)
{
	uint64_t n = 0, ev = 0, listed = 0;

	for (size_t i = 0; i < r->spans.n; i++)
		if (r->spans.s[i].vm == v) {
			n++;
			ev += r->spans.s[i].events;
		}
	fprintf(f, "  guest clock: %" PRIu64 " exchanges with t4 - t1 < t3 - t2 (not given to "
		"the hull)", r->mt.vm[v].short_rtt);
	if (!n) {
		fprintf(f, "; no clock-unreliable span\n");
		return;
	}
	fprintf(f, "; CLOCK UNRELIABLE in %" PRIu64 " spans holding %" PRIu64 " guest events: "
		"the bound above is not claimed for them\n", n, ev);
	for (size_t i = 0; i < r->spans.n; i++) {
		const struct mg_span *sp = &r->spans.s[i];

		if (sp->vm != v)
			continue;
		if (listed++ == max) {
			fprintf(f, "    ... %" PRIu64 " more (all in MERGED/report.txt and the "
				"merged trace's metadata)\n", n - max);
			break;
		}
		fprintf(f, "    cpu %u host ", sp->cpu);
		span_time(f, sp->h_start, "start");
		fprintf(f, "..");
		span_time(f, sp->h_end, "end");
		if (sp->h_start && sp->h_end != UINT64_MAX)
			fprintf(f, " (%.1f us)", (double)(sp->h_end - sp->h_start) * 1e-3);
		fprintf(f, ", %" PRIu64 " events:", sp->events);
		if (sp->seen & MG_SEEN_SHORT)
			fprintf(f, " guest interval shorter than the host's by up to %" PRIu64 " ns;",
				sp->worst_short_ns);
		if (sp->seen & MG_SEEN_REPEAT)
			fprintf(f, " up to %" PRIu64 " consecutive records with one timestamp;",
				sp->longest_run);
		if (sp->seen & MG_SEEN_OFFLINE)
			fprintf(f, " exchange contradicting the fitted line;");
		if (sp->seen & MG_SEEN_STEP)
			fprintf(f, " clock relation changed;");
		fprintf(f, "\n");
	}
}

static void report_vm(FILE *f, const struct mg_result *r, uint32_t v, const char *name,
		      uint32_t spans)
{
	const struct mt_vm *m = &r->mt.vm[v];
	uint64_t dropped = 0;

	for (int k = 0; k < VMSCOPE_SYNC_DROP_NREASONS; k++)
		dropped += m->st.dropped[k];
	fprintf(f, "vm%u %s: %" PRIu64 " host exchanges, %" PRIu64 " with a guest record; "
		"samples used %" PRIu64 ", dropped %" PRIu64, v, name, r->vm_exchanges[v],
		r->vm_paired[v], m->st.accepted, dropped);
	for (int k = 0; k < VMSCOPE_SYNC_DROP_NREASONS; k++)
		if (m->st.dropped[k])
			fprintf(f, " %s=%" PRIu64, vmscope_sync_drop_name(k), m->st.dropped[k]);
	fprintf(f, "\n  segments %zu (breaks: tsc offset %" PRIu64 ", new guest session %" PRIu64
		", detected %" PRIu64 ", span %" PRIu64 "; discarded %" PRIu64 ")\n",
		m->nseg, m->breaks_tsc, m->breaks_token, m->st.breaks_detected,
		m->st.breaks_span, m->st.discarded_segments);
	for (size_t i = 0; i < m->nseg; i++) {
		const struct vmscope_sync_segment *s = &m->seg[i];
		struct vmscope_sync_summary sm;

		vmscope_sync_segment_summary(s, 8, &sm);
		fprintf(f, "  segment %" PRIu64 ": %s, host %" PRIu64 "..%" PRIu64
			" (%.3f s), %" PRIu64 " samples, bound ",
			s->id, verdict(sm.verdict), s->h_first, s->h_last,
			(double)(s->h_last - s->h_first) * 1e-9, sm.n_samples);
		if (sm.width_ns == UINT64_MAX)
			fprintf(f, "unbounded");
		else
			fprintf(f, "%" PRIu64 " ns (+-%.1f ns)", sm.width_ns,
				(double)sm.width_ns / 2);
		if (sm.verdict != VMSCOPE_SYNC_FAILED)
			fprintf(f, ", drift %+.3f ppm [%+.3f, %+.3f], offset at guest %" PRIu64
				" -> host %" PRIu64 " %+.1f ns, min round trip %" PRId64 " ns",
				(double)((sm.a_est - 1) * 1e6L), (double)((sm.a_min - 1) * 1e6L),
				(double)((sm.a_max - 1) * 1e6L), s->g0, s->h0,
				(double)sm.b0_est,
				s->min_rtt == INT64_MAX ? (int64_t)-1 : s->min_rtt);
		if (s->evictions)
			fprintf(f, ", %" PRIu64 " hull evictions", s->evictions);
		fprintf(f, "\n");
	}
	report_tsc(f, &r->tsc[v]);
	report_clock(f, r, v, spans);
}

void mg_report(FILE *f, const struct vr_trace *t, const struct mg_result *r, uint32_t spans)
{
	const Vmscope__Trace__SessionMetadata *s = vr_trace_session(t);
	const struct mp_stats *p = &r->pair->st;

	fprintf(f, "sync records: %" PRIu64 " t2, %" PRIu64 " t3, %" PRIu64 " guest read; "
		"host pairs %" PRIu64 " (t2 alone %" PRIu64 ", t3 alone %" PRIu64
		", inconsistent %" PRIu64 ", threads table full %" PRIu64 "); VM by thread %"
		PRIu64 ", by token %" PRIu64 ", none %" PRIu64 "; with guest record %" PRIu64
		", host only %" PRIu64 ", guest only %" PRIu64 ", guest duplicate %" PRIu64
		", guest record on another CPU's stream %" PRIu64,
		p->t2, p->t3, p->guest, p->host_pairs, p->t2_alone, p->t3_alone,
		p->host_inconsistent, p->threads_full, p->by_thread, p->by_token, p->no_vm,
		p->paired, p->host_only, p->guest_only, p->guest_dup, p->guest_wrong_cpu);
	fprintf(f, "\ntsc offset writes: %" PRIu64 " (%" PRIu64 " on a known vCPU thread, the "
		"others count for every VM); %" PRIu64 " ended segments, the others came "
		"within %.1f s of the previous one (an unstable host TSC?) or were not asked to\n",
		r->n.tsc_writes, r->n.tsc_by_thread, r->n.tsc_breaks,
		(double)MG_TSC_QUIET_NS * 1e-9);
	for (uint32_t v = 0; v < r->n_vms; v++)
		report_vm(f, r, v, s && s->vms[v]->name ? s->vms[v]->name : "?", spans);
	if (!r->merged)
		return;
	fprintf(f, "merged: %" PRIu64 " events (%" PRIu64 " host, %" PRIu64 " guest) from %"
		PRIu64 " streams in %" PRIu64 " chunks; %" PRIu64 " guest events without a "
		"transform (left out); %" PRIu64 " clamped to keep time order; %" PRIu64
		" losses, %" PRIu64 " gaps, %" PRIu64 " unusable items\n",
		r->n.out_events, r->n.host_events, r->n.guest_events, r->n.streams,
		r->n.chunks, r->n.unconverted, r->n.clamped, r->n.losses, r->n.gaps, r->n.bad);
	fprintf(f, "causality: %" PRIu64 " accepted exchanges, %" PRIu64 " violations "
		"(t1 after t2: %" PRIu64 ", t4 before t3: %" PRIu64 "); events: %" PRIu64
		" before t1 checked, %" PRIu64 " land after t2; %" PRIu64 " after t4 checked, %"
		PRIu64 " land before t3; guest sync records without an accepted exchange: %"
		PRIu64 "\n",
		r->c.exchanges, r->c.viol_t1 + r->c.viol_t4, r->c.viol_t1, r->c.viol_t4,
		r->c.ev_before, r->c.viol_before, r->c.ev_after, r->c.viol_after,
		r->c.not_accepted);
	fprintf(f, "clock-unreliable spans: %zu, %" PRIu64 " guest events in them (%" PRIu64
		" exchanges with a short guest interval, %" PRIu64 " off the fitted line, %"
		PRIu64 " runs of records with one timestamp, %" PRIu64 " records); against "
		"the hypercalls of those exchanges and of %" PRIu64 " accepted ones ending "
		"or inside a span %" PRIu64 " events checked, %" PRIu64
		" on the wrong side (worst %" PRIu64 " ns), none counted as violations: "
		"no bound is claimed there\n",
		r->spans.n, r->c.ev_unreliable, r->spans.dropped_short, r->spans.dropped_offline,
		r->spans.runs, r->spans.run_records, r->c.span_exchanges, r->c.unrel_checked,
		r->c.unrel_viol, r->c.unrel_worst_ns);
	fprintf(f, "causality %s: %" PRIu64 " violations\n",
		mg_violations(r) ? "VIOLATED" : "kept", mg_violations(r));
}
