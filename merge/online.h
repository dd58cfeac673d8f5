/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The online merge: a raw trace (what `vmscope record` writes) as one
 * timeline in host time in ONE streaming pass, where `vmscope merge` makes
 * two (merge.h). README.md, "The online merge".
 *
 * - Host records are taken in host-time order (a heap over the host
 *   streams, each read one record ahead, as pass 1 does) and go through
 *   pass 1's own sync handling (scan.h): the pairing, the TSC breaks, the
 *   per-VM sync library contexts, fed as they come.
 * - Guest records are read into a per-stream held queue (the pairing's
 *   pull reads the sync_guest records from it) and converted to host time
 *   once their clock segment reaches them: the first segment (closed, or
 *   the one being built) whose accepted samples span their guest time, so
 *   the bound there comes from samples on both sides of them. A guest
 *   record that would need more host records than the queues hold is
 *   converted with the segment it has (extrapolated; counted).
 * - Every record then goes through the ordering stage (wmerge.h) and
 *   comes out in (host time, stream) order, as pass 2's heap orders it.
 *
 * Memory: per stream @cap held records and @cap queued ones, the pairing's
 * and the transforms' fixed tables: not the trace's length.
 */
#ifndef VMSCOPE_MERGE_ONLINE_H
#define VMSCOPE_MERGE_ONLINE_H

#include "merge.h"
#include "out.h"
#include "vmscope/events.h"

struct om_opts {
	struct mg_opts m;	/* sync options, TSC breaks (spill_dir unused) */
	size_t cap;		/* records per queue; 0: OM_CAP */
};

#define OM_CAP 4096

/* A record of the merged timeline. */
struct om_rec {
	enum vr_item_kind kind;	/* VR_EVENT, VR_LOSS, VR_GAP */
	uint64_t ts;		/* host time */
	struct mo_origin o;	/* as the merged trace's ORIGINS (out.h) */
	const struct vmscope_event_desc *desc;	/* in its side's table */
	uint16_t size;
	uint8_t payload[VMSCOPE_MAX_PAYLOAD];
	uint64_t events;	/* VR_LOSS */
	int loss_kind;
	uint64_t first, last;	/* VR_GAP */
	/* guest records: the width of the bound where it was converted
	 * (hi - lo, ns), and whether it lay beyond the segment's samples */
	uint64_t bound_ns;
	bool extrapolated;
};

struct om_stats {
	uint64_t host, guest;		/* records put out */
	uint64_t extrapolated;		/* guest records beyond their segment's samples */
	uint64_t unconverted;		/* guest records of a VM without a segment: left out */
	uint64_t bad;			/* unusable records, counted (and damage) */
	uint64_t pull_full;		/* sync records the pairing could not reach */
	uint64_t late;			/* refused by the ordering stage */
	size_t peak_held;		/* most guest records held in one stream */
	size_t peak_queued;		/* most records queued in one stream */
	/* fed (om_live_*) */
	uint64_t gate_timeouts;		/* sync_t2 taken before its guest record came */
	uint64_t left_out;		/* guest records of a CPU beyond the streams */
};

struct om;

/* Start the online merge of @t. 0, or a negative errno with @err. */
int om_open(struct om **out, struct vr_trace *t, const struct om_opts *o, char *err,
	    size_t errlen);
/* The next record: 1; 0 at the end; a negative errno. */
int om_next(struct om *m, struct om_rec *r);
/* @r as the reader's item (ts: the host time; valid while @r is). */
void om_rec_item(const struct om_rec *r, struct vr_item *it);
/* The pairing's and the transforms' state (valid until om_close): after
 * the end, the same figures as `vmscope merge`'s pass 1. */
const struct mg_result *om_result(const struct om *m);
const struct om_stats *om_stats(const struct om *m);
void om_close(struct om *m);

/*
 * Fed by a live source instead of reading @t's streams (@t gives the
 * session: its VMs, vCPU threads, event tables): host records pushed in
 * host-time order (a live source orders its host buffers first), each
 * guest CPU's records in its own order, as they arrive; every record
 * comes out through @emit in the order om_next would give it, as soon as
 * nothing pushed later can precede it. A guest whose table @t has is
 * taken as connected from the start, its vCPUs as its CPUs; others
 * connect by om_live_guest_table. A host sync_t2 waits (up to
 * @lag_ns of host time) for its guest CPU's sync record, so the pairing
 * finds it; a connected guest CPU that delivers nothing is not waited for
 * once @lag_ns behind the newest host record, nor one whose guest is
 * gone; a record it then delivers below what was released is refused
 * (late). Guest CPUs at or above @guest_cpus are left out, counted.
 * Memory: om_open's, per stream; fixed here (a guest CPU's pages are
 * used once it delivers).
 */
typedef int om_emit_fn(void *ctx, const struct om_rec *r);
int om_live_open(struct om **out, struct vr_trace *t, const struct om_opts *o,
		 uint32_t guest_cpus, uint64_t lag_ns, om_emit_fn *emit, void *ctx,
		 char *err, size_t errlen);
/* A record of host CPU @cpu / of VM @vm's guest CPU @cpu (copied); what
 * can be released then is emitted. 0, @emit's non-zero, a negative errno;
 * om_live_guest: 1 when the CPU is left out. */
int om_live_host(struct om *m, uint32_t cpu, const struct vr_item *it);
int om_live_guest(struct om *m, uint32_t vm, uint32_t cpu, const struct vr_item *it);
/* The host will deliver no record below @ts (its source's ordering stage
 * released everything before it): the host's stream moves on to it when
 * no host record waits, and a quiet guest CPU is measured against it as
 * against a newest host record. What can be released then is emitted.
 * 0 or as om_live_host. */
int om_live_host_until(struct om *m, uint64_t ts);
/* Host time up to which every record was emitted (wm_frontier of the
 * merge's ordering stage); UINT64_MAX when nothing can still come. */
uint64_t om_live_frontier(const struct om *m);
/* VM @vm's guest connected: its event table as its agent's hello gave it
 * (@ev lives until om_close), its sync records found from now on; its
 * CPUs below @ncpus waited for (each until @lag_ns behind). */
void om_live_guest_table(struct om *m, uint32_t vm, const struct vr_events *ev,
			 uint32_t ncpus);
/* VM @vm's guest connection ended: what it delivered is converted as it
 * can be, nothing more is waited for. 0 or as om_live_host. */
int om_live_gone(struct om *m, uint32_t vm);
/* The sources ended: everything left is emitted. 0 or as om_live_host. */
int om_live_end(struct om *m);

#endif
