// SPDX-License-Identifier: GPL-2.0
/*
 * vmscoped's /metrics at 64 domains per host (issue 22) or up to its bound
 * (MS_MAX_DOMAINS), synthetic: the daemon's own store filled with that many
 * domains,
 * each with every series it can have (OL_MX_REASONS reasons, every
 * histogram bucket set, a bound, guest steal and the four stall classes,
 * triggers and snapshots), then rendered as a scrape renders it (a copy
 * taken under the lock, then the text). Prints the samples (lines that
 * are not comments), the bytes, the median render time of @rounds, the
 * store's size and the peak RSS. bench/README.md, "/metrics at 64
 * domains".
 *
 *   metrics-scale [ROUNDS [DOMAINS]]     (9, 64)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "metrics_store.h"
#include "util_clock.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Domain @d's snapshot with every series present and no value 0. */
static void fill(struct ol_msnap *s, unsigned int d)
{
	memset(s, 0, sizeof(*s));
	s->seq = 1000 + d;
	s->end_ns = 3600000000000ull;
	s->guest_ns = 3000000000000ull + d;
	s->kernel_ns = 200000000000ull;
	s->user_ns = 100000000000ull;
	s->halted_ns = 300000000000ull;
	s->preempted_ns = 1234567890;
	s->events_lost = 17;
	s->has_bound = true;
	s->bound_ns = 5800;
	s->has_steal = true;
	s->steal_ns = 5730000000ull;
	s->has_stall = true;
	for (int a = 0; a < OL_MX_STALL_STATES; a++)
		for (int b = 0; b < OL_MX_STALL_CAUSES; b++)
			s->stall_ns[a][b] = 1000000ull * (uint64_t)(1 + a + b);
	s->n_reasons = OL_MX_REASONS;
	for (unsigned int r = 0; r < OL_MX_REASONS; r++) {
		struct ol_mx_reason *x = &s->r[r];

		snprintf(x->name, sizeof(x->name), r + 1 == OL_MX_REASONS ? "other" :
			 "reason_%02u", r);
		for (unsigned int b = 0; b < OL_MX_BUCKETS; b++) {
			x->bucket[b] = 1000 + b;
			x->count += x->bucket[b];
		}
		x->sum_ns = x->count * 2500;
	}
}

int main(int argc, char **argv)
{
	unsigned int rounds = argc > 1 ? (unsigned int)atoi(argv[1]) : 9;
	unsigned int domains = argc > 2 ? (unsigned int)atoi(argv[2]) : 64;
	static struct mstore st;
	static struct ol_msnap s;
	uint64_t *ns;
	size_t len = 0, samples = 0;
	char *text = NULL, *p;
	struct rusage ru;

	if (!rounds || rounds > 1000 || !domains || domains > MS_MAX_DOMAINS || argc > 3) {
		fprintf(stderr, "usage: metrics-scale [ROUNDS 1..1000 [DOMAINS 1..%d]]\n",
			MS_MAX_DOMAINS);
		return 2;
	}
	ns = calloc(rounds, sizeof(*ns));
	if (!ns)
		return 1;
	ms_init(&st);
	for (unsigned int d = 0; d < domains; d++) {
		char name[32];

		fill(&s, d);
		snprintf(name, sizeof(name), "domain-%03u", d);
		if (ms_put(&st, 1 + d, name, "6a1f0c1e-6c38-4b0e-9a4a-2f3d9c7e5b10", &s)) {
			fprintf(stderr, "metrics-scale: the store refused domain %u\n", d);
			return 1;
		}
		ms_trigger(&st, 1 + d, OL_TG_EXIT);
		ms_trigger(&st, 1 + d, OL_TG_STALL);
		ms_snapshot(&st, 1 + d);
	}
	for (unsigned int i = 0; i < rounds; i++) {
		FILE *f;
		uint64_t t0;

		free(text);
		text = NULL;
		f = open_memstream(&text, &len);
		t0 = util_mono_ns();
		if (!f || ms_render(&st, f) || fclose(f)) {
			fprintf(stderr, "metrics-scale: render failed\n");
			return 1;
		}
		ns[i] = util_mono_ns() - t0;
	}
	for (p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
		samples += *p != '#' && *p != '\n';
	qsort(ns, rounds, sizeof(*ns), cmp_u64);
	getrusage(RUSAGE_SELF, &ru);
	printf("domains %u, reasons per domain %u\n", st.n, (unsigned int)OL_MX_REASONS);
	printf("samples %zu, per domain %.1f\n", samples, (double)samples / st.n);
	printf("bytes per scrape %zu\n", len);
	printf("render median %.2f ms (min %.2f, max %.2f, %u rounds)\n", ns[rounds / 2] / 1e6,
	       ns[0] / 1e6, ns[rounds - 1] / 1e6, rounds);
	printf("store %zu bytes; peak RSS %ld KiB\n", sizeof(st), ru.ru_maxrss);
	free(text);
	free(ns);
	ms_destroy(&st);
	return 0;
}
