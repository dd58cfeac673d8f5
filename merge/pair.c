// SPDX-License-Identifier: GPL-2.0
/* Sync pairing: see pair.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pair.h"

#define MP_DEFAULT_CAP	((size_t)64 << 20)

int mp_init(struct mp *p, uint32_t n_vms, size_t cap)
{
	memset(p, 0, sizeof(*p));
	p->n_vms = n_vms;
	p->cap = cap ? cap : MP_DEFAULT_CAP;
	p->vm = calloc(n_vms ? n_vms : 1, sizeof(*p->vm));
	return p->vm ? 0 : -ENOMEM;
}

void mp_free(struct mp *p)
{
	free(p->t2);
	free(p->t3);
	free(p->g);
	free(p->th);
	for (uint32_t i = 0; p->vm && i < p->n_vms; i++) {
		free(p->vm[i].x);
		free(p->vm[i].g);
	}
	free(p->vm);
	memset(p, 0, sizeof(*p));
}

/* Room for one more element of size sz in *arr (n used, *c allocated). */
static int grow(void **arr, size_t n, size_t *c, size_t sz, size_t cap)
{
	size_t nc;
	void *na;

	if (n < *c)
		return 0;
	if (n >= cap)
		return -ENOSPC;
	nc = *c ? 2 * *c : 256;
	if (nc > cap)
		nc = cap;
	na = realloc(*arr, nc * sz);
	if (!na)
		return -ENOMEM;
	*arr = na;
	*c = nc;
	return 0;
}

/* Append *r (sz bytes) to *arr, counting a refusal past the cap. */
static int push(struct mp *p, void **arr, size_t *n, size_t *c, const void *r,
		size_t sz)
{
	int e = grow(arr, *n, c, sz, p->cap);

	if (e == -ENOSPC)
		p->st.refused++;
	if (e)
		return e;
	memcpy((char *)*arr + *n * sz, r, sz);
	(*n)++;
	return 0;
}

#define PUSH(p, arr, n, c, r) \
	push((p), (void **)&(p)->arr, &(p)->n, &(p)->c, (r), sizeof(*(p)->arr))

int mp_add_thread(struct mp *p, int32_t tid, uint32_t vm, uint32_t vcpu)
{
	struct mp_thread t = { .tid = tid, .vm = vm, .vcpu = vcpu };

	if (vm >= p->n_vms)
		return -EINVAL;
	p->vm[vm].has_threads = true;
	return PUSH(p, th, nth, cth, &t);
}

int mp_add_t2(struct mp *p, const struct mp_t2 *r)
{
	p->st.t2++;
	return PUSH(p, t2, n2, c2, r);
}

int mp_add_t3(struct mp *p, const struct mp_t3 *r)
{
	p->st.t3++;
	return PUSH(p, t3, n3, c3, r);
}

int mp_add_guest(struct mp *p, const struct mp_guest *r)
{
	p->st.guest++;
	if (r->vm >= p->n_vms) {	/* the caller's bug, not input */
		p->st.refused++;
		return -EINVAL;
	}
	return PUSH(p, g, ng, cg, r);
}

#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b))

static int cmp_t2(const void *a, const void *b)
{
	const struct mp_t2 *x = a, *y = b;

	return x->tid != y->tid ? CMP(x->tid, y->tid) : CMP(x->t2, y->t2);
}

static int cmp_t3(const void *a, const void *b)
{
	const struct mp_t3 *x = a, *y = b;

	return x->tid != y->tid ? CMP(x->tid, y->tid) :
	       x->t2 != y->t2 ? CMP(x->t2, y->t2) : CMP(x->t3, y->t3);
}

static int cmp_thread(const void *a, const void *b)
{
	const struct mp_thread *x = a, *y = b;

	return CMP(x->tid, y->tid);
}

