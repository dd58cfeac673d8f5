/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trace reader every command uses (dump, later merge and report):
 * opens a trace folder, takes the session metadata (the last complete
 * SessionMetadata frame wins), lists the stream files, and iterates one
 * stream at a time as a sequence of items: events decoded through the
 * event descriptors stored in the trace, losses the ring buffer or the
 * collector recorded, gaps in sub-buffer sequence numbers, records or
 * frames that cannot be used, and finally how the file ended (clean,
 * torn tail, corrupt).
 *
 * Everything read is treated as hostile (guest streams end up in the
 * same files): frames are verified by tracefmt's reader, messages decoded
 * with an allocation budget and checked (tf_msg_decode), records walked
 * with ringbuf/rb_decode.c, descriptors checked by kvm-probes/decode.c
 * before use. Memory: the largest frame of the file plus its decoded
 * message, whatever the file's size.
 */
#ifndef VMSCOPE_READER_H
#define VMSCOPE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "file.pb-c.h"
#include "reader_desc.h"
#include "session.pb-c.h"
#include "stream.pb-c.h"
#include "tracefmt.h"

struct vr_trace;
struct vr_stream;

/*
 * Open the trace folder @path and read its metadata file. A trace whose
 * metadata file is missing or damaged still opens (its streams can be
 * walked, their records not decoded); vr_trace_problem() says what is
 * wrong. 0, or a negative errno with a reason in @err (folder unreadable).
 */
int vr_trace_open(struct vr_trace **out, const char *path, char *err, size_t errlen);

/* A trace from a metadata image in memory (tests, fuzzing); @meta may
 * be NULL. The image must outlive the trace. 0 or -ENOMEM. */
int vr_trace_open_mem(struct vr_trace **out, const void *meta, size_t len);

void vr_trace_close(struct vr_trace *t);

/* The path the trace was opened with ("(memory)" for vr_trace_open_mem). */
const char *vr_trace_path(const struct vr_trace *t);

/* The session (last complete SessionMetadata), or NULL when none. */
const Vmscope__Trace__SessionMetadata *vr_trace_session(const struct vr_trace *t);
/* The Summary frame (written when recording stopped cleanly), or NULL. */
const Vmscope__Trace__Summary *vr_trace_summary(const struct vr_trace *t);
/* How the metadata file ended (kind TF_END_NONE when there is none). */
const struct tf_end_info *vr_trace_meta_end(const struct vr_trace *t);
/* What is wrong with the metadata, or NULL when nothing is. */
const char *vr_trace_problem(const struct vr_trace *t);

/*
 * What was wrong with what was read: one stream's (vr_stream_damage) or
 * the whole trace's (vr_trace_damage: its metadata, the Summary's list
 * of files against the folder, and the sum over every stream read to
 * its end). The Summary lists each stream file with its frames and
 * bytes; a file it does not list, lists but is missing or differs, two
 * files of one origin, an empty file: inventory. A trace without a
 * Summary (its writer was killed) has torn tails where it was stopped:
 * counted, but not damage.
 */
struct vr_damage {
	uint64_t torn;		/* files ending in a torn tail */
	uint64_t corrupt;	/* files corrupt mid-file */
	uint64_t unreadable;	/* read errors; files that cannot be opened
				 * or are not regular files */
	uint64_t bad;		/* frames, chunks, records that cannot be used */
	uint64_t undecodable;	/* records without a usable descriptor */
	uint64_t inventory;	/* disagreements with the Summary's files */
	uint64_t metadata;	/* metadata.vtf missing, corrupt, undecodable */
	uint64_t write_errors;	/* the writer's final Statistics: writes that
				 * failed (a full disk); what it could not
				 * write is lost, beyond what the streams say */
	bool no_summary;	/* no Summary: torn tails are expected */
	bool marked;		/* the trace says it was made from damaged
				 * input (`vmscope merge --accept-damage`) */
	char first[320];	/* the first problem, naming its file */
};

/* Problems counted in @d; 0: nothing is wrong. */
uint64_t vr_damage_count(const struct vr_damage *d);

/* The trace's damage so far (streams not yet read to their end count
 * with what opening the trace found about their files). */
const struct vr_damage *vr_trace_damage(struct vr_trace *t);

/*
 * 0 when nothing is wrong with @t so far; else 1 and @buf holds a line
 * naming the trace @path, the counts, and the first problem.
 */
