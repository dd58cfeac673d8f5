/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A guest's symbol table (gsym.h): its check as hostile input, and the
 * lookup built from it. The check is the one place that reads the wire
 * form; gsym_new() relies on it and only copies.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gsym.h"

struct gsym {
	size_t n;
	uint64_t *addr;		/* ascending */
	uint32_t *name_off;	/* into names */
	char *names;
	size_t nmod;
	uint64_t *mod_base, *mod_end;	/* ascending, disjoint: [base, end) */
	char **mod_name;
};

static int bad(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Names end up in reports, tables and JSON: printable ASCII, no spaces. */
bool gsym_name_ok(const char *s, size_t n, size_t max)
{
	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x21 || s[i] > 0x7e)
			return false;
	return true;
}

int gsym_check(const Vmscope__Trace__GuestSymbols *s, char *why, size_t whylen)
{
	const uint8_t *p = s->names.data;
	size_t n = s->n_addr_delta, len = s->names.len, at = 0;
	uint64_t a = 0, prev_end = 0;

	if (n > GSYM_MAX_SYMS)
		return bad(why, whylen, "guest symbols: %zu, at most %u", n, GSYM_MAX_SYMS);
	if (len > GSYM_MAX_BYTES)
		return bad(why, whylen, "guest symbols: %zu bytes of names, at most %zu",
			   len, GSYM_MAX_BYTES);
	if (s->n_modules > GSYM_MAX_MODULES)
		return bad(why, whylen, "guest symbols: %zu modules, at most %u",
			   s->n_modules, GSYM_MAX_MODULES);
	if (s->note && strlen(s->note) > GSYM_MAX_NOTE)
		return bad(why, whylen, "guest symbols: note longer than %u bytes",
			   GSYM_MAX_NOTE);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *z = at < len ? memchr(p + at, 0, len - at) : NULL;
		uint64_t d = s->addr_delta[i];

		if (!z)
			return bad(why, whylen, "guest symbols: %zu names for %zu addresses",
				   i, n);
		if (!gsym_name_ok((const char *)p + at, (size_t)(z - p) - at, GSYM_MAX_NAME))
			return bad(why, whylen, "guest symbols: name %zu empty, too long "
				   "or not printable", i);
		at = (size_t)(z - p) + 1;
		if (i && d == 0)
			return bad(why, whylen, "guest symbols: address %zu repeated", i);
		if (d > UINT64_MAX - a)
			return bad(why, whylen, "guest symbols: address %zu overflows", i);
		a += d;
	}
	if (at != len)
		return bad(why, whylen, "guest symbols: %zu bytes of names after the last",
			   len - at);
	for (size_t i = 0; i < s->n_modules; i++) {
		const Vmscope__Trace__GuestModule *m = s->modules[i];

		if (!m->name || !gsym_name_ok(m->name, strlen(m->name), GSYM_MAX_MODNAME))
			return bad(why, whylen, "guest module %zu: name empty, too long "
				   "or not printable", i);
		if (m->size == 0 || m->addr > UINT64_MAX - m->size)
			return bad(why, whylen, "guest module %s: size %" PRIu64 " at %#"
				   PRIx64, m->name, m->size, m->addr);
		if (i && m->addr < prev_end)
			return bad(why, whylen, "guest module %s: not after the one before",
				   m->name);
		prev_end = m->addr + m->size;
	}
	return 0;
}

void gsym_free(struct gsym *g)
{
	if (!g)
		return;
	free(g->addr);
	free(g->name_off);
	free(g->names);
	free(g->mod_base);
	free(g->mod_end);
	if (g->mod_name)
		for (size_t i = 0; i < g->nmod; i++)
			free(g->mod_name[i]);
	free(g->mod_name);
	free(g);
}

int gsym_new(struct gsym **out, const Vmscope__Trace__GuestSymbols *s, char *why,
	     size_t whylen)
{
	struct gsym *g;
	uint64_t a = 0;
	size_t at = 0;
	int e;

	*out = NULL;
	e = gsym_check(s, why, whylen);
	if (e)
		return e;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->n = s->n_addr_delta;
	g->nmod = s->n_modules;
	/* +1: no zero-size allocation to tell from a failure */
	g->addr = malloc((g->n + 1) * sizeof(*g->addr));
	g->name_off = malloc((g->n + 1) * sizeof(*g->name_off));
	g->names = malloc(s->names.len + 1);
	g->mod_base = malloc((g->nmod + 1) * sizeof(*g->mod_base));
	g->mod_end = malloc((g->nmod + 1) * sizeof(*g->mod_end));
	g->mod_name = calloc(g->nmod + 1, sizeof(*g->mod_name));
	if (!g->addr || !g->name_off || !g->names || !g->mod_base || !g->mod_end ||
	    !g->mod_name) {
		gsym_free(g);
		return -ENOMEM;
	}
	if (s->names.len)
		memcpy(g->names, s->names.data, s->names.len);
	for (size_t i = 0; i < g->n; i++) {
		a += s->addr_delta[i];
		g->addr[i] = a;
		g->name_off[i] = (uint32_t)at;	/* < GSYM_MAX_BYTES */
		at += strlen(g->names + at) + 1;
	}
	for (size_t i = 0; i < g->nmod; i++) {
		g->mod_base[i] = s->modules[i]->addr;
		g->mod_end[i] = s->modules[i]->addr + s->modules[i]->size;
		g->mod_name[i] = strdup(s->modules[i]->name);
		if (!g->mod_name[i]) {
			gsym_free(g);
			return -ENOMEM;
		}
	}
	*out = g;
	return 0;
}

size_t gsym_count(const struct gsym *g)
{
	return g->n;
}

/* Index of the last element of @v (ascending) at or below @x, or -1. */
static long last_le(const uint64_t *v, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

/* The module holding @x, or -1 (the kernel's own code, or nothing). */
static long module_of(const struct gsym *g, uint64_t x)
{
	long m = last_le(g->mod_base, g->nmod, x);

	return m >= 0 && x < g->mod_end[m] ? m : -1;
}

bool gsym_at(const struct gsym *g, uint32_t index, struct gsym_hit *h)
{
	long m;

	if (index >= g->n)
		return false;
	m = module_of(g, g->addr[index]);
	h->index = index;
	h->name = g->names + g->name_off[index];
	h->off = 0;
	h->module = m >= 0 ? g->mod_name[m] : NULL;
	return true;
}

bool gsym_lookup(const struct gsym *g, uint64_t rip, struct gsym_hit *h)
{
	long i;

	if (gsym_user_rip(rip))
		return false;
	i = last_le(g->addr, g->n, rip);
	if (i < 0 || module_of(g, g->addr[i]) != module_of(g, rip))
		return false;
	gsym_at(g, (uint32_t)i, h);
	h->off = rip - g->addr[i];
	return true;
}

const char *gsym_hit_str(const struct gsym_hit *h, char *buf, size_t len)
{
	if (h->module)
		snprintf(buf, len, "%s+0x%" PRIx64 " [%s]", h->name, h->off, h->module);
	else
		snprintf(buf, len, "%s+0x%" PRIx64, h->name, h->off);
	return buf;
}
