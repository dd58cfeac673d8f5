/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `vmscope record --metrics-fd FD --snapshot-dir DIR` (README.md,
 * "Snapshot windows"): the recording's last seconds kept in memory
 * (collector/snap_store.h), and a window written around each trigger
 * vmscoped admitted (collector/snap_write.h).
 *
 * The daemon admits a trigger by sending its frame back on FD (the
 * trigger frame the recorder sent, trigger_frame.h, parsed as any);
 * the window is then [start - before, start + duration + after] of host
 * time, written on the writer thread once the host buffers passed its
 * end by one interval (a quiet buffer's last sub-buffers may come that
 * late, live_order.h) and every guest CPU stream that sent anything
 * since the window began had a record placed past its end by the live
 * merge (ol_lsnap_guest), or OL_SNAP_GUEST_WAIT_NS later without them
 * (those streams counted as incomplete in the window's metadata), or at
 * the recording's end (then marked as ended early when it had not
 * reached the end). A guest chunk is the window's by its placed records'
 * host times (collector/snap_write.h). One window at a time: a trigger
 * admitted while one is being collected is said and not written (the
 * daemon's rate limit makes that rare: one per --trigger-interval).
 */
#ifndef VMSCOPE_ONLINE_LIVE_SNAP_H
#define VMSCOPE_ONLINE_LIVE_SNAP_H

#include <stdbool.h>
#include <stdint.h>

#include "trigger_frame.h"

struct rec_chunk;	/* record.h: not included, so vmscoped takes the defaults alone */

/* How long a trigger may take to come back admitted, in host time: the
 * store keeps before_ns + this (the interval, the live order's wait, the
 * daemon's poll); a later one's window starts where the store does. */
#define OL_SNAP_LAG_NS	(5000000000ull)

/* How long past the host's settling a window waits for the guests'
 * records of its last moments: an agent that could not run sends them
 * late (its vCPU taken, as a stall trigger says), and the live merge
 * holds a guest record until the host's records pass it (OL_LIVE_LAG_NS). */
#define OL_SNAP_GUEST_WAIT_NS	(3000000000ull)

#define OL_SNAP_DEFAULT_BEFORE_NS	(5000000000ull)
#define OL_SNAP_DEFAULT_AFTER_NS	(2000000000ull)
#define OL_SNAP_DEFAULT_CAP		(64ull << 20)

struct ol_snap_cfg {
	const char *dir;		/* where windows go; NULL: no snapshots */
	uint64_t before_ns, after_ns;
	uint64_t cap_bytes;		/* per stream */
};

struct ol_lsnap;

/* For the recording at @rec_path; @settle_ns: how far past its end host
 * time must be before a window is written. NULL: out of memory. */
struct ol_lsnap *ol_lsnap_open(const struct ol_snap_cfg *c, const char *rec_path,
			       uint64_t settle_ns);

/* Every item the writer thread dequeued; then a pending window written
 * when its time came. */
void ol_lsnap_add(struct ol_lsnap *s, const struct rec_chunk *c);

/* The live merge placed a record of VM @vm's guest CPU @cpu, read at
 * guest time @g, at host time @h (snap_store.h, sn_placed). */
void ol_lsnap_guest(struct ol_lsnap *s, uint32_t vm, uint32_t cpu, uint64_t g, uint64_t h);

/* The daemon admitted @t: collect its window. */
void ol_lsnap_request(struct ol_lsnap *s, const struct ol_trig *t);

/* The recording ended: a pending window written with what there is;
 * the totals said on stderr. 0, or 1 when a window failed (said). */
int ol_lsnap_close(struct ol_lsnap *s);

#endif
