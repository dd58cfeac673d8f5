/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `vmscope merge`: one timeline in host time from a trace's host and
 * guest streams.
 *
 *  pass 1 (mg_sync): the host streams merged by host time, each guest
 *    CPU stream read along as its sync records are needed; the sync
 *    records paired (pair.h) into the per-VM transforms (transform.h),
 *    kvm_write_tsc_offset as breaks.
 *  pass 2 (mg_merge): k-way merge of all streams through a heap keyed by
 *    host time (guest times converted with the transform of the segment
 *    the guest's latest accepted sync record belongs to), written as a
 *    merged trace (out.h), with the causality checks over every sync
 *    exchange.
 *
 * Memory: one frame and one decoded chunk per stream, the heaps, the
 * pairing's fixed tables, one output chunk and the segments: independent
 * of the length of the trace. Accepted exchanges go from pass 1 to pass 2
 * through temporary files in mg_opts.spill_dir, unlinked as soon as they
 * are created (nothing is left behind, also after SIGKILL).
 */
#ifndef VMSCOPE_MERGE_H
#define VMSCOPE_MERGE_H

#include <stdio.h>

#include "out.h"
#include "pair.h"
#include "reader.h"
#include "transform.h"

/* Which kvm_write_tsc_offset records end a VM's segment. */
enum mg_tsc_breaks {
	/* a write at least MG_TSC_QUIET_NS after the previous one of its VM
	 * (VM start, migration, a guest writing its TSC); a host with an
	 * unstable TSC rewrites the offset at every vCPU load to keep the
	 * guest's TSC continuous (measured: 13 029 writes in a 3 s recording
	 * of the nested test host), which would cut the transform into
	 * useless pieces: those are left to the library's change detection */
	MG_TSC_AUTO = 0,
	MG_TSC_ALL,	/* every write */
	MG_TSC_NONE,	/* none: detection only */
};

#define MG_TSC_QUIET_NS 1000000000ull

struct mg_opts {
	struct mt_opts sync;
	enum mg_tsc_breaks tsc_breaks;
	const char *spill_dir;	/* the temporary files' folder; NULL: /tmp */
};

/* Causality over the sync exchanges (see README.md, "Causality"). */
struct mg_causality {
	/* accepted exchanges: converted t1 <= t2 and converted t4 >= t3 */
	uint64_t exchanges, viol_t1, viol_t4;
	/* events: the guest event just before an accepted exchange's t1
	 * (same guest CPU) lands at or before t2; every event after its t4
	 * lands at or after t3 */
	uint64_t ev_before, viol_before, ev_after, viol_after;
	/* guest sync records without an accepted exchange */
	uint64_t not_accepted;
	/* the same two event checks against the hypercalls of exchanges
	 * dropped for what they say of the guest's clock (inside a
	 * clock-unreliable span by construction; not a claim, so not
	 * counted as violations) */
	uint64_t unrel_checked, unrel_viol, unrel_worst_ns;
	/* accepted exchanges whose interval before lies in such a span
	 * (its end, or inside it): the same checks, reported there */
	uint64_t span_exchanges;
	/* guest events in clock-unreliable spans (by their CPU stream) */
	uint64_t ev_unreliable;
};

/* What a clock-unreliable span saw (bits; schemas' ClockSeen). */
#define MG_SEEN_SHORT	1u	/* t4 - t1 < t3 - t2 */
#define MG_SEEN_REPEAT	2u	/* consecutive records with one timestamp */
#define MG_SEEN_OFFLINE	4u	/* exchange contradicting the fitted line */
#define MG_SEEN_STEP	8u	/* the segment changed inside the span */

/*
 * A span of host time in which a guest CPU's clock is not trusted
 * (README.md, "Clock-unreliable spans"): from the t3 of the last accepted
 * exchange of that CPU before the evidence to the t2 of the first one
 * after it (0 / UINT64_MAX: the trace's start / end).
 */
struct mg_span_edge {
	bool known;		/* false: the trace's start / end */
	uint64_t seq, token, t1;
};

struct mg_span {
	uint32_t vm, cpu;
	uint64_t h_start, h_end;
	uint32_t seen;
	uint64_t events;	/* guest events of that CPU in it */
	uint64_t longest_run;	/* most records with one timestamp */
	uint64_t worst_short_ns;	/* largest (t3 - t2) - (t4 - t1) */
	/* the guest stream it was found in (the trace's stream index) and
	 * the accepted exchanges of that stream it lies between */
	size_t stream, found;	/* found: its place in the order clock.c
				 * found them (by stream, in its order) */
	struct mg_span_edge before, after;
};

struct mg_spans {
	struct mg_span *s;	/* by VM, CPU, start */
	size_t n, cap;
	size_t *by_stream;	/* [n]: indices into s in the order found */
	uint64_t dropped_short, dropped_offline;	/* evidence exchanges */
	uint64_t runs, run_records;	/* repeated-timestamp runs, records */
};

struct mg_counts {
	uint64_t streams, host_events, guest_events, out_events;
	uint64_t unconverted;	/* guest events of a VM without a transform */
	uint64_t clamped;	/* converted time below the previous output */
	uint64_t losses, gaps, bad, chunks;
	uint64_t sync_records, tsc_writes, tsc_by_thread, tsc_breaks;
	uint64_t acc_records;	/* accepted exchanges spilled for pass 2 */
};

/* Wall time of the phases (s), for the benchmark. */
struct mg_times {
	double sync, merge;
};

/*
 * An accepted exchange as pass 2 needs it at the guest's sync record:
 * spilled by pass 1 to a temporary file per (VM, guest CPU), in the order
 * the library resolved them (seq order per vCPU, up to its hold-back), so
 * that memory does not grow with the trace.
 */
struct mg_acc {
	uint64_t seq, token, t1, t2, t3, t4;
	/* the segment id; or, for an exchange dropped for what it says of
	 * the guest's clock (clock.c), -1 - its MT_DROP_* reason */
	int64_t seg;
	struct mp_tsc h_tsc, g_tsc;	/* for the TSC cross-check */
	struct mp_tsc_off off;
};

/* Reorder window over a CPU's spilled exchanges: the library resolves a
 * vCPU's samples in arrival order, give or take its hold-back (at most
 * 32). */
#define MG_ACC_BUF 64

/*
 * Pass 2 along one guest stream's clock-unreliable spans (clock.c): at
 * each accepted exchange of the stream, in its order, whether the
 * interval before it and the one after it lie in a span. The causality
 * check claims nothing there (README.md, "Clock-unreliable spans").
 */
struct mg_span_walk {
	const struct mg_spans *sp;
	size_t stream, i;	/* i: in by_stream, the stream's next span
				 * (or past its last) */
	bool inside;
};

void mg_span_walk_init(struct mg_span_walk *w, const struct mg_spans *sp, size_t stream);
void mg_span_walk_at(struct mg_span_walk *w, const struct mg_acc *a, bool *before, bool *after);

/* A guest CPU's spilled exchanges, read along its stream (accq.c). */
struct mg_accq {
	FILE *f;	/* NULL: none */
	bool eof, err;	/* err: a read failed (ferror) */
	struct mg_acc buf[MG_ACC_BUF];	/* by seq */
	unsigned int n;
};

/* Start reading @f (may be NULL) from its beginning. */
void mg_accq_init(struct mg_accq *q, FILE *f);
/* The exchange of the guest's sync record (seq, token, t1), if spilled. */
bool mg_accq_find(struct mg_accq *q, uint64_t seq, uint64_t token, uint64_t t1,
		  struct mg_acc *out);

/*
 * The TSC cross-check of one VM (README.md, "TSC cross-check"): for each
 * accepted exchange, the host time of the guest's t1 derived from the TSC
 * alone (guest TSC at t1 - KVM's offset = host TSC, converted to host ns
 * from the host's TSC reading at t2), against the hull's bound there.
 */
struct mg_tsc_vm {
	uint64_t checked;	/* exchanges with both readings and an offset */
	uint64_t within;	/* TSC-derived time inside the hull bound */
	uint64_t within_slack;	/* inside it widened by the reads' widths */
	uint64_t no_readings;	/* a side's record carries no TSC readings */
	uint64_t no_offset;	/* no kvm_write_tsc_offset known for the vCPU */
	uint64_t off_changed;	/* the offset may have changed after t1 */
	uint64_t max_abs_diff_ns, sum_abs_diff_ns;	/* |TSC - hull estimate| */
	uint64_t max_outside_ns;	/* farthest beyond the widened bound */
	uint64_t max_slack_ns;		/* widest widening */
};

/* The host's TSC rate, from the first and the latest sync_t2 readings. */
struct mg_tsc_rate {
	uint64_t ns0, tsc0, ns1, tsc1;
	uint64_t n;
};

struct mg_result {
	uint32_t n_vms;
	struct mg_times time;
	struct mp *pair;	/* the pairing's counts */
	struct mt mt;		/* per-VM transforms */
	FILE ***acc;		/* [n_vms][MP_MAX_CPUS], NULL when none */
	uint64_t *vm_exchanges, *vm_paired;	/* [n_vms] */
	struct mg_causality c;
	struct mg_tsc_rate host_rate;
	struct mg_tsc_vm *tsc;	/* [n_vms] */
	struct mg_spans spans;	/* clock-unreliable spans (clock.c) */
	struct mg_counts n;
	const char *spill_dir;	/* mg_opts.spill_dir: for messages */
	bool merged;
	int err;
};
/* Pass 1. 0, or a negative errno with a reason in @err. */
int mg_sync(struct vr_trace *t, const struct mg_opts *o, struct mg_result *r,
	    char *err, size_t errlen);

/* The TSC cross-check over the accepted exchanges (tsc_check.c); part of
 * mg_sync, once the segments are final. */
void mg_tsc_check(struct mg_result *r);

/* The clock-unreliable spans (clock.c): every guest CPU stream read once
 * more with its exchanges' outcomes; part of mg_sync, once the segments
 * are final. 0 or a negative errno. */
int mg_clock_scan(struct vr_trace *t, struct mg_result *r);

/* Pass 2 (after mg_sync): write the merged trace folder @out (must not
 * exist). 0, or a negative errno with a reason in @err. */
int mg_merge(struct vr_trace *t, const char *out, struct mg_result *r,
	     char *err, size_t errlen);

/*
 * Pass 2 as a source of records (after mg_sync): the merged timeline one
 * record at a time, in the order and with the host times, origins and
 * causality counts that mg_merge writes (mg_merge is its writer), so that
 * a report on a raw trace reads exactly what it would read from the merged
 * file, without the file (analysis/walk.h, an_walk_open_raw_exact).
 */
struct mg_p2;
struct mg_p2_rec {
	struct vr_item it;	/* the input item (it.ts: its own clock's time);
				 * valid until the next mg_p2_next() */
	uint64_t ts;		/* its host time in the merged timeline */
	const struct vr_stream_stats *st;	/* its stream's (origin) */
	struct mo_origin o;	/* VR_EVENT: as the merged trace's ORIGINS; a
				 * loss or gap: its stream's (mo_origin_of_stream) */
};
int mg_p2_open(struct mg_p2 **out, struct vr_trace *t, struct mg_result *r,
	       char *err, size_t errlen);
/* The next record (VR_EVENT, VR_LOSS or VR_GAP): 1, or 0 at the end. */
int mg_p2_next(struct mg_p2 *p, struct mg_p2_rec *rec);
/*
 * @rec as the merged trace's reader (out.h mr_next) gives it back once
 * mg_merge wrote it: an event with its descriptor in @uev (the union
 * table @u, of @t, decoded with vr_events_from_pb) and its origin (*@has_o),
 * a loss or gap as the LossRecord written for it, at the merged time,
 * with its stream's origin (it->loss_origin, and @rec->o).
 * 1 with *@it, or 0 when the merged trace does not hold it.
 */
int mg_p2_as_merged(const struct mg_p2_rec *rec, struct vr_trace *t, const struct mo_union *u,
		    const struct vr_events *uev, struct vr_item *it, bool *has_o);
/* The input's lost events and skipped sub-buffers read so far. */
void mg_p2_input(const struct mg_p2 *p, uint64_t *lost, uint64_t *gaps);
/* 0, or -EIO (@err) when a spilled exchange could not be read back. */
int mg_p2_close(struct mg_p2 *p, char *err, size_t errlen);

/* Each VM's VmInfo with its clock-unreliable spans (mg_result.spans) as a
 * merged trace's metadata carries them (schemas/session.proto,
 * ClockSpan); vms NULL when there are none. */
struct mg_clock_vms {
	Vmscope__Trace__VmInfo **vms, *vi;
	Vmscope__Trace__ClockSpan **pp, *sp;
};
int mg_clock_vms(const Vmscope__Trace__SessionMetadata *ss, const struct mg_result *r,
		 struct mg_clock_vms *cv);
void mg_clock_vms_free(struct mg_clock_vms *cv);

/* The text report: per VM its segments (verdict, bound, drift, offset),
 * samples used and dropped by reason, pairing counts, its clock-unreliable
 * spans (at most @spans per VM listed, the rest counted: MG_REPORT_SPANS
 * on a terminal, MG_REPORT_ALL in MERGED/report.txt); after pass 2 the
 * merge counts and the causality check. */
#define MG_REPORT_SPANS	20u
#define MG_REPORT_ALL	UINT32_MAX
void mg_report(FILE *f, const struct vr_trace *t, const struct mg_result *r, uint32_t spans);

/* Violations of accepted exchanges and events (0: causality kept). */
uint64_t mg_violations(const struct mg_result *r);

void mg_result_free(struct mg_result *r);

#endif
