/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Room held back in the trace's folder for the recorder's final frames.
 *
 * A recording that fills its disk stops when a stream's write fails; the
 * metadata's last SessionMetadata, Statistics and Summary must still reach
 * the file, or the trace reads like one whose recorder was killed and its
 * lost writes go unsaid. The recorder keeps a file of allocated blocks,
 * REC_RESERVE_NAME, as large as those frames can be, and removes it just
 * before writing them. Readers take only *.vtf files, so a reserve left by
 * a killed recorder is ignored.
 */
#ifndef VMSCOPE_COLLECTOR_RESERVE_H
#define VMSCOPE_COLLECTOR_RESERVE_H

#include <stdint.h>

#define REC_RESERVE_NAME ".vmscope-reserve"

/* Bytes the final frames can take at most, per stream they may list. */
#define REC_RESERVE_PER_STREAM 1024u
/* Headroom beyond twice the last SessionMetadata and the per-stream part. */
#define REC_RESERVE_BASE (64u << 10)

struct rec_reserve {
	int dirfd;		/* the trace folder; -1: nothing held */
	uint64_t bytes;		/* allocated in the reserve file */
};

/*
 * The bytes to hold for a recording of at most @max_streams streams whose
 * last SessionMetadata took @session_bytes: the final one repeats it with
 * a few more fields (twice leaves room for a guest's hello still to come),
 * Statistics and Summary list every stream.
 */
uint64_t rec_reserve_need(uint64_t session_bytes, unsigned int max_streams);

/*
 * Hold at least @bytes in @dirfd (create the file, or grow it). 0, or a
 * negative errno (-ENOSPC: the disk is already too full); what was held
 * before stays held.
 */
int rec_reserve_hold(struct rec_reserve *rs, int dirfd, uint64_t bytes);

/* Give the room back for the final frames; 0 or a negative errno. */
int rec_reserve_release(struct rec_reserve *rs);

#endif
