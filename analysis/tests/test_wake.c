// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test `analysis-wake`: halt polling per vCPU (halt.h, the walk's
 * wake-ups) on a merged trace with a known story, written through merge's
 * own writer (scen.h).
 *
 * One VM, two vCPUs (threads 1001, 1002 on host CPUs 1, 2), 400 halts
 * each, vCPU 1's after vCPU 0's: a HLT kvm_exit, 1 us later the halt starts and lasts 2-500 us
 * (KVM's ns); two in three the vCPU thread goes to sleep part-way (a host
 * sched_switch away from it, not runnable) and comes back after the
 * wake-up, else polling catches the wake-up; the kvm_vcpu_wakeup record
 * at the halt's end, the kvm_entry 0.5-50 us after it (one in 50: 2 ms).
 * Twists, each with its known answer: in one polled halt of vCPU 0 its
 * thread is preempted (runnable) while polling, which is no sleep; one
 * slept halt of vCPU 1 has no switch away in the trace (polling time
 * unknown) but a preemption while it polled (still unknown); a loss between one wake-up of vCPU 0 and its entry (that
 * wake-up counted with its entry unknown).
 *
 * Expected values come from the story: per vCPU the wake-ups, polled and
 * slept, KVM's halted time, the polling time (the whole of a polled halt,
 * up to the switch away in a slept one), the wake-up -> entry latencies:
 * count and max exact, p50 and p99 within the histogram's 1/128 of the
 * exact values at those ranks.
 *
 * With --write DIR it leaves the trace in DIR (DIR/merged) and the
 * expected values in DIR/expect, for cli/tests/report-wake-test.sh.
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
#include "halt.h"
#include "out.h"
#include "scen.h"
#include "vmscope_events.h"
#include "walk.h"

#define US		1000ull
#define MS		1000000ull
#define HALTS		400
#define MAXREC		(2 * HALTS * 8 + 16)

enum kind { K_EXIT, K_AWAY, K_BACK, K_PREEMPT, K_WAKE, K_ENTRY, K_LOSS };

struct rec {
	uint64_t ts;
	uint8_t kind;
	uint32_t vcpu;
	uint64_t ns;		/* K_WAKE: halt ns */
	bool waited;
};

struct want {
	uint64_t wakeups, polled, slept, halted_ns, poll_ns, poll_unknown;
	uint64_t entry_unknown;
	uint64_t lat[HALTS];
	size_t nlat;
};

static struct rec recs[MAXREC];
static size_t nrec;
static struct want want[2];
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(uint64_t n)
{
	return vmscope_xorshift64(&rng) % n;
}

static void add(uint64_t ts, enum kind k, uint32_t vcpu, uint64_t ns, bool waited)
{
	recs[nrec++] = (struct rec){ ts, (uint8_t)k, vcpu, ns, waited };
}

static void make_story(void)
{
	uint64_t t = SCEN_H0 + MS;

	/* vCPU 1 after vCPU 0, so that the loss (which ends what every vCPU
	 * has open) falls in vCPU 0's story alone */
	for (uint32_t v = 0; v < 2; v++) {
		struct want *x = &want[v];

		for (unsigned int i = 0; i < HALTS; i++) {
			uint64_t start = t + US, halt = 2 * US + rnd(498 * US);
			uint64_t wake = start + halt;
			uint64_t lat = rnd(50) ? 500 + rnd(50 * US) : 2 * MS;
			/* the twists: halt 50 of vCPU 0 polled, 100 of vCPU 1 slept */
			bool slept = (v == 1 && i == 100) || (rnd(3) != 0 && !(v == 0 && i == 50));

			add(t, K_EXIT, v, 0, false);
			if (slept) {
				uint64_t poll = rnd(halt / 2);

				if (v == 1 && i == 100) {
					/* its switch away not recorded, but a
					 * preemption while polling: no sleep */
					x->poll_unknown++;
					add(start + halt / 3, K_PREEMPT, v, 0, false);
					add(start + halt / 2, K_BACK, v, 0, false);
				} else {
					add(start + poll, K_AWAY, v, 0, false);
					x->poll_ns += poll;
				}
				add(wake + lat / 2, K_BACK, v, 0, false);
			} else {
				x->poll_ns += halt;
				if (v == 0 && i == 50) {	/* preempted while polling */
					add(start + halt / 3, K_PREEMPT, v, 0, false);
					add(start + halt / 2, K_BACK, v, 0, false);
				}
			}
			add(wake, K_WAKE, v, halt, slept);
			x->wakeups++;
			x->polled += !slept;
			x->slept += slept;
			x->halted_ns += halt;
			if (v == 0 && i == 200) {
				add(wake + 1, K_LOSS, v, 0, false);
				x->entry_unknown++;
			} else {
				x->lat[x->nlat++] = lat;
			}
			add(wake + lat, K_ENTRY, v, 0, false);
			t = wake + lat + 10 * US + rnd(190 * US);
		}
	}
}

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	return (x->ts > y->ts) - (x->ts < y->ts);
}

