/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What each event of a trace's stored table is to the Perfetto export:
 * a sched_switch (host or guest), a host sync_t2/sync_t3, a guest
 * sync_guest, or nothing, with the fields it uses found by name in the
 * stored descriptor (merge/roles.h), never from the compiled-in table.
 */
#ifndef VMSCOPE_EXPORT_PF_ROLES_H
#define VMSCOPE_EXPORT_PF_ROLES_H

#include <stdbool.h>

#include <vmscope/events.h>

#include "roles.h"

enum pf_role { R_NONE, R_SW, R_T2, R_T3, R_GSYNC };
enum { SW_PREV, SW_NEXT, SW_PREV_PRIO, SW_NEXT_PRIO, SW_STATE, SW_N };
enum { S_TOKEN, S_SEQ, S_CPU, S_T2, S_N };	/* T2: all; T3: no CPU; guest: no T2 */

/* f[] by role: SW_* for R_SW, S_* for the sync ones */
struct pf_role_of {
	enum pf_role role;
	struct mg_field f[SW_N];
	bool has[SW_N];
	const struct vmscope_field_desc *prev_comm, *next_comm;
};

void pf_classify(struct pf_role_of *r, const struct vmscope_event_desc *d);

#endif
