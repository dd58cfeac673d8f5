/* SPDX-License-Identifier: GPL-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "pb_str.h"
#include "reader_desc.h"

/* Same numbers on both sides, so the mapping is the identity up to STR. */
_Static_assert((int)VMSCOPE__TRACE__FIELD_TYPE__FIELD_TYPE_U8 == (int)VMSCOPE_FT_u8 &&
	       (int)VMSCOPE__TRACE__FIELD_TYPE__FIELD_TYPE_U16 == (int)VMSCOPE_FT_u16 &&
	       (int)VMSCOPE__TRACE__FIELD_TYPE__FIELD_TYPE_U32 == (int)VMSCOPE_FT_u32 &&
	       (int)VMSCOPE__TRACE__FIELD_TYPE__FIELD_TYPE_U64 == (int)VMSCOPE_FT_u64 &&
	       (int)VMSCOPE__TRACE__FIELD_TYPE__FIELD_TYPE_S32 == (int)VMSCOPE_FT_s32 &&
	       (int)VMSCOPE__TRACE__FIELD_TYPE__FIELD_TYPE_S64 == (int)VMSCOPE_FT_s64 &&
	       (int)VMSCOPE__TRACE__FIELD_TYPE__FIELD_TYPE_STR == (int)VMSCOPE_FT_str,
	       "field type numbers differ between the ABI and the schema");

void vr_events_to_pb(struct vr_pb_events *out, const struct vmscope_event_desc *d,
		     unsigned int n, int side, uint32_t vm, const char *module_version)
{
	if (n > VMSCOPE_MAX_EVENTS)
		n = VMSCOPE_MAX_EVENTS;
	vmscope__trace__event_table__init(&out->table);
	vmscope__trace__origin__init(&out->origin);
	out->origin.side = side;
	out->origin.vm = vm;
	out->table.origin = &out->origin;
	out->table.ringbuf_abi = VMSCOPE_RB_ABI_VERSION;
	out->table.module_version = (char *)module_version;
	out->table.n_events = n;
	out->table.events = out->evp;
	for (unsigned int i = 0; i < n; i++) {
		Vmscope__Trace__EventDesc *e = &out->ev[i];
		unsigned int nf = d[i].nr_fields < VMSCOPE_MAX_FIELDS ?
				  d[i].nr_fields : VMSCOPE_MAX_FIELDS;

		vmscope__trace__event_desc__init(e);
		e->id = d[i].id;
		e->name = (char *)d[i].name;
		e->system = (char *)d[i].system;
		e->tracepoint = (char *)d[i].tracepoint;
		e->format = (char *)d[i].format;
		e->payload_size = d[i].payload_size;
		e->n_fields = nf;
		e->fields = out->fp[i];
		for (unsigned int k = 0; k < nf; k++) {
			Vmscope__Trace__FieldDesc *f = &out->f[i][k];

			vmscope__trace__field_desc__init(f);
			f->name = (char *)d[i].fields[k].name;
			f->type = d[i].fields[k].type;
			f->offset = d[i].fields[k].offset;
			f->size = d[i].fields[k].size;
			out->fp[i][k] = f;
		}
		out->evp[i] = e;
	}
}

/* One stored descriptor into the ABI form; "" in why when usable. */
static void convert(const Vmscope__Trace__EventDesc *s, struct vmscope_event_desc *d,
		    char *why, size_t whylen)
{
	memset(d, 0, sizeof(*d));
	why[0] = 0;
	d->id = s->id;
	if (pb_str_copy(d->name, sizeof(d->name), s->name)) {
		snprintf(why, whylen, "name longer than %zu bytes", sizeof(d->name) - 1);
		return;
	}
	if (pb_str_copy(d->system, sizeof(d->system), s->system) ||
	    pb_str_copy(d->tracepoint, sizeof(d->tracepoint), s->tracepoint) ||
	    pb_str_copy(d->format, sizeof(d->format), s->format)) {
		snprintf(why, whylen, "%s: system, tracepoint or format too long", d->name);
		return;
	}
	if (s->payload_size > VMSCOPE_MAX_PAYLOAD || s->n_fields > VMSCOPE_MAX_FIELDS) {
		snprintf(why, whylen, "%s: %u-byte payload or %zu fields beyond this reader",
			 d->name, s->payload_size, s->n_fields);
		return;
	}
	d->payload_size = s->payload_size;
	d->nr_fields = (uint32_t)s->n_fields;
	for (size_t k = 0; k < s->n_fields; k++) {
		const Vmscope__Trace__FieldDesc *f = s->fields[k];

		if (pb_str_copy(d->fields[k].name, sizeof(d->fields[k].name), f->name) ||
		    f->type < VMSCOPE__TRACE__FIELD_TYPE__FIELD_TYPE_U8 ||
		    f->type > VMSCOPE__TRACE__FIELD_TYPE__FIELD_TYPE_STR ||
		    f->offset > 0xffff || f->size > 0xffff) {
			snprintf(why, whylen, "%s: field %zu not decodable by this reader",
				 d->name, k);
			return;
		}
		d->fields[k].type = (uint16_t)f->type;
		d->fields[k].offset = (uint16_t)f->offset;
		d->fields[k].size = (uint16_t)f->size;
	}
	if (vmscope_desc_check(d, why, whylen) && !why[0])
		snprintf(why, whylen, "%s: rejected", d->name);
}

int vr_events_from_pb(struct vr_events **out, const Vmscope__Trace__EventTable *t)
{
	struct vr_events *e = calloc(1, sizeof(*e));
	size_t n = t ? t->n_events : 0;

	*out = NULL;
	if (!e)
		return -ENOMEM;
	if (n > VR_MAX_EVENTS) {
		e->ignored = (unsigned int)(n - VR_MAX_EVENTS);
		n = VR_MAX_EVENTS;
	}
	memset(e->by_id, 0xff, sizeof(e->by_id));	/* -1 */
	e->desc = calloc(n ? n : 1, sizeof(*e->desc));
	e->why = calloc(n ? n : 1, sizeof(*e->why));
	if (!e->desc || !e->why) {
		vr_events_free(e);
		return -ENOMEM;
	}
	e->n = (unsigned int)n;
	for (size_t i = 0; i < n; i++) {
		const Vmscope__Trace__EventDesc *s = t->events[i];

		convert(s, &e->desc[i], e->why[i], sizeof(e->why[i]));
		/* tracefmt's check refused duplicate and out-of-range ids */
		if (s->id <= VMSCOPE_RB_ID_MAX && e->by_id[s->id] < 0)
			e->by_id[s->id] = (int16_t)i;
	}
	*out = e;
	return 0;
}

void vr_events_free(struct vr_events *e)
{
	if (!e)
		return;
	free(e->desc);
	free(e->why);
	free(e);
}
