// SPDX-License-Identifier: GPL-2.0
/*
 * `vmscope merge` end to end on synthetic traces written through tracefmt
 * (tests/synth.c: two VMs with random offsets and +-200 ppm drift,
 * asymmetric exponential delays, a guest clock step with a
 * kvm_write_tsc_offset in VM 0, forged exchanges of four kinds):
 *
 * - pairing: every honest exchange paired and accepted, every forged one
 *   dropped for its own reason, nothing else dropped; VM 0 has a segment
 *   per clock piece, VM 1 one; every segment accurate;
 * - the merged trace: every input event once, in non-decreasing host
 *   time, decodable through the merged table (guest events named
 *   "vmN:..."), with its origin, CPU and original timestamp; guest events
 *   within the sync span lie within the segment's bound of the true host
 *   time (simulated clock); threads follow sched_switch;
 * - causality: zero violations over every accepted exchange and the
 *   events around it;
 * - the same without the vCPU thread map (VMs found by token);
 * - the TSC cross-check: with TSC readings in the sync records and each
 *   vCPU's offset written at the start (or, with no write at all, in
 *   the session's VmInfo.tsc as the recorder reads it), every accepted exchange is
 *   checked and its TSC-derived t1 lies inside the hull bound; with the
 *   guests' readings 10 000 ticks (4 us) off the offset, none does.
 *
 * `test_merge --write DIR [SECONDS]` writes the default synthetic trace
 * (used by cli/tests/merge-test.sh), SECONDS long instead of 0.4 s;
 * `--write-losses` the same with a ring-buffer loss and a missing
 * sub-buffer in every stream (synth.losses; cli/tests/export-raw-test.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../tracefmt/tests/util.h"
#include "merge.h"
#include "out.h"
#include "vmscope_events.h"
#include "synth.h"

static void check_sync(const struct synth *s, const struct mg_result *r)
{
	uint64_t accepted = 0, dropped[VMSCOPE_SYNC_DROP_NREASONS] = { 0 }, total = 0;

	for (uint32_t v = 0; v < r->n_vms; v++) {
		const struct mt_vm *m = &r->mt.vm[v];

		accepted += m->st.accepted;
		for (int k = 0; k < VMSCOPE_SYNC_DROP_NREASONS; k++) {
			dropped[k] += m->st.dropped[k];
			total += m->st.dropped[k];
		}
		/* a tsc offset write on an unknown thread breaks every VM */
		CHECK_EQ(m->nseg, s->step && (v == 0 || (r->n_vms > 1 &&
			 (!s->host_switch || s->no_tid_map))) ? 2 : 1);
		for (size_t i = 0; i < m->nseg; i++) {
			struct vmscope_sync_summary sm;

			vmscope_sync_segment_summary(&m->seg[i], 8, &sm);
			CHECK_EQ(sm.verdict, VMSCOPE_SYNC_ACCURATE);
		}
	}
	CHECK_EQ(accepted, s->n_exchanges);
	/* without a thread map a wrong token finds no VM (pairing's count) */
	CHECK_EQ(dropped[VMSCOPE_SYNC_DROP_UNPAIRED], s->no_tid_map ? 0 : s->n_forged[SF_TOKEN]);
	CHECK_EQ(r->pair->st.no_vm, s->no_tid_map ? s->n_forged[SF_TOKEN] : 0);
	CHECK_EQ(dropped[VMSCOPE_SYNC_DROP_MISMATCH], s->n_forged[SF_MISMATCH]);
	CHECK_EQ(dropped[VMSCOPE_SYNC_DROP_REPLAY], s->n_forged[SF_REPLAY]);
	CHECK_EQ(dropped[VMSCOPE_SYNC_DROP_OUTLIER], s->n_forged[SF_WILD]);
	CHECK_EQ(total + r->pair->st.no_vm, s->n_forged[SF_TOKEN] + s->n_forged[SF_MISMATCH] +
		 s->n_forged[SF_REPLAY] + s->n_forged[SF_WILD]);
	CHECK(s->n_forged[SF_WILD] > 0 && s->n_forged[SF_TOKEN] > 0);
	if (s->no_tid_map) {
		CHECK_EQ(r->pair->st.by_thread, 0);
		/* token-forged exchanges find no VM: their token is nobody's */
		CHECK_EQ(r->pair->st.by_token + r->pair->st.no_vm, r->pair->st.host_pairs);
	} else {
		CHECK_EQ(r->pair->st.by_token, 0);
		CHECK_EQ(r->pair->st.by_thread, r->pair->st.host_pairs);
	}
}