static int cmp_guest(const void *a, const void *b)
{
	const struct mp_guest *x = a, *y = b;

	if (x->vm != y->vm)
		return CMP(x->vm, y->vm);
	if (x->cpu != y->cpu)
		return CMP(x->cpu, y->cpu);
	if (x->seq != y->seq)
		return CMP(x->seq, y->seq);
	if (x->token != y->token)
		return CMP(x->token, y->token);
	return x->t1 != y->t1 ? CMP(x->t1, y->t1) : CMP(x->t4, y->t4);
}

/* Guest join key of an exchange vs a guest record. */
static int key_cmp(uint32_t cpu, uint64_t seq, uint64_t token,
		   const struct mp_grec *g)
{
	if (cpu != g->cpu)
		return CMP(cpu, g->cpu);
	if (seq != g->seq)
		return CMP(seq, g->seq);
	return CMP(token, g->token);
}

static int cmp_x_key(const void *a, const void *b)
{
	const struct mp_exchange *x = a, *y = b;

	if (x->guest_cpu != y->guest_cpu)
		return CMP(x->guest_cpu, y->guest_cpu);
	if (x->x.seq != y->x.seq)
		return CMP(x->x.seq, y->x.seq);
	if (x->x.token != y->x.token)
		return CMP(x->x.token, y->x.token);
	return CMP(x->x.t2, y->x.t2);
}

static int cmp_x_t2(const void *a, const void *b)
{
	const struct mp_exchange *x = a, *y = b;

	return x->x.t2 != y->x.t2 ? CMP(x->x.t2, y->x.t2) : CMP(x->x.t3, y->x.t3);
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

/*
 * The VM of a host exchange whose thread is not in the map: the one VM
 * without a thread map whose guest records carry the token (an
 * unprivileged guest process cannot know a token; a token seen in two VMs
 * attributes to neither). Guest records are sorted by vm first, so scan
 * per VM with a binary search would need another index; tokens are few,
 * so the caller passes the distinct (vm, token) list.
 */
struct vm_token {
	uint64_t token;
	uint32_t vm;
};

static int cmp_vt(const void *a, const void *b)
{
	const struct vm_token *x = a, *y = b;

	return x->token != y->token ? CMP(x->token, y->token) : CMP(x->vm, y->vm);
}

static uint32_t token_vm(const struct vm_token *vt, size_t n, uint64_t token)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (vt[mid].token < token)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == n || vt[lo].token != token)
		return MP_NO_VM;
	if (lo + 1 < n && vt[lo + 1].token == token)
		return MP_NO_VM;	/* ambiguous */
	return vt[lo].vm;
}

/* Distinct (token, vm) of guest records of VMs without a thread map. */
static int build_tokens(struct mp *p, struct vm_token **out, size_t *nout)
{
	struct vm_token *vt = NULL;
	size_t n = 0, c = 0;

	for (size_t i = 0; i < p->ng; i++) {
		const struct mp_guest *g = &p->g[i];

		if (p->vm[g->vm].has_threads)
			continue;
		/* records are sorted by vm: a repeat of the last token is
		 * the common case; duplicates further back are removed below */
		if (n && vt[n - 1].token == g->token && vt[n - 1].vm == g->vm)
			continue;
		if (grow((void **)&vt, n, &c, sizeof(*vt), SIZE_MAX / sizeof(*vt))) {
			free(vt);
			return -ENOMEM;
		}
		vt[n].token = g->token;
		vt[n].vm = g->vm;
		n++;
	}
	if (n)
		qsort(vt, n, sizeof(*vt), cmp_vt);
	/* unique (token, vm) */
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!k || vt[k - 1].token != vt[i].token || vt[k - 1].vm != vt[i].vm)
			vt[k++] = vt[i];
	*out = vt;
	*nout = k;
	return 0;
}

