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
	an_regions_free(&x->reg);
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
	case AN_BY_MMIO_REGION:
		return AN_DETAIL_MMIO;
	case AN_BY_NPF:
	case AN_BY_NPF_REGION:
		return AN_DETAIL_NPF;
	default:
		return AN_DETAIL_NONE;
	}
}

bool an_by_detail(enum an_by by)
{
	return wanted(by) != AN_DETAIL_NONE;
}

bool an_by_region(enum an_by by)
{
	return by == AN_BY_MMIO_REGION || by == AN_BY_NPF_REGION;
}

const struct an_detail *an_exits_detail(enum an_by by, const struct an_exit *e)
{
	return wanted(by) == AN_DETAIL_NPF ? &e->fault : &e->detail;
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
	case AN_BY_NPF:
		k->d.kind = an_exits_detail(x->by, e)->kind;
		k->d.write = an_exits_detail(x->by, e)->write;
		k->d.addr = an_exits_detail(x->by, e)->addr;
		/* a port read by bytes and by words are two ways a driver uses it */
		if (x->by == AN_BY_PORT)
			k->d.size = e->detail.size;
		/* a device's registers share a page: one row per page */
		if (x->by == AN_BY_MMIO || x->by == AN_BY_NPF) {
			k->d.addr = an_page_of(k->d.addr);
			k->end = k->d.addr + (AN_PAGE - 1);
		}
		break;
	default:
		break;
	}
}

static bool same(const struct an_group *a, const struct an_group *b)
{
	return a->vm == b->vm && a->vcpu == b->vcpu && a->reason == b->reason &&
	       a->task == b->task && a->sym == b->sym && a->d.kind == b->d.kind &&
	       a->d.write == b->d.write && a->d.size == b->d.size &&
	       a->d.addr == b->d.addr && a->end == b->end;
}

static uint64_t group_key(const struct an_group *g)
{
	uint64_t k = (uint64_t)g->vm << 32 ^ g->vcpu ^ (uint64_t)g->reason << 8 ^
		     (uint64_t)(uint32_t)g->task << 16 ^ (uint64_t)(uint32_t)g->sym << 24;

	return k ^ (g->d.addr * 0xff51afd7ed558ccdull) ^ ((uint64_t)g->d.write << 63) ^
	       (uint64_t)g->d.size << 40;
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

/* A new group @k at the end of the table, or NULL. */
static struct an_group *new_group(struct an_exits *x, const struct an_group *k)
{
	struct an_group *g;

	if (x->n == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 16;
		struct an_group *n = realloc(x->g, cap * sizeof(*n));

		if (!n)
			return NULL;
		x->g = n;
		x->cap = cap;
	}
	g = &x->g[x->n++];
	*g = *k;
	an_hist_init(&g->h);
	return g;
}

/* The group of @e by its ident; NULL when out of memory, *@full when a
 * new page group would pass AN_MAX_ADDR_GROUPS. */
static struct an_group *group_of(struct an_exits *x, const struct an_exit *e, bool *full)
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
	if ((x->by == AN_BY_MMIO || x->by == AN_BY_NPF) && x->n >= AN_MAX_ADDR_GROUPS) {
		*full = true;
		return NULL;
	}
	g = new_group(x, &k);
	if (g)
		x->hash[s] = (uint32_t)x->n;
	return g;
}

static void add_reason(struct an_exits *x, struct an_group *g, uint32_t reason, uint64_t count,
		       uint64_t d)
{
	uint32_t i;

	for (i = 0; i < g->nr; i++)
		if (g->r[i].reason == reason)
			break;
	if (i == g->nr) {
		/* reasons are few (the walk's table is bounded): grow by one */
		struct an_reason_share *n = realloc(g->r, (g->nr + 1) * sizeof(*n));

		if (!n) {
			x->oom++;
			return;
		}
		g->r = n;
		g->r[g->nr].reason = reason;
		g->r[g->nr].count = g->r[g->nr].total_ns = 0;
		g->nr++;
	}
	g->r[i].count += count;
	g->r[i].total_ns += d;
}

/* Region @b's exits into region @a's group (@b's is left empty: an_exits_sort
 * drops it). */
