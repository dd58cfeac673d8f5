// SPDX-License-Identifier: GPL-2.0
/*
 * The merged trace's one event table (out.h, struct mo_union): built here
 * once, for the writer (its metadata) and for whoever reads a raw trace's
 * pass 2 as the merged trace would give it back (analysis/walk_open.c),
 * so that both number and name the events the same way.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vmscope/ringbuf_abi.h>

#include "out.h"

static const struct vr_events *table(const struct vr_trace *t, uint32_t origin)
{
	return origin ? vr_trace_events(t, VMSCOPE__TRACE__SIDE__SIDE_GUEST, origin - 1)
		      : vr_trace_events(t, VMSCOPE__TRACE__SIDE__SIDE_HOST, 0);
}

static const Vmscope__Trace__EventTable *pb_table(const Vmscope__Trace__SessionMetadata *s,
						 uint32_t origin)
{
	if (!s)
		return NULL;
	return origin ? s->vms[origin - 1]->guest_events : s->host_events;
}

int mo_union_build(struct mo_union *u, const struct vr_trace *t, char *err, size_t errlen)
{
	const Vmscope__Trace__SessionMetadata *s = vr_trace_session(t);
	uint32_t total = 0;

	memset(u, 0, sizeof(*u));
	u->n_origins = 1 + (s ? (uint32_t)s->n_vms : 0);
	u->base = calloc(u->n_origins, sizeof(*u->base));
	u->count = calloc(u->n_origins, sizeof(*u->count));
	if (!u->base || !u->count)
		return -ENOMEM;
	for (uint32_t o = 0; o < u->n_origins; o++) {
		const Vmscope__Trace__EventTable *pt = pb_table(s, o);
		const struct vr_events *vt = table(t, o);

		u->base[o] = total;
		/* the reader's table holds the first VR_MAX_EVENTS, in order */
		u->count[o] = vt && pt ? vt->n : 0;
		total += u->count[o];
	}
	if (total > VR_MAX_EVENTS) {
		snprintf(err, errlen, "%u event types: more than one merged table holds (%u)",
			 total, VR_MAX_EVENTS);
		return -E2BIG;
	}
	u->ev = calloc(total ? total : 1, sizeof(*u->ev));
	u->evp = calloc(total ? total : 1, sizeof(*u->evp));
	u->names = calloc(total ? total : 1, sizeof(*u->names));
	if (!u->ev || !u->evp || !u->names)
		return -ENOMEM;
	for (uint32_t o = 0; o < u->n_origins; o++) {
		const Vmscope__Trace__EventTable *pt = pb_table(s, o);

		for (uint32_t i = 0; i < u->count[o]; i++) {
			uint32_t k = u->base[o] + i;
			const char *n = pt->events[i]->name ? pt->events[i]->name : "";

			u->ev[k] = *pt->events[i];
			u->ev[k].id = k;
			if (o)
				snprintf(u->names[k], sizeof(u->names[k]), "vm%u:%s", o - 1, n);
			else
				snprintf(u->names[k], sizeof(u->names[k]), "%s", n);
			u->ev[k].name = u->names[k];
			u->evp[k] = &u->ev[k];
		}
	}
	vmscope__trace__event_table__init(&u->table);
	vmscope__trace__origin__init(&u->origin);
	u->origin.side = VMSCOPE__TRACE__SIDE__SIDE_HOST;
	u->table.origin = &u->origin;
	if (s && s->host_events) {
		u->table.ringbuf_abi = s->host_events->ringbuf_abi;
		u->table.module_version = s->host_events->module_version;
	} else {
		u->table.ringbuf_abi = VMSCOPE_RB_ABI_VERSION;
	}
	u->table.n_events = total;
	u->table.events = u->evp;
	return 0;
}

int mo_union_id(const struct mo_union *u, const struct vr_trace *t, uint32_t origin,
		const struct vmscope_event_desc *d)
{
	const struct vr_events *vt;
	ptrdiff_t i;

	if (origin >= u->n_origins || !(vt = table(t, origin)))
		return -1;
	i = d - vt->desc;
	if (i < 0 || (uint32_t)i >= u->count[origin])
		return -1;
	return (int)(u->base[origin] + (uint32_t)i);
}

void mo_union_free(struct mo_union *u)
{
	free(u->base);
	free(u->count);
	free(u->ev);
	free(u->evp);
	free(u->names);
	memset(u, 0, sizeof(*u));
}
