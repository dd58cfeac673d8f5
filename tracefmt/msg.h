/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Protobuf payloads of frames: which message each frame type carries,
 * packing into a writer without a copy, and decoding hostile payloads
 * with bounded memory plus the semantic checks protobuf cannot express.
 */
#ifndef VMSCOPE_TRACEFMT_MSG_H
#define VMSCOPE_TRACEFMT_MSG_H

#include <stddef.h>
#include <stdint.h>
#include <protobuf-c/protobuf-c.h>

#include "writer.h"

/* Descriptor of the message a frame type carries; NULL for other types. */
const ProtobufCMessageDescriptor *tf_msg_descriptor(uint16_t type);

/* Pack m into a frame of the given type. 0 or negative errno (-EINVAL if
 * m is not the type's message). */
int tf_writer_append_msg(struct tf_writer *w, uint16_t type, const ProtobufCMessage *m);

/*
 * What decoding a payload of @len bytes of frame type @type may allocate:
 * what such a frame can honestly hold, so that a hostile payload cannot
 * make the decoder allocate much (protobuf-c allocates a whole struct,
 * ~100 bytes, per 2-byte empty sub-message). 1 MiB plus, per payload
 * byte: 2 for a chunk (its records are copied once), 32 for the rest (an
 * honest entry of a few bytes, e.g. an idle stream's StreamStats, decodes
 * to ~33 times its size); metadata frames (session, statistics, summary)
 * at most TF_MSG_META_BUDGET, more than an honest one needs (1024 events
 * per table, 65536 streams): a 64 MiB frame of empty entries no longer
 * costs a gigabyte.
 */
#define TF_MSG_META_BUDGET	((size_t)64 << 20)
size_t tf_msg_budget(uint16_t type, size_t len);

/*
 * Decode the payload of a frame of the given type. The decoder may
 * allocate at most budget bytes in total (0: tf_msg_budget()). Then runs
 * tf_msg_check(). Returns 0 and *out, or -ENOENT (not a message type),
 * -EBADMSG (undecodable or over budget), -EINVAL (semantic check failed);
 * err, if not NULL, gets a reason.
 */
int tf_msg_decode(uint16_t type, const uint8_t *data, size_t len, size_t budget,
		  ProtobufCMessage **out, char *err, size_t errlen);

/*
 * A whole frame (header + packed m) in memory, for streams: the guest
 * agent's socket, tests. tf_msg_frame_size() is the bytes it needs;
 * tf_msg_frame_encode() fills out[0..size) and returns the size, or 0 if m
 * is not the type's message or too long for a frame.
 */
size_t tf_msg_frame_size(const ProtobufCMessage *m);
size_t tf_msg_frame_encode(uint16_t type, uint32_t seq, const ProtobufCMessage *m,
			   uint8_t *out);

/* Free a message from tf_msg_decode(). */
void tf_msg_free(ProtobufCMessage *m);

/*
 * Checks beyond the wire format that every reader relies on: enums in
 * range, parallel columns of equal length, UUIDs of 16 bytes, clock
 * divisors non-zero, fields inside their event's payload, chunk records
 * that tile the records bytes exactly (ring buffer ABI). 0 or -EINVAL.
 */
int tf_msg_check(uint16_t type, const ProtobufCMessage *m, char *err, size_t errlen);

#endif