static void host_switch(struct scen_out *o, const struct rec *r)
{
	struct vmscope_ev_sched_switch sw = { 0 };
	int32_t vt = (int32_t)(1001 + r->vcpu), other = r->kind == K_PREEMPT ? 4242 : 0;
	struct mo_origin mo = { .orig_ts = r->ts, .cpu = 1 + r->vcpu, .vcpu = MO_NONE };

	if (r->kind == K_BACK) {
		sw.prev_pid = sw.prev_tgid = other;
		sw.next_pid = vt;
		sw.next_tgid = 1000;
		mo.tid = other;
	} else {
		sw.prev_pid = vt;
		sw.prev_tgid = 1000;
		sw.prev_state = r->kind == K_PREEMPT ? 0 : 1;	/* R (preempted) / S */
		sw.preempt = r->kind == K_PREEMPT;
		sw.next_pid = sw.next_tgid = other;
		mo.tid = vt;
	}
	scen_out_event(o, 0, VMSCOPE_EV_sched_switch, r->ts, &sw, sizeof(sw), &mo);
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
		struct mo_origin mo = { .orig_ts = r->ts, .cpu = 1 + r->vcpu,
					.tid = (int32_t)(1001 + r->vcpu), .vcpu = r->vcpu };

		switch (r->kind) {
		case K_EXIT: {
			struct vmscope_ev_kvm_exit x = { .vcpu_id = r->vcpu, .exit_reason = 0x78,
							 .isa = 2, .reason_valid = 1 };

			scen_out_event(o, 0, VMSCOPE_EV_kvm_exit, r->ts, &x, sizeof(x), &mo);
			break;
		}
		case K_ENTRY: {
			struct vmscope_ev_kvm_entry x = { .vcpu_id = r->vcpu };

			scen_out_event(o, 0, VMSCOPE_EV_kvm_entry, r->ts, &x, sizeof(x), &mo);
			break;
		}
		case K_WAKE: {
			struct vmscope_ev_kvm_vcpu_wakeup x = { .ns = r->ns, .waited = r->waited,
								.valid = 1 };

			mo.vcpu = MO_NONE;
			scen_out_event(o, 0, VMSCOPE_EV_kvm_vcpu_wakeup, r->ts, &x, sizeof(x), &mo);
			break;
		}
		case K_LOSS:
			scen_out_loss(o, r->ts);
			break;
		default:
			host_switch(o, r);
		}
	}
	return scen_out_close(o);
}

static void check(const char *merged)
{
	struct an_hooks h = { 0 };
	struct an_halt a;
	struct an_walk *w;
	char err[256];

	CHECK_EQ(an_walk_open(&w, merged, 0, err, sizeof(err)), 0);
	if (!w) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	CHECK(an_walk_has_wakeup(w));
	CHECK_EQ(an_halt_init(&a, w), 0);
	an_halt_hooks(&a, &h);
	CHECK_EQ(an_walk_run(w, &h, err, sizeof(err)), 0);
	CHECK(!a.oom);
	for (uint32_t v = 0; v < 2; v++) {
		const struct an_halt_vcpu *k = an_halt_vcpu(&a, 0, v);
		struct want *x = &want[v];

		CHECK(k != NULL);
		if (!k)
			continue;
		qsort(x->lat, x->nlat, sizeof(x->lat[0]), cmp_u64);
		CHECK_EQ(k->wakeups, x->wakeups);
		CHECK_EQ(k->polled, x->polled);
		CHECK_EQ(k->slept, x->slept);
		CHECK_EQ(k->invalid, 0);
		CHECK_EQ(k->halted_ns, x->halted_ns);
		CHECK_EQ(k->poll_ns, x->poll_ns);
		CHECK_EQ(k->poll_unknown, x->poll_unknown);
		CHECK_EQ(k->entry_unknown, x->entry_unknown);
		CHECK_EQ(k->entry.count, x->nlat);
		CHECK_EQ(k->entry.max, x->lat[x->nlat - 1]);
		CHECK_EQ(k->entry.min, x->lat[0]);
		CHECK(within(an_hist_quantile(&k->entry, 0.5), exact_q(x->lat, x->nlat, 0.5)));
		CHECK(within(an_hist_quantile(&k->entry, 0.99), exact_q(x->lat, x->nlat, 0.99)));
		fprintf(stderr, "vcpu %u: %" PRIu64 " wake-ups, %" PRIu64 " polled, %" PRIu64
			" slept, halted %" PRIu64 " ns, polling %" PRIu64 " ns\n", v, k->wakeups,
			k->polled, k->slept, k->halted_ns, k->poll_ns);
	}
	an_halt_free(&a);
	an_walk_close(w);
}

/* DIR/expect: one line per vCPU, "vcpu wakeups polled slept halted_ns
 * polling_ns polling_unknown entry_count entry_max entry_unknown p50 p99"
 * (p50/p99 exact: the command's are within 1/128 of them). */
static int write_expect(const char *dir)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/expect", dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	for (uint32_t v = 0; v < 2; v++) {
		struct want *x = &want[v];

		qsort(x->lat, x->nlat, sizeof(x->lat[0]), cmp_u64);
		fprintf(f, "%u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
			" %zu %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", v, x->wakeups,
			x->polled, x->slept, x->halted_ns, x->poll_ns, x->poll_unknown, x->nlat,
			x->lat[x->nlat - 1], x->entry_unknown, exact_q(x->lat, x->nlat, 0.5),
			exact_q(x->lat, x->nlat, 0.99));
	}
	return fclose(f);
}

int main(int argc, char **argv)
{
	char dir[256], merged[512];
	int fd;

	if (argc == 3 && !strcmp(argv[1], "--write")) {
		CHECK_EQ(write_trace(argv[2]), 0);
		CHECK_EQ(write_expect(argv[2]), 0);
		return check_result("analysis-wake --write");
	}
	fd = tf_test_mkdir(dir, sizeof(dir));
	CHECK(fd >= 0);
	if (fd < 0)
		return check_result("analysis-wake");
	CHECK_EQ(write_trace(dir), 0);
	snprintf(merged, sizeof(merged), "%s/merged", dir);
	check(merged);
	close(fd);
	tf_test_rmdir(dir);
	return check_result("analysis-wake");
}
