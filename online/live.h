/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pipeline's live host source (`vmscope top --pid`): the host module's
 * ring buffers read as `vmscope record` reads them (collector/record.h:
 * its session, one reader thread per buffer, one bounded queue), the
 * writer thread handing each sub-buffer to the ordering stage
 * (live_order.h) instead of a file, and the released records, decoded
 * through the module's descriptors as the recording's metadata stores
 * them, through the walk (analysis/walk.h, an_walk_feed) into the
 * windows (pipe.h). README.md, "Live sources".
 *
 * The session VMs' guest agents are taken as record takes them (vsock,
 * only their CIDs): each guest CPU's sub-buffers decoded, and merged with
 * the host's records by the online merge fed (merge/online.h, om_live_*);
 * a VM whose agent has not connected has "no agent" in its guest columns.
 * Without a trace folder (rec_opts.path NULL) the recording's
 * metadata (and nothing else) is written to a private folder under
 * $TMPDIR (or /tmp), removed at the end; with one (`top -o TRACE`), the
 * whole recording `vmscope record` makes is written there and kept. The
 * walk reads the session and the event tables from its metadata as it
 * reads a trace's.
 */
#ifndef VMSCOPE_ONLINE_LIVE_H
#define VMSCOPE_ONLINE_LIVE_H

#include <signal.h>
#include <stddef.h>

#include "pipe.h"
#include "record.h"

/* Records queued per host buffer by the ordering stage: a budget over all
 * buffers, and its bounds per buffer. */
#define OL_LIVE_QUEUE_BYTES	(64u << 20)
#define OL_LIVE_CAP_MIN		4096u
#define OL_LIVE_CAP_MAX		65536u
/* A quiet buffer is not waited for once the newest record is this far
 * ahead of it: the module's flush timer (VMSCOPE_SESSION_FLUSH_MS_DEF,
 * 200 ms) hands a partly filled sub-buffer to the reader well within it. */
#define OL_LIVE_LAG_NS		1000000000ull
/* The online merge's queues (records of 184 bytes): the host's, before
 * and after the sync handling, and each guest CPU's, held and ordered;
 * guest CPUs at or above OL_LIVE_GUEST_CPUS are left out (counted). */
#define OL_LIVE_MERGE_CAP	32768u
#define OL_LIVE_GUEST_CPUS	16u

/*
 * Run the host's session through the pipeline until *@stop, the
 * duration in @ro or the view's quit; the last interval is shown then.
 * @h: hb_init'ed with the wished geometry (h->cfg), as for rec_run; @ro:
 * the processes, events and duration, and the trace folder to write
 * (path; NULL: none kept); its tap is this function's. 0; 1 when the
 * recording failed (said on stderr) or saw no record (@err says so); a
 * negative errno (@err says why).
 */
int ol_live(struct hb *h, const struct rec_opts *ro, const struct ol_opts *o,
	    volatile sig_atomic_t *stop, char *err, size_t errlen);

/*
 * ol_live's parts, for a test that feeds the sub-buffers of a recorded
 * trace without the module: the pipeline over the recording whose
 * metadata is at @path, @h giving only the buffers (nbuf, map); each
 * sub-buffer through ol_live_tap (the recorder's tap, in each buffer's
 * order); ol_live_close with the recording's status @rc (0 or 1) ends
 * it (the last interval shown) and frees it, returning as ol_live.
 */
struct live;
struct live *ol_live_open(struct hb *h, const char *path, const struct ol_opts *o);
int ol_live_tap(void *live, const struct rec_chunk *c);
int ol_live_close(struct live *l, int rc, char *err, size_t errlen);

/* Each guest record the online merge places: its VM, guest CPU, own
 * time and host time, in the merged order (on the thread that feeds @l).
 * For the snapshot windows (live_snap.h). */
typedef void ol_guest_placed_fn(void *ctx, uint32_t vm, uint32_t cpu, uint64_t g, uint64_t h);
void ol_live_on_guest(struct live *l, ol_guest_placed_fn *fn, void *ctx);

/* Events lost so far: the ring buffers' losses and the records refused as
 * too late to order (live_order.h), for a view during the run (it runs
 * on the thread that feeds @l). */
uint64_t ol_live_lost(const struct live *l);

/* VM @vm's clock alignment now: the width (hi - lo, ns: `merge`'s
 * "bound") of the bound its latest guest record merged was converted
 * with (merge/online.h, om_rec.bound_ns). false while there is none: no
 * guest record merged yet (no agent, or no clock sample), or that bound
 * was unbounded, or its agent is gone (until its next hello). Same
 * thread as ol_live_lost. */
bool ol_live_bound(const struct live *l, uint32_t vm, uint64_t *ns);

#endif
