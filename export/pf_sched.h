/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Perfetto export's sched_switch events, batched per machine and CPU
 * into FtraceEventBundles (perfetto.c writes each bundle as one packet).
 *
 * A switch goes into the bundle's CompactSched columns (timestamp delta,
 * prev_state, next pid/prio, next_comm as an index into the bundle's
 * string table: about a tenth of a full event's bytes) when the columns
 * say all of it: Perfetto takes a compact switch's previous task from the
 * CPU's switch before it, so a switch is compact only when its prev
 * pid, prio and comm are that switch's next ones and its time is later.
 * Any other switch (the first of a CPU, one after a loss, one whose stored
 * layout lacks a field the columns need, two at the same time) is a full
 * FtraceEvent of the same bundle. Either way the reader gets every field
 * the record had, as long as each CPU's switches come in time order (a
 * merged trace's order; pf_sched_stats.disordered counts the others).
 *
 * Memory: PF_SCHED_SLOTS bundles of PF_SCHED_BATCH switches; a bundle is
 * written when full, when its slot is needed by another CPU (which then
 * starts without a known previous switch: full events again) and at
 * the end, so the file's size, not memory, grows with the trace.
 */
#ifndef VMSCOPE_EXPORT_PF_SCHED_H
#define VMSCOPE_EXPORT_PF_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "perfetto_subset.pb-c.h"

#define PF_SCHED_COMM	32	/* longer comms: a bundle of their own */

struct pf_switch {
	uint64_t ts;
	int32_t prev_pid, next_pid, prev_prio, next_prio;
	int64_t prev_state;
	bool has_prev_prio, has_next_prio, has_prev_state;
	const char *prev_comm, *next_comm;	/* NULL: not in the layout */
};

/* Writes @b (one packet, machine @machine); @b is valid only during the call. */
typedef void pf_bundle_fn(void *ctx, uint32_t machine,
			  Perfetto__Protos__FtraceEventBundle *b);

struct pf_sched_stats {
	uint64_t compact;	/* switches written as CompactSched columns */
	uint64_t full;		/* as full FtraceEvents */
	uint64_t bundles;
	uint64_t evicted;	/* bundles written to give their slot to another CPU */
	/* switches earlier than their CPU's previous one: a compact switch
	 * written before may then be read with the wrong previous task (a
	 * merged trace is in time order: never expected) */
	uint64_t disordered;
};

struct pf_sched;

struct pf_sched *pf_sched_new(pf_bundle_fn *out, void *ctx, struct pf_sched_stats *st);
void pf_sched_add(struct pf_sched *s, uint32_t machine, uint32_t cpu,
		  const struct pf_switch *sw);
/* At the end: every pending bundle written. */
void pf_sched_flush(struct pf_sched *s);
void pf_sched_free(struct pf_sched *s);

#endif
