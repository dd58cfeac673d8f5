/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interned names of the Perfetto export's host thread sequences: exit
 * slices and host sync instants name their category, event and debug
 * annotations by an iid that their packet sequence defined once
 * (InternedData in the packet of the first use on that sequence), not by
 * the string in every packet. One table of names gives each name its iid
 * for every sequence; each sequence keeps which of them it defined.
 * Guest machines' packets keep inline names: they are few (one sync
 * instant per exchange).
 *
 * Annotation string values (the guest symbol of an exit's RIP) are
 * interned the same way: a hot RIP's label is written once per sequence.
 *
 * Bounded: PF_INTERN_NAMES event names of at most PF_INTERN_NAME_MAX
 * bytes, PF_INTERN_STRS string values; another one is written inline
 * (iid 0 from pf_intern_name, pf_intern_str).
 */
#ifndef VMSCOPE_EXPORT_PF_INTERN_H
#define VMSCOPE_EXPORT_PF_INTERN_H

#include <stdbool.h>
#include <stdint.h>

#include "perfetto_subset.pb-c.h"

enum pf_cat { PF_CAT_KVM, PF_CAT_SYNC, PF_CAT_N };
enum pf_ann {
	PF_ANN_EXIT_REASON, PF_ANN_ISA, PF_ANN_GUEST_RIP, PF_ANN_VCPU, PF_ANN_GUEST_SYMBOL,
	PF_ANN_N
};

#define PF_INTERN_NAMES		256
#define PF_INTERN_NAME_MAX	63
#define PF_INTERN_STRS		8192	/* power of two */

struct pf_intern {
	unsigned int n_names;
	char names[PF_INTERN_NAMES][PF_INTERN_NAME_MAX + 1];
	unsigned int n_strs;
	char *strs[PF_INTERN_STRS];		/* by iid - 1 */
	uint16_t str_slot[2 * PF_INTERN_STRS];	/* hash: iid, 0 free */
};

/* What one packet sequence has defined: a bit per iid - 1 */
struct pf_intern_seq {
	uint8_t cats, anns;
	uint64_t names[PF_INTERN_NAMES / 64];
	uint64_t *strs;		/* PF_INTERN_STRS bits, from its first string */
};

/* What one packet defines: pf_intern_packet_init, then the lookups. */
struct pf_intern_packet {
	Perfetto__Protos__InternedData data;
	Perfetto__Protos__EventCategory cat[PF_CAT_N], *catp[PF_CAT_N];
	Perfetto__Protos__DebugAnnotationName ann[PF_ANN_N], *annp[PF_ANN_N];
	Perfetto__Protos__EventName name, *namep;
	Perfetto__Protos__InternedString str, *strp;
};

void pf_intern_packet_init(struct pf_intern_packet *pk);
/* The iid of each, defined in @pk when @seq has not yet defined it. */
uint64_t pf_intern_cat(struct pf_intern_seq *seq, struct pf_intern_packet *pk, enum pf_cat c);
uint64_t pf_intern_ann(struct pf_intern_seq *seq, struct pf_intern_packet *pk, enum pf_ann a);
/* @name's iid, or 0: write it inline (@in full, or @name too long). */
uint64_t pf_intern_name(struct pf_intern *in, struct pf_intern_seq *seq,
			struct pf_intern_packet *pk, const char *name);
/* @str's iid, or 0: write it inline (@in full, or out of memory). */
uint64_t pf_intern_str(struct pf_intern *in, struct pf_intern_seq *seq,
		       struct pf_intern_packet *pk, const char *str);
void pf_intern_seq_free(struct pf_intern_seq *seq);
void pf_intern_free(struct pf_intern *in);
/* The packet's InternedData, or NULL when it defines nothing. */
Perfetto__Protos__InternedData *pf_intern_data(struct pf_intern_packet *pk);
/* The annotation's name as the export writes it (for inline use). */
const char *pf_ann_name(enum pf_ann a);

#endif
