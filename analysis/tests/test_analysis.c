// SPDX-License-Identifier: GPL-2.0
/*
 * The analysis library on its own pieces and end to end:
 *
 * - hist: count, sum, min, max exact; every quantile of 200 000
 *   log-uniform values (1 ns .. 10 s) within 1/128 of the exact value at
 *   that rank; values below 128 exact;
 * - topn: the 50 largest of 10 000 random keys, in order, items kept
 *   with their keys;
 * - exit reasons: AMD and Intel names, HLT on both, unknown codes;
 * - walk + exits on merged traces with a known story (scen.h), written
 *   by merge's own writer: per (VM, guest task, reason) counts and totals
 *   exact; per vCPU time in guest / kernel / userspace / halted exact;
 *   per (VM, reason) min and max exact and percentiles within the bound;
 *   the top-N the N longest; with two VMs and no thread of host records,
 *   everything unattributed; with one VM and no thread, all attributed
 *   (userspace exits through the host CPU's last exit);
 * - a loss in the middle of an exit: that exit is not counted.
 *
 * `test_analysis --write DIR` writes the scenario trace (DIR/in,
 * DIR/merged) for cli/tests/report-test.sh.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../tracefmt/tests/util.h"
#include "exact.h"
#include "exit_reason.h"
#include "exits.h"
#include "hist.h"
#include "out.h"
#include "scen.h"
#include "sched.h"
#include "topn.h"
#include "walk.h"
#include "vmscope_events.h"
#include "../../tests/lib/xorshift.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t next_rnd(void)
{
	return vmscope_xorshift64(&rng);
}

static void test_hist(void)
{
	static const double qs[] = { 0.001, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999, 1 };
	enum { N = 200000 };
	uint64_t *v = malloc(N * sizeof(*v)), sum = 0;
	struct an_hist h;

	an_hist_init(&h);
	CHECK_EQ(an_hist_quantile(&h, 0.5), 0);
	for (size_t i = 0; i < N; i++) {
		double lg = (double)(next_rnd() % 1000000) / 1000000.0 * 10;	/* 1 .. 1e10 */

		v[i] = (uint64_t)pow(10, lg);
		sum += v[i];
		an_hist_add(&h, v[i]);
	}
	qsort(v, N, sizeof(*v), cmp_u64);
	CHECK_EQ(h.count, N);
	CHECK_EQ(h.sum, sum);
	CHECK_EQ(h.min, v[0]);
	CHECK_EQ(h.max, v[N - 1]);
	for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
		uint64_t a = an_hist_quantile(&h, qs[k]), x = exact_q(v, N, qs[k]);

		if (!within(a, x))
			fprintf(stderr, "q %g: %" PRIu64 " vs exact %" PRIu64 "\n", qs[k], a, x);
		CHECK(within(a, x));
	}
	an_hist_free(&h);
	/* small values: exact */
	an_hist_init(&h);
	for (uint64_t i = 0; i < 100; i++)
		an_hist_add(&h, i);
	CHECK_EQ(an_hist_quantile(&h, 0.5), 49);
	CHECK_EQ(an_hist_quantile(&h, 0.9), 89);
	an_hist_free(&h);
	free(v);
}

static void test_topn(void)
{
	enum { N = 10000, K = 50 };
	uint64_t *v = malloc(N * sizeof(*v));
	struct an_topn t;

	CHECK_EQ(an_topn_init(&t, K, sizeof(uint64_t) * 2), 0);
	for (size_t i = 0; i < N; i++) {
		uint64_t item[2];

		v[i] = next_rnd() % 1000000;
		item[0] = v[i];
		item[1] = i;
		an_topn_add(&t, v[i], item);
	}
	qsort(v, N, sizeof(*v), cmp_u64);
	CHECK_EQ(an_topn_sort(&t), K);
	for (size_t i = 0; i < K; i++) {
		const uint64_t *item = an_topn_item(&t, i);

		CHECK_EQ(item[0], v[N - 1 - i]);
	}
	an_topn_free(&t);
	free(v);
}

