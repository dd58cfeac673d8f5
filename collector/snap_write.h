/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A snapshot window written as a trace (README.md, "Snapshot windows"):
 * the items of a store (snap_store.h) in [begin_ts, end_ts] of host time,
 * with the recording's metadata and the trigger, as a trace folder that
 * `merge`, `report` and `dump` read as they read a recording:
 *
 *   DIR/.TIME/      written: metadata.vtf (FileHeader, the recording's
 *                   latest SessionMetadata with its `snapshot`, Statistics,
 *                   Summary), one file per stream with items in the window
 *                   (FileHeader with its cut, chunks and guest losses in
 *                   order, FileIndex), every file fsynced
 *   DIR/TIME/       renamed when complete (TIME: UTC, YYYYmmddTHHMMSSZ,
 *                   -2, -3 .. when taken), DIR fsynced
 *
 * A guest chunk is in the window when the host times of its placed
 * records (snap_store.h) meet [begin_ts, end_ts], or, not placed, when
 * its stamp lies in it; a guest loss next to a chunk in the window is
 * the window's (it may be of records there: counted rather than left
 * out), any other item by its stamp.
 *
 * Each stream's first chunk in the window is its cut (FileHeader.cut):
 * the sub-buffers skipped and the ring's losses before it belong to the
 * time before the window, so readers count neither; those after it, in
 * the window, are counted as in any recording.
 */
#ifndef VMSCOPE_COLLECTOR_SNAP_WRITE_H
#define VMSCOPE_COLLECTOR_SNAP_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snap_store.h"

/* The trigger and the span (SessionMetadata.snapshot, session.proto). */
struct sn_window {
	const char *kind, *what, *task, *host_task;
	uint64_t dur_ns, threshold_ns, trigger_ts;
	uint32_t vcpu;
	uint64_t begin_ts, end_ts;
	bool ended_early;
	/* said in the metadata: guest CPU streams whose records past end_ts
	 * had not been placed when the window was written (it may lack
	 * their last ones: the caller's count); and those with a chunk
	 * taken by its arrival, its records not placed (sn_write's) */
	uint32_t guest_incomplete, guest_by_arrival;
};

/*
 * Write @st's items of @w's span as a trace under @dir (created if need
 * be), the metadata taken from the recording at @rec_path (its latest
 * whole SessionMetadata; the recording is still being written);
 * @w->guest_by_arrival counted here. 0 and
 * the trace's path in @out, or -errno with the reason in @err (nothing
 * left but a `.TIME` folder the caller's quota does not count).
 */
int sn_write(const struct sn_store *st, const char *rec_path, struct sn_window *w,
	     const char *dir, char *out, size_t outlen, char *err, size_t errlen);

#endif
