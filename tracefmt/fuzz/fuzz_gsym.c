/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libFuzzer target: a guest's symbol table (gsym.h), the guest's input.
 * Byte 0 even: the rest is a GuestSymbols message as the wire has it.
 * Byte 0 odd: the rest builds one, so that mutations reach the check's
 * later rules and the lookup: per symbol a delta byte pair and a name cut
 * at the next byte below 0x21, then modules from the tail.
 * Oracles: no crash, leak or sanitizer report; gsym_new accepts exactly
 * what gsym_check accepts; every lookup's hit is the last symbol at or
 * below the RIP, in the RIP's region (recomputed here by a linear scan
 * of the message), never a user address; hit strings are terminated.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gsym.h"

#define KBASE 0xffffffff81000000ull

static long ref_mod(const Vmscope__Trace__GuestSymbols *s, uint64_t x)
{
	for (size_t m = 0; m < s->n_modules; m++)
		if (x >= s->modules[m]->addr && x - s->modules[m]->addr < s->modules[m]->size)
			return (long)m;
	return -1;
}

static void probe(const struct gsym *g, const Vmscope__Trace__GuestSymbols *s,
		  const uint64_t *addr, uint64_t rip)
{
	struct gsym_hit h;
	long want = -1;
	char buf[600];

	if (!gsym_user_rip(rip))
		for (size_t i = 0; i < s->n_addr_delta && addr[i] <= rip; i++)
			want = (long)i;
	if (want >= 0 && ref_mod(s, addr[want]) != ref_mod(s, rip))
		want = -1;
	if (gsym_lookup(g, rip, &h) != (want >= 0))
		abort();
	if (want < 0)
		return;
	if (h.index != (uint32_t)want || h.off != rip - addr[want] || !h.name[0])
		abort();
	if (strlen(gsym_hit_str(&h, buf, sizeof(buf))) >= sizeof(buf))
		abort();
}

static void check(const Vmscope__Trace__GuestSymbols *s, const uint8_t *tail, size_t n)
{
	struct gsym *g = NULL;
	char why[160];
	int c = gsym_check(s, why, sizeof(why)), e = gsym_new(&g, s, why, sizeof(why));
	uint64_t *addr, a = 0;

	if (e == -12)	/* ENOMEM: nothing to say */
		return;
	if ((c == 0) != (e == 0) || (e == 0) != (g != NULL))
		abort();
	if (!g)
		return;
	if (gsym_count(g) != s->n_addr_delta)
		abort();
	addr = malloc((s->n_addr_delta + 1) * sizeof(*addr));
	if (!addr)
		abort();
	for (size_t i = 0; i < s->n_addr_delta; i++)
		addr[i] = a += s->addr_delta[i];
	/* each symbol's own address, one past it, one below it, and some
	 * RIPs from the input */
	for (size_t i = 0; i < s->n_addr_delta && i < 256; i++) {
		probe(g, s, addr, addr[i]);
		probe(g, s, addr, addr[i] + 1);
		probe(g, s, addr, addr[i] - 1);
	}
	for (size_t i = 0; i + 8 <= n && i < 256; i += 8) {
		uint64_t r;

		memcpy(&r, tail + i, 8);
		probe(g, s, addr, r);
		probe(g, s, addr, KBASE + (r & 0xffffff));
	}
	free(addr);
	gsym_free(g);
}

/* Byte 0 odd: a table built from the bytes. */
static void built(const uint8_t *d, size_t n)
{
	Vmscope__Trace__GuestSymbols s = VMSCOPE__TRACE__GUEST_SYMBOLS__INIT;
	Vmscope__Trace__GuestModule mod[4], *modp[4];
	char modname[4][8];
	uint64_t delta[512];
	size_t nsym = 0, at = 0, nmod = 0;
	uint8_t *names = malloc(n + 1);

	if (!names)
		return;
	/* modules first: byte count, then (base lo, size) byte pairs */
	if (n) {
		nmod = d[0] % 5;
		d++;
		n--;
	}
	for (size_t m = 0; m < nmod; m++) {
		vmscope__trace__guest_module__init(&mod[m]);
		snprintf(modname[m], sizeof(modname[m]), "m%zu", m);
		mod[m].name = modname[m];
		mod[m].addr = KBASE + 0x10000 * (m + 1) + (n > 2 * m ? d[2 * m] * 64u : 0);
		mod[m].size = n > 2 * m + 1 ? d[2 * m + 1] * 256u : 0;
		modp[m] = &mod[m];
	}
	if (n > 2 * nmod) {
		d += 2 * nmod;
		n -= 2 * nmod;
	} else {
		n = 0;
	}
	while (n >= 2 && nsym < 512) {
		size_t len = 0;

		delta[nsym] = nsym ? (uint64_t)d[0] << 8 | d[1] : KBASE + d[1];
		d += 2;
		n -= 2;
		while (len < n && d[len] >= 0x21)
			len++;
		memcpy(names + at, d, len);
		names[at + len] = 0;
		at += len + 1;
		d += len < n ? len + 1 : len;
		n -= len < n ? len + 1 : len;
		nsym++;
	}
	s.addr_delta = delta;
	s.n_addr_delta = nsym;
	s.names.data = names;
	s.names.len = at;
	s.modules = modp;
	s.n_modules = nmod;
	check(&s, d, n);
	free(names);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Vmscope__Trace__GuestSymbols *s;

	if (!size)
		return 0;
	if (data[0] & 1) {
		built(data + 1, size - 1);
		return 0;
	}
	s = vmscope__trace__guest_symbols__unpack(NULL, size - 1, data + 1);
	if (!s)
		return 0;
	check(s, data + 1, size - 1);
	vmscope__trace__guest_symbols__free_unpacked(s, NULL);
	return 0;
}