static void test_reasons(void)
{
	char b[40];

	CHECK(!strcmp(an_exit_reason_name(AN_ISA_SVM, 0x7b, b, sizeof(b)), "io"));
	CHECK(!strcmp(an_exit_reason_name(AN_ISA_SVM, 0x72, b, sizeof(b)), "cpuid"));
	CHECK(!strcmp(an_exit_reason_name(AN_ISA_SVM, 0x400, b, sizeof(b)), "npf"));
	CHECK(!strcmp(an_exit_reason_name(AN_ISA_SVM, 0x12345, b, sizeof(b)), "svm_0x12345"));
	CHECK(!strcmp(an_exit_reason_name(AN_ISA_VMX, 30, b, sizeof(b)), "IO_INSTRUCTION"));
	CHECK(!strcmp(an_exit_reason_name(AN_ISA_VMX, 10, b, sizeof(b)), "CPUID"));
	CHECK(!strcmp(an_exit_reason_name(AN_ISA_VMX, 0x80000021, b, sizeof(b)),
		      "INVALID_STATE+entry_fail"));
	CHECK(!strcmp(an_exit_reason_name(AN_ISA_VMX, 999, b, sizeof(b)), "vmx_999"));
	CHECK(!strcmp(an_exit_reason_name(7, 1, b, sizeof(b)), "isa7_0x1"));
	CHECK(an_exit_is_hlt(AN_ISA_SVM, 0x78));
	CHECK(an_exit_is_hlt(AN_ISA_VMX, 12));
	CHECK(!an_exit_is_hlt(AN_ISA_VMX, 0x78));
	CHECK(!an_exit_is_hlt(AN_ISA_SVM, 12));
}

/* The walk's reason index of scenario reason @r of @vm, or -1. */
static int reason_idx(const struct an_walk *w, unsigned int vm, int r)
{
	const char *want = vm % 2 ? scen_vmx_name[r] : scen_svm_name[r];

	for (uint32_t i = 0; i < an_walk_nr_reasons(w); i++)
		if (!strcmp(an_walk_reason_name(w, i), want))
			return (int)i;
	return -1;
}

static int task_idx(const struct an_walk *w, unsigned int vm, int t)
{
	for (uint32_t i = 0; i < an_walk_nr_tasks(w); i++) {
		const struct an_task *k = an_walk_task(w, (int32_t)i);

		if (k->vm == vm && k->tid == 100 + t) {
			CHECK(!strcmp(k->comm, scen_task_comm[t]));
			return (int)i;
		}
	}
	return -1;
}

static void run(const char *path, enum an_by by, struct an_walk **w, struct an_exits *x,
		size_t top)
{
	struct an_hooks h = { .exit = an_exits_add, .ctx = x };
	char err[256];

	CHECK_EQ(an_exits_init(x, by, top), 0);
	*w = NULL;
	CHECK_EQ(an_walk_open(w, path, 0, err, sizeof(err)), 0);
	if (!*w) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	CHECK_EQ(an_walk_run(*w, &h, err, sizeof(err)), 0);
}

/* @x's groups (by task) against the scenario's per-task counts: the
 * number of exits they hold. */
static uint64_t check_task_counts(const struct scen *s, struct an_walk *w,
				  const struct an_exits *x)
{
	uint64_t seen = 0;

	for (size_t i = 0; i < x->n; i++) {
		const struct an_group *g = &x->g[i];
		const struct an_task *t = an_walk_task(w, g->task);

		CHECK(t != NULL);
		if (!t)
			continue;
		CHECK(t->tid >= 100 && t->tid < 100 + SCEN_TASKS);
		for (uint32_t k = 0; k < g->nr; k++) {
			int r;

			for (r = 0; r < SCEN_REASONS; r++)
				if (reason_idx(w, g->vm, r) == (int)g->r[k].reason)
					break;
			CHECK(r < SCEN_REASONS);
			if (r == SCEN_REASONS)
				continue;
			CHECK_EQ(g->r[k].count, s->x.count[g->vm][t->tid - 100][r]);
			CHECK_EQ(g->r[k].total_ns, s->x.total[g->vm][t->tid - 100][r]);
			seen += g->r[k].count;
		}
	}
	return seen;
}

