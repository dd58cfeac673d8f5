/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The stream policy on small hand-built sequences: configuration checks,
 * each drop reason, a bogus first sample, a burst of forgeries with valid
 * credentials (the documented limit), breaks and seq reset, the span
 * limit, pending overflow, and offline run == streaming.
 */
#include <stdio.h>
#include <string.h>

#include "../../tests/lib/check.h"
#include "vmscope_sync.h"

#define N 400
static int64_t outcome[N];
static int resolved[N];
static struct vmscope_sync_segment segs[16];
static int nseg;

static void on_sample(void *u, uint64_t c, int64_t o)
{
	(void)u;
	REQUIRE(c < N, "cookie");
	outcome[c] = o;
	resolved[c]++;
}

static void on_segment(void *u, const struct vmscope_sync_segment *s)
{
	(void)u;
	REQUIRE(nseg < 16, "segments");
	segs[nseg++] = *s;
}

static const uint64_t G = 1ULL << 63, H = 5000000000ULL, TOKEN = 77;

/* Honest exchange i on a perfect line h = g - G + H: 700 ns forward,
 * 2 us in the host, 900 ns back, one every 100 us. */
static struct vmscope_sync_exchange ex(int i, uint32_t vcpu, uint64_t seq)
{
	uint64_t g = G + (uint64_t)i * 100000;
	struct vmscope_sync_exchange x = {
		.cookie = (uint64_t)i, .vcpu = vcpu, .token = TOKEN, .seq = seq,
		.t2 = g - G + H + 700 + (uint64_t)(i % 7) * 13,
		.guest_valid = true, .guest_seq = seq, .t1 = g,
	};
	x.t3 = x.t2 + 2000;
	x.t4 = x.t3 - H + G + 900;
	x.t1_claim = x.t1;
	return x;
}

static struct vmscope_sync *fresh(struct vmscope_sync_config *cfg)
{
	memset(outcome, 0, sizeof(outcome));
	memset(resolved, 0, sizeof(resolved));
	nseg = 0;
	*cfg = (struct vmscope_sync_config){
		.n_vcpus = 2, .check_token = true, .token = TOKEN,
		.on_sample = on_sample, .on_segment = on_segment,
	};
	return NULL;
}

static void all_resolved(int n)
{
	for (int i = 0; i < n; i++)
		REQUIRE(resolved[i] == 1, "sample %d resolved %d times", i,
		      resolved[i]);
}

static int64_t dropped_as(enum vmscope_sync_drop r)
{
	return -1 - (int64_t)r;
}

/* The guest's clock @s ns ahead in @e, its claim consistent with it. */
static void guest_ahead(struct vmscope_sync_exchange *e, uint64_t s)
{
	e->t1 += s;
	e->t4 += s;
	e->t1_claim = e->t1;
}

/* Configuration. */
static void test_config(void)
{
	struct vmscope_sync_config cfg;

	fresh(&cfg);
	cfg.n_vcpus = 0;
	REQUIRE(!vmscope_sync_new(&cfg), "0 vCPUs accepted");
	fresh(&cfg);
	cfg.confirm = 1;
	REQUIRE(!vmscope_sync_new(&cfg), "confirm 1 accepted");
	fresh(&cfg);
	cfg.ppm = VMSCOPE_SYNC_MAX_PPM + 1;
	REQUIRE(!vmscope_sync_new(&cfg), "ppm too large accepted");
}

