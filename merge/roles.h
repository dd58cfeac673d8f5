/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The events merge needs to understand, found by name in a trace's stored
 * event tables (traces are self-described: ids and layouts come from the
 * table, never from the compiled-in one), with their fields by name:
 *
 *   sync_t2, sync_t3 (host), sync_guest (guest): the clock-sync records
 *   kvm_write_tsc_offset (host): a break in a VM's clock relation
 *   sched_switch (both): which thread runs on a CPU, for each event's
 *   thread
 *
 * An event whose stored layout lacks a field, or has it with a non-integer
 * type, is treated as absent (its records are merged, not interpreted).
 */
#ifndef VMSCOPE_MERGE_ROLES_H
#define VMSCOPE_MERGE_ROLES_H

#include <stdbool.h>
#include <stdint.h>

#include "reader.h"
#include "util_endian.h"

struct mg_field {
	uint16_t off, size;
	bool is_signed;
};

enum { T2_T2, T2_TOKEN, T2_SEQ, T2_T1, T2_CPU, T2_TID, T2_VCPU, T2_N };
enum { T3_T2, T3_T3, T3_TOKEN, T3_SEQ, T3_TID, T3_VCPU, T3_N };
enum { G_T1, G_T4, G_TOKEN, G_SEQ, G_CPU, G_N };

struct mg_roles {
	/* the descriptor of each role (a pointer into the vr_events), or NULL */
	const struct vmscope_event_desc *t2, *t3, *guest, *tsc, *sw;
	struct mg_field f_t2[T2_N], f_t3[T3_N], f_g[G_N], f_tsc_vcpu, f_sw_next;
	/* optional fields (traces of older modules lack them): the TSC
	 * readings of sync_t2 and sync_guest, the new offset of
	 * kvm_write_tsc_offset */
	bool t2_has_tsc, g_has_tsc, tsc_has_next;
	struct mg_field f_t2_tsc[2], f_g_tsc[2], f_tsc_next;
};

/* Field @name of @d, or NULL. */
const struct vmscope_field_desc *mg_field_desc(const struct vmscope_event_desc *d,
					       const char *name);

/* Field @name of @d into *f when it is an integer of 1 to 8 bytes. The
 * reader checked the descriptor (vmscope_desc_check: fields inside the
 * payload); other users of a descriptor use the same lookup. */
bool mg_field_find(const struct vmscope_event_desc *d, const char *name, struct mg_field *f);

/* Find the roles in @ev (may be NULL: none). */
void mg_roles_init(struct mg_roles *r, const struct vr_events *ev);

/*
 * The usable event named @event (exactly; merged tables name guest events
 * "vmN:name") in @ev that has every integer field of @names[@n], filling
 * @f[i] for names[i]; NULL when there is none. Other components that
 * interpret stored events (analysis/) find theirs through this too.
 */
const struct vmscope_event_desc *
mg_role_find(const struct vr_events *ev, const char *event, const char *const *names,
	     unsigned int n, struct mg_field *f);

/* String field @name of @d (char[size], maybe unterminated). */
bool mg_str_field_find(const struct vmscope_event_desc *d, const char *name,
		       struct mg_field *f);

/* A field's value, zero- or sign-extended to 64 bits. The reader has
 * checked that the payload holds the descriptor's payload_size bytes and
 * that the field lies inside it. */
static inline uint64_t mg_get(const struct mg_field *f, const uint8_t *p)
{
	const uint8_t *q = p + f->off;
	uint64_t v = 0;

	/* the common sizes as one load each (the compiler joins the bytes):
	 * this runs for every field of every record the analyses read, and
	 * a loop over the size was 7% of a report's instructions */
	switch (f->size) {
	case 8:
		return le_get64(q);
	case 4:
		v = le_get32(q);
		break;
	case 2:
		v = le_get16(q);
		break;
	default:
		for (unsigned int i = 0; i < f->size; i++)
			v |= (uint64_t)q[i] << (8 * i);
	}
	if (f->is_signed && f->size < 8 && (v >> (8 * f->size - 1)) & 1)
		v |= ~(uint64_t)0 << (8 * f->size);
	return v;
}

#endif
