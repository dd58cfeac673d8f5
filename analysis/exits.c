// SPDX-License-Identifier: GPL-2.0
/* Exit aggregation: see exits.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exits.h"

int an_exits_init(struct an_exits *x, enum an_by by, size_t top)
{
	memset(x, 0, sizeof(*x));
	x->by = by;
	return an_topn_init(&x->top, top, sizeof(struct an_exit));
}

void an_exits_free(struct an_exits *x)
{
	for (size_t i = 0; i < x->n; i++) {
		an_hist_free(&x->g[i].h);
		free(x->g[i].r);
	}
	free(x->g);
	free(x->hash);
	an_topn_free(&x->top);
	memset(x, 0, sizeof(*x));
}

/* The detail a grouping by what was accessed wants, else NONE. */
static uint8_t wanted(enum an_by by)
{
	switch (by) {
	case AN_BY_PORT:
		return AN_DETAIL_PIO;
	case AN_BY_MSR:
		return AN_DETAIL_MSR;
	case AN_BY_MMIO:
		return AN_DETAIL_MMIO;
	default:
		return AN_DETAIL_NONE;
	}
}

/* The identifying fields of the group of @e into @k (the rest zero). */
static void ident(const struct an_exits *x, const struct an_exit *e, struct an_group *k)
{
	memset(k, 0, sizeof(*k));
	k->vm = e->vm;
	k->task = AN_TASK_UNKNOWN;
	switch (x->by) {
	case AN_BY_VCPU:
		k->vcpu = e->vcpu;
		break;
	case AN_BY_REASON:
		k->reason = e->reason;
		break;
	case AN_BY_TASK:
		k->task = e->task;
		break;
	case AN_BY_SYMBOL:
		/* user mode has no kernel function: its task says who */
		k->sym = e->sym;
		if (e->sym == AN_SYM_USER)
			k->task = e->task;
		break;
	case AN_BY_PORT:
	case AN_BY_MSR:
	case AN_BY_MMIO:
		k->d.kind = e->detail.kind;
		k->d.write = e->detail.write;
		/* a device's registers share a page: one row per page */
		k->d.addr = x->by == AN_BY_MMIO ? e->detail.addr & ~(uint64_t)(AN_MMIO_PAGE - 1) :
			    e->detail.addr;
		break;
	default:
		break;
	}
}

static bool same(const struct an_group *a, const struct an_group *b)
{
	return a->vm == b->vm && a->vcpu == b->vcpu && a->reason == b->reason &&
	       a->task == b->task && a->sym == b->sym && a->d.kind == b->d.kind &&
	       a->d.write == b->d.write &&
	       a->d.addr == b->d.addr;
}

static uint64_t group_key(const struct an_group *g)
{
	uint64_t k = (uint64_t)g->vm << 32 ^ g->vcpu ^ (uint64_t)g->reason << 8 ^
		     (uint64_t)(uint32_t)g->task << 16 ^ (uint64_t)(uint32_t)g->sym << 24;

	return k ^ (g->d.addr * 0xff51afd7ed558ccdull) ^ ((uint64_t)g->d.write << 63);
}

static size_t slot(uint64_t key, size_t cap)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static int rehash(struct an_exits *x)
{
	size_t cap = x->hash_cap ? 2 * x->hash_cap : 64;
	uint32_t *h;

	/* after a sort the table is rebuilt from nothing: room for every
	 * group (a full table would probe forever) */
	while (cap < 2 * (x->n + 1))
		cap *= 2;
	h = calloc(cap, sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < x->n; i++) {
		size_t s = slot(group_key(&x->g[i]), cap);

		while (h[s])
			s = (s + 1) & (cap - 1);
		h[s] = (uint32_t)i + 1;
	}
	free(x->hash);
	x->hash = h;
	x->hash_cap = cap;
	return 0;
}

static struct an_group *group_of(struct an_exits *x, const struct an_exit *e)
{
	struct an_group k;
	struct an_group *g;
	uint64_t key;
	size_t s;