/* Is host time h inside a segment's sample span of VM v? Then its bound. */
static const struct vmscope_sync_segment *seg_at(const struct mg_result *r, uint32_t v,
						 uint64_t h)
{
	for (size_t i = 0; i < r->mt.vm[v].nseg; i++) {
		const struct vmscope_sync_segment *g = &r->mt.vm[v].seg[i];

		if (h >= g->h_first && h <= g->h_last)
			return g;
	}
	return NULL;
}

/* Is a guest event of VM v, CPU cpu merged at h in a clock-unreliable span? */
static bool in_span(const struct mg_result *r, uint32_t v, uint32_t cpu, uint64_t h)
{
	for (size_t i = 0; i < r->spans.n; i++) {
		const struct mg_span *p = &r->spans.s[i];

		if (p->vm == v && p->cpu == cpu &&
		    h >= p->h_start && h <= p->h_end)
			return true;
	}
	return false;
}

/* Guest events in flagged spans (by merged time), and those of them the
 * bound of their segment would have missed. */
static uint64_t flagged_events, flagged_outside;

/* The merged metadata's spans are the merge's. */
static void check_meta_spans(const struct mg_result *r, struct mr *m)
{
	const Vmscope__Trace__SessionMetadata *ss = vr_trace_session(mr_trace(m));
	size_t k = 0;

	for (size_t v = 0; ss && v < ss->n_vms; v++)
		for (size_t i = 0; i < ss->vms[v]->n_clock_unreliable; i++, k++) {
			const Vmscope__Trace__ClockSpan *c = ss->vms[v]->clock_unreliable[i];

			if (k >= r->spans.n) {
				CHECK(k < r->spans.n);
				return;
			}
			CHECK_EQ(r->spans.s[k].vm, v);
			CHECK_EQ(c->cpu, r->spans.s[k].cpu);
			CHECK_EQ(c->host_start_ns, r->spans.s[k].h_start);
			CHECK_EQ(c->host_end_ns, r->spans.s[k].h_end);
			CHECK_EQ(c->seen, r->spans.s[k].seen);
			CHECK_EQ(c->guest_events, r->spans.s[k].events);
		}
	CHECK_EQ(k, r->spans.n);
}

