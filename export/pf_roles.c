// SPDX-License-Identifier: GPL-2.0
/* What each stored event is to the Perfetto export (pf_roles.h). */
#include <string.h>

#include "pf_roles.h"

static const char *base_name(const char *name, bool *guest)
{
	const char *c = strchr(name, ':');

	*guest = c && !strncmp(name, "vm", 2);
	return *guest ? c + 1 : name;
}

/* Fields @names[0..n) of @d into r->f, the first @need of them required. */
static bool fields(struct pf_role_of *r, const struct vmscope_event_desc *d,
		   const char *const *names, unsigned int n, unsigned int need)
{
	for (unsigned int i = 0; i < n; i++) {
		r->has[i] = mg_field_find(d, names[i], &r->f[i]);
		if (i < need && !r->has[i])
			return false;
	}
	return true;
}

static const struct vmscope_field_desc *str_field(const struct vmscope_event_desc *d,
						  const char *name)
{
	const struct vmscope_field_desc *f = mg_field_desc(d, name);

	return f && f->type == VMSCOPE_FT_str ? f : NULL;
}

void pf_classify(struct pf_role_of *r, const struct vmscope_event_desc *d)
{
	static const char *const sw[SW_N] = { "prev_pid", "next_pid", "prev_prio",
					      "next_prio", "prev_state" };
	static const char *const t2[S_N] = { "token", "seq", "guest_cpu", "t2" };
	static const char *const t3[S_N] = { "token", "seq", "", "t2" };
	static const char *const g[S_N] = { "token", "seq", "cpu", "" };
	bool guest;
	const char *n = base_name(d->name, &guest);

	memset(r, 0, sizeof(*r));
	if (!strcmp(n, "sched_switch") && fields(r, d, sw, SW_N, 2)) {
		r->role = R_SW;
		r->prev_comm = str_field(d, "prev_comm");
		r->next_comm = str_field(d, "next_comm");
	} else if (!guest && !strcmp(n, "sync_t2") && fields(r, d, t2, S_N, S_N)) {
		r->role = R_T2;
	} else if (!guest && !strcmp(n, "sync_t3") && fields(r, d, t3, S_N, 2) &&
		   (r->has[S_T2] = mg_field_find(d, "t2", &r->f[S_T2]))) {
		r->role = R_T3;
	} else if (guest && !strcmp(n, "sync_guest") && fields(r, d, g, S_N, 3)) {
		r->role = R_GSYNC;
	}
}