static void join(struct an_exits *x, struct an_group *a, struct an_group *b)
{
	an_hist_merge(&a->h, &b->h);
	a->kernel_ns += b->kernel_ns;
	a->user_ns += b->user_ns;
	a->halted_ns += b->halted_ns;
	a->writes += b->writes;
	for (uint32_t i = 0; i < b->nr; i++)
		add_reason(x, a, b->r[i].reason, b->r[i].count, b->r[i].total_ns);
	an_hist_free(&b->h);
	free(b->r);
	b->r = NULL;
	b->nr = 0;
	b->kernel_ns = b->user_ns = b->halted_ns = b->writes = 0;
}

/* The group of the region that @e's page is in now (region.h); NULL when
 * out of memory, *@full when it would be a region past
 * AN_MAX_ADDR_GROUPS. */
static struct an_group *region_of(struct an_exits *x, const struct an_exit *e, bool *full)
{
	const struct an_detail *d = an_exits_detail(x->by, e);
	size_t at, gone;
	struct an_region *r;
	struct an_group *g;
	int op = an_regions_add(&x->reg, e->vm, d->addr, AN_MAX_ADDR_GROUPS, &at, &gone);

	if (op < 0) {
		*full = op == -ENOSPC;
		return NULL;
	}
	r = &x->reg.r[at];
	if (op == AN_REGION_NEW) {
		struct an_group k;

		ident(x, e, &k);
		k.d.kind = d->kind;
		if (!(g = new_group(x, &k))) {
			/* the region would have no group: take it out again */
			memmove(r, r + 1, (x->reg.n - at - 1) * sizeof(*r));
			x->reg.n--;
			return NULL;
		}
		r->id = x->n - 1;
	}
	g = &x->g[r->id];
	if (op == AN_REGION_JOINED)
		join(x, g, &x->g[gone]);
	g->d.addr = r->first;
	g->end = r->last;
	return g;
}

void an_exits_add(void *ctx, const struct an_exit *e)
{
	struct an_exits *x = ctx;
	struct an_group *g;
	uint64_t d = e->end - e->start;
	bool full = false;

	/* by what was accessed: the table and the longest exits are those
	 * of the exits that accessed it */
	if (wanted(x->by) != AN_DETAIL_NONE && an_exits_detail(x->by, e)->kind != wanted(x->by)) {
		x->no_detail++;
		return;
	}
	g = an_by_region(x->by) ? region_of(x, e, &full) : group_of(x, e, &full);
	an_topn_add(&x->top, d, e);
	if (!g) {
		if (full)
			x->beyond++;
		else
			x->oom++;
		return;
	}
	g->writes += an_exits_detail(x->by, e)->write;
	an_hist_add(&g->h, d);
	if (e->halted) {
		g->halted_ns += d;
	} else {
		g->user_ns += e->user_ns;
		g->kernel_ns += d - e->user_ns;
	}
	if (x->by != AN_BY_REASON)
		add_reason(x, g, e->reason, 1, d);
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
	if (x->d.size != y->d.size)
		return x->d.size < y->d.size ? -1 : 1;
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

/* By region: drop the groups of the regions joined into others (empty),
 * whose ids the regions no longer hold. */
static void drop_joined(struct an_exits *x)
{
	size_t n = 0;

	for (size_t i = 0; i < x->n; i++) {
		if (x->g[i].h.count)
			x->g[n++] = x->g[i];
		else
			an_hist_free(&x->g[i].h);
	}
	x->n = n;
}

void an_exits_sort(struct an_exits *x, enum an_sort s)
{
	sort_by = s;	/* qsort has no context argument; one sort at a time */
	if (an_by_region(x->by))
		drop_joined(x);
	if (!x->n)
		return;
	qsort(x->g, x->n, sizeof(*x->g), cmp_group);
	/* each region's group has moved: tell the region */
	for (size_t i = 0; an_by_region(x->by) && i < x->n; i++) {
		long r = an_regions_find(&x->reg, x->g[i].vm, x->g[i].d.addr);

		if (r >= 0)
			x->reg.r[r].id = i;
	}
	for (size_t i = 0; i < x->n; i++)
		if (x->g[i].nr)
			qsort(x->g[i].r, x->g[i].nr, sizeof(*x->g[i].r), cmp_share);
	/* the hash indexes the old order: rebuild it */
	free(x->hash);
	x->hash = NULL;
	x->hash_cap = 0;
	rehash(x);
}