/* Guest records of each VM, deduplicated on the join key (first kept). */
static int split_guest(struct mp *p)
{
	if (p->ng)
		qsort(p->g, p->ng, sizeof(*p->g), cmp_guest);
	for (size_t i = 0, j; i < p->ng; i = j) {
		uint32_t vm = p->g[i].vm;
		struct mp_vm *v = &p->vm[vm];
		size_t n = 0;

		for (j = i; j < p->ng && p->g[j].vm == vm; j++)
			;
		v->g = calloc(j - i, sizeof(*v->g));
		if (!v->g)
			return -ENOMEM;
		for (size_t k = i; k < j; k++) {
			const struct mp_guest *g = &p->g[k];
			struct mp_grec *r = &v->g[n];

			if (n && !key_cmp(g->cpu, g->seq, g->token, &v->g[n - 1])) {
				p->st.guest_dup++;
				continue;
			}
			r->cpu = g->cpu;
			r->seq = g->seq;
			r->token = g->token;
			r->t1 = g->t1;
			r->t4 = g->t4;
			r->outcome = -1;
			n++;
		}
		v->ng = n;
	}
	return 0;
}

/* Append a host exchange to its VM's list. */
static int vm_push(struct mp *p, uint32_t vm, const struct mp_exchange *x,
		   size_t *caps)
{
	struct mp_vm *v = &p->vm[vm];

	if (grow((void **)&v->x, v->nx, &caps[vm], sizeof(*v->x), SIZE_MAX / sizeof(*v->x)))
		return -ENOMEM;
	v->x[v->nx++] = *x;
	return 0;
}

/* Join t2 with t3 on (tid, t2) and attribute each pair to a VM. */
static int join_host(struct mp *p, const struct vm_token *vt, size_t nvt)
{
	size_t *caps = calloc(p->n_vms ? p->n_vms : 1, sizeof(*caps));
	size_t i = 0, j = 0;
	int e = 0;

	if (!caps)
		return -ENOMEM;
	if (p->n2)
		qsort(p->t2, p->n2, sizeof(*p->t2), cmp_t2);
	if (p->n3)
		qsort(p->t3, p->n3, sizeof(*p->t3), cmp_t3);
	while (i < p->n2 || j < p->n3) {
		const struct mp_t2 *a = i < p->n2 ? &p->t2[i] : NULL;
		const struct mp_t3 *b = j < p->n3 ? &p->t3[j] : NULL;
		int c = !a ? 1 : !b ? -1 :
			a->tid != b->tid ? CMP(a->tid, b->tid) : CMP(a->t2, b->t2);

		if (c < 0) {
			p->st.t2_alone++;
			i++;
			continue;
		}
		if (c > 0) {
			p->st.t3_alone++;
			j++;
			continue;
		}
		/* skip repeats of the same key on both sides */
		while (i + 1 < p->n2 && !cmp_t2(&p->t2[i], &p->t2[i + 1])) {
			p->st.host_dup++;
			i++;
		}
		while (j + 1 < p->n3 && p->t3[j + 1].tid == b->tid &&
		       p->t3[j + 1].t2 == b->t2) {
			p->st.host_dup++;
			j++;
		}
		i++;
		j++;
		if (a->token != b->token || a->seq != b->seq) {
			p->st.host_inconsistent++;
			continue;
		}
		p->st.host_pairs++;

		struct mp_exchange x;
		uint32_t vcpu = b->vcpu, vm = mp_thread_vm(p, a->tid, NULL);

		memset(&x, 0, sizeof(x));
		if (vm != MP_NO_VM) {
			p->st.by_thread++;
		} else {
			vm = token_vm(vt, nvt, a->token);
			if (vm == MP_NO_VM) {
				p->st.no_vm++;
				continue;
			}
			p->st.by_token++;
		}
		x.x.vcpu = vcpu;
		x.x.token = a->token;
		x.x.seq = a->seq;
		x.x.t1_claim = a->t1;
		x.x.t2 = a->t2;
		x.x.t3 = b->t3;
		/* the claim is 64 bits; a cpu beyond 32 bits matches no record */
		x.guest_cpu = a->guest_cpu > UINT32_MAX ? UINT32_MAX : (uint32_t)a->guest_cpu;
		x.tid = a->tid;
		x.outcome = MP_UNRESOLVED;
		e = vm_push(p, vm, &x, caps);
		if (e)
			break;
	}
	free(caps);
	return e;
}

