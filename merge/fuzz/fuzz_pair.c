// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the streaming sync pairing and the per-VM transforms
 * on hostile records. The input drives a thread map, host t2/t3 records
 * (any order of payload values), breaks, and each VM's guest CPU streams
 * of sync records, with fields drawn from small sets (so that keys
 * collide: duplicates, replays, wrong tokens, halves of different
 * exchanges, records on the wrong CPU's stream) or taken raw. Asserts,
 * beyond no crash/leak/UB:
 *  - the counts add up: every t2 is paired, inconsistent, alone or found
 *    no slot; every t3 is paired, inconsistent or alone; every host pair
 *    reaches a VM by thread, by token, or none; every exchange that
 *    reached a VM is paired or host-only, and was emitted;
 *  - an emitted exchange joined with a guest record carries the times of
 *    a record of that VM's CPU stream with its (cpu, seq, token);
 *  - every exchange is resolved by the sync run, and an accepted one
 *    (segment without eviction) satisfies its segment's bound:
 *    hi(t1) <= t2 and lo(t4) >= t3; segment limits are never before the
 *    segment's own last sample.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "pair.h"
#include "transform.h"

#define MAX_OPS 300
#define NV 3
#define NC 3

struct acc {
	uint32_t vm;
	struct mp_exchange x;
	int64_t seg;
};

struct st {
	struct mp_guest g[NV][NC][MAX_OPS];
	unsigned int ng[NV][NC], pos[NV][NC];
	struct mt mt;
	uint64_t emitted;
	struct acc acc[MAX_OPS];
	unsigned int nacc;
};

static int pull(void *user, uint32_t vm, uint32_t cpu, struct mp_guest *out)
{
	struct st *s = user;

	if (vm >= NV || cpu >= NC || s->pos[vm][cpu] == s->ng[vm][cpu])
		return 0;
	*out = s->g[vm][cpu][s->pos[vm][cpu]++];
	return 1;
}

static void emit(void *user, uint32_t vm, const struct mp_exchange *x)
{
	struct st *s = user;

	s->emitted++;
	ASSERT(vm < NV);
	if (x->x.guest_valid) {
		bool found = false;

		ASSERT(x->guest_cpu < NC);
		for (unsigned int i = 0; i < s->ng[vm][x->guest_cpu] && !found; i++) {
			const struct mp_guest *g = &s->g[vm][x->guest_cpu][i];

			found = g->seq == x->x.seq && g->token == x->x.token &&
				g->cpu == x->guest_cpu && g->t1 == x->x.t1 && g->t4 == x->x.t4;
		}
		ASSERT(found);
		ASSERT(x->x.guest_seq == x->x.seq);
	}
	mt_add(&s->mt, vm, x);
}

static void accept(void *user, uint32_t vm, const struct mp_exchange *x, int64_t seg)
{
	struct st *s = user;

	ASSERT(x->x.guest_valid);
	ASSERT(s->nacc < MAX_OPS);
	s->acc[s->nacc].vm = vm;
	s->acc[s->nacc].x = *x;
	s->acc[s->nacc].seg = seg;
	s->nacc++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct st *s = calloc(1, sizeof(*s));
	struct mp *p = malloc(sizeof(*p));
	struct mt_opts o = { .confirm = 2 + (uint32_t)(take(&in, 1) % 4), .n_vcpus = 4 };
	uint32_t n_vms = 1 + (uint32_t)(take(&in, 1) % NV);
	uint64_t n2 = 0, n3 = 0;

	ASSERT(s && p);
	ASSERT(mp_init(p, n_vms, pull, emit, s) == 0);
	ASSERT(mt_init(&s->mt, n_vms, &o, accept, s) == 0);
	/* guest streams and the thread map first: they exist before */
	for (int op = 0; op < MAX_OPS && in.n; op++) {
		uint8_t k = (uint8_t)take(&in, 1);

		if (k % 4 == 3)
			break;
		if (k % 4 == 2) {
			mp_add_thread(p, (int32_t)val(&in, 100, 1), (uint32_t)(take(&in, 1) % NV),
				      (uint32_t)take(&in, 1) % 4);
			continue;
		}
		uint32_t vm = (uint32_t)take(&in, 1) % NV, cpu = (uint32_t)take(&in, 1) % NC;
		struct mp_guest g = { .cpu = take(&in, 1) % 8 ? cpu : (uint32_t)take(&in, 1) % NC,
				      .t1 = val(&in, 5000000, 1000), .token = val(&in, 7, 1),
				      .seq = val(&in, 1, 1) };

		g.t4 = g.t1 + val(&in, 0, 150);
		s->g[vm][cpu][s->ng[vm][cpu]++] = g;
	}
	mp_sort_threads(p);
	for (int op = 0; op < MAX_OPS && in.n; op++) {
		uint64_t t = val(&in, 1000000, 1000);

		switch (take(&in, 1) % 3) {
		case 0: {
			struct mp_t2 r = { .t2 = t, .token = val(&in, 7, 1), .seq = val(&in, 1, 1),
					   .t1 = val(&in, 5000000, 1000), .guest_cpu = take(&in, 1) % 4,
					   .tid = (int32_t)val(&in, 100, 1),
					   .vcpu = (uint32_t)take(&in, 1) % 4 };
			mp_t2(p, &r);
			n2++;
			break;
		}
		case 1: {
			struct mp_t3 r = { .t2 = t, .t3 = t + val(&in, 0, 100), .token = val(&in, 7, 1),
					   .seq = val(&in, 1, 1), .tid = (int32_t)val(&in, 100, 1),
					   .vcpu = (uint32_t)take(&in, 1) % 4 };
			mp_t3(p, &r);
			n3++;
			break;
		}
		default:
			mt_break(&s->mt, t, take(&in, 1) & 1 ? MP_NO_VM : (uint32_t)take(&in, 1) % n_vms);
		}
	}
	mp_finish(p);
	ASSERT(mt_finish(&s->mt) == 0);

	const struct mp_stats *c = &p->st;

	ASSERT(c->t2 == n2 && c->t3 == n3);
	ASSERT(n2 == c->host_pairs + c->host_inconsistent + c->t2_alone + c->threads_full);
	ASSERT(n3 == c->host_pairs + c->host_inconsistent + c->t3_alone);
	ASSERT(c->host_pairs == c->by_thread + c->by_token + c->no_vm);
	ASSERT(c->by_thread + c->by_token == c->paired + c->host_only);
	ASSERT(c->paired + c->host_only == s->emitted);
	uint64_t submitted = 0;
	for (uint32_t v = 0; v < n_vms; v++) {
		const struct mt_vm *m = &s->mt.vm[v];
		uint64_t dropped = 0;

		for (int k = 0; k < VMSCOPE_SYNC_DROP_NREASONS; k++)
			dropped += m->st.dropped[k];
		ASSERT(m->st.accepted + dropped == m->st.submitted);
		/* a short guest interval is kept from the library (transform.c) */
		submitted += m->st.submitted + m->short_rtt;
		for (size_t i = 0; i < m->nseg; i++)
			ASSERT(m->limit[i] >= m->seg[i].h_last);
	}
	ASSERT(submitted == s->emitted);
	for (unsigned int i = 0; i < s->nacc; i++) {
		const struct acc *a = &s->acc[i];
		const struct vmscope_sync_segment *g = mt_segment(&s->mt.vm[a->vm], a->seg);
		uint64_t lo, hi;

		ASSERT(g);
		if (g->evictions)
			continue;
		ASSERT(vmscope_sync_segment_bound(g, a->x.x.t1, &lo, &hi) >= 0);
		ASSERT(hi <= a->x.x.t2);
		ASSERT(vmscope_sync_segment_bound(g, a->x.x.t4, &lo, &hi) >= 0);
		ASSERT(lo >= a->x.x.t3);
	}
	mt_free(&s->mt);
	mp_free(p);
	free(p);
	free(s);
	return 0;
}