static void check_merged(const struct synth *s, const struct mg_result *r, const char *out)
{
	struct mr *m;
	struct vr_item it;
	struct mo_origin o;
	bool has;
	char err[256];
	uint64_t n = 0, prev = 0, guest = 0, inside = 0, tid_known = 0, host_vcpu = 0;
	uint64_t t2_by_switch = 0;
	long double worst = 0;

	CHECK_EQ(mr_open(&m, out, 0, err, sizeof(err)), 0);
	if (!m) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	CHECK(vr_trace_problem(mr_trace(m)) == NULL);
	check_meta_spans(r, m);
	flagged_events = flagged_outside = 0;
	while (mr_next(m, &it, &o, &has) == 1) {
		if (it.kind != VR_EVENT) {
			CHECK(it.kind == VR_LOSS);
			continue;
		}
		n++;
		CHECK(has);
		CHECK(it.ts >= prev);
		prev = it.ts;
		if (!has)
			continue;
		if (o.origin == 0) {
			CHECK_EQ(it.ts, o.orig_ts);
			/* a sync record's thread is the one sched_switch put on
			 * its CPU just before, also from the other channel */
			if (s->host_switch && !s->no_tid_map &&
			    !strcmp(it.desc->name, "sync_t2")) {
				struct vmscope_ev_sync_t2 t2;

				memcpy(&t2, it.payload, sizeof(t2));
				CHECK_EQ(o.tid, t2.tid);
				t2_by_switch++;
			}
			/* after a switch to a vCPU thread: its vCPU */
			if (o.tid > 1000 && !s->no_tid_map) {
				CHECK_EQ(o.vcpu, (uint32_t)(o.tid % 1000 - 1));
				host_vcpu++;
			}
			CHECK(strncmp(it.desc->name, "vm", 2));
			CHECK(o.cpu < s->host_cpus);
			continue;
		}
		guest++;
		CHECK(o.origin <= s->n_vms);
		CHECK(o.cpu < s->vcpus && o.vcpu == o.cpu);
		char pre[16];
		snprintf(pre, sizeof(pre), "vm%u:", o.origin - 1);
		CHECK(!strncmp(it.desc->name, pre, strlen(pre)));
		if (o.tid >= 0) {
			CHECK(o.tid >= 100 && o.tid <= 103);
			tid_known++;
		}
		const struct vmscope_sync_segment *g = seg_at(r, o.origin - 1, it.ts);
		if (in_span(r, o.origin - 1, o.cpu, it.ts)) {
			/* no bound claimed: count those it would miss */
			long double truth = synth_g2h(s, o.origin - 1, o.orig_ts);
			uint64_t lo, hi;

			flagged_events++;
			if (g && !vmscope_sync_segment_bound(g, o.orig_ts, &lo, &hi) &&
			    ((long double)lo > truth + 1 || truth > (long double)hi + 1))
				flagged_outside++;
		} else if (g) {
			uint64_t lo, hi;
			long double truth = synth_g2h(s, o.origin - 1, o.orig_ts), e;

			CHECK_EQ(vmscope_sync_segment_bound(g, o.orig_ts, &lo, &hi), 0);
			e = fabsl((long double)it.ts - truth);
			CHECK(e <= (long double)(hi - lo) + 1);
			CHECK((long double)lo <= truth + 1 && truth <= (long double)hi + 1);
			if (e > worst)
				worst = e;
			inside++;
		}
	}
	CHECK_EQ(n, s->n_host_events + s->n_guest_events);
	CHECK_EQ(guest, s->n_guest_events);
	CHECK(inside + flagged_events > guest * 9 / 10);
	/* by merged time as analysis/ counts them, by stream in the merge:
	 * the span also covers where the events of its two bracketing
	 * sync records' hypercalls were put, which the generator writes
	 * (a real vCPU records nothing inside its hypercall) */
	CHECK(flagged_events >= r->c.ev_unreliable);
	CHECK(tid_known > guest * 9 / 10);
	CHECK(!s->host_switch || s->no_tid_map || host_vcpu > 0);
	CHECK(!s->host_switch || s->no_tid_map || t2_by_switch > 0);
	CHECK_EQ(mr_stats(m)->end.kind, TF_END_CLEAN);
	CHECK(mr_stats(m)->has_index);
	printf("  merged %" PRIu64 " events, %" PRIu64 " guest; %" PRIu64
	       " inside a segment span: worst |converted - true| %.1f ns\n",
	       n, guest, inside, (double)worst);
	mr_close(m);
}

/* Spans of @r that end at an accepted exchange. */
static size_t spans_ended(const struct mg_result *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->spans.n; i++)
		n += r->spans.s[i].after.known;
	return n;
}

