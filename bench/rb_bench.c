// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * CPU ns per event for a 32-byte payload: vmscope's userspace ring buffer vs
 * LTTng-UST, single thread and one thread per core (pinned, so each uses
 * its own per-CPU buffer on both sides), median of repeated runs. The two
 * tracers alternate run by run so that noise from other load on the
 * machine hits both alike.
 *
 * Both sides: flight-recorder / overwrite mode with no consumer reading
 * (LTTng: a snapshot session set up by bench/run.sh), CLOCK_MONOTONIC
 * timestamps, one memcpy of the payload.
 *
 * Usage: rb-bench [events-per-thread [runs [threads]]]
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ringbuf.h"
#include "lttng_tp.h"
#include "util_clock.h"

#define MAX_THREADS	64
#define PAYLOAD		32
#define SB_SHIFT	16	/* 64 KiB sub-buffers */
#define N_SHIFT		4	/* 16 of them: 1 MiB per CPU */

/* CLOCK: just the CLOCK_MONOTONIC read both tracers do per event */
enum tracer { VMSCOPE, LTTNG, CLOCK, NTRACERS };

static struct vmscope_rb_chan chan;
static unsigned long events = 1000000;
static pthread_barrier_t start_barrier;
static volatile uint64_t clock_sink;

struct worker {
	pthread_t th;
	unsigned cpu;
	enum tracer tracer;
	double ns_per_event;
};

/*
 * The thread's own CPU time: the machine is shared (other builds, VMs), and
 * wall time would charge a thread for the time it was preempted. The CPU
 * time still includes cache and memory effects of the other threads.
 */
static uint64_t cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint8_t payload[PAYLOAD];
	cpu_set_t set;
	uint64_t t0, t1, i;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	vmscope_rb_user_cpu = w->cpu;
	memset(payload, 0x5a, sizeof(payload));
	pthread_barrier_wait(&start_barrier);
	t0 = cpu_ns();
	if (w->tracer == VMSCOPE) {
		for (i = 0; i < events; i++) {
			memcpy(payload, &i, sizeof(i));
			vmscope_rb_chan_write(&chan, 1, payload, PAYLOAD);
		}
	} else if (w->tracer == LTTNG) {
		for (i = 0; i < events; i++) {
			memcpy(payload, &i, sizeof(i));
			lttng_ust_tracepoint(vmscope_bench, payload32, payload);
		}
	} else {
		for (i = 0; i < events; i++)
			clock_sink += util_mono_ns();
	}
	t1 = cpu_ns();
	w->ns_per_event = (double)(t1 - t0) / (double)events;
	return NULL;
}

/* One run: nthreads workers on CPUs 0..n-1; mean ns/event per thread. */
static double run_once(enum tracer tracer, unsigned nthreads)
{
	struct worker w[MAX_THREADS];
	double sum = 0;
	unsigned i;

	pthread_barrier_init(&start_barrier, NULL, nthreads);
	for (i = 0; i < nthreads; i++) {
		w[i].cpu = i;
		w[i].tracer = tracer;
		pthread_create(&w[i].th, NULL, worker_main, &w[i]);
	}
	for (i = 0; i < nthreads; i++) {
		pthread_join(w[i].th, NULL);
		sum += w[i].ns_per_event;
	}
	pthread_barrier_destroy(&start_barrier);
	return sum / nthreads;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void setup_vmscope(unsigned ncpus)
{
	unsigned c;
	size_t bytes = (size_t)vmscope_rb_mem_bytes(SB_SHIFT, N_SHIFT, 4096);

	chan.nr_bufs = ncpus;
	chan.bufs = calloc(ncpus, sizeof(*chan.bufs));
	for (c = 0; c < ncpus; c++) {
		void *mem = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);

		chan.bufs[c] = calloc(1, sizeof(**chan.bufs));
		memset(mem, 0, bytes);	/* fault the pages in up front */
		if (vmscope_rb_init(chan.bufs[c], mem, SB_SHIFT, N_SHIFT,
				    VMSCOPE_RB_MODE_FLIGHT, c, 4096)) {
			fprintf(stderr, "vmscope_rb_init failed\n");
			exit(1);
		}
	}
}

int main(int argc, char **argv)
{
	unsigned runs = 11, nthreads = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	unsigned t, r, k, configs[2];
	double res[2][NTRACERS];	/* [config][tracer] */
	double clock_min[2];
	int waited;

	if (argc > 1)
		events = strtoul(argv[1], NULL, 0);
	if (argc > 2)
		runs = (unsigned)strtoul(argv[2], NULL, 0);
	if (argc > 3)
		nthreads = (unsigned)strtoul(argv[3], NULL, 0);
	if (nthreads < 1 || nthreads > MAX_THREADS || runs < 1 || events < 1) {
		fprintf(stderr, "usage: %s [events-per-thread [runs [threads]]]\n", argv[0]);
		return 2;
	}

	/* LTTng must really record: the session (run.sh) enables the event;
	 * registration with the session daemon is asynchronous. */
	for (waited = 0; !lttng_ust_tracepoint_enabled(vmscope_bench, payload32); waited++) {
		if (waited == 100) {
			fprintf(stderr, "LTTng-UST event vmscope_bench:payload32 is not enabled: "
				"no active session (run bench/run.sh)\n");
			return 3;
		}
		usleep(50000);
	}

	setup_vmscope(nthreads);
	configs[0] = 1;
	configs[1] = nthreads;
	/* warm-up: page faults of both tracers' buffers are not measured */
	run_once(VMSCOPE, nthreads);
	run_once(LTTNG, nthreads);

	for (k = 0; k < 2; k++) {
		static double v[NTRACERS][256];

		for (r = 0; r < runs && r < 256; r++)
			for (t = 0; t < NTRACERS; t++) {
				/* rotate the order so drift hits all alike */
				enum tracer tr = (enum tracer)((r + t) % NTRACERS);

				v[tr][r] = run_once(tr, configs[k]);
			}
		for (t = 0; t < NTRACERS; t++)
			res[k][t] = median(v[t], runs);
		/* the clock alone is context, not a contender: its floor
		 * (sorted by median() above) is the steadier figure */
		clock_min[k] = v[CLOCK][0];
	}

	printf("thread CPU ns per event, 32-byte payload, median of %u runs of %lu events per thread\n",
	       runs, events);
	printf("| threads | vmscope ns/event | LTTng-UST ns/event | vmscope/LTTng "
	       "| clock_gettime alone, fastest run (both tracers pay it) |\n");
	printf("|---|---|---|---|---|\n");
	for (k = 0; k < 2; k++)
		printf("| %u%s | %.1f | %.1f | **%.2f** | %.1f |\n", configs[k],
		       k ? " (one per core)" : "", res[k][VMSCOPE], res[k][LTTNG],
		       res[k][VMSCOPE] / res[k][LTTNG], clock_min[k]);
	{
		rb_u64 lost = 0;
		unsigned c;

		for (c = 0; c < chan.nr_bufs; c++)
			lost += chan.bufs[c]->ctrl->lost_full;
		printf("vmscope events dropped (must be 0 in flight mode): %llu\n",
		       (unsigned long long)lost);
	}
	return 0;
}
