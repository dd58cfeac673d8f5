/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-VM piecewise guest→host transforms from the paired exchanges: one
 * sync/ stream context per VM, fed in host-time order, with explicit
 * breaks where the relation is known to change (kvm_write_tsc_offset of
 * that VM, or of an unknown VM: a break only splits a segment, so an
 * unattributable one breaks every VM) and a seq reset where the guest's
 * session token changes (the emitter restarted). Detected changes,
 * forgeries and outliers are the library's (sync/README.md).
 */
#ifndef VMSCOPE_MERGE_TRANSFORM_H
#define VMSCOPE_MERGE_TRANSFORM_H

#include "pair.h"
#include "vmscope_sync.h"

struct mt_break {
	uint64_t ts;		/* host time */
	uint32_t vm;		/* MP_NO_VM: every VM */
};

struct mt_opts {
	uint32_t ppm;		/* 0: the library's default */
	uint32_t confirm;	/* 0: default */
	uint64_t max_segment_ns;/* 0: no span limit */
	uint32_t min_samples;	/* for the verdict; 0: 8 */
};

struct mt_vm {
	struct vmscope_sync_segment *seg;	/* in id order */
	/* [nseg]: host time after which seg[i] no longer holds: the
	 * explicit break that ended it, else the next segment's first
	 * sample (UINT64_MAX for the last) */
	uint64_t *limit;
	size_t nseg, cseg;
	bool break_pending;
	uint64_t break_ts;
	struct vmscope_sync_stats st;
	uint64_t breaks_tsc, breaks_token;
	int err;
};

/* Run every VM of @p (after mp_pair) with the @nb breaks @b (any order;
 * sorted here). Sets p->vm[].x[].outcome and calls mp_resolve(). @out has
 * p->n_vms entries. 0 or -ENOMEM. */
int mt_run(struct mp *p, struct mt_break *b, size_t nb, const struct mt_opts *o,
	   struct mt_vm *out);
void mt_free(struct mt_vm *v, uint32_t n);

/* Segment @id of @v, or NULL. */
const struct vmscope_sync_segment *mt_segment(const struct mt_vm *v, int64_t id);

/* Host time of guest time @g through *seg, moving *seg on to the next
 * segment while the result lies beyond the current one's limit (the
 * guest events between a clock change and the next sync record of their
 * CPU). false when no segment answers. */
bool mt_convert(const struct mt_vm *v, const struct vmscope_sync_segment **seg,
		uint64_t g, uint64_t *h);

/* The segment for guest time @g when no sync record says which: the
 * first whose guest span reaches @g, else the last (NULL: none). */
const struct vmscope_sync_segment *mt_segment_for(const struct mt_vm *v, uint64_t g);

#endif
