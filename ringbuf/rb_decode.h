/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Reader-side decoder of one sub-buffer. The input may come from a hostile
 * guest (copied over vsock), so every length is checked against the bytes
 * actually present and every load goes through memcpy (no alignment
 * assumption about the caller's copy).
 */
#ifndef VMSCOPE_RB_DECODE_H
#define VMSCOPE_RB_DECODE_H

#include <stddef.h>
#include <stdint.h>
#include <vmscope/ringbuf_abi.h>

struct vmscope_rb_rec {
	uint64_t ts;		/* full reconstructed timestamp */
	uint16_t id;
	uint16_t size;		/* payload bytes */
	const uint8_t *payload;
	uint32_t offset;	/* of the record header in the sub-buffer */
};

struct vmscope_rb_iter {
	const uint8_t *base;
	uint32_t end;		/* data_size */
	uint32_t off;
	uint64_t prev_ts;
	uint32_t count;		/* records returned so far */
	uint32_t uncounted;	/* no record count to check at the end */
	struct vmscope_rb_subbuf_hdr hdr;
};

/* Decoded errors (returned negated). */
enum vmscope_rb_decode_err {
	VMSCOPE_RB_ERR_SHORT = 1,	/* smaller than a sub-buffer header */
	VMSCOPE_RB_ERR_MAGIC,
	VMSCOPE_RB_ERR_SIZE,		/* data_size outside [hdr, len] or unaligned */
	VMSCOPE_RB_ERR_TRUNC,		/* record runs past data_size */
	VMSCOPE_RB_ERR_TIME,		/* timestamps out of order / past end_ts */
	VMSCOPE_RB_ERR_COUNT,		/* record count differs from the header's */
};

/* Validate the header; 0 or -VMSCOPE_RB_ERR_*. */
int vmscope_rb_iter_init(struct vmscope_rb_iter *it, const void *sb, size_t len);

/*
 * Iterate records stored without their sub-buffer header (a trace's
 * StreamChunk keeps the header's facts as fields): len bytes of records
 * at recs, first record relative to begin_ts, none after end_ts, and
 * nr_records of them (the end check is skipped when nr_records is 0,
 * "not counted"). 0 or -VMSCOPE_RB_ERR_SIZE / _TIME.
 */
int vmscope_rb_iter_init_records(struct vmscope_rb_iter *it, const void *recs,
				 size_t len, uint64_t begin_ts, uint64_t end_ts,
				 uint32_t nr_records);

/* 1: *rec filled; 0: end of data; -VMSCOPE_RB_ERR_*: malformed (stop). */
int vmscope_rb_iter_next(struct vmscope_rb_iter *it, struct vmscope_rb_rec *rec);

/*
 * The inverse, for userspace writers of records (merge's output, the
 * tests): one record at @buf (room for 16 + @size + 7 bytes), the full
 * timestamp added when @ts is 2^32 ns or more after @prev_ts (the decoder
 * rebuilds ts from the previous one's low 32 bits otherwise). Returns its
 * length, padding included.
 */
size_t vmscope_rb_rec_encode(uint8_t *buf, uint64_t prev_ts, uint64_t ts, unsigned int id,
			     const void *payload, uint16_t size);

#endif
