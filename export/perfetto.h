/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `vmscope export --perfetto`: a merged trace (merge/out.h), or a raw one
 * merged as it is read (ex_in.h), as a Perfetto
 * protobuf trace (perfetto_subset.proto), streaming, in memory bounded by
 * fixed tables (not by the trace's length). See README.md for what goes
 * where.
 */
#ifndef VMSCOPE_EXPORT_PERFETTO_H
#define VMSCOPE_EXPORT_PERFETTO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ex_in.h"

struct ex_pf_stats {
	uint64_t events;	/* records read from the merged trace */
	uint64_t packets;	/* TracePackets written */
	uint64_t sched_switch;	/* as ftrace sched_switch, all machines */
	uint64_t sched_compact;	/* of them, in CompactSched columns (pf_sched.h) */
	uint64_t sched_disordered; /* earlier than their CPU's previous one (pf_sched.h) */
	uint64_t slices;	/* exit slices: the analysis walk's exits (walk.h) */
	uint64_t exits_unpaired; /* exits the walk left open: cut by a loss, no entry */
	/* sync records on an unknown thread, exits of no known thread, kvm
	 * records the walk could not give a vCPU */
	uint64_t no_thread;
	uint64_t flow_steps;	/* host sync_t2/sync_t3 instants carrying a flow */
	uint64_t flow_ends;	/* guest sync records ending a flow */
	uint64_t table_full;	/* threads beyond the fixed table */
	uint64_t bad;		/* items the reader could not use (vmscope dump says) */
	uint32_t machines;	/* host + VMs */
};

/* Export the trace @in (merged or raw: ex_in.h) as the file @out
 * (refused if it exists, unless o->force). 0, or -errno with @err. */
int ex_perfetto(const char *in, const char *out, const struct ex_opts *o,
		struct ex_pf_stats *st, char *err, size_t errlen);

#endif