static void check_by_task(const struct scen *s, const char *merged)
{
	struct an_exits x;
	struct an_walk *w;

	run(merged, AN_BY_TASK, &w, &x, 0);
	if (!w)
		return;
	CHECK_EQ(an_walk_counts(w)->exits, s->x.exits);
	CHECK_EQ(an_walk_counts(w)->unattributed, 0);
	CHECK_EQ(an_walk_counts(w)->entries_without_exit, s->n_vms * s->vcpus);
	CHECK_EQ(check_task_counts(s, w, &x), s->x.exits);
	for (unsigned int vm = 0; vm < s->n_vms; vm++) {
		for (int t = 0; t < SCEN_TASKS; t++)
			CHECK(task_idx(w, vm, t) >= 0);
		CHECK_EQ(an_walk_nr_vcpus(w, vm), s->vcpus);
		for (unsigned int c = 0; c < s->vcpus; c++) {
			const struct an_vcpu_time *vt = an_walk_vcpu_time(w, vm, c);

			CHECK_EQ(vt->guest_ns, s->x.guest_ns[vm][c]);
			CHECK_EQ(vt->kernel_ns, s->x.kernel_ns[vm][c]);
			CHECK_EQ(vt->user_ns, s->x.user_ns[vm][c]);
			CHECK_EQ(vt->halted_ns, s->x.halted_ns[vm][c]);
		}
	}
	an_exits_free(&x);
	an_walk_close(w);
}

static void check_by_reason(struct scen *s, const char *merged)
{
	static const double qs[] = { 0.5, 0.9, 0.99, 0.999 };
	struct an_exits x;
	struct an_walk *w;
	uint64_t longest[8] = { 0 };

	run(merged, AN_BY_REASON, &w, &x, 8);
	if (!w)
		return;
	CHECK_EQ(x.n, s->n_vms * SCEN_REASONS);
	for (size_t i = 0; i < x.n; i++) {
		const struct an_group *g = &x.g[i];
		int r;

		for (r = 0; r < SCEN_REASONS; r++)
			if (reason_idx(w, g->vm, r) == (int)g->reason)
				break;
		CHECK(r < SCEN_REASONS);
		if (r == SCEN_REASONS)
			continue;
		uint64_t *d = s->x.dur[g->vm][r];
		size_t n = s->x.ndur[g->vm][r];

		qsort(d, n, sizeof(*d), cmp_u64);
		CHECK_EQ(g->h.count, n);
		CHECK_EQ(g->h.min, s->x.min[g->vm][r]);
		CHECK_EQ(g->h.max, s->x.max[g->vm][r]);
		for (int q = 0; q < 4; q++)
			CHECK(within(an_hist_quantile(&g->h, qs[q]), exact_q(d, n, qs[q])));
		/* the 8 longest overall */
		for (size_t k = n > 8 ? n - 8 : 0; k < n; k++) {
			uint64_t v = d[k];

			for (int j = 0; j < 8; j++)
				if (v > longest[j]) {
					uint64_t t = longest[j];

					longest[j] = v;
					v = t;
				}
		}
		if (r == 0)	/* io exits spent part of their time in userspace */
			CHECK(g->user_ns > 0 && g->user_ns < g->h.sum);
		if (r == 2)
			CHECK_EQ(g->halted_ns, g->h.sum);
	}
	CHECK_EQ(an_topn_sort(&x.top), 8);
	for (int j = 0; j < 8; j++) {
		const struct an_exit *e = an_topn_item(&x.top, (size_t)j);

		CHECK_EQ(e->end - e->start, longest[j]);
	}
	/* sorting by count puts the largest count first */
	an_exits_sort(&x, AN_SORT_COUNT);
	for (size_t i = 1; i < x.n; i++)
		CHECK(x.g[i - 1].h.count >= x.g[i].h.count);
	an_exits_free(&x);
	an_walk_close(w);
}

static void test_scenario(const char *dir)
{
	struct scen s = { .seed = 7, .n_vms = 2, .vcpus = 3, .n_records = 60000 };
	char merged[4096];

	s.x.keep = true;
	CHECK_EQ(scen_write(&s, dir), 0);
	snprintf(merged, sizeof(merged), "%s/merged", dir);
	CHECK(s.x.exits > 10000);
	check_by_task(&s, merged);
	check_by_reason(&s, merged);
	scen_free(&s);
}

/* Each vCPU's first task named by cpu_task (a guest session's start):
 * every exit is that task's from the first one on. */
