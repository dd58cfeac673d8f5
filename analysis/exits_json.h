/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The JSON (json-c) that `report exits` and `vmscope top` print alike: a
 * walk task, the walk's counts, an exit group's statistics.
 */
#ifndef VMSCOPE_ANALYSIS_EXITS_JSON_H
#define VMSCOPE_ANALYSIS_EXITS_JSON_H

#include <json-c/json.h>

#include "exits.h"

void an_json_u64(json_object *o, const char *key, uint64_t v);

/* {"tid", "comm"} of walk task @task ("(unknown task)", "(other tasks)"
 * with tid -1). */
json_object *an_json_task(const struct an_walk *w, int32_t task);

/* {"vm", "name"}: VM @vm, the start of each VM's object in the reports'
 * JSON. */
json_object *an_json_vm(const struct an_walk *w, uint32_t vm);

/* "trace" (@path), "records" and "losses" of the walk into @root: how
 * report sched's and report wake's JSON begin. */
void an_json_trace(json_object *root, const char *path, const struct an_walk *w);

/* {"vcpu", "tid"}: vCPU @vcpu of VM @vm and its thread, the start of each
 * vCPU's object in report exits' and report sched's JSON. */
json_object *an_json_vcpu(const struct an_walk *w, uint32_t vm, uint32_t vcpu);

/* records, exits, unattributed, open_dropped, entries_without_exit,
 * losses into @o. */
void an_json_counts(json_object *o, const struct an_counts *c);

/* count, total_ns, share (when @share is not NULL), kernel_ns, user_ns,
 * halted_ns, min_ns, p50_ns, p90_ns, p99_ns, p999_ns, max_ns into @o. */
void an_json_group(json_object *o, const struct an_group *g, const double *share);

/* [{"reason", "count", "total_ns"}]: the exits of group @g (by task, vCPU,
 * port, ...: not by reason) split by reason, in the group's order. */
json_object *an_json_reason_shares(const struct an_walk *w, const struct an_group *g);

/* A completed exit: vm, vcpu, reason, start_ns, duration_ns, user_ns,
 * halted, task (when @with_task), rip, its symbol (or null) and user_mode. */
json_object *an_json_exit(const struct an_walk *w, const struct an_exit *e, bool with_task);

#endif
