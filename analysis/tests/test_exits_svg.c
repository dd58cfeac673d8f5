// SPDX-License-Identifier: GPL-2.0
/*
 * The SVG of `report exits --svg` (exits_svg.h), built from the report's
 * own aggregation of a merged trace with a known story (scen.h: 2 VMs x 3
 * vCPUs, io/cpuid/hlt/npf exits, AMD names in VM 0, Intel in VM 1, every
 * duration kept):
 *
 * - `xmllint --noout` (argv[1]) accepts the document;
 * - parsed back (libxml2), it has one panel per (VM, reason) group, in
 *   the report's order, each titled "VM n NAME: REASON" with
 *   "COUNT exits, p50 .., p99 .., max .." where COUNT is the story's
 *   count for that VM and reason, and the percentiles and max are the
 *   text report's (an_dur of the same histogram);
 * - every bar's count equals the number of the story's durations in its
 *   [data-lo, data-hi) range, and the bars add up to the count;
 * - hostile names (markup, quotes, control characters, invalid UTF-8, a
 *   CDATA end) give a well-formed document whose text reads back with
 *   the markup as text and U+FFFD for what XML cannot hold; a long name
 *   is cut with "...";
 * - more groups than AN_SVG_MAX_PANELS: that many panels and a note;
 *   no groups: a well-formed document saying "no exits".
 *
 * Usage: test_exits_svg PATH-TO-xmllint
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "../../tracefmt/tests/util.h"
#include "dur.h"
#include "exits.h"
#include "exits_svg.h"
#include "hist.h"
#include "scen.h"
#include "walk.h"

static const char *xmllint;
static char dir[256];

/* Write @p to DIR/NAME, check it with xmllint, parse it (NULL: failed). */
static xmlDocPtr write_check(const char *name, const char *heading,
			     const struct an_svg_panel *p, size_t n, char *path, size_t len)
{
	char cmd[1024];
	int fd, st;

	snprintf(path, len, "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	if (fd < 0)
		return NULL;
	CHECK_EQ(an_exits_svg(fd, heading, p, n), 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "'%s' --noout '%s'", xmllint, path);
	st = system(cmd);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	if (st)
		fprintf(stderr, "xmllint said no to %s\n", path);
	return xmlReadFile(path, NULL, XML_PARSE_NONET);
}

static bool is(const xmlNode *n, const char *name, const char *cls)
{
	xmlChar *c;
	bool yes;

	if (n->type != XML_ELEMENT_NODE || strcmp((const char *)n->name, name))
		return false;
	if (!cls)
		return true;
	c = xmlGetProp(n, BAD_CAST "class");
	yes = c && !strcmp((const char *)c, cls);
	xmlFree(c);
	return yes;
}

/* The first child @name of class @cls, or NULL. */
static xmlNode *child(const xmlNode *n, const char *name, const char *cls)
{
	for (xmlNode *c = n->children; c; c = c->next)
		if (is(c, name, cls))
			return c;
	return NULL;
}

static size_t count_children(const xmlNode *n, const char *name, const char *cls)
{
	size_t k = 0;

	for (xmlNode *c = n->children; c; c = c->next)
		k += is(c, name, cls);
	return k;
}

/* The text of element @n, copied into @buf. */
static const char *text(const xmlNode *n, char *buf, size_t len)
{
	xmlChar *t = n ? xmlNodeGetContent(n) : NULL;

	snprintf(buf, len, "%s", t ? (const char *)t : "");
	xmlFree(t);
	return buf;
}

static uint64_t prop_u64(const xmlNode *n, const char *name)
{
	xmlChar *v = xmlGetProp(n, BAD_CAST name);
	uint64_t x = v ? strtoull((const char *)v, NULL, 10) : UINT64_MAX;

	xmlFree(v);
	return x;
}

/* Index of the scenario's reason @name in VM @vm, or -1. */
static int scen_reason(unsigned int vm, const char *name)
{
	for (int r = 0; r < SCEN_REASONS; r++)
		if (!strcmp(name, vm % 2 ? scen_vmx_name[r] : scen_svm_name[r]))
			return r;
	return -1;
}

static void test_scenario(void)
{
	struct scen s = { .seed = 11, .n_vms = 2, .vcpus = 3, .n_records = 60000 };
	struct an_hooks h = { .exit = an_exits_add };
	struct an_svg_panel p[2 * SCEN_REASONS];
	char titles[2 * SCEN_REASONS][128], merged[512], path[512], err[256], buf[512];
	struct an_exits x;
	struct an_walk *w = NULL;
	xmlDocPtr doc;
	xmlNode *root, *g;
	size_t i = 0;

	s.x.keep = true;
	CHECK_EQ(scen_write(&s, dir), 0);
	snprintf(merged, sizeof(merged), "%s/merged", dir);
	CHECK_EQ(an_exits_init(&x, AN_BY_REASON, 0), 0);
	h.ctx = &x;
	CHECK_EQ(an_walk_open(&w, merged, 0, err, sizeof(err)), 0);
	if (!w) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	CHECK_EQ(an_walk_run(w, &h, err, sizeof(err)), 0);
	an_exits_sort(&x, AN_SORT_TOTAL);
	CHECK_EQ(x.n, 2 * SCEN_REASONS);
	for (i = 0; i < x.n && i < 2 * SCEN_REASONS; i++) {
		snprintf(titles[i], sizeof(titles[i]), "VM %u %s: %s", x.g[i].vm,
			 an_walk_vm_name(w, x.g[i].vm), an_walk_reason_name(w, x.g[i].reason));
		p[i] = (struct an_svg_panel){ .title = titles[i], .h = &x.g[i].h };
	}
	doc = write_check("scen.svg", "exits of the scenario", p, i, path, sizeof(path));
	CHECK(doc != NULL);
	if (!doc)
		goto out;
	root = xmlDocGetRootElement(doc);
	CHECK(is(root, "svg", NULL));
	CHECK_EQ(count_children(root, "g", "panel"), x.n);
	i = 0;
	for (g = root->children; g; g = g->next) {
		const struct an_group *gr;
		char want[256], b[3][32];
		uint64_t *d, sum = 0;
		size_t nd, bars = 0;
		int r;

		if (!is(g, "g", "panel"))
			continue;
		if (i >= x.n)
			break;
		gr = &x.g[i];
		r = scen_reason(gr->vm, an_walk_reason_name(w, gr->reason));
		CHECK(r >= 0);
		if (r < 0)
			break;
		d = s.x.dur[gr->vm][r];
		nd = s.x.ndur[gr->vm][r];
		CHECK(!strcmp(text(child(g, "text", "name"), buf, sizeof(buf)), titles[i]));
		/* the story's count, the text report's percentiles and max */
		snprintf(want, sizeof(want), "%zu exits, p50 %s, p99 %s, max %s,", nd,
			 an_dur(an_hist_quantile(&gr->h, 0.5), b[0], sizeof(b[0])),
			 an_dur(an_hist_quantile(&gr->h, 0.99), b[1], sizeof(b[1])),
			 an_dur(s.x.max[gr->vm][r], b[2], sizeof(b[2])));
		text(child(g, "text", "stats"), buf, sizeof(buf));
		CHECK(!strncmp(buf, want, strlen(want)));
		if (strncmp(buf, want, strlen(want)))
			fprintf(stderr, "panel %zu: '%s', wanted '%s...'\n", i, buf, want);
		CHECK_EQ(prop_u64(g, "data-count"), nd);
		/* every bar: the story's durations in its range */
		for (xmlNode *bar = g->children; bar; bar = bar->next) {
			uint64_t lo, hi, c, exact = 0;

			if (!is(bar, "rect", "bar"))
				continue;
			lo = prop_u64(bar, "data-lo");
			hi = prop_u64(bar, "data-hi");
			c = prop_u64(bar, "data-count");
			for (size_t k = 0; k < nd; k++)
				exact += d[k] >= lo && d[k] < hi;
			CHECK_EQ(c, exact);
			CHECK(c > 0);
			sum += c;
			bars++;
		}
		CHECK(bars > 10);	/* heavy-tailed durations: many bins */
		CHECK_EQ(sum, nd);
		CHECK(child(g, "line", "p50") != NULL);
		CHECK(child(g, "line", "p99") != NULL);
		i++;
	}
	CHECK_EQ(i, x.n);
	xmlFreeDoc(doc);
out:
	an_exits_free(&x);
	an_walk_close(w);
	scen_free(&s);
}

static void test_hostile(void)
{
	static const char hostile[] = "<script>alert(\"x\")</script> & 'q' ]]> \x01\x1b\xff\xc3( ok";
	/* what reads back: markup as text, U+FFFD for each of \x01 \x1b \xff \xc3 */
	static const char back[] = "<script>alert(\"x\")</script> & 'q' ]]> "
				   "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD( ok";
	char longname[200], path[512], buf[512];
	struct an_svg_panel p[2];
	struct an_hist h;
	xmlDocPtr doc;
	xmlNode *root, *g;

	an_hist_init(&h);
	for (uint64_t v = 1; v < 5000000; v = v * 3 / 2 + 1)
		an_hist_add(&h, v);
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	p[0] = (struct an_svg_panel){ .title = hostile, .h = &h };
	p[1] = (struct an_svg_panel){ .title = longname, .h = &h };
	doc = write_check("hostile.svg", hostile, p, 2, path, sizeof(path));
	CHECK(doc != NULL);
	if (!doc)
		goto out;
	root = xmlDocGetRootElement(doc);
	CHECK(!strcmp(text(child(root, "title", NULL), buf, sizeof(buf)), back));
	CHECK(!strcmp(text(child(root, "text", "heading"), buf, sizeof(buf)), back));
	g = child(root, "g", "panel");
	CHECK(g && !strcmp(text(child(g, "text", "name"), buf, sizeof(buf)), back));
	CHECK(g && !strcmp(text(child(g, "title", NULL), buf, sizeof(buf)), back));
	for (g = g ? g->next : NULL; g && !is(g, "g", "panel"); g = g->next)
		;
	CHECK(g != NULL);
	if (g) {
		text(child(g, "text", "name"), buf, sizeof(buf));
		CHECK_EQ(strlen(buf), 72 + 3);
		CHECK(!strcmp(buf + 72, "..."));
		/* the tooltip keeps the whole name */
		CHECK_EQ(strlen(text(child(g, "title", NULL), buf, sizeof(buf))), sizeof(longname) - 1);
	}
	xmlFreeDoc(doc);
out:
	an_hist_free(&h);
}

static void test_many_and_none(void)
{
	enum { N = AN_SVG_MAX_PANELS + 50 };
	static struct an_svg_panel p[N];
	char path[512], buf[256], want[128];
	struct an_hist h;
	xmlDocPtr doc;
	xmlNode *root;

	an_hist_init(&h);
	an_hist_add(&h, 1000);
	for (size_t i = 0; i < N; i++)
		p[i] = (struct an_svg_panel){ .title = "same", .h = &h };
	doc = write_check("many.svg", "many", p, N, path, sizeof(path));
	CHECK(doc != NULL);
	if (doc) {
		root = xmlDocGetRootElement(doc);
		CHECK_EQ(count_children(root, "g", "panel"), AN_SVG_MAX_PANELS);
		snprintf(want, sizeof(want), "the first %d of %d groups", AN_SVG_MAX_PANELS, N);
		CHECK(strstr(text(child(root, "text", "note"), buf, sizeof(buf)), want) != NULL);
		xmlFreeDoc(doc);
	}
	doc = write_check("none.svg", "none", p, 0, path, sizeof(path));
	CHECK(doc != NULL);
	if (doc) {
		root = xmlDocGetRootElement(doc);
		CHECK_EQ(count_children(root, "g", "panel"), 0);
		CHECK(!strcmp(text(child(root, "text", "note"), buf, sizeof(buf)), "no exits"));
		xmlFreeDoc(doc);
	}
	an_hist_free(&h);
}

int main(int argc, char **argv)
{
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: test_exits_svg PATH-TO-xmllint\n");
		return 2;
	}
	xmllint = argv[1];
	fd = tf_test_mkdir(dir, sizeof(dir));
	if (fd >= 0)
		close(fd);
	test_scenario();
	test_hostile();
	test_many_and_none();
	xmlCleanupParser();
	tf_test_rmdir(dir);
	return check_result("exits-svg");
}
