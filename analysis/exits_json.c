// SPDX-License-Identifier: GPL-2.0
/* JSON shared by `report exits` and `vmscope top`: see exits_json.h. */
#include <inttypes.h>
#include <stdio.h>

#include "exits_json.h"

static const double quantiles[] = { 0.5, 0.9, 0.99, 0.999 };
static const char *const q_json[] = { "p50_ns", "p90_ns", "p99_ns", "p999_ns" };

void an_json_u64(json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

json_object *an_json_vm(const struct an_walk *w, uint32_t vm)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "vm", json_object_new_int((int)vm));
	json_object_object_add(o, "name", json_object_new_string(an_walk_vm_name(w, vm)));
	return o;
}

void an_json_trace(json_object *root, const char *path, const struct an_walk *w)
{
	json_object_object_add(root, "trace", json_object_new_string(path));
	an_json_u64(root, "records", an_walk_counts(w)->records);
	an_json_u64(root, "losses", an_walk_counts(w)->losses);
}

json_object *an_json_vcpu(const struct an_walk *w, uint32_t vm, uint32_t vcpu)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "vcpu", json_object_new_int((int)vcpu));
	json_object_object_add(o, "tid", json_object_new_int(an_walk_vcpu_tid(w, vm, vcpu)));
	return o;
}

json_object *an_json_task(const struct an_walk *w, int32_t task)
{
	const struct an_task *t = an_walk_task(w, task);
	json_object *o = json_object_new_object();

	json_object_object_add(o, "tid", json_object_new_int(t ? t->tid : -1));
	json_object_object_add(o, "comm", json_object_new_string(
		t ? t->comm : an_task_placeholder(task)));
	return o;
}

void an_json_counts(json_object *o, const struct an_counts *c)
{
	an_json_u64(o, "records", c->records);
	an_json_u64(o, "exits", c->exits);
	an_json_u64(o, "unattributed", c->unattributed);
	an_json_u64(o, "open_dropped", c->open_dropped);
	an_json_u64(o, "entries_without_exit", c->entries_without_exit);
	an_json_u64(o, "losses", c->losses);
	an_json_u64(o, "exits_before_session", c->exits_before_session);
	an_json_u64(o, "exits_task_unknown", c->exits_task_unknown);
}

void an_json_group(json_object *o, const struct an_group *g, const double *share)
{
	an_json_u64(o, "count", g->h.count);
	an_json_u64(o, "total_ns", g->h.sum);
	if (share)
		json_object_object_add(o, "share", json_object_new_double(*share));
	an_json_u64(o, "kernel_ns", g->kernel_ns);
	an_json_u64(o, "user_ns", g->user_ns);
	an_json_u64(o, "halted_ns", g->halted_ns);
	an_json_u64(o, "min_ns", g->h.count ? g->h.min : 0);
	for (size_t q = 0; q < sizeof(quantiles) / sizeof(quantiles[0]); q++)
		an_json_u64(o, q_json[q], an_hist_quantile(&g->h, quantiles[q]));
	an_json_u64(o, "max_ns", g->h.max);
}

json_object *an_json_reason_shares(const struct an_walk *w, const struct an_group *g)
{
	json_object *rs = json_object_new_array();

	for (uint32_t r = 0; r < g->nr; r++) {
		json_object *jr = json_object_new_object();

		json_object_object_add(jr, "reason", json_object_new_string(
			an_walk_reason_name(w, g->r[r].reason)));
		an_json_u64(jr, "count", g->r[r].count);
		an_json_u64(jr, "total_ns", g->r[r].total_ns);
		json_object_array_add(rs, jr);
	}
	return rs;
}

json_object *an_json_exit(const struct an_walk *w, const struct an_exit *e, bool with_task)
{
	json_object *j = json_object_new_object();
	char rip[24], sym[640];

	json_object_object_add(j, "vm", json_object_new_int((int)e->vm));
	json_object_object_add(j, "vcpu", json_object_new_int((int)e->vcpu));
	json_object_object_add(j, "reason", json_object_new_string(
		an_walk_reason_name(w, e->reason)));
	an_json_u64(j, "start_ns", e->start);
	an_json_u64(j, "duration_ns", e->end - e->start);
	an_json_u64(j, "user_ns", e->user_ns);
	json_object_object_add(j, "halted", json_object_new_boolean(e->halted));
	if (with_task)
		json_object_object_add(j, "task", an_json_task(w, e->task));
	snprintf(rip, sizeof(rip), "%#" PRIx64, e->rip);
	json_object_object_add(j, "rip", json_object_new_string(rip));
	/* "name+0x1f [module]" when the VM's symbols name it */
	json_object_object_add(j, "rip_symbol", e->sym >= 0 ? json_object_new_string(
		an_walk_rip_label(w, e->vm, e->sym, e->rip, sym, sizeof(sym))) : NULL);
	json_object_object_add(j, "user_mode", json_object_new_boolean(e->sym == AN_SYM_USER));
	return j;
}
