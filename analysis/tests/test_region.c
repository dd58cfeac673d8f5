// SPDX-License-Identifier: GPL-2.0
/*
 * Guest-physical regions (region.h) and `report exits --by
 * mmio-region|npf-region` built on them (exits.c).
 *
 * - The set itself, page by page: a single page; an adjacent page above
 *   and below (grew); a page far away (a new region); the page between
 *   two regions (joined); a page already in one; the pages at 0 and at
 *   2^64 - 4096 (no wrap either way, nothing beyond); another VM's page
 *   at the same address (its own region); the bound (-ENOSPC).
 * - an_hist_merge against one histogram of every value.
 * - The grouping: exits in random order over clusters of pages (gaps of
 *   one page, huge gaps, the last page of the address space, two VMs),
 *   against the regions computed here from the sorted set of pages
 *   (runs of pages 4096 apart): per region its first and last byte,
 *   count, total, min, max, writes exact, percentiles as one histogram of
 *   its exits gives them, the exits of pages past the bound counted.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tests/lib/check.h"
#include "../../tests/lib/xorshift.h"
#include "exits.h"
#include "region.h"

#define TOP	(UINT64_MAX - (AN_PAGE - 1))	/* the last page */

static void add_is(struct an_regions *s, uint32_t vm, uint64_t addr, int op, uint64_t first,
		   uint64_t last)
{
	size_t at = 99, gone = 99;
	int r = an_regions_add(s, vm, addr, 100, &at, &gone);

	CHECK_EQ(r, op);
	if (r < 0 || at >= s->n)
		return;
	CHECK_EQ(s->r[at].vm, vm);
	CHECK_EQ(s->r[at].first, first);
	CHECK_EQ(s->r[at].last, last);
	if (r == AN_REGION_NEW)
		s->r[at].id = (size_t)(first >> 12) + vm;	/* any id the test knows */
}

