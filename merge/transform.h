/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-VM piecewise guest→host transforms from the paired exchanges, as
 * they come: one sync/ stream context per VM, with explicit breaks where
 * the relation is known to change (kvm_write_tsc_offset of that VM, or of
 * an unknown VM: a break only splits a segment, so an unattributable one
 * breaks every VM) and a seq reset where the guest's session token
 * changes (the emitter restarted). Detected changes, forgeries and
 * outliers are the library's (sync/README.md).
 *
 * Memory: the contexts, a ring of the exchanges the library has not
 * resolved yet (it holds back at most 32), and the segments.
 */
#ifndef VMSCOPE_MERGE_TRANSFORM_H
#define VMSCOPE_MERGE_TRANSFORM_H

#include "pair.h"
#include "vmscope_sync.h"

#define MT_RING 256	/* > the library's held-back samples */

struct mt_opts {
	uint32_t ppm;		/* 0: the library's default */
	uint32_t confirm;	/* 0: default */
	uint64_t max_segment_ns;/* 0: no span limit */
	uint32_t n_vcpus;	/* vCPU ids accepted; 0: 4096 (KVM's
				 * KVM_MAX_VCPU_IDS on x86) */
};

/* An accepted exchange of VM @vm, resolved into segment @seg. */
typedef void (*mt_accept_fn)(void *user, uint32_t vm, const struct mp_exchange *x,
			     int64_t seg);

/*
 * Exchanges with a guest record whose guest interval is shorter than the
 * host's (t4 - t1 < t3 - t2): impossible for a running clock whose rate
 * is within a factor (t3 - t2 + both one-way delays) / (t3 - t2) of the
 * host's, so taken as a guest clock that stood still (README.md,
 * "Clock-unreliable spans") and never given to the library: it would
 * reject those beyond its drift prior ("rtt") and fit the others, which
 * pull the drift towards a guest clock faster than the host's.
 */
#define MT_DROP_SHORT	VMSCOPE_SYNC_DROP_NREASONS

/* An exchange of VM @vm dropped for @reason (enum vmscope_sync_drop, or
 * MT_DROP_SHORT). */
typedef void (*mt_drop_fn)(void *user, uint32_t vm, const struct mp_exchange *x,
			   int reason);

struct mt_vm {
	struct vmscope_sync *ctx;
	struct mp_exchange ring[MT_RING];	/* by cookie % MT_RING */
	uint64_t next_cookie;
	bool have_token;
	uint64_t token;
	struct vmscope_sync_segment *seg;	/* in id order */
	/* [nseg]: host time after which seg[i] no longer holds: the
	 * explicit break that ended it, else the next segment's first
	 * sample; never before its own last sample (UINT64_MAX: last) */
	uint64_t *limit;
	size_t nseg, cseg;
	bool break_pending;
	uint64_t break_ts;
	struct vmscope_sync_stats st;
	uint64_t breaks_tsc, breaks_token;
	uint64_t short_rtt;	/* MT_DROP_SHORT: not given to the library */
	/* [nseg]: ended by an explicit break (kvm_write_tsc_offset) */
	bool *by_break;
	/* back pointers for the callbacks */
	struct mt *t;
	uint32_t index;
};

struct mt {
	uint32_t n_vms;
	struct mt_vm *vm;	/* [n_vms] */
	mt_accept_fn accept;
	mt_drop_fn drop;	/* optional, set after mt_init */
	void *user;
	int err;
};

int mt_init(struct mt *t, uint32_t n_vms, const struct mt_opts *o, mt_accept_fn accept,
	    void *user);
void mt_free(struct mt *t);

/* An exchange of VM @vm (from pair.h's emit). */
void mt_add(struct mt *t, uint32_t vm, const struct mp_exchange *x);
/* An explicit break at host time @ts of VM @vm, or of all (MP_NO_VM). */
void mt_break(struct mt *t, uint64_t ts, uint32_t vm);
/* End of input: every sample resolved, the last segments emitted, limits
 * set. 0 or -ENOMEM. */
int mt_finish(struct mt *t);

/* The limit of closed segment @i of @v when @next follows it (NULL:
 * none yet): the explicit break that ended it, else @next's first
 * sample, never before its own last sample. mt_finish sets each
 * segment's; the online merge asks before the next one is closed. */
uint64_t mt_limit(const struct mt_vm *v, size_t i, const struct vmscope_sync_segment *next);

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
