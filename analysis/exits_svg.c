// SPDX-License-Identifier: GPL-2.0
/* Exit latency histograms as an SVG document: exits_svg.h. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libxml/chvalid.h>
#include <libxml/xmlstring.h>
#include <libxml/xmlwriter.h>

#include "dur.h"
#include "exits_svg.h"

/* Layout, in SVG user units (px). */
#define MARGIN		16
#define HEAD_H		40
#define PANEL_W		540
#define PANEL_H		250
#define PLOT_L		70	/* room for the y tick labels and axis label */
#define PLOT_R		20
#define PLOT_T		52	/* two title lines */
#define PLOT_B		44	/* x tick labels and axis label */
#define PLOT_W		(PANEL_W - PLOT_L - PLOT_R)
#define PLOT_H		(PANEL_H - PLOT_T - PLOT_B)
#define TITLE_CHARS	72	/* characters of a group's name shown in its title */

/* Display bins: [0, 4), then each power of two 2^k (k >= 2) in quarters. */
#define BINS_PER_P2	4
#define NBINS		(1 + (64 - 2) * BINS_PER_P2)

static unsigned int bin_of(uint64_t v)
{
	unsigned int k;

	if (v < 4)
		return 0;
	k = 63 - (unsigned int)__builtin_clzll(v);
	return 1 + (k - 2) * BINS_PER_P2 + (unsigned int)((v >> (k - 2)) & 3);
}

/* [lo, hi) of bin @b; hi saturates at UINT64_MAX for the last one. */
static void bin_edges(unsigned int b, uint64_t *lo, uint64_t *hi)
{
	unsigned int k = 2 + (b - 1) / BINS_PER_P2, j = (b - 1) % BINS_PER_P2;

	if (!b) {
		*lo = 0;
		*hi = 4;
		return;
	}
	*lo = (uint64_t)(4 + j) << (k - 2);
	*hi = k == 63 && j == 3 ? UINT64_MAX : (uint64_t)(5 + j) << (k - 2);
}

static void add_bucket(void *ctx, uint64_t lo, uint64_t width, uint64_t count)
{
	uint64_t *bins = ctx;

	(void)width;	/* a bucket never straddles two bins: see hist.h */
	bins[bin_of(lo)] += count;
}

/*
 * @s as XML character data: invalid UTF-8 and characters XML 1.0 does not
 * allow (C0 controls but tab and newlines) become U+FFFD; after @max
 * characters "..." ends it (@max 0: no limit). libxml2's writer escapes
 * the rest. NULL when out of memory.
 */
static char *xml_text(const char *s, size_t max)
{
	size_t n = strlen(s), out = 0, chars = 0;
	const unsigned char *u = (const unsigned char *)s;
	char *t = malloc(3 * n + 4);

	if (!t)
		return NULL;
	for (size_t i = 0; i < n; chars++) {
		int len = n - i > 4 ? 4 : (int)(n - i);
		int c = xmlGetUTF8Char(u + i, &len);

		if (max && chars == max) {
			memcpy(t + out, "...", 3);
			out += 3;
			break;
		}
		if (c < 0 || len <= 0 || !xmlIsCharQ(c)) {
			memcpy(t + out, "\xEF\xBF\xBD", 3);	/* U+FFFD */
			out += 3;
			i += c < 0 || len <= 0 ? 1 : (size_t)len;
			continue;
		}
		memcpy(t + out, s + i, (size_t)len);
		out += (size_t)len;
		i += (size_t)len;
	}
	t[out] = 0;
	return t;
}

/* The writer and whether any call failed (checked once, at the end). */
struct doc {
	xmlTextWriterPtr w;
	bool bad;
};

static void ok(struct doc *d, int rc)
{
	if (rc < 0)
		d->bad = true;
}

static void start(struct doc *d, const char *name, const char *cls)
{
	ok(d, xmlTextWriterStartElement(d->w, BAD_CAST name));
	if (cls)
		ok(d, xmlTextWriterWriteAttribute(d->w, BAD_CAST "class", BAD_CAST cls));
}

static void end(struct doc *d)
{
	ok(d, xmlTextWriterEndElement(d->w));
}

