// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the sync pairing and per-VM transforms on hostile
 * records. The input drives a sequence of records — vCPU threads, host t2
 * and t3 halves, guest records, breaks — whose fields are drawn from small
 * sets (so that keys collide: duplicates, replays, wrong tokens, halves
 * of different exchanges) or taken raw. Asserts, beyond no crash/leak/UB:
 *  - the counts add up: every t2 and t3 record is paired, alone, a
 *    duplicate or inconsistent; every host pair reaches a VM or "none";
 *    every exchange of a VM is paired with a guest record or host-only;
 *  - each VM's exchanges are in t2 order, each resolved by the sync run;
 *  - an exchange paired with a guest record carries that record's
 *    (cpu, seq, token), and the lookup finds it;
 *  - the guest record's believed exchange is an accepted one whenever one
 *    was accepted, and then (no eviction) its segment's bound holds:
 *    hi(t1) <= t2 and lo(t4) >= t3, and a segment limit is never before
 *    the segment's own last sample.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pair.h"
#include "transform.h"

#define ASSERT(c) do { if (!(c)) abort(); } while (0)
#define MAX_OPS 400

struct in {
	const uint8_t *p;
	size_t n;
};

static uint64_t take(struct in *in, int bytes)
{
	uint64_t v = 0;

	for (int i = 0; i < bytes; i++) {
		v <<= 8;
		if (in->n) {
			v |= *in->p++;
			in->n--;
		}
	}
	return v;
}

/* A value from a small set near a base (collisions), or raw. */
static uint64_t val(struct in *in, uint64_t base, uint64_t spread)
{
	uint8_t b = (uint8_t)take(in, 1);

	if (b == 0xff)
		return take(in, 8);
	return base + (b % 16) * spread;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct mt_break br[MAX_OPS];
	struct mp p;
	struct mt_vm *vm;
	struct mt_opts o = { .confirm = 2 + (uint32_t)(take(&in, 1) % 4) };
	uint32_t n_vms = 1 + (uint32_t)(take(&in, 1) % 3);
	size_t nb = 0;

	if (mp_init(&p, n_vms, 64))
		return 0;
	for (int op = 0; op < MAX_OPS && in.n; op++) {
		uint64_t t = val(&in, 1000000, 1000);

		switch (take(&in, 1) % 5) {
		case 0:
			mp_add_thread(&p, (int32_t)val(&in, 100, 1), (uint32_t)(take(&in, 1) % (n_vms + 1)),
				      (uint32_t)take(&in, 1) % 4);
			break;
		case 1: {
			struct mp_t2 r = { .t2 = t, .token = val(&in, 7, 1), .seq = val(&in, 1, 1),
					   .t1 = val(&in, 5000000, 1000), .guest_cpu = take(&in, 1) % 4,
					   .tid = (int32_t)val(&in, 100, 1),
					   .vcpu = (uint32_t)take(&in, 1) % 4 };
			mp_add_t2(&p, &r);
			break;
		}
		case 2: {
			struct mp_t3 r = { .t2 = t, .t3 = t + val(&in, 0, 100), .token = val(&in, 7, 1),
					   .seq = val(&in, 1, 1), .tid = (int32_t)val(&in, 100, 1),
					   .vcpu = (uint32_t)take(&in, 1) % 4 };
			mp_add_t3(&p, &r);
			break;
		}
		case 3: {
			struct mp_guest r = { .vm = (uint32_t)take(&in, 1) % n_vms,
					      .cpu = (uint32_t)take(&in, 1) % 4,
					      .t1 = val(&in, 5000000, 1000),
					      .token = val(&in, 7, 1), .seq = val(&in, 1, 1) };
			r.t4 = r.t1 + val(&in, 0, 150);
			mp_add_guest(&p, &r);
			break;
		}
		default:
			br[nb].ts = t;
			br[nb].vm = take(&in, 1) & 1 ? MP_NO_VM : (uint32_t)take(&in, 1) % n_vms;
			nb++;
		}
	}
	uint64_t n2 = p.n2, n3 = p.n3;

	ASSERT(mp_pair(&p) == 0);
	vm = calloc(n_vms, sizeof(*vm));
	ASSERT(vm);
	ASSERT(mt_run(&p, br, nb, &o, vm) == 0);

	const struct mp_stats *st = &p.st;
	uint64_t nx = 0;

	/* each t2 record is in a pair, alone, a duplicate or an
	 * inconsistent pair (duplicates are counted on either side) */
	ASSERT(st->host_pairs + st->host_inconsistent + st->t2_alone <= n2);
	ASSERT(st->host_pairs + st->host_inconsistent + st->t3_alone <= n3);
	ASSERT(st->host_pairs + st->host_inconsistent + st->t2_alone + st->t3_alone +
	       st->host_dup >= (n2 > n3 ? n2 : n3));
	ASSERT(st->by_thread + st->by_token + st->no_vm == st->host_pairs);
	for (uint32_t v = 0; v < n_vms; v++) {
		const struct mp_vm *m = &p.vm[v];

		nx += m->nx;
		for (size_t i = 0; i < m->nx; i++) {
			const struct mp_exchange *x = &m->x[i];

			ASSERT(x->x.cookie == i);
			ASSERT(x->outcome != MP_UNRESOLVED);
			ASSERT(i == 0 || m->x[i - 1].x.t2 <= x->x.t2);
			if (x->x.guest_valid) {
				const struct mp_grec *g = mp_lookup(&p, v, x->guest_cpu, x->x.seq,
								    x->x.token, x->x.t1);
				ASSERT(g && g->t1 == x->x.t1 && g->t4 == x->x.t4);
				ASSERT(g->n_host >= 1);
				if (x->outcome >= 0)
					ASSERT(g->outcome >= 0);
			}
		}
		for (size_t i = 0; i < m->ng; i++) {
			const struct mp_grec *g = &m->g[i];
			const struct vmscope_sync_segment *s;
			uint64_t lo, hi;

			if (!g->n_host || g->outcome < 0)
				continue;
			s = mt_segment(&vm[v], g->outcome);
			ASSERT(s);
			if (s->evictions)
				continue;
			ASSERT(vmscope_sync_segment_bound(s, g->t1, &lo, &hi) >= 0);
			ASSERT(hi <= g->t2);
			ASSERT(vmscope_sync_segment_bound(s, g->t4, &lo, &hi) >= 0);
			ASSERT(lo >= g->t3);
		}
		for (size_t i = 0; i < vm[v].nseg; i++)
			ASSERT(vm[v].limit[i] >= vm[v].seg[i].h_last);
	}
	ASSERT(st->paired + st->host_only == nx);
	mt_free(vm, n_vms);
	free(vm);
	mp_free(&p);
	return 0;
}