static void test_cpu_task(const char *dir)
{
	struct scen s = { .seed = 8, .n_vms = 2, .vcpus = 2, .n_records = 20000,
			  .cpu_task = true };
	char merged[4096];

	s.x.keep = true;
	CHECK_EQ(scen_write(&s, dir), 0);
	snprintf(merged, sizeof(merged), "%s/merged", dir);
	check_by_task(&s, merged);
	scen_free(&s);
}

/* Host records without threads: attributable only with one VM. */
static void test_unknown_tids(const char *dir1, const char *dir2)
{
	struct scen s = { .seed = 9, .n_vms = 2, .vcpus = 2, .n_records = 5000,
			  .unknown_tids = true };
	struct an_exits x;
	struct an_walk *w;
	char merged[4096];

	CHECK_EQ(scen_write(&s, dir1), 0);
	snprintf(merged, sizeof(merged), "%s/merged", dir1);
	run(merged, AN_BY_VM, &w, &x, 0);
	if (w) {
		CHECK_EQ(an_walk_counts(w)->exits, 0);
		CHECK(an_walk_counts(w)->unattributed > 1000);
		an_walk_close(w);
	}
	an_exits_free(&x);
	s.n_vms = 1;
	CHECK_EQ(scen_write(&s, dir2), 0);
	snprintf(merged, sizeof(merged), "%s/merged", dir2);
	run(merged, AN_BY_VCPU, &w, &x, 0);
	if (w) {
		CHECK_EQ(an_walk_counts(w)->exits, s.x.exits);
		CHECK_EQ(an_walk_counts(w)->unattributed, 0);
		for (unsigned int c = 0; c < s.vcpus; c++) {
			CHECK_EQ(an_walk_vcpu_time(w, 0, c)->user_ns, s.x.user_ns[0][c]);
			CHECK_EQ(an_walk_vcpu_time(w, 0, c)->kernel_ns, s.x.kernel_ns[0][c]);
		}
		an_walk_close(w);
	}
	an_exits_free(&x);
}

/* A loss inside an exit: that exit is not counted, the next entry
 * starts from an unknown state. */
static void test_loss(const char *dir)
{
	struct scen s = { .seed = 11, .n_vms = 1, .vcpus = 1, .n_records = 3000,
			  .loss_after = 1000 };
	struct an_exits x;
	struct an_walk *w;
	char merged[4096];

	CHECK_EQ(scen_write(&s, dir), 0);
	CHECK(s.loss_done);
	snprintf(merged, sizeof(merged), "%s/merged", dir);
	run(merged, AN_BY_VM, &w, &x, 0);
	if (w) {
		CHECK_EQ(an_walk_counts(w)->exits, s.x.exits);
		CHECK_EQ(an_walk_counts(w)->losses, 1);
		CHECK_EQ(an_walk_counts(w)->open_dropped, 1);
		CHECK_EQ(an_walk_counts(w)->entries_without_exit, 2);
		an_walk_close(w);
	}
	an_exits_free(&x);
	/* a host stream's loss leaves the guest's tasks known (their
	 * switches come from the guest's own stream): every exit is still
	 * charged to its task */
	run(merged, AN_BY_TASK, &w, &x, 0);
	if (w) {
		CHECK_EQ(an_walk_counts(w)->exits_task_unknown, 0);
		CHECK_EQ(check_task_counts(&s, w, &x), s.x.exits);
		an_walk_close(w);
	}
	an_exits_free(&x);
}

/*
 * A guest CPU's loss, then the guest module's restatement of its task (a
 * cpu_task record, as vmscope_guest.ko writes after a drop): the vCPU's
 * exits are task A's before the loss, unknown between loss and
 * restatement, task B's after it.
 */
