/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A guest kernel's text symbols as a trace stores them (session.proto
 * GuestSymbols: sent by the agent in its hello, kept in VmInfo): the
 * bounds an honest agent keeps, the check of a decoded table (hostile
 * input: tf_msg_check runs it on every hello and SessionMetadata), and
 * the lookup that names a guest RIP "symbol+0xoff [module]".
 *
 * The lookup is a sorted array of addresses and a binary search: the
 * symbol is the last one at or below the RIP, taken only when both lie in
 * the same region (the same module, or both outside every module), so a
 * RIP past a module's end is not given the module's last function.
 */
#ifndef VMSCOPE_TRACEFMT_GSYM_H
#define VMSCOPE_TRACEFMT_GSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "session.pb-c.h"

/*
 * Bounds. The agent stops adding symbols where names plus address deltas
 * would pass GSYM_MAX_BYTES and counts the rest in `dropped` (highest
 * addresses first left out: module code before the kernel's own), so the
 * hello stays inside the guest link's 4 MiB frame. A table beyond these is
 * refused by the check.
 */
#define GSYM_MAX_BYTES		((size_t)3 << 20)	/* names + deltas, packed */
#define GSYM_MAX_SYMS		(512u << 10)
#define GSYM_MAX_NAME		511	/* the kernel's KSYM_NAME_LEN - 1 */
#define GSYM_MAX_MODULES	4096
#define GSYM_MAX_MODNAME	63	/* the kernel's MODULE_NAME_LEN is 56 */
#define GSYM_MAX_NOTE		256

/* x86-64: guest user space lies below the canonical hole; a RIP there was
 * not in the guest kernel whatever the symbols say. */
#define GSYM_USER_END		0x0000800000000000ull

static inline bool gsym_user_rip(uint64_t rip)
{
	return rip < GSYM_USER_END;
}

/* Whether @s (@n bytes) is a name the check accepts: 1..@max bytes of
 * printable ASCII without spaces (GSYM_MAX_NAME, GSYM_MAX_MODNAME). */
bool gsym_name_ok(const char *s, size_t n, size_t max);

/* 0, or -EINVAL with the reason in @why: counts and lengths bounded, one
 * NUL-terminated printable name per address, addresses strictly
 * ascending without overflow, modules named, non-empty, ascending and
 * disjoint. */
int gsym_check(const Vmscope__Trace__GuestSymbols *s, char *why, size_t whylen);

struct gsym;

/* A lookup table of a checked (or not yet checked: it checks) table.
 * 0, -EINVAL (@why says why), -ENOMEM. An empty table is valid. */
int gsym_new(struct gsym **out, const Vmscope__Trace__GuestSymbols *s, char *why,
	     size_t whylen);
void gsym_free(struct gsym *g);
size_t gsym_count(const struct gsym *g);

struct gsym_hit {
	uint32_t index;		/* the symbol's, stable for the table's life */
	const char *name;
	uint64_t off;		/* rip - the symbol's address */
	const char *module;	/* NULL: the kernel's own code */
};

/* The symbol of kernel address @rip; false for a user address, one below
 * every symbol, or one whose region holds no symbol below it. */
bool gsym_lookup(const struct gsym *g, uint64_t rip, struct gsym_hit *h);

/* Symbol @index (off 0); false beyond the table. */
bool gsym_at(const struct gsym *g, uint32_t index, struct gsym_hit *h);

/* "name+0x1f [module]" / "name+0x1f" of a hit into @buf (always
 * terminated); returns @buf. */
const char *gsym_hit_str(const struct gsym_hit *h, char *buf, size_t len);

#endif
