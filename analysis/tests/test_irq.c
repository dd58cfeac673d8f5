// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test `analysis-irq`: interrupt delivery per VM and vector
 * (irqlat.h, the walk's inject and guest_vector hooks) on a merged trace
 * with a known story, written through merge's own writer (scen.h).
 *
 * One VM, two vCPUs (threads 1001, 1002 on host CPUs 1, 2; guest CPUs 0,
 * 1), 300 injections each, vCPU 1's after vCPU 0's: a host kvm_inj_virq
 * of vector 0xec (half), 0xfd, 0xfb or 0x22 (a device vector: no guest
 * tracepoint), and for the traced ones the guest's irq_vector_entry on
 * that CPU 1-31 us later (one in 40: 1 ms). Twists, each with its known
 * answer: every 50th traced injection has no guest record (the vCPU's next
 * injection comes first); every 60th is reinjected before its handler
 * runs (a reinjection, latency from the first); every 70th iteration adds
 * a soft injection after the handler; one guest handler entry with no
 * injection waiting; a loss between an injection and its handler (the
 * record lost with it); vCPU 0's last injection without a handler (the
 * trace ends first); three timer injections on vCPU 0 before its first
 * guest record, and three IPIs on vCPU 1 after its last (a guest not
 * recording yet, or no longer): the misses before a vCPU's first guest
 * record, after its last and between are counted apart.
 *
 * Expected per vector: injections, matched, each unmatched reason,
 * reinjections, guest entries without an injection, latencies' count and
 * max exact, p50 and p99 within the histogram's 1/128, the slowest one's
 * vCPU and injection time; injections = matched + unmatched + reinjections.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../tests/lib/check.h"
#include "../../tests/lib/xorshift.h"
#include "../../tracefmt/tests/util.h"
#include "exact.h"
#include "irqlat.h"
#include "out.h"
#include "scen.h"
#include "vmscope_events.h"
#include "walk.h"

#define US		1000ull
#define MS		1000000ull
#define N		300
#define NV		4
#define MAXREC		(2 * N * 4 + 16)

static const uint32_t vec[NV] = { 0xec, 0xfd, 0xfb, 0x22 };
enum kind { K_INJ, K_GUEST, K_LOSS };

struct rec {
	uint64_t ts;
	uint8_t kind;
	uint32_t vcpu, vector;
	bool soft, reinj;
};

struct want {
	uint64_t inj, matched, miss[AN_IRQ_MISS_N], reinj, guest_un;
	uint64_t lat[2 * N];
	size_t nlat;
	uint64_t worst, worst_ts;
	uint32_t worst_vcpu;
};

static struct rec recs[MAXREC];
static size_t nrec;
static struct want want[NV + 1];	/* + the soft vector's row */
static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(uint64_t n)
{
	return vmscope_xorshift64(&rng) % n;
}

static void add(uint64_t ts, enum kind k, uint32_t vcpu, uint32_t vector, bool soft, bool reinj)
{
	recs[nrec++] = (struct rec){ ts, (uint8_t)k, vcpu, vector, soft, reinj };
}

static void matched(struct want *x, uint64_t lat, uint64_t ts, uint32_t vcpu)
{
	x->matched++;
	x->lat[x->nlat++] = lat;
	if (x->nlat == 1 || lat > x->worst) {
		x->worst = lat;
		x->worst_ts = ts;
		x->worst_vcpu = vcpu;
	}
}

/* Which misses of the vCPU's next injection the analysis can tell apart:
 * before the vCPU's first guest record, after its last, or between. */
static bool seen[2];
static uint64_t tail[2][NV];

static void next_miss(uint32_t v, unsigned int k)
{
	if (!seen[v])
		want[k].miss[AN_IRQ_BEFORE]++;
	else
		tail[v][k]++;
}

static void guest_rec(uint32_t v)
{
	seen[v] = true;
	for (unsigned int k = 0; k < NV; k++) {
		want[k].miss[AN_IRQ_NEXT] += tail[v][k];
		tail[v][k] = 0;
	}
}

static void make_story(void)
{
	uint64_t t = SCEN_H0 + MS;
	unsigned int traced = 0;

	memset(seen, 0, sizeof(seen));
	memset(tail, 0, sizeof(tail));
	/* vCPU 0's guest not recording yet: three timer injections, no handler */
	for (int i = 0; i < 3; i++, t += 200 * US) {
		add(t, K_INJ, 0, 0xec, false, false);
		want[0].inj++;
		next_miss(0, 0);
	}
	for (uint32_t v = 0; v < 2; v++) {
		for (unsigned int i = 0; i < N; i++) {
			unsigned int k = rnd(2) ? 0 : 1 + rnd(3);
			uint64_t lat = rnd(40) ? US + rnd(30 * US) : MS;
			struct want *x = &want[k];
			bool last = i == N - 1;

			add(t, K_INJ, v, vec[k], false, false);
			x->inj++;
			if (vec[k] == 0x22) {
				x->miss[AN_IRQ_UNTRACED]++;
			} else if (last && v == 0) {
				x->miss[AN_IRQ_END]++;	/* vCPU 0 injects no more */
			} else if (last) {
				next_miss(v, k);	/* the epilogue's first comes next */
			} else if (v == 0 && i == 150) {
				add(t + lat / 2, K_LOSS, v, 0, false, false);
				x->miss[AN_IRQ_LOSS]++;
			} else if (++traced % 50 == 0) {
				next_miss(v, k);	/* no guest record */
			} else {
				if (traced % 60 == 0) {
					add(t + lat / 2, K_INJ, v, vec[k], false, true);
					x->inj++;
					x->reinj++;
				}
				add(t + lat, K_GUEST, v, vec[k], false, false);
				guest_rec(v);
				matched(x, lat, t, v);
			}
			t += lat + 2 * US;
			if (i % 70 == 0 && !last) {	/* nothing waits here */
				add(t, K_INJ, v, 3, true, false);
				want[NV].inj++;
				want[NV].miss[AN_IRQ_SOFT]++;
				t += US;
			}
			if (v == 1 && i == 100) {	/* a handler entry without one */
				add(t, K_GUEST, v, 0xec, false, false);
				guest_rec(v);
				want[0].guest_un++;
				t += US;
			}
			t += 5 * US + rnd(100 * US);
		}
	}
	/* vCPU 1's guest no longer recording: three reschedule IPIs, no
	 * handler; the last one waits at the trace's end */
	for (int i = 0; i < 3; i++, t += 200 * US) {
		add(t, K_INJ, 1, 0xfd, false, false);
		want[1].inj++;
		if (i < 2)
			next_miss(1, 1);
		else
			want[1].miss[AN_IRQ_END]++;
	}
	for (uint32_t v = 0; v < 2; v++)
		for (unsigned int k = 0; k < NV; k++)
			want[k].miss[AN_IRQ_AFTER] += tail[v][k];
}

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	return (x->ts > y->ts) - (x->ts < y->ts);
}