/* Join each VM's host exchanges with its guest records on the key. */
static void join_guest(struct mp *p, struct mp_vm *v)
{
	size_t j = 0;

	if (v->nx)
		qsort(v->x, v->nx, sizeof(*v->x), cmp_x_key);
	for (size_t i = 0; i < v->nx; i++) {
		struct mp_exchange *x = &v->x[i];
		int c = 1;

		while (j < v->ng &&
		       (c = key_cmp(x->guest_cpu, x->x.seq, x->x.token, &v->g[j])) > 0) {
			if (!v->g[j].n_host)
				p->st.guest_only++;
			j++;
		}
		if (j < v->ng && c == 0) {
			x->x.guest_valid = true;
			x->x.guest_seq = v->g[j].seq;
			x->x.t1 = v->g[j].t1;
			x->x.t4 = v->g[j].t4;
			v->g[j].n_host++;
			p->st.paired++;
		} else {
			p->st.host_only++;
		}
	}
	for (; j < v->ng; j++)
		if (!v->g[j].n_host)
			p->st.guest_only++;
	if (v->nx)
		qsort(v->x, v->nx, sizeof(*v->x), cmp_x_t2);
	for (size_t i = 0; i < v->nx; i++)
		v->x[i].x.cookie = i;
}

int mp_pair(struct mp *p)
{
	struct vm_token *vt = NULL;
	size_t nvt = 0;
	int e;

	mp_sort_threads(p);
	e = split_guest(p);
	if (!e)
		e = build_tokens(p, &vt, &nvt);
	if (!e)
		e = join_host(p, vt, nvt);
	free(vt);
	if (e)
		return e;
	for (uint32_t i = 0; i < p->n_vms; i++)
		join_guest(p, &p->vm[i]);
	free(p->t2);
	free(p->t3);
	free(p->g);
	p->t2 = NULL;
	p->t3 = NULL;
	p->g = NULL;
	p->n2 = p->n3 = p->ng = 0;
	p->c2 = p->c3 = p->cg = 0;
	return 0;
}

static struct mp_grec *find(const struct mp_vm *v, uint32_t cpu, uint64_t seq,
			    uint64_t token)
{
	size_t lo = 0, hi = v->ng;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (key_cmp(cpu, seq, token, &v->g[mid]) > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < v->ng && !key_cmp(cpu, seq, token, &v->g[lo]))
		return &v->g[lo];
	return NULL;
}

void mp_resolve(struct mp *p)
{
	for (uint32_t i = 0; i < p->n_vms; i++) {
		struct mp_vm *v = &p->vm[i];

		for (size_t k = 0; k < v->ng; k++)
			v->g[k].n_host = 0;
		for (size_t k = 0; k < v->nx; k++) {
			const struct mp_exchange *x = &v->x[k];
			struct mp_grec *g;

			if (!x->x.guest_valid)
				continue;
			g = find(v, x->guest_cpu, x->x.seq, x->x.token);
			if (!g)
				continue;
			/* the accepted one wins; else the first in host time */
			if (!g->n_host || (g->outcome < 0 && x->outcome >= 0)) {
				g->t2 = x->x.t2;
				g->t3 = x->x.t3;
				g->outcome = x->outcome;
			}
			g->n_host++;
		}
	}
}

const struct mp_grec *mp_lookup(const struct mp *p, uint32_t vm, uint32_t cpu,
				uint64_t seq, uint64_t token, uint64_t t1)
{
	const struct mp_grec *g;

	if (vm >= p->n_vms)
		return NULL;
	g = find(&p->vm[vm], cpu, seq, token);
	return g && g->t1 == t1 ? g : NULL;
}