static void run(struct synth *s, const char *dir, const char *tag)
{
	char in[512], out[512], err[256];
	struct mg_opts o = { 0 };
	struct mg_result r;
	struct vr_trace *t;

	snprintf(in, sizeof(in), "%s/%s", dir, tag);
	snprintf(out, sizeof(out), "%s/%s.merged", dir, tag);
	CHECK_EQ(synth_write_sync(s, in, &o, &t, &r, err, sizeof(err)), 0);
	if (!t)
		return;
	check_sync(s, &r);
	CHECK_EQ(mg_merge(t, out, &r, err, sizeof(err)), 0);
	mg_report(stdout, t, &r, MG_REPORT_SPANS);
	CHECK_EQ(mg_violations(&r), 0);
	CHECK_EQ(r.c.exchanges, s->n_exchanges);
	/* an accepted exchange ending a span bounds nothing before it */
	CHECK_EQ(r.c.ev_before + r.c.span_exchanges, r.c.exchanges);
	CHECK(r.c.span_exchanges >= spans_ended(&r));
	CHECK(r.c.ev_after > r.c.exchanges);
	CHECK_EQ(r.n.unconverted, 0);
	/* the step's write, and the storm's first (before any exchange) */
	CHECK_EQ(r.n.tsc_breaks, s->step + s->tsc_storm);
	/* only opposite biases on both sides of a change make time go back */
	if (s->skew_ns)
		CHECK(r.n.clamped > 0);
	else
		CHECK_EQ(r.n.clamped, 0);
	CHECK(!s->tsc_storm || r.n.tsc_writes > 1000);
	CHECK_EQ(r.n.bad, 0);
	/* honest clocks: only the lying guest kernel's exchanges (SF_WILD)
	 * flag their intervals; the signalled step moves the clock forward,
	 * which the segment limit follows */
	for (size_t i = 0; i < r.spans.n; i++)
		CHECK_EQ(r.spans.s[i].seen, MG_SEEN_OFFLINE);
	CHECK(r.spans.n <= s->n_forged[SF_WILD]);
	CHECK_EQ(r.spans.dropped_short, 0);
	check_merged(s, &r, out);
	mg_result_free(&r);
	vr_trace_close(t);
}

/* Every span of @r with exactly the evidence @seen. */
static size_t spans_of(const struct mg_result *r, uint32_t vm, uint32_t cpu, uint32_t seen)
{
	size_t n = 0;

	for (size_t i = 0; i < r->spans.n; i++)
		n += r->spans.s[i].vm == vm && r->spans.s[i].cpu == cpu &&
		     (r->spans.s[i].seen & seen) == seen;
	return n;
}

/*
 * Guest clocks that stand still or step (README.md, "Clock-unreliable
 * spans"), no forgeries, no signalled step: @kind 0 a clean trace, 1 VM
 * 0's CPU 0 frozen for 2 ms ahead of the truth (as a global last value
 * set by a CPU whose clock ran ahead returns it), 2 VM 0's clock stepping
 * 700 us forward without a kvm_write_tsc_offset, 3 one exchange of VM 0's
 * CPU 0 with a guest interval 10 ns shorter than the host's, 4 VM 0's
 * clock 100 us ahead at one exchange in two, three times.
 */
