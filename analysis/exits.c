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

static uint64_t key_of(const struct an_exits *x, const struct an_exit *e)
{
	uint64_t sub;

	switch (x->by) {
	case AN_BY_VCPU:
		sub = e->vcpu;
		break;
	case AN_BY_REASON:
		sub = e->reason;
		break;
	case AN_BY_TASK:
		sub = (uint64_t)(int64_t)e->task + 3;	/* BEFORE -3, OTHER -2, UNKNOWN -1 */
		break;
	default:
		sub = 0;
	}
	return (uint64_t)e->vm << 32 | (sub & 0xffffffffu);
}

static uint64_t group_key(const struct an_exits *x, const struct an_group *g)
{
	struct an_exit e = { .vm = g->vm, .vcpu = g->vcpu, .reason = g->reason, .task = g->task };

	return key_of(x, &e);
}

static size_t slot(uint64_t key, size_t cap)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static int rehash(struct an_exits *x)
{
	size_t cap = x->hash_cap ? 2 * x->hash_cap : 64;
	uint32_t *h = calloc(cap, sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < x->n; i++) {
		size_t s = slot(group_key(x, &x->g[i]), cap);

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
	uint64_t key = key_of(x, e);
	struct an_group *g;
	size_t s;

	if (2 * (x->n + 1) > x->hash_cap && rehash(x))
		return NULL;
	for (s = slot(key, x->hash_cap); x->hash[s]; s = (s + 1) & (x->hash_cap - 1))
		if (group_key(x, &x->g[x->hash[s] - 1]) == key)
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
	memset(g, 0, sizeof(*g));
	g->vm = e->vm;
	g->vcpu = x->by == AN_BY_VCPU ? e->vcpu : 0;
	g->reason = x->by == AN_BY_REASON ? e->reason : 0;
	g->task = x->by == AN_BY_TASK ? e->task : AN_TASK_UNKNOWN;
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
	struct an_group *g = group_of(x, e);
	uint64_t d = e->end - e->start;

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
	if (x->vcpu != y->vcpu)
		return x->vcpu < y->vcpu ? -1 : 1;
	if (x->reason != y->reason)
		return x->reason < y->reason ? -1 : 1;
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
