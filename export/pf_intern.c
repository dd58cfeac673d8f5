// SPDX-License-Identifier: GPL-2.0
/* Interned names of the host's packet sequence (pf_intern.h). */
#include <string.h>

#include "pf_intern.h"

static const char *const cat_names[PF_CAT_N] = { "kvm", "vmscope_sync" };
static const char *const ann_names[PF_ANN_N] = { "exit_reason", "isa", "guest_rip", "vcpu" };

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

Perfetto__Protos__InternedData *pf_intern_data(struct pf_intern_packet *pk)
{
	return pk->data.n_event_categories || pk->data.n_event_names ||
	       pk->data.n_debug_annotation_names ? &pk->data : NULL;
}