/* Every per-sample reason. */
static void test_drop_reasons(void)
{
	struct vmscope_sync_config cfg;
	struct vmscope_sync_exchange x[12], rep;
	struct vmscope_sync *c;

	fresh(&cfg);
	c = vmscope_sync_new(&cfg);
	for (int i = 0; i < 12; i++)
		x[i] = ex(i, 0, (uint64_t)i + 1);
	x[2].vcpu = 9;
	x[3].token = 1;
	x[4].guest_valid = false;
	x[5].t1_claim++;
	x[6].guest_seq++;
	x[7].t4 = x[7].t1 - 1;
	x[8].t4 = x[8].t1 + 100;  /* guest round trip 100 < host's 2000 */
	x[9].seq = x[9].guest_seq = 2;  /* not above seq 2 of sample 1 */
	for (int i = 0; i < 12; i++)
		vmscope_sync_add(c, &x[i]);
	rep = x[11];  /* replay of the last */
	rep.cookie = 12;
	vmscope_sync_add(c, &rep);
	vmscope_sync_finish(c);
	REQUIRE(outcome[2] == dropped_as(VMSCOPE_SYNC_DROP_VCPU), "vcpu");
	REQUIRE(outcome[3] == dropped_as(VMSCOPE_SYNC_DROP_TOKEN), "token");
	REQUIRE(outcome[4] == dropped_as(VMSCOPE_SYNC_DROP_UNPAIRED), "unpaired");
	REQUIRE(outcome[5] == dropped_as(VMSCOPE_SYNC_DROP_MISMATCH), "claim");
	REQUIRE(outcome[6] == dropped_as(VMSCOPE_SYNC_DROP_MISMATCH), "seq");
	REQUIRE(outcome[7] == dropped_as(VMSCOPE_SYNC_DROP_MALFORMED), "malformed");
	REQUIRE(outcome[8] == dropped_as(VMSCOPE_SYNC_DROP_RTT), "rtt");
	REQUIRE(outcome[9] == dropped_as(VMSCOPE_SYNC_DROP_REPLAY), "order");
	REQUIRE(outcome[12] == dropped_as(VMSCOPE_SYNC_DROP_REPLAY), "replay");
	REQUIRE(outcome[0] == 0 && outcome[1] == 0 && outcome[10] == 0 &&
	      outcome[11] == 0, "honest");
	all_resolved(13);
	vmscope_sync_free(c);
}

/* @n honest exchanges, the first @forged of them 1 s ahead on the guest. */
static struct vmscope_sync *forged_start(int n, int forged)
{
	struct vmscope_sync_config cfg;
	struct vmscope_sync *c;

	fresh(&cfg);
	c = vmscope_sync_new(&cfg);
	for (int i = 0; i < n; i++) {
		struct vmscope_sync_exchange e = ex(i, 0, (uint64_t)i + 1);

		if (i < forged)
			guest_ahead(&e, 1000000000);
		vmscope_sync_add(c, &e);
	}
	vmscope_sync_finish(c);
	all_resolved(n);
	return c;
}

/* A bogus first sample cannot found a segment. */
static void test_bogus_first(void)
{
	struct vmscope_sync *c = forged_start(50, 1);
	struct vmscope_sync_stats st;

	REQUIRE(outcome[0] == dropped_as(VMSCOPE_SYNC_DROP_OUTLIER), "bogus first");
	REQUIRE(nseg == 1 && segs[0].n_samples == 49, "segments %d", nseg);
	vmscope_sync_get_stats(c, &st);
	REQUIRE(st.discarded_segments == 1, "discarded %llu",
	      (unsigned long long)st.discarded_segments);
	vmscope_sync_free(c);
}

/* Limit: `confirm` consistent forgeries with valid credentials at the
 * start form a segment of their own. They never share a segment with
 * honest samples, whose segment still contains the truth. */
static void test_forged_burst(void)
{
	struct vmscope_sync *c = forged_start(60, 4);
	uint64_t g = G + 30 * 100000, lo, hi;

	REQUIRE(nseg == 2 && segs[0].n_samples == 4 && segs[1].n_samples == 56,
	      "forged burst: %d segments", nseg);
	REQUIRE(vmscope_sync_segment_bound(&segs[1], g, &lo, &hi) == 0 &&
	      lo <= g - G + H && g - G + H <= hi, "truth");
	vmscope_sync_free(c);
}

/* A guest clock step of +300 us without a break, with one exchange
 * whose 1 ms forward delay makes it fit both sides. Arriving before
 * any evidence of the step it stays in the old segment, which then
 * flags it as after its certain end; arriving after the evidence it
 * goes to the new segment. */
static void test_step(int variant)
{
	int amb = variant == 0 ? 50 : 51;
	struct vmscope_sync_exchange last_before = { 0 };
	struct vmscope_sync_config cfg;
	struct vmscope_sync *c;

	fresh(&cfg);
	c = vmscope_sync_new(&cfg);
	for (int i = 0; i < 100; i++) {
		struct vmscope_sync_exchange e = ex(i, i == amb, (uint64_t)i + 1);

		if (i == amb) {
			e.t2 += 1000000;
			e.t3 += 1000000;
			e.t4 += 1000000;
		}
		if (i >= 50)
			guest_ahead(&e, 300000);
		if (i == 49)
			last_before = e;
		vmscope_sync_add(c, &e);
	}
	vmscope_sync_finish(c);
	all_resolved(100);
	REQUIRE(nseg == 2, "step: %d segments", nseg);
	REQUIRE(outcome[amb] == (variant == 0 ? 0 : 1),
	      "ambiguous sample in segment %lld", (long long)outcome[amb]);
	REQUIRE(segs[0].h_certain_end == last_before.t3,
	      "certain end %llu, last sample before the step ends %llu",
	      (unsigned long long)segs[0].h_certain_end,
	      (unsigned long long)last_before.t3);
	REQUIRE(segs[1].h_certain_end == segs[1].h_last, "closed by finish");
	for (int i = 0; i < 100; i++)
		REQUIRE(outcome[i] == (i < 50 || (variant == 0 && i == amb) ? 0 : 1),
		      "variant %d: sample %d in %lld", variant, i,
		      (long long)outcome[i]);
	vmscope_sync_free(c);
}