static void test_guest_loss_restated(const char *dir)
{
	const uint64_t H = SCEN_H0;
	struct vmscope_ev_sched_switch sw = { .prev_pid = 0, .next_pid = 201, .next_tgid = 201 };
	struct vmscope_ev_cpu_task ct = { .pid = 202, .tgid = 202 };
	struct mo_origin g = { .cpu = 0, .tid = -1, .origin = 1, .vcpu = MO_NONE };
	struct mo_origin hst = { .cpu = 0, .tid = 1001, .origin = 0, .vcpu = 0 };
	struct vmscope_ev_kvm_exit ex = { .vcpu_id = 0, .reason_valid = 1, .isa = 2,
					  .exit_reason = scen_svm_code[1] };
	struct vmscope_ev_kvm_entry en = { .vcpu_id = 0 };
	/* exits at these times, 100 ns each; loss at 3000, cpu_task at 5000 */
	const uint64_t at[] = { 2000, 2500, 4000, 6000, 6500, 7000 };
	uint64_t got[3] = { 0 };	/* 201, unknown, 202 */
	struct scen_out *o;
	struct an_exits x;
	struct an_walk *w;
	char merged[4096];

	snprintf(sw.next_comm, sizeof(sw.next_comm), "task-a");
	snprintf(ct.comm, sizeof(ct.comm), "task-b");
	CHECK_EQ(scen_out_open(&o, dir, 1, 1), 0);
	if (!o)
		return;
	g.orig_ts = H + 1000;
	scen_out_event(o, 1, VMSCOPE_EV_sched_switch, H + 1000, &sw, sizeof(sw), &g);
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		if (at[i] > 3000 && (i == 0 || at[i - 1] < 3000))
			scen_out_loss_at(o, 1, 0, H + 3000);
		if (at[i] > 5000 && (i == 0 || at[i - 1] < 5000)) {
			g.orig_ts = H + 5000;
			scen_out_event(o, 1, VMSCOPE_EV_cpu_task, H + 5000, &ct, sizeof(ct), &g);
		}
		hst.orig_ts = H + at[i];
		scen_out_event(o, 0, VMSCOPE_EV_kvm_exit, H + at[i], &ex, sizeof(ex), &hst);
		hst.orig_ts = H + at[i] + 100;
		scen_out_event(o, 0, VMSCOPE_EV_kvm_entry, H + at[i] + 100, &en, sizeof(en), &hst);
	}
	CHECK_EQ(scen_out_close(o), 0);
	snprintf(merged, sizeof(merged), "%s/merged", dir);
	run(merged, AN_BY_TASK, &w, &x, 0);
	if (!w)
		return;
	for (size_t i = 0; i < x.n; i++) {
		const struct an_task *t = an_walk_task(w, x.g[i].task);
		int32_t tid = t ? t->tid : -1;

		got[tid == 201 ? 0 : tid == 202 ? 2 : 1] += x.g[i].h.count;
	}
	CHECK_EQ(got[0], 2);
	CHECK_EQ(got[1], 1);
	CHECK_EQ(got[2], 3);
	CHECK_EQ(an_walk_counts(w)->exits_task_unknown, 1);
	CHECK_EQ(an_walk_counts(w)->losses, 1);
	an_walk_close(w);
	an_exits_free(&x);
}

/* merge's clock-unreliable spans: exits overlapping one of their vCPU's,
 * and guest records in one, are counted. */