static void run_clock(const char *dir, const char *tag, int kind)
{
	char in[512], out[512], err[256], *rep = NULL;
	struct mg_opts o = { 0 };
	struct mg_result r;
	struct vr_trace *t;
	struct synth s;
	size_t replen = 0;
	FILE *f;

	synth_defaults(&s, 31 + (uint64_t)kind);
	s.forge_every = 0;
	s.step = false;
	s.vcpus = 2;
	if (kind == 1) {
		s.freeze_ns = 2000000;
		s.tau_freeze = s.duration_ns / 3 + 123457;
	} else if (kind == 2) {
		s.ustep_ns = 700000;
		s.tau_ustep = s.duration_ns / 2 + 234567;
	} else if (kind == 3) {
		s.short_k = 3;
	} else if (kind == 4) {
		s.ustep_ns = 100000;
		s.flips = 3;
		s.flip_ns = s.period_ns;
		s.tau_ustep = s.duration_ns / 2 + 234567;
	}
	snprintf(in, sizeof(in), "%s/%s", dir, tag);
	snprintf(out, sizeof(out), "%s/%s.merged", dir, tag);
	CHECK_EQ(synth_write_sync(&s, in, &o, &t, &r, err, sizeof(err)), 0);
	if (!t)
		return;
	CHECK_EQ(mg_merge(t, out, &r, err, sizeof(err)), 0);
	f = open_memstream(&rep, &replen);
	mg_report(f, t, &r, MG_REPORT_SPANS);
	fclose(f);
	fputs(rep, stdout);
	CHECK_EQ(mg_violations(&r), 0);
	uint64_t H = s.H0;
	if (kind == 0) {
		CHECK_EQ(r.spans.n, 0);
		CHECK_EQ(r.c.ev_unreliable, 0);
		CHECK_EQ(r.mt.vm[0].short_rtt + r.mt.vm[1].short_rtt, 0);
		CHECK(strstr(rep, "vm0 ") && strstr(rep, "no clock-unreliable span"));
		CHECK(!strstr(rep, "CLOCK UNRELIABLE"));
	} else if (kind == 1) {
		uint64_t a = H + s.tau_freeze, b = a + s.freeze_ns;

		/* one span, on that CPU, covering the freeze, ending at the
		 * exchanges around it (one period each side at most, plus
		 * the exchanges' own jitter) */
		CHECK_EQ(r.spans.n, 1);
		CHECK_EQ(spans_of(&r, 0, 0, MG_SEEN_SHORT | MG_SEEN_REPEAT), 1);
		if (r.spans.n == 1) {
			const struct mg_span *p = &r.spans.s[0];

			CHECK(p->h_start <= a && p->h_end >= b);
			CHECK(p->h_start + 2 * s.period_ns >= a);
			CHECK(p->h_end <= b + 2 * s.period_ns);
			CHECK(p->longest_run >= s.freeze_ns / s.guest_gap_ns - 2);
			printf("  freeze %" PRIu64 "..%" PRIu64 ", span %" PRIu64 "..%" PRIu64
			       ", %" PRIu64 " events, longest run %" PRIu64 "\n", a, b,
			       p->h_start, p->h_end, p->events, p->longest_run);
		}
		/* the short exchanges never reached the hull */
		CHECK(r.mt.vm[0].short_rtt >= 1);
		CHECK_EQ(r.mt.vm[0].st.dropped[VMSCOPE_SYNC_DROP_RTT], 0);
		/* the events there sit on the wrong side of the hypercalls
		 * they came before (the recording's 1.9 ms), and that is
		 * what the span disclaims */
		CHECK(r.c.unrel_viol > 0);
		/* 428.8 us here, against a bound of a few us */
		CHECK(r.c.unrel_worst_ns > 100000);
		CHECK(strstr(rep, "CLOCK UNRELIABLE in 1 spans"));
		CHECK(strstr(rep, "consecutive records with one timestamp"));
		CHECK(strstr(rep, "guest interval shorter than the host's"));
	} else if (kind == 3) {
		/* one exchange 10 ns short, inside the drift prior, early in
		 * the segment: the library would fit it and then split VM 0's
		 * segment at the honest ones after it (a detected change that
		 * never happened: 2 segments, 2 spans); kept from the hull, it
		 * only flags its own interval */
		CHECK_EQ(r.mt.vm[0].short_rtt, 1);
		CHECK_EQ(r.mt.vm[0].nseg, 1);
		CHECK_EQ(r.mt.vm[0].st.breaks_detected, 0);
		CHECK_EQ(r.spans.n, 1);
		CHECK_EQ(spans_of(&r, 0, 0, MG_SEEN_SHORT), 1);
		CHECK(r.spans.n == 1 && r.spans.s[0].worst_short_ns == 10);
	} else if (kind == 2) {
		uint64_t a = H + s.tau_ustep;

		CHECK(r.mt.vm[0].st.breaks_detected >= 1);
		CHECK_EQ(r.mt.vm[0].nseg, 2);
		for (uint32_t c = 0; c < s.vcpus; c++) {
			CHECK_EQ(spans_of(&r, 0, c, MG_SEEN_STEP), 1);
			CHECK_EQ(spans_of(&r, 0, c, 0), 1);
		}
		CHECK_EQ(r.spans.n, s.vcpus);
		for (size_t i = 0; i < r.spans.n; i++) {
			const struct mg_span *p = &r.spans.s[i];

			CHECK(p->h_start <= a && p->h_end >= a);
			CHECK(p->h_end - p->h_start <= 3 * s.period_ns);
			printf("  step at %" PRIu64 ": cpu %u span %" PRIu64 "..%" PRIu64
			       ", %" PRIu64 " events\n", a, p->cpu, p->h_start, p->h_end,
			       p->events);
		}
		CHECK(strstr(rep, "clock relation changed"));
	} else if (kind == 4) {
		/* the library fits the flipped exchanges into a short
		 * segment of their own that overlaps the next one in time
		 * (as record-guest once showed): an interval's events
		 * convert through one relation while the exchange closing
		 * it belongs to the other. One span per CPU holds the
		 * flips; the events on the wrong side of its accepted
		 * exchanges' hypercalls are reported there, not claimed */
		CHECK(r.mt.vm[0].nseg >= 2);
		for (uint32_t c = 0; c < s.vcpus; c++)
			CHECK_EQ(spans_of(&r, 0, c, MG_SEEN_STEP), 1);
		CHECK_EQ(r.spans.n, s.vcpus);
		CHECK(r.c.span_exchanges >= s.vcpus * s.flips);
		CHECK(r.c.unrel_viol >= 1);
		CHECK(r.c.unrel_worst_ns <= s.ustep_ns);
	}
	/* VM 1 is never flagged */
	for (size_t i = 0; i < r.spans.n; i++)
		CHECK_EQ(r.spans.s[i].vm, 0);
	check_merged(&s, &r, out);
	printf("  %" PRIu64 " guest events in flagged spans, %" PRIu64 " of them outside "
	       "their segment's bound of the true time\n", flagged_events, flagged_outside);
	free(rep);
	mg_result_free(&r);
	vr_trace_close(t);
}

