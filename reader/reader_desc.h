/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one mapping between the module ABI's event descriptors
 * (struct vmscope_event_desc, include/vmscope/events.h) and the ones a
 * trace stores (vmscope.trace.EventTable, schemas/session.proto): the
 * collector converts one way when it writes a trace, every reader the
 * other way before it decodes a record through kvm-probes/decode.c.
 */
#ifndef VMSCOPE_READER_DESC_H
#define VMSCOPE_READER_DESC_H

#include <stddef.h>
#include <stdint.h>

#include <vmscope/events.h>
#include <vmscope/ringbuf_abi.h>

#include "session.pb-c.h"

/* ---- writing: ABI descriptors -> an EventTable (no allocation) ---- */

struct vr_pb_events {
	Vmscope__Trace__EventTable table;
	Vmscope__Trace__Origin origin;
	Vmscope__Trace__EventDesc ev[VMSCOPE_MAX_EVENTS];
	Vmscope__Trace__EventDesc *evp[VMSCOPE_MAX_EVENTS];
	Vmscope__Trace__FieldDesc f[VMSCOPE_MAX_EVENTS][VMSCOPE_MAX_FIELDS];
	Vmscope__Trace__FieldDesc *fp[VMSCOPE_MAX_EVENTS][VMSCOPE_MAX_FIELDS];
};

/*
 * Fill @out from @n descriptors (checked with vmscope_desc_check() by the
 * caller, so their strings are terminated). Strings point into @d, which
 * must outlive @out. @side is a Vmscope__Trace__Side.
 */
void vr_events_to_pb(struct vr_pb_events *out, const struct vmscope_event_desc *d,
		     unsigned int n, int side, uint32_t vm, const char *module_version);

/* ---- reading: a stored EventTable -> descriptors to decode with ---- */

/* Events a table may describe; more are ignored (and said so). */
#define VR_MAX_EVENTS	1024

struct vr_events {
	unsigned int n;			/* usable or not, in table order */
	unsigned int ignored;		/* beyond VR_MAX_EVENTS */
	struct vmscope_event_desc *desc;	/* [n] */
	char (*why)[96];		/* [n]: "" when usable, else the reason */
	int16_t by_id[VMSCOPE_RB_ID_MAX + 1];	/* index into desc, -1: none */
};

/*
 * Convert @t (may be NULL: no events) into a new table in *out. An event
 * whose stored descriptor does not fit the ABI or fails
 * vmscope_desc_check() stays in the table with a reason, so its records
 * are reported as undecodable rather than misread. 0 or -ENOMEM.
 */
int vr_events_from_pb(struct vr_events **out, const Vmscope__Trace__EventTable *t);
void vr_events_free(struct vr_events *e);

/* Index into e->desc of event @id, or -1 when the table has no usable one. */
static inline int vr_events_index(const struct vr_events *e, unsigned int id)
{
	int i;

	if (id > VMSCOPE_RB_ID_MAX)
		return -1;
	i = e->by_id[id];
	return i >= 0 && !e->why[i][0] ? i : -1;
}

#endif