static void test_clock_spans(const char *dir)
{
	const uint64_t H = SCEN_H0;
	Vmscope__Trace__ClockSpan a = VMSCOPE__TRACE__CLOCK_SPAN__INIT, b = a, c = a;
	Vmscope__Trace__ClockSpan *sp[] = { &a, &b, &c };
	/* exits [start, end]: 3 overlap a span of vCPU 0, 1 only one of vCPU 1 */
	const uint64_t ex[][2] = { { 1000, 1500 }, { 1800, 2100 }, { 2500, 2600 },
				   { 3500, 4000 }, { 10500, 12000 }, { 20000, 20100 } };
	/* guest records of CPU 0: 3 in a span; of CPU 1 (no span of it here) */
	const uint64_t gr[] = { 500, 2200, 2900, 3001, 10000, 15000 };
	struct scen_out *o;
	struct an_walk *w;
	char merged[4096], err[256];
	struct { uint64_t ts; int kind; uint64_t i; } ev[32];
	size_t n = 0;

	a.cpu = 0; a.host_start_ns = H + 2000; a.host_end_ns = H + 3000; a.seen = 2;
	b.cpu = 0; b.host_start_ns = H + 10000; b.host_end_ns = H + 11000; b.seen = 1;
	c.cpu = 1; c.host_start_ns = H + 3500; c.host_end_ns = H + 3600; c.seen = 1;
	CHECK_EQ(scen_out_open_spans(&o, dir, 1, 2, false, sp, 3), 0);
	if (!o)
		return;
	for (size_t i = 0; i < 6; i++) {
		ev[n].ts = ex[i][0]; ev[n].kind = 0; ev[n++].i = i;
		ev[n].ts = ex[i][1]; ev[n].kind = 1; ev[n++].i = i;
		ev[n].ts = gr[i]; ev[n].kind = 2; ev[n++].i = i;
		ev[n].ts = gr[i] + 1; ev[n].kind = 3; ev[n++].i = i;
	}
	for (size_t i = 1; i < n; i++)	/* by time */
		for (size_t j = i; j > 0 && ev[j - 1].ts > ev[j].ts; j--) {
			__typeof__(ev[0]) t = ev[j];

			ev[j] = ev[j - 1];
			ev[j - 1] = t;
		}
	for (size_t i = 0; i < n; i++) {
		uint64_t ts = H + ev[i].ts;
		struct mo_origin mh = { .orig_ts = ts, .cpu = 1, .tid = 1001, .origin = 0,
					.vcpu = 0 };
		struct mo_origin mg = { .orig_ts = ts, .cpu = ev[i].kind == 2 ? 0 : 1, .tid = -1,
					.origin = 1, .vcpu = ev[i].kind == 2 ? 0 : 1 };

		if (ev[i].kind == 0) {
			struct vmscope_ev_kvm_exit x = { .vcpu_id = 0, .reason_valid = 1, .isa = 2,
							 .exit_reason = scen_svm_code[0] };

			scen_out_event(o, 0, VMSCOPE_EV_kvm_exit, ts, &x, sizeof(x), &mh);
		} else if (ev[i].kind == 1) {
			struct vmscope_ev_kvm_entry en = { .vcpu_id = 0 };

			scen_out_event(o, 0, VMSCOPE_EV_kvm_entry, ts, &en, sizeof(en), &mh);
		} else {
			struct vmscope_ev_irq_handler_entry q = { .irq = 1 };

			scen_out_event(o, 1, VMSCOPE_EV_irq_handler_entry, ts, &q, sizeof(q), &mg);
		}
	}
	CHECK_EQ(scen_out_close(o), 0);
	snprintf(merged, sizeof(merged), "%s/merged", dir);
	CHECK_EQ(an_walk_open(&w, merged, 0, err, sizeof(err)), 0);
	if (!w)
		return;
	CHECK(an_walk_run(w, &(struct an_hooks){ 0 }, err, sizeof(err)) >= 0);
	CHECK_EQ(an_walk_counts(w)->clock_spans, 3);
	CHECK_EQ(an_walk_counts(w)->exits, 6);
	CHECK_EQ(an_walk_counts(w)->exits_clock_unreliable, 3);
	CHECK_EQ(an_walk_counts(w)->guest_records, 12);
	CHECK_EQ(an_walk_counts(w)->guest_clock_unreliable, 3);
	an_walk_close(w);
}

