// SPDX-License-Identifier: GPL-2.0
/*
 * The online merge (online.h) against the two-pass merge (mg_sync +
 * mg_merge) on synthetic traces (tests/synth.c: 2 VMs, ±200 ppm drift,
 * a guest clock step with its kvm_write_tsc_offset, forged exchanges):
 *
 * - the same pairing and the same final segments (the sync library is
 *   fed the same exchanges in the same order);
 * - every record once: the host records in exactly the merged trace's
 *   order, each guest stream's records in its own order, as many;
 * - host time never goes back;
 * - each guest record converted inside its segment's samples lies within
 *   the bound it was converted with of the simulated true host time;
 * - with queues of 64 records (a guest record then cannot wait for its
 *   next sample): still every record once and in order, the extrapolated
 *   ones counted.
 * It prints, per trace, how far the online times are from the two-pass
 * ones (the online merge converts with the segment as it stands, the
 * two-pass one with the final segment).
 *
 * `test_online --write DIR [SECONDS]` writes the raw trace
 * cli/tests/top-raw-test.sh replays (0.4 s long, or SECONDS);
 * `--write-stalls` the same with vCPU threads off their CPUs and steal
 * readings (synth.h, stalls); `--write-details` with what the exits
 * accessed (synth.h, details).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tracefmt/tests/util.h"
#include "merge.h"
#include "online.h"
#include "out.h"
#include "synth.h"

struct ent {
	uint32_t origin, cpu;
	uint64_t orig_ts, ts;
};

struct list {
	struct ent *e;
	size_t n, cap;
};

static void add(struct list *l, uint32_t origin, uint32_t cpu, uint64_t orig_ts, uint64_t ts)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 1024;
		l->e = realloc(l->e, l->cap * sizeof(*l->e));
		if (!l->e)
			abort();
	}
	l->e[l->n++] = (struct ent){ origin, cpu, orig_ts, ts };
}

/* The records of @l of one stream (origin, cpu), in order, as a list. */
static void only(const struct list *l, uint32_t origin, uint32_t cpu, struct list *out)
{
	out->n = 0;
	for (size_t i = 0; i < l->n; i++)
		if (l->e[i].origin == origin && l->e[i].cpu == cpu)
			add(out, origin, cpu, l->e[i].orig_ts, l->e[i].ts);
}

/* Host records: exactly the merged order. */
static void check_host_order(const struct list *two, const struct list *on)
{
	size_t j = 0;

	for (size_t i = 0; i < two->n; i++) {
		if (two->e[i].origin)
			continue;
		while (j < on->n && on->e[j].origin)
			j++;
		CHECK(j < on->n);
		if (j == on->n)
			break;
		if (on->e[j].cpu != two->e[i].cpu || on->e[j].orig_ts != two->e[i].orig_ts) {
			CHECK(!"host order");
			break;
		}
		j++;
	}
}

/* Guest streams: their own order, all of them; the worst distance from
 * the two-pass times (@a, @b: scratch lists). */
static long double guest_diff(const struct list *two, const struct list *on,
			      const struct synth *s, struct list *a, struct list *b)
{
	long double worst_diff = 0;

	for (uint32_t v = 1; v <= s->n_vms; v++)
		for (uint32_t c = 0; c < s->vcpus; c++) {
			only(two, v, c, a);
			only(on, v, c, b);
			CHECK_EQ(a->n, b->n);
			for (size_t i = 0; i < a->n && i < b->n; i++) {
				long double d = fabsl((long double)a->e[i].ts - (long double)b->e[i].ts);

				CHECK_EQ(a->e[i].orig_ts, b->e[i].orig_ts);
				if (d > worst_diff)
					worst_diff = d;
			}
		}
	return worst_diff;
}

/* Where the two timelines differ for the analysis: a guest record on the
 * other side of a host record (the k-th record of each guest stream, with
 * the host records before it). */
static size_t count_moved(const struct list *two, const struct list *on)
{
	size_t moved = 0, *hb = calloc(two->n + 1, sizeof(*hb)), slots = 4 * 8;
	size_t idx2[32] = { 0 }, idx1[32] = { 0 }, *base = calloc(slots + 1, sizeof(*base));
	size_t nh = 0;

	for (size_t i = 0; i < two->n; i++) {	/* each stream's offset in hb */
		if (two->e[i].origin)
			base[(two->e[i].origin - 1) * 8 + two->e[i].cpu + 1]++;
	}
	for (size_t k = 1; k <= slots; k++)
		base[k] += base[k - 1];
	for (size_t i = 0; i < two->n; i++) {
		size_t k = two->e[i].origin ? (two->e[i].origin - 1) * 8 + two->e[i].cpu : 0;

		if (!two->e[i].origin)
			nh++;
		else
			hb[base[k] + idx2[k]++] = nh;
	}
	nh = 0;
	for (size_t i = 0; i < on->n; i++) {
		size_t k = on->e[i].origin ? (on->e[i].origin - 1) * 8 + on->e[i].cpu : 0;

		if (!on->e[i].origin)
			nh++;
		else if (base[k] + idx1[k] < two->n)
			moved += hb[base[k] + idx1[k]++] != nh;
	}
	free(hb);
	free(base);
	return moved;
}