static void run_tsc(const char *dir, const char *tag, int64_t lie, bool session)
{
	char in[512], err[256];
	struct mg_opts o = { 0 };
	struct mg_result r;
	struct vr_trace *t;
	struct synth s;

	synth_defaults(&s, 21);
	s.step = false;
	s.tsc = true;
	s.tsc_lie = lie;
	s.tsc_session = session;
	snprintf(in, sizeof(in), "%s/%s", dir, tag);
	CHECK_EQ(synth_write_sync(&s, in, &o, &t, &r, err, sizeof(err)), 0);
	if (!t)
		return;
	mg_report(stdout, t, &r, MG_REPORT_SPANS);
	for (uint32_t v = 0; v < r.n_vms; v++) {
		const struct mg_tsc_vm *k = &r.tsc[v];

		CHECK(r.mt.vm[v].st.accepted > 100);
		CHECK_EQ(k->checked, r.mt.vm[v].st.accepted);
		CHECK_EQ(k->no_readings + k->no_offset + k->off_changed, 0);
		if (lie) {
			CHECK_EQ(k->within_slack, 0);
			CHECK(k->max_abs_diff_ns >= 3500);
		} else {
			CHECK_EQ(k->within, k->checked);
			CHECK_EQ(k->within_slack, k->checked);
			/* readings 6 and 4 ticks wide: 2 ns of slack */
			CHECK(k->max_slack_ns <= 3);
		}
	}
	mg_result_free(&r);
	vr_trace_close(t);
}

/* Merged trace @src copied to @dst with its chunks' origins left out
 * (what a merged trace of a vmscope that kept them apart looks like now);
 * returns how many records the chunks hold. */
