/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reader's own view of a trace and a stream, shared by reader.c (the
 * trace: metadata, inventory, damage) and stream.c (a stream's items).
 */
#ifndef VMSCOPE_READER_INT_H
#define VMSCOPE_READER_INT_H

#include "rb_decode.h"
#include "reader.h"

/* A trace with more stream files than this is refused as not ours. */
#define VR_MAX_STREAMS	65536

struct vr_trace {
	int dirfd;			/* -1: memory trace */
	char *path;
	ProtobufCMessage *session, *summary, *stats;
	struct tf_end_info meta_end;
	char problem[256];
	char **names;
	size_t n_names;
	struct vr_events *host_events;
	struct vr_events **vm_events;	/* [session->n_vms] */
	/* damage: of the metadata and the folder (dmg); per stream file,
	 * what opening found (inv) and, once read to its end, all of it
	 * (sd, read); the sum (total) */
	struct vr_damage dmg, total;
	struct vr_damage *inv, *sd;
	bool *read;
	int64_t *listed_frames;		/* -1: not in the Summary */
	Vmscope__Trace__Origin *orig;	/* from each file's header */
	bool *has_orig;
};

/* Items produced ahead of the records of a chunk (gap, loss, note). */
#define VR_PENDING	4

struct vr_stream {
	struct vr_trace *t;
	size_t idx;			/* SIZE_MAX: memory image */
	const char *name;
	struct tf_reader *r;
	struct vr_stream_stats st;
	struct vr_damage dmg;
	bool ended, seen_first, have_seq;
	uint64_t next_seq, lost_before;
	/* the chunk whose records are being returned */
	Vmscope__Trace__StreamChunk *chunk;
	struct vmscope_rb_iter it;
	uint64_t chunk_offset;
	uint32_t rec_index;	/* of the chunk's next record */
	struct vr_item pending[VR_PENDING];
	char pending_text[VR_PENDING][200];
	unsigned int npending, ipending;
	uint64_t *counts;
	char text[200];
};

/* Count one problem in @n of @d; the first one's text is kept. */
void vr_note(struct vr_damage *d, uint64_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