static void attr(struct doc *d, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void attr(struct doc *d, const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ok(d, xmlTextWriterWriteVFormatAttribute(d->w, BAD_CAST name, fmt, ap));
	va_end(ap);
}

/* Character data from anywhere (the trace too), cut after @max chars. */
static void text_of(struct doc *d, const char *s, size_t max)
{
	char *t = xml_text(s, max);

	if (!t) {
		d->bad = true;
		return;
	}
	ok(d, xmlTextWriterWriteString(d->w, BAD_CAST t));
	free(t);
}

/* <text> at (x, y) with @anchor (start, middle, end). */
static void text_at(struct doc *d, const char *cls, double x, double y, const char *anchor,
		    const char *s, size_t max)
{
	start(d, "text", cls);
	attr(d, "x", "%.1f", x);
	attr(d, "y", "%.1f", y);
	if (strcmp(anchor, "start"))
		attr(d, "text-anchor", "%s", anchor);
	text_of(d, s, max);
	end(d);
}

static void line(struct doc *d, const char *cls, double x1, double y1, double x2, double y2)
{
	start(d, "line", cls);
	attr(d, "x1", "%.1f", x1);
	attr(d, "y1", "%.1f", y1);
	attr(d, "x2", "%.1f", x2);
	attr(d, "y2", "%.1f", y2);
	end(d);
}

/* The shared x axis: powers of ten 10^lo .. 10^hi ns around every value. */
struct xaxis {
	int lo, hi;
};

static struct xaxis x_range(const struct an_svg_panel *p, size_t n)
{
	uint64_t gmin = UINT64_MAX, gmax = 0, p10 = 1;
	struct xaxis a = { 0, 0 };

	for (size_t i = 0; i < n; i++) {
		if (!p[i].h->count)
			continue;
		if (p[i].h->min < gmin)
			gmin = p[i].h->min;
		if (p[i].h->max > gmax)
			gmax = p[i].h->max;
	}
	if (gmin == UINT64_MAX)
		gmin = gmax = 1;
	while (p10 <= UINT64_MAX / 10 && p10 * 10 <= gmin) {
		p10 *= 10;
		a.lo++;
	}
	for (p10 = 1; a.hi < 20 && p10 <= gmax; a.hi++)	/* 10^20 > UINT64_MAX */
		p10 = p10 <= UINT64_MAX / 10 ? p10 * 10 : UINT64_MAX;
	if (a.hi <= a.lo)
		a.hi = a.lo + 1;
	return a;
}

/* Where @v ns falls across the plot (clamped to the axis). */
static double x_of(const struct xaxis *a, double v)
{
	double l = v > 0 ? log10(v) : a->lo;

	if (l < a->lo)
		l = a->lo;
	if (l > a->hi)
		l = a->hi;
	return PLOT_L + (l - a->lo) / (a->hi - a->lo) * PLOT_W;
}

/* "1 ns", "100 us", "10 s": 10^@e ns. */
static void pow10_label(int e, char *buf, size_t len)
{
	static const char *const unit[] = { "ns", "us", "ms", "s" };
	int u = e / 3 > 3 ? 3 : e / 3;
	unsigned long long m = 1;

	for (int i = 0; i < e - 3 * u; i++)
		m *= 10;
	snprintf(buf, len, "%llu %s", m, unit[u]);
}

/* The smallest 1, 2 or 5 times a power of ten >= @v (>= 1). */
static uint64_t nice_top(uint64_t v)
{
	for (uint64_t p = 1;; p *= 10) {
		if (v <= p)
			return p;
		if (v <= 2 * p)
			return 2 * p;
		if (v <= 5 * p || p > UINT64_MAX / 100)
			return 5 * p;
	}
}

static void x_axis(struct doc *d, const struct xaxis *a)
{
	char b[32];

	for (int e = a->lo; e <= a->hi; e++) {
		double x = x_of(a, pow(10, e));

		line(d, "tick", x, PLOT_T + PLOT_H, x, PLOT_T + PLOT_H + 5);
		pow10_label(e, b, sizeof(b));
		text_at(d, "tick", x, PLOT_T + PLOT_H + 18, "middle", b, 0);
	}
	text_at(d, "axis", PLOT_L + PLOT_W / 2.0, PANEL_H - 8, "middle",
		"exit latency, kvm_exit to next kvm_entry (log scale)", 0);
}

static void y_axis(struct doc *d, uint64_t top)
{
	uint64_t ticks[3] = { 0, top / 2, top };
	char b[32];

	for (int i = 0; i < 3; i++) {
		double y = PLOT_T + PLOT_H - (double)ticks[i] / (double)top * PLOT_H;

		if (i == 1 && top % 2)
			continue;	/* no half tick between 0 and an odd top */
		line(d, "tick", PLOT_L - 5, y, PLOT_L, y);
		snprintf(b, sizeof(b), "%" PRIu64, ticks[i]);
		text_at(d, "tick", PLOT_L - 8, y + 4, "end", b, 0);
	}
	start(d, "text", "axis");
	attr(d, "transform", "translate(%d,%.1f) rotate(-90)", 18, PLOT_T + PLOT_H / 2.0);
	attr(d, "text-anchor", "middle");
	text_of(d, "exits (count per bin)", 0);
	end(d);
}

static void marker(struct doc *d, const struct xaxis *a, const char *cls, const char *name,
		   uint64_t v)
{
	double x = x_of(a, (double)v);

	line(d, cls, x, PLOT_T, x, PLOT_T + PLOT_H);
	text_at(d, cls, x + 3, PLOT_T + 10, "start", name, 0);
}

static void panel(struct doc *d, const struct an_svg_panel *p, const struct xaxis *a,
		  double ox, double oy, uint64_t *bins)
{
	const struct an_hist *h = p->h;
	uint64_t p50 = an_hist_quantile(h, 0.5), p99 = an_hist_quantile(h, 0.99);
	uint64_t most = 0, top;
	char line2[160], b[4][32];

	memset(bins, 0, NBINS * sizeof(*bins));
	an_hist_each(h, add_bucket, bins);
	for (unsigned int i = 0; i < NBINS; i++)
		if (bins[i] > most)
			most = bins[i];
	top = nice_top(most ? most : 1);

	start(d, "g", "panel");
	attr(d, "transform", "translate(%.1f,%.1f)", ox, oy);
	attr(d, "data-count", "%" PRIu64, h->count);
	start(d, "title", NULL);
	text_of(d, p->title, 0);
	end(d);
	text_at(d, "name", 8, 18, "start", p->title, TITLE_CHARS);
	snprintf(line2, sizeof(line2), "%" PRIu64 " exits, p50 %s, p99 %s, max %s, total %s",
		 h->count, an_dur(p50, b[0], sizeof(b[0])), an_dur(p99, b[1], sizeof(b[1])),
		 an_dur(h->count ? h->max : 0, b[2], sizeof(b[2])),
		 an_dur(h->sum, b[3], sizeof(b[3])));
	text_at(d, "stats", 8, 36, "start", line2, 0);

	start(d, "rect", "plot");
	attr(d, "x", "%d", PLOT_L);
	attr(d, "y", "%d", PLOT_T);
	attr(d, "width", "%d", PLOT_W);
	attr(d, "height", "%d", PLOT_H);
	end(d);
	for (unsigned int i = 0; i < NBINS; i++) {
		uint64_t lo, hi;
		double x0, x1, hgt;

		if (!bins[i])
			continue;
		bin_edges(i, &lo, &hi);
		x0 = x_of(a, (double)lo);
		x1 = x_of(a, (double)hi);
		hgt = (double)bins[i] / (double)top * PLOT_H;
		if (hgt < 1)
			hgt = 1;	/* a bin of a few exits in a tall panel still shows */
		start(d, "rect", "bar");
		attr(d, "x", "%.2f", x0);
		attr(d, "y", "%.2f", PLOT_T + PLOT_H - hgt);
		attr(d, "width", "%.2f", x1 - x0 > 0.5 ? x1 - x0 : 0.5);
		attr(d, "height", "%.2f", hgt);
		/* the bin in ns, [lo, hi), and its count: for scripts and tests */
		attr(d, "data-lo", "%" PRIu64, lo);
		attr(d, "data-hi", "%" PRIu64, hi);
		attr(d, "data-count", "%" PRIu64, bins[i]);
		start(d, "title", NULL);
		snprintf(line2, sizeof(line2), "%s to %s: %" PRIu64 " exits",
			 an_dur(lo, b[0], sizeof(b[0])), an_dur(hi, b[1], sizeof(b[1])), bins[i]);
		text_of(d, line2, 0);
		end(d);
		end(d);
	}
	if (h->count) {
		marker(d, a, "p50", "p50", p50);
		marker(d, a, "p99", "p99", p99);
	}
	x_axis(d, a);
	y_axis(d, top);
	end(d);
}

static const char style[] =
	"text { font-family: sans-serif; font-size: 11px; fill: #222 }"
	" .heading { font-size: 15px; font-weight: bold }"
	" .name { font-size: 13px; font-weight: bold }"
	" .stats { font-size: 12px }"
	" .plot { fill: #fafafa; stroke: #999 }"
	" .bar { fill: #4477aa }"
	" line.tick { stroke: #666 }"
	" line.p50 { stroke: #228833; stroke-dasharray: 4 3 }"
	" line.p99 { stroke: #cc3311; stroke-dasharray: 4 3 }"
	" text.p50 { fill: #228833 } text.p99 { fill: #cc3311 }";

/* The whole document into @buf. */
static bool build(xmlBufferPtr buf, const char *heading, const struct an_svg_panel *p,
		  size_t n)
{
	size_t shown = n < AN_SVG_MAX_PANELS ? n : AN_SVG_MAX_PANELS;
	unsigned int cols = shown > 1 ? 2 : 1, rows = (unsigned int)((shown + cols - 1) / cols);
	struct xaxis a = x_range(p, shown);
	uint64_t *bins = malloc(NBINS * sizeof(*bins));
	struct doc d = { .w = xmlNewTextWriterMemory(buf, 0) };
	char note[128];

	if (!d.w || !bins) {
		if (d.w)
			xmlFreeTextWriter(d.w);
		free(bins);
		return false;
	}
	xmlTextWriterSetIndent(d.w, 1);
	ok(&d, xmlTextWriterStartDocument(d.w, "1.0", "UTF-8", NULL));
	start(&d, "svg", NULL);
	attr(&d, "xmlns", "http://www.w3.org/2000/svg");
	attr(&d, "width", "%u", 2 * MARGIN + cols * PANEL_W);
	attr(&d, "height", "%u", 2 * MARGIN + HEAD_H + (rows ? rows : 1) * PANEL_H);
	start(&d, "style", NULL);
	text_of(&d, style, 0);
	end(&d);
	start(&d, "title", NULL);
	text_of(&d, heading, 0);
	end(&d);
	start(&d, "rect", NULL);
	attr(&d, "width", "100%%");
	attr(&d, "height", "100%%");
	attr(&d, "fill", "white");
	end(&d);
	text_at(&d, "heading", MARGIN, MARGIN + 16, "start", heading, 0);
	if (!n)
		snprintf(note, sizeof(note), "no exits");
	else if (shown < n)
		snprintf(note, sizeof(note), "the first %zu of %zu groups, in the report's order",
			 shown, n);
	else
		snprintf(note, sizeof(note), "%zu groups, in the report's order", n);
	text_at(&d, "note", MARGIN, MARGIN + 32, "start", note, 0);
	for (size_t i = 0; i < shown; i++)
		panel(&d, &p[i], &a, MARGIN + (double)(i % cols) * PANEL_W,
		      MARGIN + HEAD_H + (double)(i / cols) * PANEL_H, bins);
	end(&d);
	ok(&d, xmlTextWriterEndDocument(d.w));
	xmlFreeTextWriter(d.w);	/* flushes into buf */
	free(bins);
	return !d.bad;
}

int an_exits_svg(int fd, const char *heading, const struct an_svg_panel *p, size_t n)
{
	xmlBufferPtr buf = xmlBufferCreate();
	const char *s;
	size_t len, off = 0;
	int e = 0;

	if (!buf)
		return -ENOMEM;
	if (!build(buf, heading, p, n)) {
		xmlBufferFree(buf);
		return -ENOMEM;
	}
	s = (const char *)xmlBufferContent(buf);
	len = (size_t)xmlBufferLength(buf);
	while (off < len) {
		ssize_t w = write(fd, s + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			e = w < 0 ? -errno : -EIO;
			break;
		}
		off += (size_t)w;
	}
	xmlBufferFree(buf);
	return e;
}