static uint64_t strip_origins(const char *src, const char *dst)
{
	int sfd = open(src, O_RDONLY | O_DIRECTORY), dfd;
	struct tf_reader *r;
	struct tf_writer *w;
	struct tf_frame f;
	uint64_t recs = 0;
	const char *names[] = { TF_TRACE_METADATA, MO_STREAM };

	CHECK(sfd >= 0);
	CHECK_EQ(tf_trace_create(dst, &dfd), 0);
	for (int i = 0; i < 2; i++) {
		CHECK_EQ(tf_reader_open(&r, sfd, names[i]), 0);
		CHECK_EQ(tf_writer_create(&w, dfd, names[i], NULL), 0);
		while (r && w && tf_reader_next(r, &f) == 1) {
			ProtobufCMessage *m;
			Vmscope__Trace__StreamChunk *c;
			Vmscope__Trace__RecordOrigins *ro;

			if (f.type != TF_FRAME_CHUNK) {
				CHECK_EQ(tf_writer_append(w, f.type, f.payload, f.length), 0);
				continue;
			}
			CHECK_EQ(tf_msg_decode(f.type, f.payload, f.length, 0, &m, NULL, 0), 0);
			c = (Vmscope__Trace__StreamChunk *)m;
			CHECK(c->origins && c->origins->n_orig_ts == c->nr_records);
			recs += c->nr_records;
			ro = c->origins;
			c->origins = NULL;
			CHECK_EQ(tf_writer_append_msg(w, TF_FRAME_CHUNK, &c->base), 0);
			c->origins = ro;	/* freed with the message */
			tf_msg_free(m);
		}
		tf_reader_close(r);
		CHECK_EQ(tf_writer_close(w), 0);
	}
	close(dfd);
	close(sfd);
	return recs;
}

/*
 * Damage of the input that only pass 2 reads (a guest stream flipped
 * after pass 1) goes into the merged trace's Summary: mr_open() refuses
 * the merged trace unless MR_ACCEPT_DAMAGE, then mr_damage() names it. An
 * intact input's merged trace says so, and lists merged.vtf as written.
 */
static void run_damaged(const char *dir)
{
	char in[512], out[512], clean[512], f[600], err[1024];
	const Vmscope__Trace__Summary *sum;
	struct mg_opts o = { 0 };
	struct mg_result r;
	struct vr_trace *t;
	struct vr_item it;
	struct mo_origin mo;
	struct synth s;
	struct mr *m;
	bool has;
	uint8_t b;
	int fd;

	synth_defaults(&s, 1);
	snprintf(in, sizeof(in), "%s/dmg", dir);
	snprintf(out, sizeof(out), "%s/dmg.merged", dir);
	snprintf(clean, sizeof(clean), "%s/dmg.clean", dir);
	CHECK_EQ(synth_write_sync(&s, in, &o, &t, &r, err, sizeof(err)), 0);
	CHECK_EQ(mg_merge(t, clean, &r, err, sizeof(err)), 0);
	CHECK_EQ(vr_damage_count(vr_trace_damage(t)), 0);
	mg_result_free(&r);
	vr_trace_close(t);
	CHECK_EQ(mr_open(&m, clean, 0, err, sizeof(err)), 0);
	sum = vr_trace_summary(mr_trace(m));
	CHECK(sum && sum->input && !sum->input->damaged);
	CHECK(sum && sum->n_files == 1 && !strcmp(sum->files[0]->name, MO_STREAM));
	while (mr_next(m, &it, &mo, &has) == 1)
		;
	CHECK_EQ(mr_damage(m, err, sizeof(err)), 0);
	mr_close(m);

	/* records without their origins: damage, counted and named */
	uint64_t n_recs, events = 0;
	char want[128];

	snprintf(f, sizeof(f), "%s/dmg.noorigin", dir);
	n_recs = strip_origins(clean, f);
	CHECK(n_recs > 0);
	CHECK_EQ(mr_open(&m, f, 0, err, sizeof(err)), 0);
	while (m && mr_next(m, &it, &mo, &has) == 1)
		if (it.kind == VR_EVENT) {
			CHECK(!has);
			events++;
		}
	CHECK_EQ(events, n_recs);
	CHECK_EQ(mr_damage(m, err, sizeof(err)), 1);
	snprintf(want, sizeof(want), "merged.vtf: %" PRIu64 " records without their origin",
		 n_recs);
	CHECK(strstr(err, want) != NULL);
	mr_close(m);

	CHECK_EQ(vr_trace_open(&t, in, err, sizeof(err)), 0);
	CHECK_EQ(mg_sync(t, &o, &r, err, sizeof(err)), 0);
	snprintf(f, sizeof(f), "%s/guest1-cpu1.vtf", in);
	fd = open(f, O_RDWR);
	CHECK(fd >= 0);
	CHECK_EQ(pread(fd, &b, 1, 5000), 1);
	b ^= 0x10;
	CHECK_EQ(pwrite(fd, &b, 1, 5000), 1);
	close(fd);
	CHECK_EQ(mg_merge(t, out, &r, err, sizeof(err)), 0);
	CHECK_EQ(vr_trace_damage(t)->corrupt, 1);
	mg_result_free(&r);
	vr_trace_close(t);

	CHECK_EQ(mr_open(&m, out, 0, err, sizeof(err)), -EBADMSG);
	CHECK(strstr(err, "made from damaged input") && strstr(err, "guest1-cpu1.vtf"));
	CHECK_EQ(mr_open(&m, out, MR_ACCEPT_DAMAGE, err, sizeof(err)), 0);
	if (!m)
		return;
	sum = vr_trace_summary(mr_trace(m));
	CHECK(sum && sum->input && sum->input->damaged && sum->input->corrupt == 1);
	CHECK(sum && sum->input && !strcmp(sum->input->path, in));
	while (mr_next(m, &it, &mo, &has) == 1)
		;
	CHECK_EQ(mr_damage(m, err, sizeof(err)), 1);
	mr_close(m);
}

