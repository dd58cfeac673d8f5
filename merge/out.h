/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The merged trace (README.md, "The merged trace"): a trace folder with
 *
 *   metadata.vtf  the input's SessionMetadata, whose host event table is
 *                 the union of the host table and every VM's table
 *                 (guest events renamed "vmN:name", ids renumbered), so
 *                 the reader decodes every record of the merged stream
 *                 with one table;
 *   merged.vtf    one stream (origin host cpu 0): StreamChunks of records
 *                 in host-time order whose timestamps are the converted
 *                 ones, each chunk with its RecordOrigins (the schema's
 *                 StreamChunk.origins: per record in order, where it came
 *                 from and its original timestamp); LossRecords for the
 *                 inputs' losses and gaps, in place.
 */
#ifndef VMSCOPE_MERGE_OUT_H
#define VMSCOPE_MERGE_OUT_H

#include <stdbool.h>
#include <stdint.h>

#include "reader.h"

#define MO_STREAM		"merged.vtf"
#define MO_NONE			UINT32_MAX

/* One record's origin (on disk: its entry of the chunk's RecordOrigins). */
struct mo_origin {
	uint64_t orig_ts;	/* in its own clock (guest ticks for guests) */
	uint32_t cpu;		/* host CPU, or guest CPU (= vCPU) */
	int32_t tid;		/* thread running on that CPU; -1 unknown */
	uint32_t origin;	/* 0: host; n: VM n - 1 of the session */
	uint32_t vcpu;		/* host events on a vCPU thread: that vCPU
				 * (else MO_NONE); guest events: cpu */
};

/*
 * The union event table (union.c): the host table, then each VM's, guest
 * events renamed "vmN:name", ids renumbered; @table points into the rest.
 * The writer stores it as the metadata's host table; a reader of a raw
 * trace's pass 2 (merge.h mg_p2_as_merged) decodes records with it as the
 * merged trace's reader would.
 */
struct mo_union {
	Vmscope__Trace__EventTable table;
	Vmscope__Trace__Origin origin;
	Vmscope__Trace__EventDesc *ev, **evp;
	char (*names)[VMSCOPE_NAME_LEN];
	uint32_t n_origins;
	uint32_t *base, *count;	/* [n_origins]: merged id of its index 0, events */
};

/* The union of trace @t's tables. 0, or -ENOMEM, or -E2BIG with @err
 * (more events than one table holds). mo_union_free() in every case. */
int mo_union_build(struct mo_union *u, const struct vr_trace *t, char *err, size_t errlen);
/* The merged id of event @d of the table of @origin (0 host, n VM n-1), or
 * -1 when it has none. */
int mo_union_id(const struct mo_union *u, const struct vr_trace *t, uint32_t origin,
		const struct vmscope_event_desc *d);
void mo_union_free(struct mo_union *u);

struct mo;

/* Create the merged trace @path (must not exist) for input trace @t. */
int mo_create(struct mo **out, const char *path, struct vr_trace *t,
	      char *err, size_t errlen);

/* The same with the session's VmInfo list replaced by @vms (as many,
 * NULL: the input's): merge adds each VM's clock-unreliable spans. */
int mo_create_vms(struct mo **out, const char *path, struct vr_trace *t,
		  Vmscope__Trace__VmInfo **vms, char *err, size_t errlen);

/* The merged id of event @d of the table of @origin (0 host, n VM n-1), or
 * -1 when it has none. */
int mo_id(const struct mo *m, const struct vr_trace *t, uint32_t origin,
	  const struct vmscope_event_desc *d);

/* Append one record (timestamps non-decreasing). 0 or negative errno. */
int mo_event(struct mo *m, int id, uint64_t ts, const void *payload, uint16_t size,
	     const struct mo_origin *o);

/* A loss of the input at merged time @ts. */
int mo_loss(struct mo *m, const Vmscope__Trace__Origin *o, int kind,
	    uint64_t events, uint64_t subbufs, uint64_t ts, const char *detail);

/*
 * The input's damage (vr_trace_damage() of @t, counted so far: call it
 * once every input stream has ended), losses and skipped sub-buffers, for
 * the merged trace's Summary (InputAccount); damaged input marks it so
 * readers refuse it unless told to accept damage.
 */
void mo_input(struct mo *m, struct vr_trace *t, uint64_t lost_events, uint64_t gap_subbufs);

/* Flush, write the index, close the stream, then the metadata with its
 * Summary (the merged stream's frames and bytes, the input's account).
 * 0 or the first error. */
int mo_close(struct mo *m, uint64_t *chunks);

/* ---- reading a merged trace ---- */

struct mr;

/* Open the merged stream of the merged trace @path. A trace whose
 * metadata is damaged, or made from damaged input, is refused with
 * -EBADMSG and @err naming it and the damage, unless MR_ACCEPT_DAMAGE;
 * other damage is found by mr_damage() once it has been read. */
#define MR_ACCEPT_DAMAGE	1u
int mr_open(struct mr **out, const char *path, unsigned int flags, char *err, size_t errlen);

/* After the last item: 0 when nothing is wrong with the merged trace
 * (nor with the input it says it was made from); else 1 and @buf names
 * the trace and its damage. */
int mr_damage(struct mr *m, char *buf, size_t len);

/* As vr_stream_next(); for VR_EVENT, *o is the record's origin and
 * *has_o says whether the trace had one for it (a record without one is
 * damage, which mr_damage() names). */
int mr_next(struct mr *m, struct vr_item *it, struct mo_origin *o, bool *has_o);

struct vr_trace *mr_trace(struct mr *m);
const struct vr_stream_stats *mr_stats(const struct mr *m);
void mr_close(struct mr *m);

/* The merged trace's origin of the records of stream origin @so (a loss's:
 * no time, no thread). */
void mo_origin_of_stream(const Vmscope__Trace__Origin *so, struct mo_origin *o);

#endif
