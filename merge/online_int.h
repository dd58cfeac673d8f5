/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The online merge's state, shared by its two drivers: online.c reads a
 * raw trace's streams (om_open, om_next), online_live.c is fed records as
 * a live source gets them (om_live_*). Not an API.
 */
#ifndef VMSCOPE_MERGE_ONLINE_INT_H
#define VMSCOPE_MERGE_ONLINE_INT_H

#include "heap.h"
#include "online.h"
#include "scan.h"
#include "wmerge.h"

/* Sync records released before the pairing asked for them (their segment
 * reached them through another CPU's exchanges): kept for its pull. */
#define OM_EARLY 64

struct ostream {
	struct vr_stream *s;	/* NULL: fed (online_live.c) */
	bool guest, ended;	/* ended: its reader has nothing more */
	uint32_t vm, cpu;
	struct vr_item it;	/* host: the record read ahead */
	/* guest: records read, not yet converted (ring of cap) */
	struct om_rec *held;
	size_t head, n, pulled;	/* pulled: of them, looked at by the pairing */
	struct mp_guest early[OM_EARLY];
	size_t e_head, e_n;
	int32_t tid;		/* guest: its thread (sched_switch) */
	/* fed: the guest's connection delivers it; the highest sync seq
	 * it delivered (the pairing finds that exchange's record held) */
	bool connected, any_seq;
	uint64_t seq;
};

struct om {
	struct mg_scan b;	/* first: the pairing's user pointer */
	struct mg_result r;
	size_t cap;
	struct ostream *s;
	size_t n;
	uint32_t **gsrc;	/* [vm][cpu]: 1 + index of that guest stream */
	struct mh host;		/* host streams by the record read ahead */
	struct wm wm;
	struct om_stats st;
	bool finished;		/* the host side ended: segments final */
	/* fed: stream 0 the host's records in host-time order, 1 + vm *
	 * gcpus + cpu each guest CPU's; host records wait in pre until
	 * the sync handling may take them (online_live.c) */
	bool live;
	uint32_t gcpus;
	uint64_t lag_ns;
	struct om_rec *pre;	/* ring [cap] */
	size_t pre_head, pre_n;
	bool any_host, input_ended;
	uint64_t first_host, newest;	/* the first and newest host record's time */
	om_emit_fn *emit;
	void *ctx;
};

void om_as_item(const struct om_rec *r, struct vr_item *it);
void om_to_rec(const struct vr_item *it, struct om_rec *r);
/* The pairing's pull (mp_pull_fn) over the guest streams' held records. */
int om_pull(void *user, uint32_t vm, uint32_t cpu, struct mp_guest *out);
/* Convert guest stream @i's first held record and queue it: 0 done (or
 * left out), 1 when it waits for a later sample (only without @force),
 * a negative errno. */
int om_convert(struct om *m, size_t i, bool force);
/* The host side ended: every sample resolved, the segments final. */
void om_finish(struct om *m);

#endif