int main(int argc, char **argv)
{
	struct synth s;
	char dir[256];

	if ((argc == 3 || argc == 4) && (!strcmp(argv[1], "--write") ||
					 !strcmp(argv[1], "--write-losses"))) {
		synth_defaults(&s, 1);
		s.losses = !strcmp(argv[1], "--write-losses");
		if (argc == 4)	/* a longer recording: for tests that interrupt a merge */
			s.duration_ns = strtoull(argv[3], NULL, 10) * 1000000000ull;
		return synth_write(&s, argv[2]) ? 1 : 0;
	}
	int fd = tf_test_mkdir(dir, sizeof(dir));

	close(fd);
	for (uint64_t seed = 1; seed <= 4; seed++) {
		char tag[32];

		synth_defaults(&s, seed);
		s.vcpus = 1 + (unsigned int)(seed % 4);
		s.host_switch = seed != 2;
		snprintf(tag, sizeof(tag), "t%" PRIu64, seed);
		run(&s, dir, tag);
	}
	run_damaged(dir);
	synth_defaults(&s, 9);
	s.no_tid_map = true;
	run(&s, dir, "notid");
	/* sync_guest as ABI 0.4 lays it out: steal_ns before cpu, which is
	 * past the old 64 bytes; found by name, the same exchanges pair */
	synth_defaults(&s, 1);
	s.steal = true;
	run(&s, dir, "steal");
	/* VM 1's TSC offset rewritten every 100 us (unstable host TSC): with
	 * the default policy only a write after a quiet second ends a
	 * segment, so VM 1 keeps one segment and everything else holds */
	synth_defaults(&s, 11);
	s.tsc_storm = true;
	run(&s, dir, "storm");
	/* VM 0's estimates biased +-25 us on the two sides of its step: the
	 * guest events just after the change convert to before the last ones
	 * of the old segment; they are clamped, stay within their bound and
	 * keep causality */
	synth_defaults(&s, 13);
	s.skew_ns = 50000;
	run(&s, dir, "skew");
	/* the host's sync and TSC-offset records in channel 1's streams
	 * (record --keep): the same pairs, each sync record with the thread
	 * the other channel's sched_switch put on its CPU */
	synth_defaults(&s, 3);
	s.host_switch = true;
	s.keep_channel = true;
	run(&s, dir, "keep");
	run_clock(dir, "clean", 0);
	run_clock(dir, "freeze", 1);
	run_clock(dir, "ustep", 2);
	run_clock(dir, "short", 3);
	run_clock(dir, "flips", 4);
	run_tsc(dir, "tsc", 0, false);
	run_tsc(dir, "tscsession", 0, true);
	run_tsc(dir, "tsclie", 10000, false);
	tf_test_rmdir(dir);
	return check_result("test_merge");
}
