/* SPDX-License-Identifier: GPL-2.0 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vmscope/ringbuf_abi.h>

#include "common.pb-c.h"
#include "file.pb-c.h"
#include "guest.pb-c.h"
#include "session.pb-c.h"
#include "stream.pb-c.h"

#include "crc32c.h"
#include "frame.h"
#include "msg.h"

const ProtobufCMessageDescriptor *tf_msg_descriptor(uint16_t type)
{
	switch (type) {
	case TF_FRAME_FILE_HEADER:	return &vmscope__trace__file_header__descriptor;
	case TF_FRAME_SESSION:		return &vmscope__trace__session_metadata__descriptor;
	case TF_FRAME_CHUNK:		return &vmscope__trace__stream_chunk__descriptor;
	case TF_FRAME_LOSS:		return &vmscope__trace__loss_record__descriptor;
	case TF_FRAME_STATS:		return &vmscope__trace__statistics__descriptor;
	case TF_FRAME_INDEX:		return &vmscope__trace__file_index__descriptor;
	case TF_FRAME_SUMMARY:		return &vmscope__trace__summary__descriptor;
	case TF_FRAME_GUEST_HELLO:	return &vmscope__trace__guest_hello__descriptor;
	}
	return NULL;
}

int tf_writer_append_msg(struct tf_writer *w, uint16_t type, const ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor *d = tf_msg_descriptor(type);
	size_t len;
	uint8_t *p;
	int err;

	if (!d || m->descriptor != d)
		return -EINVAL;
	len = protobuf_c_message_get_packed_size(m);
	p = tf_writer_reserve(w, len, &err);
	if (!p)
		return err;
	protobuf_c_message_pack(m, p);
	return tf_writer_commit(w, type);
}

size_t tf_msg_frame_size(const ProtobufCMessage *m)
{
	return TF_FRAME_HDR_SIZE + protobuf_c_message_get_packed_size(m);
}

size_t tf_msg_frame_encode(uint16_t type, uint32_t seq, const ProtobufCMessage *m,
			   uint8_t *out)
{
	const ProtobufCMessageDescriptor *d = tf_msg_descriptor(type);
	struct tf_frame_hdr h = { .type = type, .seq = seq };
	size_t len;

	if (!d || m->descriptor != d)
		return 0;
	len = protobuf_c_message_pack(m, out + TF_FRAME_HDR_SIZE);
	if (len > TF_FRAME_MAX_PAYLOAD)
		return 0;
	h.length = (uint32_t)len;
	h.payload_crc = tf_crc32c(0, out + TF_FRAME_HDR_SIZE, len);
	tf_frame_hdr_encode(&h, out);
	return TF_FRAME_HDR_SIZE + len;
}

/* ---- budgeted allocator ---- */

struct budget {
	size_t used, limit;
};

/*
 * Every block has a 16-byte prefix (keeps malloc's alignment for what
 * follows): its size, for the budget on free, then, in the message's own
 * block only, a pointer to the owning allocator, so that tf_msg_free()
 * needs nothing but the message.
 */
#define PREFIX 16
_Static_assert(sizeof(size_t) + sizeof(void *) <= PREFIX, "prefix too small");

static void *budget_alloc(void *data, size_t size)
{
	struct budget *b = data;
	uint8_t *p;

	if (size > b->limit - b->used || PREFIX > b->limit - b->used - size)
		return NULL;
	p = malloc(PREFIX + size);
	if (!p)
		return NULL;
	memcpy(p, &size, sizeof(size));
	b->used += PREFIX + size;
	return p + PREFIX;
}

static void budget_free(void *data, void *ptr)
{
	struct budget *b = data;
	uint8_t *p = ptr;
	size_t size;

	if (!p)
		return;
	p -= PREFIX;
	memcpy(&size, p, sizeof(size));
	b->used -= PREFIX + size;
	free(p);
}

/* The allocator travels with the message so tf_msg_free() can find it. */
struct owned {
	struct budget b;
	ProtobufCAllocator a;
	ProtobufCMessage *m;
};

static void errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

size_t tf_msg_budget(uint16_t type, size_t len)
{
	size_t b = ((size_t)1 << 20) + (type == TF_FRAME_CHUNK ? 2 : 32) * len;

	if ((type == TF_FRAME_SESSION || type == TF_FRAME_STATS || type == TF_FRAME_SUMMARY) &&
	    b > TF_MSG_META_BUDGET)
		return TF_MSG_META_BUDGET;
	return b;
}

int tf_msg_decode(uint16_t type, const uint8_t *data, size_t len, size_t budget,
		  ProtobufCMessage **out, char *err, size_t errlen)
{
	const ProtobufCMessageDescriptor *d = tf_msg_descriptor(type);
	struct owned *o;
	int e;

	*out = NULL;
	if (!d) {
		errf(err, errlen, "frame type %u carries no message", type);
		return -ENOENT;
	}
	o = malloc(sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->b.used = 0;
	o->b.limit = budget ? budget : tf_msg_budget(type, len);
	o->a.alloc = budget_alloc;
	o->a.free = budget_free;
	o->a.allocator_data = &o->b;
	o->m = protobuf_c_message_unpack(d, &o->a, len, data);
	if (!o->m) {
		errf(err, errlen, "%s: undecodable or above the %zu-byte budget",
		     d->name, o->b.limit);
		free(o);
		return -EBADMSG;
	}
	e = tf_msg_check(type, o->m, err, errlen);
	if (e) {
		protobuf_c_message_free_unpacked(o->m, &o->a);
		free(o);
		return e;
	}
	/* protobuf-c allocates the top struct itself through us: its
	 * prefix has room for the owner. */
	memcpy((uint8_t *)o->m - PREFIX + sizeof(size_t), &o, sizeof(o));
	*out = o->m;
	return 0;
}

void tf_msg_free(ProtobufCMessage *m)
{
	struct owned *o;

	if (!m)
		return;
	memcpy(&o, (uint8_t *)m - PREFIX + sizeof(size_t), sizeof(o));
	protobuf_c_message_free_unpacked(m, &o->a);
	free(o);
}
