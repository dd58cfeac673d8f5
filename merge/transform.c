// SPDX-License-Identifier: GPL-2.0
/* Per-VM transforms: see transform.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transform.h"

static void on_sample(void *user, uint64_t cookie, int64_t outcome)
{
	struct mt_vm *v = user;
	const struct mp_exchange *x = &v->ring[cookie % MT_RING];

	if (x->x.cookie != cookie)
		return;
	if (outcome >= 0 && v->t->accept)
		v->t->accept(v->t->user, v->index, x, outcome);
	else if (outcome < 0 && v->t->drop)
		v->t->drop(v->t->user, v->index, x, (int)(-1 - outcome));
}

static void on_segment(void *user, const struct vmscope_sync_segment *s)
{
	struct mt_vm *v = user;

	if (v->nseg == v->cseg) {
		size_t nc = v->cseg ? 2 * v->cseg : 4;
		void *n = realloc(v->seg, nc * sizeof(*v->seg));
		void *l = n ? realloc(v->limit, nc * sizeof(*v->limit)) : NULL;
		void *b = l ? realloc(v->by_break, nc * sizeof(*v->by_break)) : NULL;

		if (n)
			v->seg = n;
		if (l)
			v->limit = l;
		if (b)
			v->by_break = b;
		if (!n || !l || !b) {
			v->t->err = -ENOMEM;
			return;
		}
		v->cseg = nc;
	}
	/* closed by the explicit break being applied, or by something else */
	v->limit[v->nseg] = v->break_pending ? v->break_ts : UINT64_MAX;
	v->by_break[v->nseg] = v->break_pending;
	v->break_pending = false;
	v->seg[v->nseg++] = *s;
}

int mt_init(struct mt *t, uint32_t n_vms, const struct mt_opts *o, mt_accept_fn accept,
	    void *user)
{
	memset(t, 0, sizeof(*t));
	t->n_vms = n_vms;
	t->accept = accept;
	t->user = user;
	t->vm = calloc(n_vms ? n_vms : 1, sizeof(*t->vm));
	if (!t->vm)
		return -ENOMEM;
	for (uint32_t i = 0; i < n_vms; i++) {
		struct mt_vm *v = &t->vm[i];
		struct vmscope_sync_config cfg = {
			.ppm = o->ppm,
			/* the host's vcpu_id (trusted) indexes the per-vCPU
			 * seq state */
			.n_vcpus = o->n_vcpus ? o->n_vcpus : 4096,
			/* the join already demands the guest record's token */
			.check_token = false,
			.confirm = o->confirm,
			.max_segment_ns = o->max_segment_ns,
			.user = v,
			.on_sample = on_sample,
			.on_segment = on_segment,
		};

		v->t = t;
		v->index = i;
		v->ctx = vmscope_sync_new(&cfg);
		if (!v->ctx) {
			mt_free(t);
			return -ENOMEM;
		}
	}
	return 0;
}

void mt_free(struct mt *t)
{
	for (uint32_t i = 0; t->vm && i < t->n_vms; i++) {
		vmscope_sync_free(t->vm[i].ctx);
		free(t->vm[i].seg);
		free(t->vm[i].limit);
		free(t->vm[i].by_break);
	}
	free(t->vm);
	t->vm = NULL;
}

void mt_add(struct mt *t, uint32_t vm, const struct mp_exchange *x)
{
	struct mt_vm *v;
	struct mp_exchange *r;

	if (vm >= t->n_vms)
		return;
	v = &t->vm[vm];
	if (x->x.guest_valid) {
		if (v->have_token && x->x.token != v->token) {
			vmscope_sync_break(v->ctx, true);
			v->breaks_token++;
		}
		v->have_token = true;
		v->token = x->x.token;
	}
	/* a consistent guest record (else the library's reasons apply) */
	if (x->x.guest_valid && x->x.guest_seq == x->x.seq && x->x.t1 == x->x.t1_claim &&
	    x->x.t4 >= x->x.t1 && x->x.t3 >= x->x.t2 &&
	    x->x.t4 - x->x.t1 < x->x.t3 - x->x.t2) {
		v->short_rtt++;
		if (t->drop)
			t->drop(t->user, vm, x, MT_DROP_SHORT);
		return;
	}
	r = &v->ring[v->next_cookie % MT_RING];
	*r = *x;
	r->x.cookie = v->next_cookie++;
	vmscope_sync_add(v->ctx, &r->x);
}

static void vm_break(struct mt_vm *v, uint64_t ts)
{
	v->break_pending = true;
	v->break_ts = ts;
	vmscope_sync_break(v->ctx, false);
	v->break_pending = false;
	v->breaks_tsc++;
}

void mt_break(struct mt *t, uint64_t ts, uint32_t vm)
{
	for (uint32_t i = 0; i < t->n_vms; i++)
		if (vm == MP_NO_VM || vm == i)
			vm_break(&t->vm[i], ts);
}

uint64_t mt_limit(const struct mt_vm *v, size_t i, const struct vmscope_sync_segment *next)
{
	uint64_t l = v->limit[i];

	if (next && next->h_first < l)
		l = next->h_first;
	/* Never before the segment's own last sample: after a detected
	 * change segments may overlap in host time (samples that fit both
	 * land on their side). */
	return l < v->seg[i].h_last ? v->seg[i].h_last : l;
}

int mt_finish(struct mt *t)
{
	for (uint32_t k = 0; k < t->n_vms; k++) {
		struct mt_vm *v = &t->vm[k];

		vmscope_sync_finish(v->ctx);
		vmscope_sync_get_stats(v->ctx, &v->st);
		for (size_t i = 0; i < v->nseg; i++)
			v->limit[i] = mt_limit(v, i, i + 1 < v->nseg ? &v->seg[i + 1] : NULL);
	}
	return t->err;
}

const struct vmscope_sync_segment *mt_segment(const struct mt_vm *v, int64_t id)
{
	size_t lo = 0, hi = v->nseg;

	if (id < 0)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v->seg[mid].id < (uint64_t)id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < v->nseg && v->seg[lo].id == (uint64_t)id ? &v->seg[lo] : NULL;
}

const struct vmscope_sync_segment *mt_segment_for(const struct mt_vm *v, uint64_t g)
{
	const struct vmscope_sync_segment *last = NULL;

	for (size_t i = 0; i < v->nseg; i++) {
		if (v->seg[i].failed)
			continue;
		last = &v->seg[i];
		if (v->seg[i].g_last >= g)
			return last;
	}
	return last;
}

bool mt_convert(const struct mt_vm *v, const struct vmscope_sync_segment **seg,
		uint64_t g, uint64_t *h)
{
	const struct vmscope_sync_segment *s = *seg;

	if (!s || vmscope_sync_segment_estimate(s, g, h))
		return false;
	for (size_t i = (size_t)(s - v->seg); i + 1 < v->nseg && *h > v->limit[i]; i++) {
		uint64_t h2;

		if (v->seg[i + 1].failed ||
		    vmscope_sync_segment_estimate(&v->seg[i + 1], g, &h2))
			break;
		*seg = &v->seg[i + 1];
		*h = h2;
	}
	return true;
}
