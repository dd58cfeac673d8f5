// SPDX-License-Identifier: GPL-2.0
/*
 * The walk's guest symbols (walk.h an_walk_vm_symbols): each VM's table
 * from the session (VmInfo.guest_symbols, the agent's, checked when the
 * metadata was decoded: tracefmt/gsym.h), the symbol of an exit's RIP,
 * and the RIP as the reports print it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "gsym.h"
#include "walk_int.h"

int an_walk_syms_load(struct an_walk *w, const Vmscope__Trace__SessionMetadata *s, char *err,
		      size_t errlen)
{
	for (uint32_t v = 0; s && v < w->n_vms; v++) {
		const Vmscope__Trace__GuestSymbols *gs = s->vms[v]->guest_symbols;
		char why[160];
		int e;

		if (!gs)
			continue;
		e = gsym_new(&w->vm[v].sym, gs, why, sizeof(why));
		if (e == -EINVAL)	/* the decode's check passed it: not expected */
			snprintf(err, errlen, "VM %u: %s", v, why);
		if (e)
			return e;
		w->vm[v].sym_dropped = gs->dropped;
		w->vm[v].sym_note = gs->note ? gs->note : "";
	}
	return 0;
}

int32_t an_walk_sym_of(const struct an_walk *w, uint32_t vm, uint64_t rip)
{
	struct gsym_hit h;

	/* user mode whatever the table: the RIP's half says it */
	if (gsym_user_rip(rip))
		return AN_SYM_USER;
	if (vm >= w->n_vms || !w->vm[vm].sym)
		return AN_SYM_NO_TABLE;
	return gsym_lookup(w->vm[vm].sym, rip, &h) ? (int32_t)h.index : AN_SYM_NONE;
}

size_t an_walk_vm_symbols(const struct an_walk *w, uint32_t vm, uint64_t *dropped,
			  const char **note)
{
	const struct vm *v = vm < w->n_vms ? &w->vm[vm] : NULL;

	*dropped = v && v->sym ? v->sym_dropped : 0;
	*note = v && v->sym ? v->sym_note : "";
	return v && v->sym ? gsym_count(v->sym) : 0;
}

bool an_walk_sym_name(const struct an_walk *w, uint32_t vm, int32_t sym, const char **name,
		      const char **module)
{
	struct gsym_hit h;

	if (sym < 0 || vm >= w->n_vms || !w->vm[vm].sym ||
	    !gsym_at(w->vm[vm].sym, (uint32_t)sym, &h))
		return false;
	*name = h.name;
	*module = h.module;
	return true;
}

const char *an_walk_rip_label(const struct an_walk *w, uint32_t vm, int32_t sym, uint64_t rip,
			      char *buf, size_t len)
{
	struct gsym_hit h;

	if (sym >= 0 && vm < w->n_vms && w->vm[vm].sym && gsym_lookup(w->vm[vm].sym, rip, &h))
		return gsym_hit_str(&h, buf, len);
	snprintf(buf, len, "%#" PRIx64 "%s", rip, sym == AN_SYM_USER ? " (user)" : "");
	return buf;
}
