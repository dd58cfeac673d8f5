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

#endif
