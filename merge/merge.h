/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `vmscope merge`: one timeline in host time from a trace's host and
 * guest streams.
 *
 *  pass 1 (mg_sync): walk every stream once, keep only the clock-sync
 *    records and kvm_write_tsc_offset events, pair them (pair.h) and run
 *    the per-VM transforms (transform.h).
 *  pass 2 (mg_merge): k-way merge of all streams through a heap keyed by
 *    host time (guest times converted with the transform of the segment
 *    the guest's latest accepted sync record belongs to), written as a
 *    merged trace (out.h), with the causality checks over every sync
 *    exchange.
 *
 * Memory: pass 2 holds one frame and one decoded chunk per stream, the
 * heap, and one output chunk: independent of the number of events. Pass 1
 * holds the sync records (O(exchanges)).
 */
#ifndef VMSCOPE_MERGE_H
#define VMSCOPE_MERGE_H

#include <stdio.h>

#include "pair.h"
#include "reader.h"
#include "transform.h"

struct mg_opts {
	struct mt_opts sync;
	size_t cap;		/* sync records of each kind kept (0: 64 M) */
};

/* Causality over the sync exchanges (see README.md, "Causality"). */
struct mg_causality {
	/* accepted exchanges: converted t1 <= t2 and converted t4 >= t3 */
	uint64_t exchanges, viol_t1, viol_t4;
	/* exchanges the sync library dropped (forged, outliers), same test:
	 * information, not a failure */
	uint64_t dropped, dropped_viol;
	/* events: the guest event just before an accepted exchange's t1
	 * (same guest CPU) lands at or before t2; every event after its t4
	 * lands at or after t3 */
	uint64_t ev_before, viol_before, ev_after, viol_after;
	/* guest sync records without a usable exchange */
	uint64_t unpaired_records;
};

struct mg_counts {
	uint64_t streams, host_events, guest_events, out_events;
	uint64_t unconverted;	/* guest events of a VM without a transform */
	uint64_t clamped;	/* converted time below the previous output */
	uint64_t losses, gaps, bad, chunks;
	uint64_t sync_records, tsc_breaks, tsc_by_thread;
};

/* Wall time of the phases (s), for the benchmark. */
struct mg_times {
	double scan, pair, fit, merge;
};

struct mg_result {
	uint32_t n_vms;
	struct mg_times time;
	struct mp pair;
	struct mt_vm *vm;	/* [n_vms] */
	struct mg_causality c;
	struct mg_counts n;
	bool merged;
};

/* Pass 1. 0, or a negative errno with a reason in @err. */
int mg_sync(struct vr_trace *t, const struct mg_opts *o, struct mg_result *r,
	    char *err, size_t errlen);

/* Pass 2 (after mg_sync): write the merged trace folder @out (must not
 * exist). 0, or a negative errno with a reason in @err. */
int mg_merge(struct vr_trace *t, const char *out, struct mg_result *r,
	     char *err, size_t errlen);

/* The text report: per VM its segments (verdict, bound, drift, offset),
 * samples used and dropped by reason, pairing counts; after pass 2 the
 * merge counts and the causality check. */
void mg_report(FILE *f, const struct vr_trace *t, const struct mg_result *r);

/* Violations of accepted exchanges and events (0: causality kept). */
uint64_t mg_violations(const struct mg_result *r);

void mg_result_free(struct mg_result *r);

#endif
