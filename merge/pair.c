// SPDX-License-Identifier: GPL-2.0
/* Sync pairing, streaming: see pair.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pair.h"

int mp_init(struct mp *p, uint32_t n_vms, mp_pull_fn pull, mp_emit_fn emit, void *user)
{
	memset(p, 0, sizeof(*p));
	p->n_vms = n_vms;
	p->pull = pull;
	p->emit = emit;
	p->user = user;
	p->vm = calloc(n_vms ? n_vms : 1, sizeof(*p->vm));
	return p->vm ? 0 : -ENOMEM;
}

void mp_free(struct mp *p)
{
	for (uint32_t i = 0; p->vm && i < p->n_vms; i++) {
		for (uint32_t c = 0; p->vm[i].win && c < MP_MAX_CPUS; c++)
			free(p->vm[i].win[c]);
		free(p->vm[i].win);
	}
	free(p->vm);
	free(p->th);
	p->vm = NULL;
	p->th = NULL;
}

int mp_add_thread(struct mp *p, int32_t tid, uint32_t vm, uint32_t vcpu)
{
	if (vm >= p->n_vms)
		return -EINVAL;
	if (p->nth == p->cth) {
		size_t nc = p->cth ? 2 * p->cth : 64;
		void *n = realloc(p->th, nc * sizeof(*p->th));

		if (!n)
			return -ENOMEM;
		p->th = n;
		p->cth = nc;
	}
	p->th[p->nth].tid = tid;
	p->th[p->nth].vm = vm;
	p->th[p->nth].vcpu = vcpu;
	p->nth++;
	p->vm[vm].has_threads = true;
	return 0;
}

static int cmp_thread(const void *a, const void *b)
{
	const struct mp_thread *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

void mp_sort_threads(struct mp *p)
{
	if (p->nth)
		qsort(p->th, p->nth, sizeof(*p->th), cmp_thread);
}

uint32_t mp_thread_vm(const struct mp *p, int32_t tid, uint32_t *vcpu)
{
	size_t lo = 0, hi = p->nth;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->th[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < p->nth && p->th[lo].tid == tid) {
		if (vcpu)
			*vcpu = p->th[lo].vcpu;
		return p->th[lo].vm;
	}
	return MP_NO_VM;
}

/* ---- pending t2 per thread: open addressing, bounded probing ---- */

static unsigned int hash_tid(int32_t tid)
{
	return ((uint32_t)tid * 2654435761u) >> (32 - 12);	/* MP_THREADS = 2^12 */
}

static struct mp_slot *slot_find(struct mp *p, int32_t tid, bool claim)
{
	unsigned int h = hash_tid(tid);
	struct mp_slot *free_slot = NULL;

	for (unsigned int i = 0; i < MP_PROBE; i++) {
		struct mp_slot *s = &p->slot[(h + i) % MP_THREADS];

		if (s->used && s->r.tid == tid)
			return s;
		if (!s->used && !free_slot)
			free_slot = s;
	}
	return claim ? free_slot : NULL;
}

void mp_t2(struct mp *p, const struct mp_t2 *r)
{
	struct mp_slot *s = slot_find(p, r->tid, true);

	p->st.t2++;
	if (!s) {
		p->st.threads_full++;
		return;
	}
	/* a repeat before any entry replaced the earlier claim in the
	 * host module too: the earlier one has no t3 */
	if (s->used)
		p->st.t2_alone++;
	s->used = true;
	s->r = *r;
}

/* ---- guest windows ---- */

static struct mp_win *window(struct mp *p, uint32_t vm, uint32_t cpu)
{
	struct mp_vm *v = &p->vm[vm];

	if (cpu >= MP_MAX_CPUS)
		return NULL;
	if (!v->win) {
		v->win = calloc(MP_MAX_CPUS, sizeof(*v->win));
		if (!v->win) {
			p->err = -ENOMEM;
			return NULL;
		}
	}
	if (!v->win[cpu]) {
		v->win[cpu] = calloc(1, sizeof(*v->win[cpu]));
		if (!v->win[cpu])
			p->err = -ENOMEM;
	}
	return v->win[cpu];
}

static struct mp_wrec *at(struct mp_win *w, unsigned int i)
{
	return &w->r[(w->head + i) % MP_WIN];
}

static struct mp_wrec *win_find(struct mp_win *w, uint64_t seq, uint64_t token)
{
	for (unsigned int i = 0; i < w->n; i++) {
		struct mp_wrec *r = at(w, i);

		if (r->g.seq == seq && r->g.token == token)
			return r;
	}
	return NULL;
}

