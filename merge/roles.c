// SPDX-License-Identifier: GPL-2.0
/* Roles of stored events: see roles.h. */
#include <string.h>

#include "roles.h"

const struct vmscope_field_desc *mg_field_desc(const struct vmscope_event_desc *d,
					       const char *name)
{
	for (uint32_t i = 0; i < d->nr_fields && i < VMSCOPE_MAX_FIELDS; i++)
		if (!strncmp(d->fields[i].name, name, sizeof(d->fields[i].name)))
			return &d->fields[i];
	return NULL;
}

bool mg_field_find(const struct vmscope_event_desc *d, const char *name, struct mg_field *f)
{
	const struct vmscope_field_desc *fd = mg_field_desc(d, name);

	if (!fd)
		return false;
	switch (fd->type) {
	case VMSCOPE_FT_u8: case VMSCOPE_FT_u16:
	case VMSCOPE_FT_u32: case VMSCOPE_FT_u64:
		f->is_signed = false;
		break;
	case VMSCOPE_FT_s32: case VMSCOPE_FT_s64:
		f->is_signed = true;
		break;
	default:
		return false;
	}
	if (!fd->size || fd->size > 8)
		return false;
	f->off = fd->offset;
	f->size = fd->size;
	return true;
}

bool mg_str_field_find(const struct vmscope_event_desc *d, const char *name,
		       struct mg_field *f)
{
	const struct vmscope_field_desc *fd = mg_field_desc(d, name);

	if (!fd || fd->type != VMSCOPE_FT_str || !fd->size)
		return false;
	f->off = fd->offset;
	f->size = fd->size;
	f->is_signed = false;
	return true;
}

/* All of @names in @d, or none. */
const struct vmscope_event_desc *
mg_role_find(const struct vr_events *ev, const char *event, const char *const *names,
	     unsigned int n, struct mg_field *f)
{
	for (unsigned int i = 0; i < ev->n; i++) {
		const struct vmscope_event_desc *d = &ev->desc[i];
		unsigned int k;

		if (ev->why[i][0] || strncmp(d->name, event, sizeof(d->name)))
			continue;
		for (k = 0; k < n; k++)
			if (!mg_field_find(d, names[k], &f[k]))
				return NULL;
		return d;
	}
	return NULL;
}

void mg_roles_init(struct mg_roles *r, const struct vr_events *ev)
{
	static const char *const t2[T2_N] = {
		"t2", "token", "seq", "t1", "guest_cpu", "tid", "vcpu_id" };
	static const char *const t3[T3_N] = {
		"t2", "t3", "token", "seq", "tid", "vcpu_id" };
	static const char *const g[G_N] = { "t1", "t4", "token", "seq", "cpu" };
	static const char *const tsc[1] = { "vcpu_id" };
	static const char *const sw[1] = { "next_pid" };

	memset(r, 0, sizeof(*r));
	if (!ev)
		return;
	r->t2 = mg_role_find(ev, "sync_t2", t2, T2_N, r->f_t2);
	r->t3 = mg_role_find(ev, "sync_t3", t3, T3_N, r->f_t3);
	r->guest = mg_role_find(ev, "sync_guest", g, G_N, r->f_g);
	r->tsc = mg_role_find(ev, "kvm_write_tsc_offset", tsc, 1, &r->f_tsc_vcpu);
	r->sw = mg_role_find(ev, "sched_switch", sw, 1, &r->f_sw_next);
	r->t2_has_tsc = r->t2 && mg_field_find(r->t2, "tsc_a", &r->f_t2_tsc[0]) &&
			mg_field_find(r->t2, "tsc_b", &r->f_t2_tsc[1]);
	r->g_has_tsc = r->guest && mg_field_find(r->guest, "tsc_a", &r->f_g_tsc[0]) &&
		       mg_field_find(r->guest, "tsc_b", &r->f_g_tsc[1]);
	r->tsc_has_next = r->tsc && mg_field_find(r->tsc, "next_tsc_offset", &r->f_tsc_next);
}