static void set_cases(void)
{
	struct an_regions s = { 0 };
	size_t at, gone = 0;

	add_is(&s, 0, 0x5123, AN_REGION_NEW, 0x5000, 0x5fff);		/* single page */
	add_is(&s, 0, 0x5fff, AN_REGION_IN, 0x5000, 0x5fff);		/* same page */
	add_is(&s, 0, 0x6000, AN_REGION_GREW, 0x5000, 0x6fff);		/* above */
	add_is(&s, 0, 0x4ffc, AN_REGION_GREW, 0x4000, 0x6fff);		/* below */
	add_is(&s, 0, 0x8000, AN_REGION_NEW, 0x8000, 0x8fff);		/* a page apart */
	CHECK_EQ(s.n, 2);
	CHECK_EQ(an_regions_add(&s, 0, 0x7010, 100, &at, &gone), AN_REGION_JOINED);
	CHECK_EQ(s.n, 1);
	CHECK_EQ(gone, 8);		/* the upper one's id */
	CHECK_EQ(s.r[at].first, 0x4000);
	CHECK_EQ(s.r[at].last, 0x8fff);
	add_is(&s, 0, 0x1000000000000ull, AN_REGION_NEW, 0x1000000000000ull,
	       0x1000000000fffull);					/* a huge gap */
	add_is(&s, 0, 0, AN_REGION_NEW, 0, 0xfff);			/* page 0 */
	add_is(&s, 0, UINT64_MAX, AN_REGION_NEW, TOP, UINT64_MAX);	/* the last page */
	add_is(&s, 0, TOP - 1, AN_REGION_GREW, TOP - AN_PAGE, UINT64_MAX);
	add_is(&s, 0, UINT64_MAX - 5, AN_REGION_IN, TOP - AN_PAGE, UINT64_MAX);
	/* another VM: its own regions, even at the same addresses */
	add_is(&s, 1, 0x6000, AN_REGION_NEW, 0x6000, 0x6fff);
	add_is(&s, 1, 0x7000, AN_REGION_GREW, 0x6000, 0x7fff);
	add_is(&s, 0, 0x9000, AN_REGION_GREW, 0x4000, 0x9fff);
	CHECK_EQ(s.n, 5);
	/* ordered by (vm, first), disjoint and never touching */
	for (size_t i = 1; i < s.n; i++)
		CHECK(s.r[i - 1].vm < s.r[i].vm ||
		      (s.r[i - 1].vm == s.r[i].vm && s.r[i - 1].last + 1 < s.r[i].first));
	CHECK_EQ(an_regions_find(&s, 0, 0x8abc), 1);
	CHECK_EQ(an_regions_find(&s, 1, 0x8abc), -1);
	CHECK_EQ(an_regions_find(&s, 0, UINT64_MAX), 3);
	CHECK_EQ(an_regions_find(&s, 2, 0), -1);
	/* the bound: no new region, the old ones still grow */
	CHECK_EQ(an_regions_add(&s, 0, 0x100000, 5, &at, &gone), -ENOSPC);
	CHECK_EQ(an_regions_add(&s, 0, 0xa000, 5, &at, &gone), AN_REGION_GREW);
	CHECK_EQ(s.n, 5);
	an_regions_free(&s);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(uint64_t n)
{
	return vmscope_xorshift64(&rng) % n;
}

static void hist_merge(void)
{
	struct an_hist a, b, all;

	an_hist_init(&a);
	an_hist_init(&b);
	an_hist_init(&all);
	for (int i = 0; i < 5000; i++) {
		uint64_t v = 1 + rnd(1 + rnd(50000000));

		an_hist_add(i % 3 ? &a : &b, v);
		an_hist_add(&all, v);
	}
	an_hist_merge(&a, &b);
	CHECK_EQ(a.count, all.count);
	CHECK_EQ(a.sum, all.sum);
	CHECK_EQ(a.min, all.min);
	CHECK_EQ(a.max, all.max);
	for (double q = 0.01; q < 1; q += 0.01)
		CHECK_EQ(an_hist_quantile(&a, q), an_hist_quantile(&all, q));
	an_hist_free(&a);
	an_hist_free(&b);
	an_hist_free(&all);
}

/* The story: exits in pages of a few clusters, two VMs. */
#define NX	20000
struct ex {
	uint32_t vm;
	uint64_t page, d;
	bool write;
};
static struct ex ex[NX];

static int by_page(const void *a, const void *b)
{
	const struct ex *x = a, *y = b;

	if (x->vm != y->vm)
		return x->vm < y->vm ? -1 : 1;
	return (x->page > y->page) - (x->page < y->page);
}

/* A region as this test finds it: a run of pages 4096 apart in the
 * sorted exits. */
struct want {
	uint32_t vm;
	uint64_t first, last, count, total, min, max, writes;
	struct an_hist h;
};

static void grouping(enum an_by by, uint8_t kind)
{
	/* cluster bases: BAR-like runs, a page alone, the space's two ends */
	static const uint64_t base[] = { 0, 0xfebf0000, 0xfebf5000, 0x100000000ull,
					 0x7fff00000000ull, TOP - 8 * AN_PAGE };
	static struct want w[NX];
	struct an_exits x;
	size_t nw = 0, seen = 0;
	uint64_t beyond = 0;

	CHECK_EQ(an_exits_init(&x, by, 3), 0);
	for (size_t i = 0; i < NX; i++) {
		struct ex *e = &ex[i];
		struct an_exit a = { .reason = 1 };
		struct an_detail *d = kind == AN_DETAIL_NPF ? &a.fault : &a.detail;

		e->vm = (uint32_t)rnd(2);
		/* pages 0..8 of a cluster, every third one left out in VM 1 */
		e->page = base[rnd(6)] + rnd(9) * AN_PAGE;
		if (e->vm && (e->page >> 12) % 3 == 0 && e->page)
			e->page -= AN_PAGE;
		e->d = 1 + rnd(1 + rnd(10000000));
		e->write = rnd(3) == 0;
		a.vm = e->vm;
		a.start = 1000 + i;
		a.end = a.start + e->d;
		d->kind = kind;
		d->write = e->write;
		d->addr = e->page + rnd(AN_PAGE);
		/* the other detail, which this grouping must not look at */
		(kind == AN_DETAIL_NPF ? &a.detail : &a.fault)->kind = AN_DETAIL_PIO;
		an_exits_add(&x, &a);
		if (i % 7 == 0) {	/* an exit without the detail */
			memset(d, 0, sizeof(*d));
			an_exits_add(&x, &a);
		}
	}
	CHECK_EQ(x.no_detail, (NX + 6) / 7);
	CHECK_EQ(x.beyond, 0);
	/* the regions, found here */
	qsort(ex, NX, sizeof(*ex), by_page);
	for (size_t i = 0; i < NX; i++) {
		const struct ex *e = &ex[i];
		struct want *c = nw ? &w[nw - 1] : NULL;

		if (!c || c->vm != e->vm || (e->page != c->last - (AN_PAGE - 1) &&
					     e->page != c->last + 1)) {
			c = &w[nw++];
			memset(c, 0, sizeof(*c));
			c->vm = e->vm;
			c->first = e->page;
			c->min = UINT64_MAX;
			an_hist_init(&c->h);
		}
		c->last = e->page + (AN_PAGE - 1);
		c->count++;
		c->total += e->d;
		c->min = e->d < c->min ? e->d : c->min;
		c->max = e->d > c->max ? e->d : c->max;
		c->writes += e->write;
		an_hist_add(&c->h, e->d);
	}
	an_exits_sort(&x, AN_SORT_COUNT);
	CHECK_EQ(x.n, nw);
	for (size_t i = 0; i < x.n; i++) {
		const struct an_group *g = &x.g[i];
		size_t k;

		for (k = 0; k < nw && (w[k].vm != g->vm || w[k].first != g->d.addr); k++)
			;
		CHECK(k < nw);
		if (k == nw) {
			fprintf(stderr, "no region at vm %u %#" PRIx64 "\n", g->vm, g->d.addr);
			continue;
		}
		CHECK_EQ(g->end, w[k].last);
		CHECK_EQ(g->d.kind, kind);
		CHECK_EQ(g->h.count, w[k].count);
		CHECK_EQ(g->h.sum, w[k].total);
		CHECK_EQ(g->h.min, w[k].min);
		CHECK_EQ(g->h.max, w[k].max);
		CHECK_EQ(g->writes, w[k].writes);
		CHECK_EQ(an_hist_quantile(&g->h, 0.5), an_hist_quantile(&w[k].h, 0.5));
		CHECK_EQ(an_hist_quantile(&g->h, 0.99), an_hist_quantile(&w[k].h, 0.99));
		CHECK_EQ(g->nr, 1);
		CHECK(i == 0 || x.g[i - 1].h.count >= g->h.count);
		seen += g->h.count;
	}
	CHECK_EQ(seen, NX);
	/* exits still come after a sort: they find their region's new place */
	{
		struct an_exit a = { .vm = 0, .start = 1, .end = 8, .reason = 1 };
		struct an_detail *d = kind == AN_DETAIL_NPF ? &a.fault : &a.detail;
		long r;

		d->kind = kind;
		d->addr = base[1] + 0x10;
		an_exits_add(&x, &a);
		r = an_regions_find(&x.reg, 0, base[1]);
		CHECK(r >= 0);
		if (r >= 0)
			CHECK_EQ(x.g[x.reg.r[r].id].d.addr, base[1]);
	}
	for (size_t k = 0; k < nw; k++)
		an_hist_free(&w[k].h);
	an_exits_free(&x);

	/* the bound: AN_MAX_ADDR_GROUPS regions a page apart, then one more
	 * page far away (beyond) and the page between two (joined: not) */
	CHECK_EQ(an_exits_init(&x, by, 0), 0);
	for (uint64_t i = 0; i <= AN_MAX_ADDR_GROUPS; i++) {
		struct an_exit a = { .start = 1, .end = 2 };
		struct an_detail *d = kind == AN_DETAIL_NPF ? &a.fault : &a.detail;

		d->kind = kind;
		d->addr = i * 2 * AN_PAGE;
		an_exits_add(&x, &a);
		beyond += i == AN_MAX_ADDR_GROUPS;
	}
	{
		struct an_exit a = { .start = 1, .end = 2 };
		struct an_detail *d = kind == AN_DETAIL_NPF ? &a.fault : &a.detail;

		d->kind = kind;
		d->addr = AN_PAGE;	/* joins the first two */
		an_exits_add(&x, &a);
	}
	CHECK_EQ(x.beyond, beyond);
	an_exits_sort(&x, AN_SORT_TOTAL);
	CHECK_EQ(x.n, AN_MAX_ADDR_GROUPS - 1);
	CHECK_EQ(x.g[0].h.count, 3);
	CHECK_EQ(x.g[0].d.addr, 0);
	CHECK_EQ(x.g[0].end, 3 * AN_PAGE - 1);
	an_exits_free(&x);
}

int main(void)
{
	set_cases();
	hist_merge();
	grouping(AN_BY_MMIO_REGION, AN_DETAIL_MMIO);
	grouping(AN_BY_NPF_REGION, AN_DETAIL_NPF);
	return check_result("analysis-region");
}
