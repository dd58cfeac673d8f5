/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /proc/kallsyms and /proc/modules into a GuestSymbols message
 * (agent_syms.h). Only text symbols (t, T) are kept: a RIP is in code.
 * They are sorted by address, one name per address (the first listed),
 * then cut at the byte bound from the top (module code goes first).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_syms.h"

struct ent {
	uint64_t addr;
	uint32_t off;	/* name in the parse blob */
	uint32_t line;	/* order in the file: the first name wins a tie */
};

static int ent_cmp(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static void note(struct agent_syms *s, const char *fmt, const char *a, const char *b)
{
	size_t have = strlen(s->note);

	if (have < sizeof(s->note) - 3)
		snprintf(s->note + have, sizeof(s->note) - have, have ? "; " : "");
	have = strlen(s->note);
	snprintf(s->note + have, sizeof(s->note) - have, fmt, a, b);
}

/* The parse: every text symbol into @e (names in @blob). */
static int read_kallsyms(FILE *f, struct ent **e, size_t *n, char **blob,
			 size_t *blob_len, uint64_t *skipped, int *hidden)
{
	size_t cap = 0, bcap = 0, lcap = 0;
	char *line = NULL;
	uint32_t lineno = 0;
	int zero = 0, any = 0;

	while (getline(&line, &lcap, f) > 0) {
		char type, *name, *end;
		uint64_t addr;
		size_t len;

		lineno++;
		addr = strtoull(line, &end, 16);
		if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
			continue;
		type = end[1];
		if (type != 't' && type != 'T')
			continue;
		name = end + 3;
		len = strcspn(name, " \t\n");
		any = 1;
		if (addr == 0) {
			zero = 1;
			continue;
		}
		/* what the host's check would refuse is left out, counted */
		if (!gsym_name_ok(name, len, GSYM_MAX_NAME) || *blob_len + len + 1 > UINT32_MAX) {
			(*skipped)++;
			continue;
		}
		if (*n == cap) {
			struct ent *ne = realloc(*e, (cap ? cap * 2 : 4096) * sizeof(**e));

			if (!ne)
				goto nomem;
			*e = ne;
			cap = cap ? cap * 2 : 4096;
		}
		if (*blob_len + len + 1 > bcap) {
			size_t nc = (bcap ? bcap * 2 : 65536) + len + 1;
			char *nb = realloc(*blob, nc);

			if (!nb)
				goto nomem;
			*blob = nb;
			bcap = nc;
		}
		memcpy(*blob + *blob_len, name, len);
		(*blob)[*blob_len + len] = 0;
		(*e)[*n].addr = addr;
		(*e)[*n].off = (uint32_t)*blob_len;
		(*e)[*n].line = lineno;
		(*n)++;
		*blob_len += len + 1;
	}
	free(line);
	/* kptr_restrict hides every address from those without CAP_SYSLOG */
	*hidden = any && zero && *n == 0;
	return 0;
nomem:
	free(line);
	return -ENOMEM;
}

static int load_symbols(struct agent_syms *s, const char *path, size_t max_bytes)
{
	struct ent *e = NULL;
	char *blob = NULL;
	size_t n = 0, blob_len = 0, kept = 0, bytes = 0, out = 0;
	uint64_t skipped = 0, prev = 0;
	int hidden = 0, full = 0, err;
	FILE *f = fopen(path, "re");

	if (!f) {
		note(s, "cannot read %s: %s", path, strerror(errno));
		return 0;
	}
	err = read_kallsyms(f, &e, &n, &blob, &blob_len, &skipped, &hidden);
	fclose(f);
	if (err)
		goto done;
	if (hidden)
		note(s, "%s shows no addresses (kptr_restrict; %s)", path,
		     "the agent runs without CAP_SYSLOG");
	if (n)
		qsort(e, n, sizeof(*e), ent_cmp);
	/* one name per address; then as many as the bound holds */
	for (size_t i = 0; i < n; i++) {
		size_t need;

		if (kept && e[i].addr == prev)
			continue;
		need = strlen(blob + e[i].off) + 1 + varint_len(e[i].addr - prev);
		/* once full, every higher address is left out: no holes */
		if (full || bytes + need > max_bytes || kept == GSYM_MAX_SYMS) {
			full = 1;
			skipped++;
			continue;
		}
		bytes += need;
		e[kept].addr = e[i].addr;
		e[kept].off = e[i].off;
		prev = e[i].addr;
		kept++;
	}
	err = -ENOMEM;
	s->delta = malloc((kept + 1) * sizeof(*s->delta));
	s->names = malloc(bytes + 1);
	if (!s->delta || !s->names)
		goto done;
	prev = 0;
	for (size_t i = 0; i < kept; i++) {
		size_t len = strlen(blob + e[i].off) + 1;

		s->delta[i] = e[i].addr - prev;
		prev = e[i].addr;
		memcpy(s->names + out, blob + e[i].off, len);
		out += len;
	}
	s->msg.addr_delta = s->delta;
	s->msg.n_addr_delta = kept;
	s->msg.names.data = s->names;
	s->msg.names.len = out;
	s->msg.dropped = skipped;
	if (skipped) {
		char a[32], b[32];

		snprintf(a, sizeof(a), "%" PRIu64, skipped);
		snprintf(b, sizeof(b), "%zu", max_bytes);
		note(s, "%s text symbols left out (bound: %s bytes)", a, b);
	}
	err = 0;
done:
	free(e);
	free(blob);
	return err;
}

static int mod_cmp(const void *a, const void *b)
{
	const Vmscope__Trace__GuestModule *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int load_modules(struct agent_syms *s, const char *path)
{
	size_t n = 0, lcap = 0, kept = 0;
	char *line = NULL;
	FILE *f = fopen(path, "re");

	if (!f) {
		note(s, "cannot read %s: %s", path, strerror(errno));
		return 0;
	}
	s->mods = calloc(GSYM_MAX_MODULES, sizeof(*s->mods));
	s->modp = calloc(GSYM_MAX_MODULES, sizeof(*s->modp));
	s->mod_names = calloc(GSYM_MAX_MODULES, sizeof(*s->mod_names));
	if (!s->mods || !s->modp || !s->mod_names) {
		fclose(f);
		return -ENOMEM;
	}
	/* "name size refs deps state 0xbase [taints]" */
	while (n < GSYM_MAX_MODULES && getline(&line, &lcap, f) > 0) {
		Vmscope__Trace__GuestModule *m = &s->mods[n];
		unsigned long long size, base;

		vmscope__trace__guest_module__init(m);
		if (sscanf(line, "%63s %llu %*s %*s %*s %llx", s->mod_names[n], &size,
			   &base) != 3 || size == 0 || base == 0 ||
		    base > UINT64_MAX - size)
			continue;
		m->name = s->mod_names[n];	/* stays put while the structs sort */
		m->addr = base;
		m->size = size;
		n++;
	}
	free(line);
	fclose(f);
	if (n)
		qsort(s->mods, n, sizeof(*s->mods), mod_cmp);
	/* a module overlapping the one before it is a lie of no use: dropped */
	for (size_t i = 0; i < n; i++) {
		if (kept && s->mods[i].addr < s->modp[kept - 1]->addr +
						  s->modp[kept - 1]->size)
			continue;
		s->modp[kept++] = &s->mods[i];
	}
	s->msg.modules = s->modp;
	s->msg.n_modules = kept;
	return 0;
}

int agent_syms_load(struct agent_syms *s, const char *kallsyms, const char *modules,
		    size_t max_bytes)
{
	int e;

	memset(s, 0, sizeof(*s));
	vmscope__trace__guest_symbols__init(&s->msg);
	if (max_bytes > GSYM_MAX_BYTES)
		max_bytes = GSYM_MAX_BYTES;
	e = load_symbols(s, kallsyms, max_bytes);
	if (!e)
		e = load_modules(s, modules);
	s->msg.note = s->note;
	return e;
}

void agent_syms_free(struct agent_syms *s)
{
	free(s->delta);
	free(s->names);
	free(s->mods);
	free(s->modp);
	free(s->mod_names);
	memset(s, 0, sizeof(*s));
}
