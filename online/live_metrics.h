/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `vmscope record --metrics-fd FD` (README.md, "Metrics"): the recording's
 * host sub-buffers also go through the live pipeline of `top --pid`
 * (live.h), and once per second of host time the cumulative window's
 * snapshot of the recorded VM (metrics.h) is sent on FD, a SOCK_SEQPACKET
 * socket (vmscoped's end of a socketpair), one frame per message.
 *
 * The recording comes first: a send that would block drops that snapshot
 * (the next one is cumulative, nothing is lost but freshness); a peer
 * that is gone, or a pipeline that fails, ends the metrics (said once on
 * stderr, FD closed) and never the recording.
 */
#ifndef VMSCOPE_ONLINE_LIVE_METRICS_H
#define VMSCOPE_ONLINE_LIVE_METRICS_H

#include "live_snap.h"
#include "record.h"
#include "trigger.h"

#define OL_MX_INTERVAL_NS 1000000000ull

struct ol_mfeed;

/* The feed for the recording at @path (its folder: the pipeline reads its
 * metadata once it is written) on socket @fd (taken: closed by
 * ol_mfeed_close), a snapshot every @interval_ns of host time
 * (OL_MX_INTERVAL_NS; a test takes less), and after it a trigger frame
 * (trigger_frame.h) for what of that interval crossed @tc's thresholds
 * (trigger.h; NULL or zeros: none); with @sc's dir, the snapshot
 * windows of the triggers the daemon sends back (live_snap.h; NULL: none).
 * NULL: out of memory. */
struct ol_mfeed *ol_mfeed_open(struct hb *h, const char *path, int fd, uint64_t interval_ns,
			       const struct ol_trig_cfg *tc, const struct ol_snap_cfg *sc);

/* The recorder's tap (rec_opts.tap, ctx = the feed): never stops it. */
int ol_mfeed_tap(void *ctx, const struct rec_chunk *c);

/* After the recording (its status @rc): the last snapshot sent (final),
 * the socket closed, the feed freed. 0, or 1 when the metrics ended
 * early or the pipeline failed (said on stderr). */
int ol_mfeed_close(struct ol_mfeed *f, int rc);

#endif