static int write_trace(const char *dir)
{
	struct scen_out *o;
	int e;

	nrec = 0;
	memset(want, 0, sizeof(want));
	make_story();
	qsort(recs, nrec, sizeof(recs[0]), cmp_rec);
	e = scen_out_open(&o, dir, 1, 2);
	if (e)
		return e;
	for (size_t i = 0; i < nrec; i++) {
		const struct rec *r = &recs[i];

		if (r->kind == K_INJ) {
			struct vmscope_ev_kvm_inj_virq x = { .vector = r->vector, .soft = r->soft,
							     .reinjected = r->reinj };
			struct mo_origin mo = { .orig_ts = r->ts, .cpu = 1 + r->vcpu,
						.tid = (int32_t)(1001 + r->vcpu), .vcpu = MO_NONE };

			scen_out_event(o, 0, VMSCOPE_EV_kvm_inj_virq, r->ts, &x, sizeof(x), &mo);
		} else if (r->kind == K_GUEST) {
			struct vmscope_ev_irq_vector_entry x = { .vector = r->vector };
			struct mo_origin mo = { .orig_ts = r->ts, .cpu = r->vcpu, .tid = -1,
						.origin = 1, .vcpu = r->vcpu };

			scen_out_event(o, 1, VMSCOPE_EV_irq_vector_entry, r->ts, &x, sizeof(x), &mo);
		} else {
			scen_out_loss(o, r->ts);
		}
	}
	return scen_out_close(o);
}

static void check(const char *merged)
{
	static const uint32_t rows[NV + 1] = { 0xec, 0xfd, 0xfb, 0x22, 3 };
	struct an_hooks h = { 0 };
	struct an_irq a;
	struct an_walk *w;
	char err[256];

	CHECK_EQ(an_walk_open(&w, merged, 0, err, sizeof(err)), 0);
	if (!w) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	CHECK(an_walk_has_inject(w) && an_walk_vm_has_vector(w, 0));
	CHECK_EQ(an_irq_init(&a, w), 0);
	an_irq_hooks(&a, &h);
	CHECK_EQ(an_walk_run(w, &h, err, sizeof(err)), 0);
	CHECK(!a.oom);
	for (unsigned int k = 0; k <= NV; k++) {
		const struct an_irq_row *r = an_irq_row(&a, 0, rows[k]);
		struct want *x = &want[k];

		CHECK(r != NULL);
		if (!r)
			continue;
		CHECK_EQ(r->injections, x->inj);
		CHECK_EQ(r->matched, x->matched);
		for (int m = 0; m < AN_IRQ_MISS_N; m++)
			EXPECT(r->unmatched[m] == x->miss[m], "vector %#x %s: %" PRIu64 ", want %"
			       PRIu64, rows[k], an_irq_miss_names[m], r->unmatched[m], x->miss[m]);
		CHECK_EQ(r->reinjections, x->reinj);
		CHECK_EQ(r->guest_unmatched, x->guest_un);
		CHECK_EQ(r->matched + an_irq_unmatched(r) + r->reinjections, r->injections);
		CHECK_EQ(r->lat.count, x->nlat);
		if (x->nlat) {
			qsort(x->lat, x->nlat, sizeof(x->lat[0]), cmp_u64);
			CHECK_EQ(r->lat.max, x->lat[x->nlat - 1]);
			CHECK(within(an_hist_quantile(&r->lat, 0.5), exact_q(x->lat, x->nlat, 0.5)));
			CHECK(within(an_hist_quantile(&r->lat, 0.99), exact_q(x->lat, x->nlat, 0.99)));
			CHECK_EQ(r->worst_ts, x->worst_ts);
			CHECK_EQ(r->worst_vcpu, x->worst_vcpu);
		}
		fprintf(stderr, "vector %#x: %" PRIu64 " injected, %" PRIu64 " matched, %" PRIu64
			" unmatched, %" PRIu64 " reinjected\n", rows[k], r->injections, r->matched,
			an_irq_unmatched(r), r->reinjections);
	}
	an_irq_free(&a);
	an_walk_close(w);
}

int main(void)
{
	char dir[256], merged[512];
	int fd = tf_test_mkdir(dir, sizeof(dir));

	CHECK(fd >= 0);
	if (fd < 0)
		return check_result("analysis-irq");
	CHECK_EQ(write_trace(dir), 0);
	snprintf(merged, sizeof(merged), "%s/merged", dir);
	check(merged);
	close(fd);
	tf_test_rmdir(dir);
	return check_result("analysis-irq");
}