/* Explicit break: the segment closes; reset_seq forgets seqs. */
static void test_break(void)
{
	struct vmscope_sync_config cfg;
	struct vmscope_sync_exchange e10, e11;
	struct vmscope_sync *c;

	fresh(&cfg);
	c = vmscope_sync_new(&cfg);
	for (int i = 0; i < 10; i++) {
		struct vmscope_sync_exchange e = ex(i, 1, (uint64_t)i + 1);

		vmscope_sync_add(c, &e);
	}
	vmscope_sync_break(c, false);
	e10 = ex(10, 1, 1);
	vmscope_sync_add(c, &e10);
	REQUIRE(outcome[10] == dropped_as(VMSCOPE_SYNC_DROP_REPLAY), "seq kept");
	vmscope_sync_break(c, true);
	e11 = ex(11, 1, 1);
	vmscope_sync_add(c, &e11);
	vmscope_sync_finish(c);
	REQUIRE(outcome[11] >= 0, "seq not reset");
	REQUIRE(nseg == 2, "break: %d segments", nseg);
	vmscope_sync_free(c);
}

/* Span limit: 1 ms segments over 10 ms of exchanges. */
static void test_span_limit(void)
{
	struct vmscope_sync_config cfg;
	struct vmscope_sync *c;

	fresh(&cfg);
	cfg.max_segment_ns = 1000000;
	c = vmscope_sync_new(&cfg);
	for (int i = 0; i < 100; i++) {
		struct vmscope_sync_exchange e = ex(i, 0, (uint64_t)i + 1);

		vmscope_sync_add(c, &e);
	}
	vmscope_sync_finish(c);
	all_resolved(100);
	REQUIRE(nseg == 10, "span limit: %d segments", nseg);
	vmscope_sync_free(c);
}

/* Exchange @i of the overflow input: 40 mutually inconsistent wild ones. */
static struct vmscope_sync_exchange overflow_ex(int i)
{
	struct vmscope_sync_exchange e = ex(i, 0, (uint64_t)i + 1);

	if (i >= 50 && i < 90)
		guest_ahead(&e, (uint64_t)(i - 49) * 7919 * 1000000);
	return e;
}

/* Pending overflow: 40 mutually inconsistent wild samples in a row,
 * then honest ones: the wild are all dropped, honest all kept. Then an
 * offline run over the same input gives the same result. */
static void test_overflow(void)
{
	struct vmscope_sync_exchange all[200];
	struct vmscope_sync_stats st, st_stream;
	struct vmscope_sync_config cfg;
	struct vmscope_sync *c;

	fresh(&cfg);
	c = vmscope_sync_new(&cfg);
	for (int i = 0; i < 200; i++) {
		struct vmscope_sync_exchange e = overflow_ex(i);

		vmscope_sync_add(c, &e);
	}
	vmscope_sync_finish(c);
	all_resolved(200);
	vmscope_sync_get_stats(c, &st_stream);
	for (int i = 0; i < 200; i++)
		REQUIRE((i >= 50 && i < 90) == (outcome[i] < 0), "sample %d: %lld", i,
		      (long long)outcome[i]);
	REQUIRE(st_stream.dropped[VMSCOPE_SYNC_DROP_OVERFLOW] > 0, "no overflow");
	REQUIRE(nseg == 1, "overflow: %d segments", nseg);
	vmscope_sync_free(c);

	for (int i = 0; i < 200; i++)
		all[i] = overflow_ex(i);
	fresh(&cfg);
	REQUIRE(vmscope_sync_run(&cfg, all, 200, &st) == 0, "run");
	REQUIRE(memcmp(&st, &st_stream, sizeof(st)) == 0, "offline != stream");
}

int main(void)
{
	test_config();
	test_drop_reasons();
	test_bogus_first();
	test_forged_burst();
	for (int variant = 0; variant < 2; variant++)
		test_step(variant);
	test_break();
	test_span_limit();
	test_overflow();
	printf("sync stream policy: all checks passed\n");
	return 0;
}