	ident(x, e, &k);
	key = group_key(&k);
	if (2 * (x->n + 1) > x->hash_cap && rehash(x))
		return NULL;
	for (s = slot(key, x->hash_cap); x->hash[s]; s = (s + 1) & (x->hash_cap - 1))
		if (same(&x->g[x->hash[s] - 1], &k))
			return &x->g[x->hash[s] - 1];
	if (x->n == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 16;
		struct an_group *n = realloc(x->g, cap * sizeof(*n));

		if (!n)
			return NULL;
		x->g = n;
		x->cap = cap;
	}
	g = &x->g[x->n];
	*g = k;
	an_hist_init(&g->h);
	x->hash[s] = (uint32_t)++x->n;
	return g;
}

static void add_reason(struct an_exits *x, struct an_group *g, const struct an_exit *e,
		       uint64_t d)
{
	uint32_t i;

	for (i = 0; i < g->nr; i++)
		if (g->r[i].reason == e->reason)
			break;
	if (i == g->nr) {
		/* reasons are few (the walk's table is bounded): grow by one */
		struct an_reason_share *n = realloc(g->r, (g->nr + 1) * sizeof(*n));

		if (!n) {
			x->oom++;
			return;
		}
		g->r = n;
		g->r[g->nr].reason = e->reason;
		g->r[g->nr].count = g->r[g->nr].total_ns = 0;
		g->nr++;
	}
	g->r[i].count++;
	g->r[i].total_ns += d;
}

void an_exits_add(void *ctx, const struct an_exit *e)
{
	struct an_exits *x = ctx;
	struct an_group *g;
	uint64_t d = e->end - e->start;

	/* by what was accessed: the table and the longest exits are those
	 * of the exits that accessed it */
	if (wanted(x->by) != AN_DETAIL_NONE && e->detail.kind != wanted(x->by)) {
		x->no_detail++;
		return;
	}
	g = group_of(x, e);
	an_topn_add(&x->top, d, e);
	if (!g) {
		x->oom++;
		return;
	}
	an_hist_add(&g->h, d);
	if (e->halted) {
		g->halted_ns += d;
	} else {
		g->user_ns += e->user_ns;
		g->kernel_ns += d - e->user_ns;
	}
	if (x->by != AN_BY_REASON)
		add_reason(x, g, e, d);
}

static enum an_sort sort_by;

static uint64_t sort_value(const struct an_group *g)
{
	switch (sort_by) {
	case AN_SORT_COUNT:
		return g->h.count;
	case AN_SORT_P99:
		return an_hist_quantile(&g->h, 0.99);
	case AN_SORT_MAX:
		return g->h.max;
	default:
		return g->h.sum;
	}
}

static int cmp_group(const void *a, const void *b)
{
	const struct an_group *x = a, *y = b;
	uint64_t vx = sort_value(x), vy = sort_value(y);

	if (vx != vy)
		return vx < vy ? 1 : -1;
	if (x->vm != y->vm)
		return x->vm < y->vm ? -1 : 1;
	if (x->d.addr != y->d.addr)
		return x->d.addr < y->d.addr ? -1 : 1;
	if (x->d.write != y->d.write)
		return x->d.write ? 1 : -1;
	if (x->vcpu != y->vcpu)
		return x->vcpu < y->vcpu ? -1 : 1;
	if (x->reason != y->reason)
		return x->reason < y->reason ? -1 : 1;
	if (x->sym != y->sym)
		return x->sym < y->sym ? -1 : 1;
	return (x->task > y->task) - (x->task < y->task);
}

static int cmp_share(const void *a, const void *b)
{
	const struct an_reason_share *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return (x->reason > y->reason) - (x->reason < y->reason);
}

void an_exits_sort(struct an_exits *x, enum an_sort s)
{
	sort_by = s;	/* qsort has no context argument; one sort at a time */
	if (!x->n)
		return;
	qsort(x->g, x->n, sizeof(*x->g), cmp_group);
	for (size_t i = 0; i < x->n; i++)
		if (x->g[i].nr)
			qsort(x->g[i].r, x->g[i].nr, sizeof(*x->g[i].r), cmp_share);
	/* the hash indexes the old order: rebuild it */
	free(x->hash);
	x->hash = NULL;
	x->hash_cap = 0;
	rehash(x);
}
