/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Frame layout of vmscope trace files. Every file is a sequence of frames:
 *
 *   off size
 *    0   4   magic        "VMSF" (bytes 56 4d 53 46)
 *    4   2   type         enum tf_frame_type
 *    6   2   flags        0; a reader rejects anything else (future use)
 *    8   4   length       payload bytes, <= TF_FRAME_MAX_PAYLOAD
 *   12   4   seq          index of this frame in its file: 0, 1, 2, ...
 *   16   4   payload_crc  CRC32C of the payload
 *   20   4   header_crc   CRC32C of bytes 0..19
 *   24       payload      a protobuf message (types < TF_FRAME_RAW) or raw
 *
 * All integers little-endian, whatever the host. See tracefmt/README.md
 * for why the header has its own CRC.
 */
#ifndef VMSCOPE_TRACEFMT_FRAME_H
#define VMSCOPE_TRACEFMT_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define TF_FRAME_MAGIC		0x46534d56u	/* "VMSF" read as LE u32 */
#define TF_FRAME_HDR_SIZE	24u
#define TF_FRAME_MAX_PAYLOAD	(64u << 20)	/* 64 MiB */

enum tf_frame_type {
	TF_FRAME_FILE_HEADER	= 1,	/* vmscope.trace.FileHeader */
	TF_FRAME_SESSION	= 2,	/* vmscope.trace.SessionMetadata */
	TF_FRAME_CHUNK		= 3,	/* vmscope.trace.StreamChunk */
	/* 4: never written by any vmscope, and never to be used (readers skip
	 * it as a type they do not know) */
	TF_FRAME_LOSS		= 5,	/* vmscope.trace.LossRecord */
	TF_FRAME_STATS		= 6,	/* vmscope.trace.Statistics */
	TF_FRAME_INDEX		= 7,	/* vmscope.trace.FileIndex */
	TF_FRAME_SUMMARY	= 8,	/* vmscope.trace.Summary */
	TF_FRAME_GUEST_HELLO	= 9,	/* vmscope.trace.GuestHello (guest stream) */
	TF_FRAME_MSG_LAST	= TF_FRAME_GUEST_HELLO,
	/* >= TF_FRAME_RAW: opaque bytes; readers skip types they do not know */
	TF_FRAME_RAW		= 0x8000,
};

struct tf_frame_hdr {
	uint16_t type;
	uint16_t flags;
	uint32_t length;
	uint32_t seq;
	uint32_t payload_crc;
};

/* Serialise h into out[TF_FRAME_HDR_SIZE], computing header_crc. */
void tf_frame_hdr_encode(const struct tf_frame_hdr *h, uint8_t *out);

enum tf_hdr_check {
	TF_HDR_OK = 0,
	TF_HDR_BAD_MAGIC,
	TF_HDR_BAD_CRC,
	TF_HDR_BAD_FLAGS,
	TF_HDR_TOO_LONG,
};

/* Parse and verify 24 bytes; fills h only when TF_HDR_OK. */
enum tf_hdr_check tf_frame_hdr_decode(const uint8_t *in, struct tf_frame_hdr *h);

const char *tf_hdr_check_str(enum tf_hdr_check c);

#endif