static void run(const char *dir, uint64_t seed, size_t cap, bool small)
{
	char in[512], outp[512], err[256];
	struct mg_opts mo = { 0 };
	struct om_opts oo = { .cap = cap };
	struct mg_result r2;
	struct vr_trace *t;
	struct synth s;
	struct mr *mr;
	struct om *om;
	struct om_rec rec;
	struct vr_item it;
	struct mo_origin o;
	bool has;
	struct list two = { 0 }, on = { 0 }, a = { 0 }, b = { 0 };
	uint64_t prev = 0, checked = 0, worst_bound = 0;
	long double worst_diff, worst_truth = 0;
	size_t moved;
	int e;

	synth_defaults(&s, seed);
	snprintf(in, sizeof(in), "%s/t%" PRIu64 "-%zu", dir, seed, cap);
	snprintf(outp, sizeof(outp), "%s/t%" PRIu64 "-%zu.merged", dir, seed, cap);
	CHECK_EQ(synth_write_sync(&s, in, &mo, &t, &r2, err, sizeof(err)), 0);
	if (!t)
		return;
	CHECK_EQ(mg_merge(t, outp, &r2, err, sizeof(err)), 0);
	CHECK_EQ(mr_open(&mr, outp, 0, err, sizeof(err)), 0);
	while (mr && mr_next(mr, &it, &o, &has) == 1)
		if (it.kind == VR_EVENT && has)
			add(&two, o.origin, o.cpu, o.orig_ts, it.ts);
	mr_close(mr);

	CHECK_EQ(om_open(&om, t, &oo, err, sizeof(err)), 0);
	if (!om)
		return;
	while ((e = om_next(om, &rec)) == 1) {
		CHECK(rec.ts >= prev);
		prev = rec.ts;
		if (rec.kind != VR_EVENT)
			continue;
		add(&on, rec.o.origin, rec.o.cpu, rec.o.orig_ts, rec.ts);
		if (rec.o.origin && !rec.extrapolated) {
			long double truth = synth_g2h(&s, rec.o.origin - 1, rec.o.orig_ts);
			long double d = fabsl((long double)rec.ts - truth);

			/* the estimate and the truth both lie in the bound */
			CHECK(d <= (long double)rec.bound_ns + 1);
			if (d > worst_truth)
				worst_truth = d;
			if (rec.bound_ns > worst_bound)
				worst_bound = rec.bound_ns;
			checked++;
		}
	}
	CHECK_EQ(e, 0);
	const struct mg_result *r1 = om_result(om);
	const struct om_stats *st = om_stats(om);

	/* the same pairing, the same segments */
	CHECK_EQ(r1->pair->st.paired, r2.pair->st.paired);
	CHECK_EQ(r1->pair->st.host_only, r2.pair->st.host_only);
	CHECK_EQ(r1->pair->st.guest_only, r2.pair->st.guest_only);
	for (uint32_t v = 0; v < r2.n_vms; v++) {
		CHECK_EQ(r1->mt.vm[v].nseg, r2.mt.vm[v].nseg);
		for (size_t k = 0; k < r2.mt.vm[v].nseg && k < r1->mt.vm[v].nseg; k++)
			CHECK_EQ(r1->mt.vm[v].seg[k].n_samples, r2.mt.vm[v].seg[k].n_samples);
	}
	CHECK_EQ(on.n, two.n);
	CHECK_EQ(st->unconverted, 0);
	CHECK_EQ(st->late, 0);
	CHECK_EQ(st->bad, 0);
	CHECK(st->peak_held <= (cap ? cap : OM_CAP) && st->peak_queued <= (cap ? cap : OM_CAP));
	check_host_order(&two, &on);
	worst_diff = guest_diff(&two, &on, &s, &a, &b);
	moved = count_moved(&two, &on);
	if (!small)
		CHECK(checked > 0);
	printf("seed %" PRIu64 " cap %zu: %zu records (%" PRIu64 " host, %" PRIu64 " guest), "
	       "%" PRIu64 " extrapolated; %" PRIu64 " checked against the truth, worst %.1Lf ns "
	       "(widest bound %" PRIu64 " ns); online vs two-pass time: worst %.1Lf ns, "
	       "%zu guest records on the other side of a host record; peak held %zu, queued %zu\n",
	       seed, cap, on.n, st->host, st->guest, st->extrapolated, checked, worst_truth,
	       worst_bound, worst_diff, moved, st->peak_held, st->peak_queued);
	om_close(om);
	mg_result_free(&r2);
	vr_trace_close(t);
	free(two.e);
	free(on.e);
	free(a.e);
	free(b.e);
}

int main(int argc, char **argv)
{
	char dir[256];

	if ((argc == 3 || argc == 4) && (!strcmp(argv[1], "--write") ||
					 !strcmp(argv[1], "--write-stalls") ||
					 !strcmp(argv[1], "--write-details"))) {
		/* the raw trace of cli/tests/top-raw-test.sh: the default
		 * synthetic trace with the guest module's real event table,
		 * which the analysis reads; --write-stalls: with vCPU threads
		 * taken off their CPUs and growing steal readings
		 * (cli/tests/metrics-feed-test.sh); --write-details: with
		 * what the exits accessed (cli/tests/report-raw-test.sh) */
		struct synth s;

		synth_defaults(&s, 1);
		s.walkable = true;
		s.stalls = !strcmp(argv[1], "--write-stalls");
		s.details = !strcmp(argv[1], "--write-details");
		if (argc == 4)
			s.duration_ns = (uint64_t)(atof(argv[3]) * 1e9);
		return synth_write(&s, argv[2]) ? 1 : 0;
	}
	CHECK_EQ(tf_test_mkdir(dir, sizeof(dir)) >= 0, 1);
	printf("a record held or queued: %zu bytes\n", sizeof(struct om_rec));
	run(dir, 1, 0, false);
	run(dir, 3, 0, false);
	run(dir, 1, 64, true);
	tf_test_rmdir(dir);
	return check_result("merge-online");
}
