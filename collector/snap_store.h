/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A snapshot window's store (README.md, "Snapshot windows"): the last
 * seconds of every stream of a recording, as the writer thread dequeued
 * them (rec_chunk: host sub-buffers, guest CPUs' chunks and losses),
 * copied, so that a trigger can write them as a trace of their own
 * (snap_write.h). Bounded: a stream keeps at most cap_bytes (records and
 * a fixed cost per item), and no item older than keep_ns.
 *
 * Time is the host's: a host chunk is stamped with its end_ts; a guest
 * item (its clock is the guest's) with the host time the store had seen
 * when it came (the largest host end_ts so far), which is when the
 * recorder had it. A guest chunk's records, once the live merge placed
 * them on the host's clock (sn_placed), also give it the host times of
 * its first and last placed record: the window takes it by those.
 * Items of one stream are kept in the order they came,
 * so a stream's kept items are always its latest ones, without a hole:
 * eviction takes a stream's oldest first.
 *
 * One thread (the recorder's writer thread); no lock.
 */
#ifndef VMSCOPE_COLLECTOR_SNAP_STORE_H
#define VMSCOPE_COLLECTOR_SNAP_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record.h"

/* What an item costs beyond its records (its header, counted in the cap). */
#define SN_ITEM_COST	96u

struct sn_cfg {
	uint64_t keep_ns;	/* age: items stamped before now - keep_ns go */
	uint64_t cap_bytes;	/* per stream: its oldest go beyond this */
};

/* One kept item: a chunk or a guest loss (c.kind), c.data its own copy. */
struct sn_item {
	struct sn_item *next;
	uint64_t stamp;		/* host time, above */
	bool placed;		/* a guest chunk with records placed: */
	uint64_t h_lo, h_hi;	/* the host times of the first and last */
	struct rec_chunk c;
	uint8_t data[];
};

/* A stream: a host buffer (buf) or a guest CPU (vm, cpu). */
struct sn_stream {
	bool guest;
	uint32_t buf, chan, vm, cpu;
	struct sn_item *head, *tail;	/* oldest .. newest */
	struct sn_item *placing;	/* guest: where sn_placed is; NULL: head */
	uint64_t h_placed;		/* guest: the latest placed record's host time */
	uint64_t bytes, items;
	uint64_t evicted_age, evicted_cap;	/* items */
};

struct sn_store {
	struct sn_cfg cfg;
	uint64_t now;		/* the largest host end_ts seen */
	uint64_t hold_from;	/* items stamped at or after it are kept
				 * whatever their age (a window being
				 * collected); UINT64_MAX: none */
	struct sn_stream *s;
	size_t ns, caps;
	uint64_t bytes, peak_bytes;	/* all streams, as counted in the caps */
};

void sn_init(struct sn_store *st, const struct sn_cfg *cfg);
void sn_free(struct sn_store *st);

/* Keep a copy of @c (REC_TAP_CHUNK and REC_TAP_LOSS; any other kind is
 * ignored), then evict what is too old or over its stream's cap. 0, or
 * -ENOMEM (nothing kept of @c: the caller says the window is incomplete). */
int sn_add(struct sn_store *st, const struct rec_chunk *c);

/* The live merge placed the record of VM @vm's guest CPU @cpu read at
 * guest time @g at host time @h (in that stream's order): the chunk
 * holding it gets @h. */
void sn_placed(struct sn_store *st, uint32_t vm, uint32_t cpu, uint64_t g, uint64_t h);

/* Keep every item stamped at or after @from (UINT64_MAX: stop keeping). */
void sn_hold(struct sn_store *st, uint64_t from);

/* What an item counts in its stream's cap. */
uint64_t sn_item_cost(const struct sn_item *it);

#endif