/* report sched: a host hog preempts VM 0 vCPU 0 inside exits. */
static void test_sched(const char *dir)
{
	struct scen s = { .seed = 5, .n_vms = 1, .vcpus = 1, .n_records = 20000, .hog = true };
	struct an_hooks h = { 0 };
	struct an_sched sc;
	struct an_walk *w;
	char merged[4096], err[256];
	uint64_t hog_total = 0, block_total = 0;

	CHECK_EQ(scen_write(&s, dir), 0);
	CHECK(s.x.hog_n >= 20);
	CHECK(s.x.block_n >= 10);
	snprintf(merged, sizeof(merged), "%s/merged", dir);
	CHECK_EQ(an_walk_open(&w, merged, 0, err, sizeof(err)), 0);
	if (!w)
		return;
	CHECK_EQ(an_sched_init(&sc, w, 4), 0);
	an_sched_hooks(&sc, &h);
	CHECK_EQ(an_walk_run(w, &h, err, sizeof(err)), 0);
	for (int t = 0; t < SCEN_TASKS; t++) {
		int i = task_idx(w, 0, t);
		const struct an_sched_task *st = i >= 0 ? &sc.t[i] : NULL;
		uint64_t exit_ns = 0;

		CHECK(st != NULL);
		if (!st)
			continue;
		hog_total += s.x.hog_ns[t];
		block_total += s.x.block_ns[t];
		CHECK_EQ(st->stall_running_ns, s.x.hog_ns[t] + s.x.block_ns[t]);
		CHECK_EQ(st->running_ns, s.x.running_ns[0][t]);
		CHECK_EQ(st->blocked_ns, s.x.blocked_ns[0][t]);
		for (int r = 0; r < SCEN_REASONS; r++)
			if (r != 2)
				exit_ns += s.x.total[0][t][r];
		CHECK_EQ(st->exit_ns, exit_ns - (s.x.hog_ns[t] - s.x.hog_hlt_ns[t]) -
				      (s.x.block_ns[t] - s.x.block_hlt_ns[t]));
		/* three charges: the hog and the kworker for their parts of
		 * the preempted time, and blocked in the host */
		int seen = 0;

		CHECK(s.x.kworker_ns[t] > 0);
		for (int k = 0; k < AN_SCHED_BY && st->by[k].n; k++) {
			const struct an_task *h = an_walk_task(w, st->by[k].host_task);

			if (st->by[k].host_task == AN_TASK_UNKNOWN) {
				CHECK_EQ(st->by[k].ns, s.x.block_ns[t]);
				seen |= 1;
			} else if (h && h->tid == SCEN_KWORKER_TID) {
				CHECK(h->vm == AN_VM_HOST && !strcmp(h->comm, "kworker/0:1"));
				CHECK_EQ(st->by[k].ns, s.x.kworker_ns[t]);
				seen |= 2;
			} else {
				CHECK(h && h->vm == AN_VM_HOST && h->tid == SCEN_HOG_TID &&
				      !strcmp(h->comm, "hog"));
				CHECK_EQ(st->by[k].ns, s.x.hog_ns[t] - s.x.kworker_ns[t]);
				seen |= 4;
			}
		}
		CHECK_EQ(seen, 7);
		for (int k = 1; k < AN_SCHED_BY && st->by[k].n; k++)
			CHECK(st->by[k - 1].ns >= st->by[k].ns);	/* sorted at the end */
		CHECK_EQ(st->by[3].n, 0);
	}
	const struct an_sched_vcpu *v = an_sched_vcpu(&sc, 0, 0);

	CHECK(v != NULL);
	if (v) {
		CHECK_EQ(v->preempted_ns, hog_total);
		CHECK_EQ(v->n_preempted, s.x.hog_n);
		CHECK_EQ(v->blocked_ns, block_total);
		CHECK_EQ(v->n_blocked, s.x.block_n);
		/* the vCPU's charges are exact: hog, blocked, kworker, in that order */
		uint64_t kw = 0;

		for (int t = 0; t < SCEN_TASKS; t++)
			kw += s.x.kworker_ns[t];
		CHECK_EQ(v->by[0].ns, hog_total - kw);
		CHECK_EQ(v->by[1].host_task, AN_TASK_UNKNOWN);
		CHECK_EQ(v->by[1].ns, block_total);
		CHECK_EQ(v->by[1].n, s.x.block_n);
		CHECK_EQ(v->by[2].ns, kw);
		CHECK_EQ(v->by[3].n, 0);
		CHECK_EQ(v->by_other_ns, 0);
		/* the stalls by class (the metrics' series): every off interval
		 * stalled the story's running task, by its cause; runnable
		 * stalls are the tasks' own, summed */
		uint64_t rq = 0;

		for (int t = 0; t < SCEN_TASKS; t++) {
			int i = task_idx(w, 0, t);

			rq += i >= 0 ? sc.t[i].stall_runnable_ns : 0;
		}
		CHECK_EQ(v->stall_ns[AN_STALL_RUNNING][AN_STALL_PREEMPTED], hog_total);
		CHECK_EQ(v->stall_ns[AN_STALL_RUNNING][AN_STALL_BLOCKED], block_total);
		CHECK_EQ(v->stall_ns[AN_STALL_RUNNABLE][AN_STALL_PREEMPTED] +
			 v->stall_ns[AN_STALL_RUNNABLE][AN_STALL_BLOCKED], rq);
	}
	CHECK_EQ(an_topn_sort(&sc.worst), 4);
	const struct an_stall *worst = an_topn_item(&sc.worst, 0);

	CHECK_EQ(worst->end - worst->start, s.x.hog_max);
	CHECK_EQ(worst->preempted, worst->host_task != AN_TASK_UNKNOWN);
	/* a preempted stall names the hog, never the kworker that ran first */
	for (int k = 0; k < 4; k++) {
		const struct an_stall *st = an_topn_item(&sc.worst, k);
		const struct an_task *h = an_walk_task(w, st->host_task);

		if (st->preempted)
			CHECK(h && h->tid == SCEN_HOG_TID);
	}
	an_sched_free(&sc);
	an_walk_close(w);
}