int vr_damage_describe(struct vr_trace *t, const char *path, char *buf, size_t len);

/* Stream files, in name order with numbers compared as numbers. */
size_t vr_trace_nr_streams(const struct vr_trace *t);
const char *vr_trace_stream_name(const struct vr_trace *t, size_t i);

/* Event table of a side: host (vm ignored) or guest VM @vm; NULL if none. */
const struct vr_events *vr_trace_events(const struct vr_trace *t, int side, uint32_t vm);

enum vr_item_kind {
	VR_EVENT = 1,	/* a record decoded through its descriptor */
	VR_LOSS,	/* events lost (ring buffer counter or LossRecord) */
	VR_GAP,		/* sub-buffer sequence numbers skipped */
	VR_BAD,		/* a record, chunk or frame that cannot be used */
};

struct vr_item {
	/* in an order without padding: the reader zeroes the item up to
	 * loss_origin for each record, which is per-record work */
	enum vr_item_kind kind;
	uint32_t rec_index;	/* VR_EVENT, VR_BAD record: its place in its chunk */
	uint64_t ts;		/* trace clock ticks: the event's, or the
				 * chunk's begin_ts for losses and gaps */
	uint64_t offset;	/* of the frame in its file */
	/* VR_EVENT */
	const struct vmscope_event_desc *desc;
	const uint8_t *payload;	/* valid until the next vr_stream_next() */
	/* a merged trace's chunk (schemas/stream.proto RecordOrigins): its
	 * origins, as long as its records (tracefmt's check refuses a chunk
	 * where they are not), valid until the next vr_stream_next(); NULL
	 * for a chunk without them. Also for VR_BAD records, which keep
	 * their place */
	const Vmscope__Trace__RecordOrigins *origins;
	uint16_t size;		/* VR_EVENT: of the payload */
	/* VR_LOSS: has_loss_origin: loss_origin is set; LossKind (0: ring
	 * buffer counter); events (0: unknown) */
	bool has_loss_origin;
	int loss_kind;
	uint64_t events;
	/* VR_GAP: sub-buffers first..last missing */
	uint64_t first, last;
	/* VR_LOSS (detail), VR_BAD: text, valid until the next call */
	const char *text;
	/* VR_LOSS: a LossRecord's own origin (the stream that lost them),
	 * when it has one (a merged trace's losses come from many streams);
	 * left as it was for a record */
	Vmscope__Trace__Origin loss_origin;
};

struct vr_stream_stats {
	bool has_header;	/* started with a stream FileHeader */
	bool cut;		/* begins mid-stream: a window's (FileHeader.cut) */
	bool has_index;		/* ended with a FileIndex (closed cleanly) */
	Vmscope__Trace__Origin origin;	/* from the FileHeader */
	uint64_t frames, chunks, events, undecodable, bad;
	uint64_t lost_events;	/* ring counters + LossRecords */
	uint64_t gap_subbufs;
	uint64_t first_ts, last_ts;
	/* per event: counts[i] for desc[i] of the stream's table (may be NULL) */
	const struct vr_events *events_table;
	const uint64_t *counts;
	struct tf_end_info end;	/* valid once vr_stream_next() returned 0 */
};

/* Open stream @i of the trace (or a memory image of a stream file). */
int vr_stream_open(struct vr_stream **out, struct vr_trace *t, size_t i);
int vr_stream_open_mem(struct vr_stream **out, struct vr_trace *t,
		       const void *data, size_t len);

/* 1: *it holds the next item; 0: the stream ended (see stats' end). */
int vr_stream_next(struct vr_stream *s, struct vr_item *it);

const struct vr_stream_stats *vr_stream_stats(const struct vr_stream *s);

/* The stream's damage: its file in the inventory, then, as it is read,
 * its unusable frames and records and (at its end) how it ended. */
const struct vr_damage *vr_stream_damage(const struct vr_stream *s);

void vr_stream_close(struct vr_stream *s);

/* A negative errno of opening a trace's file, as text: tracefmt's reader
 * refuses what is not a regular file with -EINVAL. */
const char *vr_strerror(int e);

/* ns of trace clock ticks, through the side's ClockDesc (NULL: ns). */
uint64_t vr_clock_ns(const Vmscope__Trace__ClockDesc *c, uint64_t ticks);

#endif
