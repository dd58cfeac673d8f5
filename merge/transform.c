// SPDX-License-Identifier: GPL-2.0
/* Per-VM transforms: see transform.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transform.h"

struct run {
	struct mp_vm *v;
	struct mt_vm *out;
};

static void on_sample(void *user, uint64_t cookie, int64_t outcome)
{
	struct run *r = user;

	if (cookie < r->v->nx)
		r->v->x[cookie].outcome = outcome;
}

static void on_segment(void *user, const struct vmscope_sync_segment *s)
{
	struct mt_vm *o = ((struct run *)user)->out;

	if (o->nseg == o->cseg) {
		size_t nc = o->cseg ? 2 * o->cseg : 4;
		void *n = realloc(o->seg, nc * sizeof(*o->seg));
		void *l = realloc(o->limit, nc * sizeof(*o->limit));

		if (n)
			o->seg = n;
		if (l)
			o->limit = l;
		if (!n || !l) {
			o->err = -ENOMEM;
			return;
		}
		o->cseg = nc;
	}
	/* closed by the explicit break being applied, or by something else */
	o->limit[o->nseg] = o->break_pending ? o->break_ts : UINT64_MAX;
	o->break_pending = false;
	o->seg[o->nseg++] = *s;
}

static int cmp_break(const void *a, const void *b)
{
	const struct mt_break *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int run_vm(struct mp_vm *v, uint32_t vm, const struct mt_break *b, size_t nb,
		  const struct mt_opts *o, struct mt_vm *out)
{
	struct run r = { .v = v, .out = out };
	struct vmscope_sync_config cfg = {
		.ppm = o->ppm,
		/* the host's vcpu_id (trusted) indexes the per-vCPU seq
		 * state; KVM vcpu ids are below KVM_MAX_VCPU_IDS (4096) */
		.n_vcpus = 4096,
		/* the join already demands the guest record's token */
		.check_token = false,
		.confirm = o->confirm,
		.max_segment_ns = o->max_segment_ns,
		.user = &r,
		.on_sample = on_sample,
		.on_segment = on_segment,
	};
	struct vmscope_sync *c = vmscope_sync_new(&cfg);
	size_t ib = 0;
	bool have_token = false;
	uint64_t token = 0;

	if (!c)
		return -ENOMEM;
	for (size_t i = 0; i < v->nx; i++) {
		const struct vmscope_sync_exchange *x = &v->x[i].x;

		for (; ib < nb && b[ib].ts <= x->t2; ib++) {
			if (b[ib].vm != vm && b[ib].vm != MP_NO_VM)
				continue;
			out->break_pending = true;
			out->break_ts = b[ib].ts;
			vmscope_sync_break(c, false);
			out->break_pending = false;
			out->breaks_tsc++;
		}
		if (x->guest_valid) {
			if (have_token && x->token != token) {
				vmscope_sync_break(c, true);
				out->breaks_token++;
			}
			have_token = true;
			token = x->token;
		}
		vmscope_sync_add(c, x);
	}
	vmscope_sync_finish(c);
	vmscope_sync_get_stats(c, &out->st);
	vmscope_sync_free(c);
	/* Never before the segment's own last sample: after a detected
	 * change the segments may overlap in host time (samples that fit
	 * both land on their side, sync/README.md). */
	for (size_t i = 0; i < out->nseg; i++) {
		if (i + 1 < out->nseg && out->seg[i + 1].h_first < out->limit[i])
			out->limit[i] = out->seg[i + 1].h_first;
		if (out->limit[i] < out->seg[i].h_last)
			out->limit[i] = out->seg[i].h_last;
	}
	return out->err;
}

int mt_run(struct mp *p, struct mt_break *b, size_t nb, const struct mt_opts *o,
	   struct mt_vm *out)
{
	int e = 0;

	if (nb)
		qsort(b, nb, sizeof(*b), cmp_break);
	memset(out, 0, p->n_vms * sizeof(*out));
	for (uint32_t i = 0; i < p->n_vms && !e; i++)
		e = run_vm(&p->vm[i], i, b, nb, o, &out[i]);
	if (!e)
		mp_resolve(p);
	return e;
}

void mt_free(struct mt_vm *v, uint32_t n)
{
	for (uint32_t i = 0; v && i < n; i++) {
		free(v[i].seg);
		free(v[i].limit);
	}
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
