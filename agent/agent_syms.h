/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest kernel's text symbols for the hello (session.proto
 * GuestSymbols): /proc/kallsyms as root sees it (KASLR applied) and
 * /proc/modules, so the host can name a guest RIP. Bounded as
 * tracefmt/gsym.h says; what does not fit, or cannot be read, is counted
 * or said in the table's note, and the agent runs on without it.
 */
#ifndef VMSCOPE_AGENT_AGENT_SYMS_H
#define VMSCOPE_AGENT_AGENT_SYMS_H

#include <stdint.h>

#include "gsym.h"
#include "session.pb-c.h"

struct agent_syms {
	Vmscope__Trace__GuestSymbols msg;	/* points into what follows */
	uint64_t *delta;
	uint8_t *names;
	Vmscope__Trace__GuestModule *mods;
	Vmscope__Trace__GuestModule **modp;
	char (*mod_names)[GSYM_MAX_MODNAME + 1];
	char note[GSYM_MAX_NOTE + 1];
};

/*
 * Fill @s from the files @kallsyms and @modules (normally /proc/...),
 * keeping at most @max_bytes of names and address deltas (GSYM_MAX_BYTES
 * or less). 0, or -ENOMEM; a file that cannot be read leaves the table
 * empty (or without modules) with a note saying so, not an error.
 */
int agent_syms_load(struct agent_syms *s, const char *kallsyms, const char *modules,
		    size_t max_bytes);
void agent_syms_free(struct agent_syms *s);

#endif
