// SPDX-License-Identifier: GPL-2.0
/*
 * `vmscope merge` throughput and memory on a synthetic trace
 * (merge/tests/synth.c: 2 VMs x 2 vCPUs, 2 host CPUs, an exchange per
 * vCPU every 250 us, 10% of them forged, a clock step):
 *
 *   merge-bench EVENTS DIR [RUNS]
 *
 * writes DIR/in with about EVENTS events (the generator needs O(1)
 * memory), then RUNS times: pass 1 (scan every stream for sync records,
 * pair, fit: sync ingestion) and pass 2 (the k-way merge into DIR/out,
 * deleted after each run). Prints each run and the medians: exchanges/s
 * of pass 1 (which reads every event: also given as events/s), events/s
 * of the merge, and the process's peak RSS (run 1 M and 10 M in separate
 * processes to compare).
 */
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "merge.h"
#include "../merge/tests/synth.h"
#include "util_clock.h"

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	struct synth s;
	char in[4096], out[4096], err[512];
	double scan[32], pass1[32], merge[32];
	int runs = argc > 3 ? atoi(argv[3]) : 5;
	uint64_t target, exch = 0, events = 0;
	double t0, t1;
	struct rusage ru;

	if (argc < 3 || runs < 1 || runs > 32) {
		fprintf(stderr, "usage: merge-bench EVENTS DIR [RUNS (1..32)]\n");
		return 2;
	}
	target = strtoull(argv[1], NULL, 10);
	synth_defaults(&s, 42);
	s.period_ns = 250000;
	/* events per second of trace: fillers on each CPU, and per vCPU
	 * exchange t2 + t3 + a host switch + the guest record (+10% forged) */
	double rate = s.host_cpus * 1e9 / (double)s.host_gap_ns +
		      s.n_vms * s.vcpus * (1e9 / (double)s.guest_gap_ns +
					   4.4e9 / (double)s.period_ns);
	s.duration_ns = (uint64_t)((double)target / rate * 1e9);
	snprintf(in, sizeof(in), "%s/in", argv[2]);
	t0 = util_mono_s();
	if (synth_write(&s, in)) {
		fprintf(stderr, "merge-bench: cannot write %s\n", in);
		return 1;
	}
	t1 = util_mono_s();
	printf("trace: %" PRIu64 " events (%" PRIu64 " host, %" PRIu64 " guest), %.1f s of "
	       "trace time, written in %.1f s\n", s.n_host_events + s.n_guest_events,
	       s.n_host_events, s.n_guest_events, (double)s.duration_ns * 1e-9,
	       t1 - t0);
	for (int i = 0; i < runs; i++) {
		struct mg_opts o = { 0 };
		struct mg_result r;
		struct vr_trace *t;

		snprintf(out, sizeof(out), "%s/out", argv[2]);
		if (vr_trace_open(&t, in, err, sizeof(err)) ||
		    mg_sync(t, &o, &r, err, sizeof(err)) ||
		    mg_merge(t, out, &r, err, sizeof(err))) {
			fprintf(stderr, "merge-bench: %s\n", err);
			return 1;
		}
		exch = r.pair->st.host_pairs;
		events = r.n.out_events;
		pass1[i] = (double)exch / r.time.sync;
		scan[i] = (double)events / r.time.sync;
		merge[i] = (double)events / r.time.merge;
		printf("run %d: pass 1 %.2f s for %" PRIu64 " exchanges in %" PRIu64
		       " events; merge %.2f s; violations %" PRIu64 "\n",
		       i, r.time.sync, exch, events, r.time.merge, mg_violations(&r));
		mg_result_free(&r);
		vr_trace_close(t);
		nftw(out, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("median of %d: pass 1 (sync ingestion: every stream read, pairing, fit) %.3g "
	       "exchanges/s = %.3g events/s; merge %.3g events/s; peak RSS %ld MiB\n", runs,
	       median(pass1, runs), median(scan, runs), median(merge, runs), ru.ru_maxrss / 1024);
	nftw(in, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}