/*
 * Read the VM's CPU stream ahead until the window holds seq (or a later
 * one), at most MP_WIN records per call: a forged claim far ahead costs a
 * window's worth of reading, and the records read stay for the honest
 * exchanges that follow.
 */
static void fill(struct mp *p, struct mp_win *w, uint32_t vm, uint32_t cpu, uint64_t seq)
{
	for (unsigned int pulls = 0; !w->ended && pulls < MP_WIN &&
	     (!w->n || at(w, w->n - 1)->g.seq < seq); pulls++) {
		struct mp_guest g;

		if (p->pull(p->user, vm, cpu, &g) != 1) {
			w->ended = !p->live;
			break;
		}
		p->st.guest++;
		if (g.cpu != cpu) {
			p->st.guest_wrong_cpu++;
			continue;
		}
		if (win_find(w, g.seq, g.token)) {
			p->st.guest_dup++;
			continue;
		}
		if (w->n == MP_WIN) {
			if (!at(w, 0)->n_host)
				p->st.guest_only++;
			w->head = (w->head + 1) % MP_WIN;
			w->n--;
		}
		at(w, w->n)->g = g;
		at(w, w->n)->n_host = 0;
		w->n++;
	}
}

static struct mp_wrec *lookup(struct mp *p, uint32_t vm, uint32_t cpu, uint64_t seq,
			      uint64_t token)
{
	struct mp_win *w = window(p, vm, cpu);

	if (!w)
		return NULL;
	fill(p, w, vm, cpu, seq);
	return win_find(w, seq, token);
}

void mp_t3(struct mp *p, const struct mp_t3 *r)
{
	struct mp_slot *s = slot_find(p, r->tid, false);
	struct mp_exchange x;
	struct mp_wrec *g = NULL;
	uint32_t vm, cpu;

	p->st.t3++;
	if (!s || s->r.t2 != r->t2) {
		p->st.t3_alone++;
		return;
	}
	s->used = false;
	if (s->r.token != r->token || s->r.seq != r->seq) {
		p->st.host_inconsistent++;
		return;
	}
	p->st.host_pairs++;
	cpu = s->r.guest_cpu >= MP_MAX_CPUS ? MP_MAX_CPUS : (uint32_t)s->r.guest_cpu;
	vm = mp_thread_vm(p, r->tid, NULL);
	if (vm != MP_NO_VM) {
		p->st.by_thread++;
		g = lookup(p, vm, cpu, r->seq, r->token);
	} else {
		/* the one VM without a thread map whose guest records hold
		 * this (cpu, seq, token): an unprivileged guest process
		 * cannot know a token */
		for (uint32_t v = 0; v < p->n_vms; v++) {
			struct mp_wrec *c;

			if (p->vm[v].has_threads || !(c = lookup(p, v, cpu, r->seq, r->token)))
				continue;
			if (vm != MP_NO_VM) {
				vm = MP_NO_VM;
				break;
			}
			vm = v;
			g = c;
		}
		if (vm == MP_NO_VM) {
			p->st.no_vm++;
			return;
		}
		p->st.by_token++;
	}
	memset(&x, 0, sizeof(x));
	x.x.vcpu = r->vcpu;	/* kvm_entry's, trusted */
	x.x.token = r->token;
	x.x.seq = r->seq;
	x.x.t1_claim = s->r.t1;
	x.x.t2 = r->t2;
	x.x.t3 = r->t3;
	x.guest_cpu = cpu;
	x.tid = r->tid;
	x.h_tsc = s->r.tsc;
	x.off = s->r.off;
	if (g) {
		x.x.guest_valid = true;
		x.x.guest_seq = g->g.seq;
		x.x.t1 = g->g.t1;
		x.x.t4 = g->g.t4;
		x.g_tsc = g->g.tsc;
		g->n_host++;
		p->st.paired++;
	} else {
		p->st.host_only++;
	}
	p->emit(p->user, vm, &x);
}

void mp_finish(struct mp *p)
{
	for (unsigned int i = 0; i < MP_THREADS; i++)
		if (p->slot[i].used) {
			p->slot[i].used = false;
			p->st.t2_alone++;
		}
	for (uint32_t v = 0; v < p->n_vms; v++)
		for (uint32_t c = 0; p->vm[v].win && c < MP_MAX_CPUS; c++) {
			struct mp_win *w = p->vm[v].win[c];

			for (unsigned int i = 0; w && i < w->n; i++)
				if (!at(w, i)->n_host)
					p->st.guest_only++;
			if (w)
				w->n = 0;
		}
}
