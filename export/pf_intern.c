// SPDX-License-Identifier: GPL-2.0
/* Interned names of the host's packet sequence (pf_intern.h). */
#include <stdlib.h>
#include <string.h>

#include "pf_intern.h"

static const char *const cat_names[PF_CAT_N] = { "kvm", "vmscope_sync" };
static const char *const ann_names[PF_ANN_N] = { "exit_reason", "isa", "guest_rip", "vcpu",
						  "guest_symbol" };

const char *pf_ann_name(enum pf_ann a)
{
	return ann_names[a];
}

void pf_intern_packet_init(struct pf_intern_packet *pk)
{
	perfetto__protos__interned_data__init(&pk->data);
	pk->data.event_categories = pk->catp;
	pk->data.debug_annotation_names = pk->annp;
}

/* iids start at 1: 0 is "none" to Perfetto */
uint64_t pf_intern_cat(struct pf_intern_seq *seq, struct pf_intern_packet *pk, enum pf_cat c)
{
	if (!(seq->cats & 1u << c)) {
		Perfetto__Protos__EventCategory *e = &pk->cat[pk->data.n_event_categories];

		perfetto__protos__event_category__init(e);
		e->has_iid = true;
		e->iid = c + 1;
		e->name = (char *)cat_names[c];
		pk->catp[pk->data.n_event_categories++] = e;
		seq->cats |= 1u << c;
	}
	return c + 1;
}

uint64_t pf_intern_ann(struct pf_intern_seq *seq, struct pf_intern_packet *pk, enum pf_ann a)
{
	if (!(seq->anns & 1u << a)) {
		Perfetto__Protos__DebugAnnotationName *e =
			&pk->ann[pk->data.n_debug_annotation_names];

		perfetto__protos__debug_annotation_name__init(e);
		e->has_iid = true;
		e->iid = a + 1;
		e->name = (char *)ann_names[a];
		pk->annp[pk->data.n_debug_annotation_names++] = e;
		seq->anns |= 1u << a;
	}
	return a + 1;
}

uint64_t pf_intern_name(struct pf_intern *in, struct pf_intern_seq *seq,
			struct pf_intern_packet *pk, const char *name)
{
	unsigned int i;

	for (i = 0; i < in->n_names && strcmp(in->names[i], name); i++)
		;
	if (i == in->n_names) {
		if (in->n_names == PF_INTERN_NAMES || strlen(name) > PF_INTERN_NAME_MAX)
			return 0;
		strcpy(in->names[in->n_names++], name);
	}
	if (!(seq->names[i / 64] & 1ull << (i % 64))) {
		/* a packet defines the one name it uses */
		perfetto__protos__event_name__init(&pk->name);
		pk->name.has_iid = true;
		pk->name.iid = i + 1;
		pk->name.name = in->names[i];
		pk->namep = &pk->name;
		pk->data.n_event_names = 1;
		pk->data.event_names = &pk->namep;
		seq->names[i / 64] |= 1ull << (i % 64);
	}
	return i + 1;
}

/* FNV-1a: labels differ in their last characters (the offset) */
static uint32_t str_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

/* @str's iid in @in, added if new; 0: the table is full */
static unsigned int str_iid(struct pf_intern *in, const char *str)
{
	uint32_t h = str_hash(str);

	for (unsigned int i = 0; i < 2 * PF_INTERN_STRS; i++) {
		uint16_t *slot = &in->str_slot[(h + i) & (2 * PF_INTERN_STRS - 1)];

		if (*slot && !strcmp(in->strs[*slot - 1], str))
			return *slot;
		if (!*slot) {
			if (in->n_strs == PF_INTERN_STRS || !(in->strs[in->n_strs] = strdup(str)))
				return 0;
			*slot = (uint16_t)++in->n_strs;
			return *slot;
		}
	}
	return 0;
}

uint64_t pf_intern_str(struct pf_intern *in, struct pf_intern_seq *seq,
		       struct pf_intern_packet *pk, const char *str)
{
	unsigned int iid = str_iid(in, str), i = iid - 1;

	if (!iid)
		return 0;
	if (!seq->strs && !(seq->strs = calloc(PF_INTERN_STRS / 64, sizeof(uint64_t))))
		return 0;
	if (!(seq->strs[i / 64] & 1ull << (i % 64))) {
		/* a packet defines the one string it uses */
		perfetto__protos__interned_string__init(&pk->str);
		pk->str.has_iid = pk->str.has_str = true;
		pk->str.iid = iid;
		pk->str.str.data = (uint8_t *)in->strs[i];
		pk->str.str.len = strlen(in->strs[i]);
		pk->strp = &pk->str;
		pk->data.n_debug_annotation_string_values = 1;
		pk->data.debug_annotation_string_values = &pk->strp;
		seq->strs[i / 64] |= 1ull << (i % 64);
	}
	return iid;
}

void pf_intern_seq_free(struct pf_intern_seq *seq)
{
	free(seq->strs);
	seq->strs = NULL;
}

void pf_intern_free(struct pf_intern *in)
{
	for (unsigned int i = 0; i < in->n_strs; i++)
		free(in->strs[i]);
	in->n_strs = 0;
}

Perfetto__Protos__InternedData *pf_intern_data(struct pf_intern_packet *pk)
{
	return pk->data.n_event_categories || pk->data.n_event_names ||
	       pk->data.n_debug_annotation_names || pk->data.n_debug_annotation_string_values ?
	       &pk->data : NULL;
}
