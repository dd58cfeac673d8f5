/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* The stream context, shared by stream.c (API, per-sample checks, segment
 * lifecycle) and consensus.c (held-back samples). */
#ifndef VMSCOPE_SYNC_STREAM_INTERNAL_H
#define VMSCOPE_SYNC_STREAM_INTERNAL_H

#include "vmscope_sync.h"

#define MAX_CONFIRM 16
#define MAX_PENDING 32

struct vcpu_state {
	bool has_seq;
	uint64_t last_seq;
};

struct vmscope_sync {
	struct vmscope_sync_config cfg;
	struct vmscope_sync_segment cur;
	/* Scratch segments, kept here to avoid 1 KB stack copies. */
	struct vmscope_sync_segment trial, alt, pair;
	bool confirmed;
	uint32_t n_held;  /* cookies of a not-yet-confirmed segment */
	uint64_t held[MAX_CONFIRM];
	/* Samples not yet committed, in arrival order. Once the oldest
	 * contradicts the segment, later ones wait behind it. */
	struct vmscope_sync_exchange pend[MAX_PENDING];
	uint32_t n_pend;
	/* The segment's most recent samples (ring), to find where a detected
	 * change becomes certain. */
	struct vmscope_sync_exchange recent[MAX_PENDING];
	uint32_t n_recent, recent_next;
	uint64_t next_id;
	struct vmscope_sync_stats st;
	struct vcpu_state *vcpu;
};

void sync_drop(struct vmscope_sync *c, uint64_t cookie,
	       enum vmscope_sync_drop why);
/* x is already in c->cur: report it, or hold it until confirmed. */
void sync_accepted(struct vmscope_sync *c,
		   const struct vmscope_sync_exchange *x);
/* Before switching to `next` on a detected change: set the current
 * segment's h_certain_end. */
void sync_mark_certain_end(struct vmscope_sync *c,
			   const struct vmscope_sync_segment *next);
/* Close c->cur; `trusted` boundaries emit even a short segment. */
void sync_close(struct vmscope_sync *c, bool trusted);
/* Start c->cur with x as its first sample. */
void sync_start(struct vmscope_sync *c, const struct vmscope_sync_exchange *x);

/* Commit what the held-back samples allow. `final`: at a boundary, so a
 * sample that still contradicts the segment is an outlier. */
void consensus_resolve(struct vmscope_sync *c, bool final);

#endif
