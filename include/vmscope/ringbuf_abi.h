/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Ring buffer ABI: what a reader finds in the memory of a per-CPU buffer.
 * Shared by the kernel modules (writers, reader-side get/put) and userspace
 * (decoder, collector). Only <linux/types.h> fixed-size types, so that 32-
 * and 64-bit readers see the same layout. All multi-byte fields are in the
 * writer's native byte order (little-endian on every target we support);
 * the trace metadata records the byte order once.
 *
 * ---------------------------------------------------------------------
 * Memory of one per-CPU buffer (N sub-buffers of S bytes, both powers of 2)
 *
 *   offset 0                     struct vmscope_rb_ctrl  (control area)
 *   offset ctrl_size             physical sub-buffer 0   (S bytes)
 *   ...                          physical sub-buffer N   (S bytes)
 *
 * ctrl_size = VMSCOPE_RB_CTRL_SIZE(N) rounded up to the page size, so a
 * module can allocate the whole thing with one vmalloc_user() and map the
 * control page(s) and the data separately, both read-only for userspace.
 * There are N+1 physical sub-buffers for N logical slots: the extra one is
 * always owned by the reader (see "reader protocol"), which is how a reader
 * in flight-recorder mode never sees a sub-buffer overwritten under it.
 * Userspace gets and puts sub-buffers through the control device (the
 * kernel runs the get/put code, which needs to write the slot table);
 * with the physical index it gets back, it reads the data in place.
 *
 * ---------------------------------------------------------------------
 * Record header: 8 bytes, 8-byte aligned
 *
 *   bits  0..31  ts_low   low 32 bits of the record's timestamp (ns)
 *   bits 32..46  id       event id (15 bits: 32767 event types)
 *   bit  47      EXT      a __u64 full timestamp follows the header
 *   bits 48..63  size     payload length in bytes (unpadded)
 *
 * then the payload, then padding to the next multiple of 8.
 *
 * Why this layout:
 *  - Every record starts 8-byte aligned and the header is 8 bytes, so any
 *    payload field of size <= 8 placed at its natural offset inside the
 *    payload struct is naturally aligned in the buffer; probes copy their
 *    payload struct with one memcpy and readers can overlay it directly.
 *    A 4-byte header would only save space for payloads made solely of
 *    <= 4-byte fields and would misalign every __u64 field otherwise.
 *  - 32 bits of nanoseconds cover 4.29 s between consecutive records of
 *    one per-CPU buffer; the full value is reconstructed from the previous
 *    record (or the sub-buffer's begin_ts for the first record):
 *        ts = prev + (__u32)(ts_low - (__u32)prev)
 *    When a writer cannot prove that the gap is below 2^32 ns it sets EXT
 *    and appends the full 64-bit timestamp (16-byte header). The proof
 *    uses a lower bound of the previous record's timestamp, so EXT is
 *    sometimes used when not strictly needed, never the other way round.
 *  - Each record, nested or not, carries its own timestamp read at
 *    reserve time; timestamps never decrease in buffer order (the writer
 *    reads the clock inside its reservation retry loop).
 *  - 16-bit size: a record must fit in a sub-buffer anyway; sub-buffers of
 *    more than 64 KiB are allowed but single records are capped at 64 KiB.
 *
 * ---------------------------------------------------------------------
 * Sub-buffer header: first 48 bytes of every sub-buffer
 *
 * seq          sequence number of the sub-buffer in this per-CPU buffer,
 *              0, 1, 2, ... without gaps on the writer side; a gap seen by
 *              a reader means sub-buffers were overwritten (flight mode).
 * begin_ts     timestamp of the first record (full 64 bits).
 * end_ts       timestamp read when the writer closed it: >= every record.
 * lost_before  cumulative events lost in this buffer (dropped when full,
 *              too big, or overwritten) when this sub-buffer was begun.
 *              Equal values in consecutive seqs prove nothing was lost
 *              between them.
 * data_size    bytes used including this header (<= sub-buffer size); the
 *              rest is padding.
 * magic        VMSCOPE_RB_SB_MAGIC, a cheap sanity check for readers.
 * records      number of records in it, written when it is delivered; the
 *              decoder checks it, and flight mode adds it to
 *              lost_overwritten when the sub-buffer is overwritten.
 */
#ifndef VMSCOPE_RINGBUF_ABI_H
#define VMSCOPE_RINGBUF_ABI_H

#include <linux/types.h>

#define VMSCOPE_RB_ABI_VERSION		1

#define VMSCOPE_RB_ALIGN		8
#define VMSCOPE_RB_REC_HDR_SIZE		8
#define VMSCOPE_RB_REC_EXT_SIZE		8	/* full timestamp after the header */

#define VMSCOPE_RB_REC_TS_MASK		0xffffffffull
#define VMSCOPE_RB_REC_ID_SHIFT		32
#define VMSCOPE_RB_REC_ID_MASK		0x7fffu
#define VMSCOPE_RB_REC_EXT_BIT		(1ull << 47)
#define VMSCOPE_RB_REC_SIZE_SHIFT	48
#define VMSCOPE_RB_REC_SIZE_MAX		0xffffu
#define VMSCOPE_RB_ID_MAX		VMSCOPE_RB_REC_ID_MASK

/* Encode a record header word (size = payload bytes). */
#define VMSCOPE_RB_REC_HDR(ts, id, size, ext)				\
	(((__u64)(ts) & VMSCOPE_RB_REC_TS_MASK) |			\
	 ((__u64)((id) & VMSCOPE_RB_REC_ID_MASK) << VMSCOPE_RB_REC_ID_SHIFT) | \
	 ((ext) ? VMSCOPE_RB_REC_EXT_BIT : 0) |				\
	 ((__u64)(size) << VMSCOPE_RB_REC_SIZE_SHIFT))
#define VMSCOPE_RB_REC_TS_LOW(h)	((__u32)((h) & VMSCOPE_RB_REC_TS_MASK))
#define VMSCOPE_RB_REC_ID(h)		((__u16)(((h) >> VMSCOPE_RB_REC_ID_SHIFT) & VMSCOPE_RB_REC_ID_MASK))
#define VMSCOPE_RB_REC_IS_EXT(h)	(((h) & VMSCOPE_RB_REC_EXT_BIT) != 0)
#define VMSCOPE_RB_REC_SIZE(h)		((__u16)((h) >> VMSCOPE_RB_REC_SIZE_SHIFT))

#define VMSCOPE_RB_SB_MAGIC		0x56534231u	/* "VSB1" */

struct vmscope_rb_subbuf_hdr {
	__u64 seq;
	__u64 begin_ts;
	__u64 end_ts;
	__u64 lost_before;
	__u32 data_size;
	__u32 magic;
	__u32 records;
	__u32 reserved;		/* keeps the first record 16-byte aligned */
};

#define VMSCOPE_RB_SB_HDR_SIZE		48

/*
 * Slot table entry (one per logical slot, in the control area):
 *
 *   bits  0..1   state: FREE, WRITING or DELIVERED
 *   bits  2..23  physical sub-buffer index (0..N)
 *   bits 24..63  tag: 1 + seq of the sub-buffer that last claimed the slot
 *                (0: never claimed)
 *
 * FREE: the physical sub-buffer holds nothing a reader still needs.
 * WRITING: writers of sequence tag-1 own it. DELIVERED: every byte of
 * sequence tag-1 is committed; the reader may swap it out for its spare.
 */
#define VMSCOPE_RB_SLOT_FREE		0u
#define VMSCOPE_RB_SLOT_WRITING		1u
#define VMSCOPE_RB_SLOT_DELIVERED	2u
#define VMSCOPE_RB_SLOT_STATE(e)	((unsigned int)((e) & 3u))
#define VMSCOPE_RB_SLOT_PHYS(e)		((unsigned int)(((e) >> 2) & 0x3fffffu))
#define VMSCOPE_RB_SLOT_TAG(e)		((e) >> 24)
#define VMSCOPE_RB_SLOT(tag, phys, state)				\
	(((__u64)(tag) << 24) | ((__u64)(phys) << 2) | (__u64)(state))
#define VMSCOPE_RB_PHYS_MAX		0x3fffffu

#define VMSCOPE_RB_MODE_DISCARD		0u
#define VMSCOPE_RB_MODE_FLIGHT		1u

/*
 * Control area of one per-CPU buffer. Cache-line separated: the writer's
 * hot words, the counters, and the slot and commit arrays.
 */
struct vmscope_rb_ctrl {
	/* static description, written once at init */
	__u32 abi_version;	/* VMSCOPE_RB_ABI_VERSION */
	__u32 mode;		/* VMSCOPE_RB_MODE_* */
	__u32 subbuf_shift;	/* sub-buffer size = 1 << subbuf_shift */
	__u32 nr_subbuf_shift;	/* N = 1 << nr_subbuf_shift logical slots */
	__u32 cpu;
	__u32 ctrl_size;	/* bytes before physical sub-buffer 0 */
	__u64 reserved0[5];

	/* writer state: free-running byte position of the next reservation */
	__u64 offset;
	__u64 last_ts;		/* lower bound of the newest record's ts */
	__u64 reserved1[6];

	/* loss counters (events), cumulative since init */
	/* discard mode: buffer full; either mode: slot still being written
	 * after a wrap
	 */
	__u64 lost_full;
	__u64 lost_too_big;	/* record larger than a sub-buffer */
	__u64 lost_overwritten;	/* flight mode: events in overwritten sub-buffers */
	__u64 subbufs_overwritten;
	__u64 subbufs_delivered;
	__u64 wakeup_pending;	/* set on delivery, cleared by the waker */
	__u64 reserved2[2];

	/*
	 * followed by slot[N] then commit[N]: per slot, for the lap being
	 * written, committed bytes (bits 0..31) and committed records (bits
	 * 32..63). One add per commit updates both; the lap is complete when
	 * the bytes reach the sub-buffer size, and the completing writer
	 * resets the word to 0 before it delivers, so neither half overflows.
	 */
	__u64 slots[];
};

#define VMSCOPE_RB_COMMIT_REC		(1ull << 32)	/* one record */

#define VMSCOPE_RB_CTRL_SIZE(n)	(sizeof(struct vmscope_rb_ctrl) + 2 * (n) * sizeof(__u64))

#endif /* VMSCOPE_RINGBUF_ABI_H */