/*
 * A merged trace (in @dir) of a session of two VMs of one vCPU each where
 * only VM 0's vCPU exits (20 cpuid exits, 100 ms apart): VM 1 has no vCPU
 * the walk knows (a VM that never exits, or kvm-hold's in the VM tests,
 * with no vCPU thread), for cli/tests/top-test.sh.
 */
static int write_silent_vm(const char *dir)
{
	struct scen_out *o;
	int e = scen_out_open(&o, dir, 2, 1);

	if (e)
		return e;
	for (uint64_t k = 0; k < 20; k++) {
		uint64_t ts = SCEN_H0 + 1000000 + k * 100000000;
		struct mo_origin mo = { .orig_ts = ts, .cpu = 0, .tid = 1001, .origin = 0,
					.vcpu = 0 };
		struct vmscope_ev_kvm_exit ex = { .exit_reason = 0x72, .reason_valid = 1 };
		struct vmscope_ev_kvm_entry en = { 0 };

		scen_out_event(o, 0, VMSCOPE_EV_kvm_exit, ts, &ex, sizeof(ex), &mo);
		mo.orig_ts = ts + 2000;
		scen_out_event(o, 0, VMSCOPE_EV_kvm_entry, ts + 2000, &en, sizeof(en), &mo);
	}
	return scen_out_close(o);
}

static void mkdir_tmp(char *path, size_t len)
{
	int fd = tf_test_mkdir(path, len);

	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	char d1[256], d2[256], d3[256], d4[256], d5[256], d6[256], d7[256], d8[256];

	if (argc == 3 && !strcmp(argv[1], "--write")) {
		struct scen s = { .seed = 7, .n_vms = 2, .vcpus = 3, .n_records = 60000 };

		return scen_write(&s, argv[2]) ? 1 : 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--write-noagent")) {
		/* --write's trace with VM 1's guest side absent (no agent) */
		struct scen s = { .seed = 7, .n_vms = 2, .vcpus = 3, .n_records = 60000,
				  .last_vm_no_agent = true };

		return scen_write(&s, argv[2]) ? 1 : 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--write-silent-vm"))
		return write_silent_vm(argv[2]) ? 1 : 0;
	if (argc == 3 && !strcmp(argv[1], "--write-sched")) {
		struct scen s = { .seed = 5, .n_vms = 1, .vcpus = 1, .n_records = 20000,
				  .hog = true };

		if (scen_write(&s, argv[2]))
			return 1;
		/* what the report must say, for cli/tests/report-test.sh */
		printf("hog_total_ns %" PRIu64 " hog_n %" PRIu64 " block_total_ns %" PRIu64
		       " kworker_total_ns %" PRIu64 "\n",
		       s.x.hog_ns[0] + s.x.hog_ns[1] + s.x.hog_ns[2], s.x.hog_n,
		       s.x.block_ns[0] + s.x.block_ns[1] + s.x.block_ns[2],
		       s.x.kworker_ns[0] + s.x.kworker_ns[1] + s.x.kworker_ns[2]);
		return 0;
	}
	test_hist();
	test_topn();
	test_reasons();
	mkdir_tmp(d1, sizeof(d1));
	mkdir_tmp(d2, sizeof(d2));
	mkdir_tmp(d3, sizeof(d3));
	mkdir_tmp(d4, sizeof(d4));
	mkdir_tmp(d5, sizeof(d5));
	mkdir_tmp(d6, sizeof(d6));
	mkdir_tmp(d7, sizeof(d7));
	mkdir_tmp(d8, sizeof(d8));
	test_guest_loss_restated(d8);
	test_clock_spans(d6);
	test_cpu_task(d7);
	test_scenario(d1);
	test_unknown_tids(d2, d3);
	test_loss(d4);
	test_sched(d5);
	tf_test_rmdir(d1);
	tf_test_rmdir(d2);
	tf_test_rmdir(d3);
	tf_test_rmdir(d4);
	tf_test_rmdir(d5);
	tf_test_rmdir(d6);
	tf_test_rmdir(d7);
	tf_test_rmdir(d8);
	return check_result("analysis");
}
