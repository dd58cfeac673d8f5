/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Semantic checks of decoded messages (tf_msg_check). protobuf-c verifies
 * the wire format only; a trace comes partly from guests, so everything a
 * reader indexes with or loops over is verified here, once, and code that
 * consumes a checked message may rely on it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <vmscope/ringbuf_abi.h>

#include "common.pb-c.h"
#include "file.pb-c.h"
#include "guest.pb-c.h"
#include "session.pb-c.h"
#include "stream.pb-c.h"

#include "frame.h"
#include "gsym.h"
#include "msg.h"

struct ctx {
	char *err;
	size_t errlen;
};

static int bad(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	if (c->err && c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err, c->errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* An origin is optional in general; when present it must make sense. */
static int check_origin(struct ctx *c, const Vmscope__Trace__Origin *o, int required)
{
	if (!o)
		return required ? bad(c, "origin missing") : 0;
	if (o->side != VMSCOPE__TRACE__SIDE__SIDE_HOST &&
	    o->side != VMSCOPE__TRACE__SIDE__SIDE_GUEST)
		return bad(c, "origin side %d invalid", (int)o->side);
	return 0;
}

static int check_uuid(struct ctx *c, const ProtobufCBinaryData *u, const char *what)
{
	if (u->len != 0 && u->len != 16)
		return bad(c, "%s of %zu bytes (0 or 16)", what, u->len);
	return 0;
}

static int check_clock(struct ctx *c, const Vmscope__Trace__ClockDesc *k)
{
	if (!k)
		return 0;
	if (k->ns_div == 0)
		return bad(c, "clock %s: ns_div 0", k->name);
	if (k->byte_order != VMSCOPE__TRACE__BYTE_ORDER__BYTE_ORDER_LITTLE &&
	    k->byte_order != VMSCOPE__TRACE__BYTE_ORDER__BYTE_ORDER_BIG)
		return bad(c, "clock %s: byte order %d", k->name, (int)k->byte_order);
	return 0;
}

static int check_events(struct ctx *c, const Vmscope__Trace__EventTable *t)
{
	if (!t)
		return 0;
	if (check_origin(c, t->origin, 0))
		return -EINVAL;
	for (size_t i = 0; i < t->n_events; i++) {
		const Vmscope__Trace__EventDesc *e = t->events[i];

		if (e->id > VMSCOPE_RB_ID_MAX)
			return bad(c, "event %s: id %u above %u", e->name, e->id,
				   VMSCOPE_RB_ID_MAX);
		if (e->payload_size > VMSCOPE_RB_REC_SIZE_MAX)
			return bad(c, "event %s: payload %u bytes", e->name, e->payload_size);
		for (size_t j = 0; j < i; j++)
			if (t->events[j]->id == e->id)
				return bad(c, "event id %u twice", e->id);
		for (size_t k = 0; k < e->n_fields; k++) {
			const Vmscope__Trace__FieldDesc *f = e->fields[k];

			if (f->type < VMSCOPE__TRACE__FIELD_TYPE__FIELD_TYPE_U8 ||
			    f->type > VMSCOPE__TRACE__FIELD_TYPE__FIELD_TYPE_S16)
				return bad(c, "event %s field %s: type %d", e->name,
					   f->name, (int)f->type);
			/* 64-bit sum: offset and size are 32-bit each */
			if ((uint64_t)f->offset + f->size > e->payload_size)
				return bad(c, "event %s field %s: [%u, +%u) outside %u bytes",
					   e->name, f->name, f->offset, f->size,
					   e->payload_size);
		}
	}
	return 0;
}

static int check_session(struct ctx *c, const Vmscope__Trace__SessionMetadata *s)
{
	if (check_uuid(c, &s->session_id, "session id") ||
	    check_clock(c, s->host_clock) || check_events(c, s->host_events))
		return -EINVAL;
	for (size_t i = 0; i < s->n_vms; i++) {
		const Vmscope__Trace__VmInfo *v = s->vms[i];

		if (check_uuid(c, &v->uuid, "VM uuid") ||
		    check_clock(c, v->guest_clock) || check_events(c, v->guest_events))
			return -EINVAL;
		if (v->guest_symbols && gsym_check(v->guest_symbols, c->err, c->errlen))
			return -EINVAL;
	}
	return 0;
}

/* The records must tile the bytes exactly, as the ring buffer wrote them. */
static int check_chunk(struct ctx *c, const Vmscope__Trace__StreamChunk *k)
{
	const uint8_t *p = k->records.data;
	size_t len = k->records.len, off = 0;
	uint64_t n = 0;

	if (check_origin(c, k->origin, 1))
		return -EINVAL;
	if (k->end_ts < k->begin_ts)
		return bad(c, "chunk seq %llu: end_ts before begin_ts",
			   (unsigned long long)k->seq);
	while (off < len) {
		uint64_t h;
		size_t sz;

		if (len - off < VMSCOPE_RB_REC_HDR_SIZE)
			return bad(c, "chunk seq %llu: %zu stray bytes at %zu",
				   (unsigned long long)k->seq, len - off, off);
		memcpy(&h, p + off, sizeof(h));
		sz = VMSCOPE_RB_REC_HDR_SIZE +
		     (VMSCOPE_RB_REC_IS_EXT(h) ? VMSCOPE_RB_REC_EXT_SIZE : 0) +
		     (((size_t)VMSCOPE_RB_REC_SIZE(h) + VMSCOPE_RB_ALIGN - 1) &
		      ~(size_t)(VMSCOPE_RB_ALIGN - 1));
		if (sz > len - off)
			return bad(c, "chunk seq %llu: record at %zu overruns",
				   (unsigned long long)k->seq, off);
		off += sz;
		n++;
	}
	if (k->nr_records && k->nr_records != n)
		return bad(c, "chunk seq %llu: %llu records, header says %u",
			   (unsigned long long)k->seq, (unsigned long long)n, k->nr_records);
	/* a merged chunk's origins: an entry per record in every column */
	if (k->origins && (k->origins->n_orig_ts != n || k->origins->n_cpu != n ||
			   k->origins->n_tid != n || k->origins->n_origin != n ||
			   k->origins->n_vcpu != n))
		return bad(c, "chunk seq %llu: record origins do not match its %llu records",
			   (unsigned long long)k->seq, (unsigned long long)n);
	return 0;
}

static int check_index(struct ctx *c, const Vmscope__Trace__FileIndex *x)
{
	size_t n = x->n_chunk_offset;

	if (x->n_chunk_begin_ts != n || x->n_chunk_end_ts != n)
		return bad(c, "file index: columns of different lengths");
	for (size_t i = 0; i < n; i++)
		if ((i && x->chunk_offset[i] <= x->chunk_offset[i - 1]) ||
		    x->chunk_offset[i] >= x->bytes)
			return bad(c, "file index: offset %zu out of order or range", i);
	return 0;
}

/* Whatever a host indexes by in a guest's hello is bounded here. */
#define TF_GUEST_MAX_CPUS 4096
static int check_guest_hello(struct ctx *c, const Vmscope__Trace__GuestHello *h)
{
	uint32_t ncpu = h->state ? h->state->nr_cpu_ids : 0;

	if (check_clock(c, h->clock) || check_events(c, h->events))
		return -EINVAL;
	if (ncpu == 0 || ncpu > TF_GUEST_MAX_CPUS)
		return bad(c, "guest hello: nr_cpu_ids %u (1..%u)", ncpu,
			   TF_GUEST_MAX_CPUS);
	if (h->n_cursors > ncpu)
		return bad(c, "guest hello: %zu cursors for %u CPUs",
			   h->n_cursors, ncpu);
	for (size_t i = 0; i < h->n_cursors; i++)
		if (h->cursors[i]->cpu >= ncpu)
			return bad(c, "guest hello: cursor of cpu %u", h->cursors[i]->cpu);
	if (h->subbuf_size < 512 || h->subbuf_size > (1u << 22))
		return bad(c, "guest hello: sub-buffer size %u", h->subbuf_size);
	if (h->symbols && gsym_check(h->symbols, c->err, c->errlen))
		return -EINVAL;
	return 0;
}

static int check_stats(struct ctx *c, const Vmscope__Trace__Statistics *s)
{
	for (size_t i = 0; i < s->n_streams; i++)
		if (check_origin(c, s->streams[i]->origin, 0))
			return -EINVAL;
	return 0;
}

/*
 * Field number 0 does not exist in protobuf, yet protobuf-c 1.4 accepts it
 * in an unknown field when the tag is an overlong varint (80 00), and then
 * writes it as a plain 00 that it refuses to read back: a message that
 * does not survive a copy. Refuse it, at every depth.
 */
static int check_unknown(struct ctx *c, const ProtobufCMessage *m, int depth)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;

	if (depth > 16)		/* our schemas nest 4 deep */
		return bad(c, "messages nested too deep");
	for (unsigned i = 0; i < m->n_unknown_fields; i++)
		if (m->unknown_fields[i].tag == 0)
			return bad(c, "%s: field number 0", d->name);
	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const char *base = (const char *)m;

		if (f->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *)(base + f->quantifier_offset);
			ProtobufCMessage *const *a =
				*(ProtobufCMessage *const *const *)(base + f->offset);

			for (size_t k = 0; k < n; k++)
				if (check_unknown(c, a[k], depth + 1))
					return -EINVAL;
		} else {
			const ProtobufCMessage *sub =
				*(const ProtobufCMessage *const *)(base + f->offset);

			if (sub && check_unknown(c, sub, depth + 1))
				return -EINVAL;
		}
	}
	return 0;
}

int tf_msg_check(uint16_t type, const ProtobufCMessage *m, char *err, size_t errlen)
{
	struct ctx c = { err, errlen };

	if (m->descriptor != tf_msg_descriptor(type))
		return bad(&c, "message is not the one frame type %u carries", type);
	if (check_unknown(&c, m, 0))
		return -EINVAL;
	switch (type) {
	case TF_FRAME_FILE_HEADER: {
		const Vmscope__Trace__FileHeader *h = (const void *)m;

		if (h->role != VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_METADATA &&
		    h->role != VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM)
			return bad(&c, "file role %d", (int)h->role);
		if (check_uuid(&c, &h->session_id, "session id"))
			return -EINVAL;
		return check_origin(&c, h->origin,
				    h->role == VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM);
	}
	case TF_FRAME_SESSION:
		return check_session(&c, (const void *)m);
	case TF_FRAME_CHUNK:
		return check_chunk(&c, (const void *)m);
	case TF_FRAME_LOSS: {
		const Vmscope__Trace__LossRecord *l = (const void *)m;

		if (l->kind < VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_RING_DISCARD ||
		    l->kind > VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_TOO_BIG)
			return bad(&c, "loss kind %d", (int)l->kind);
		return check_origin(&c, l->origin, 1);
	}
	case TF_FRAME_STATS:
		return check_stats(&c, (const void *)m);
	case TF_FRAME_GUEST_HELLO:
		return check_guest_hello(&c, (const void *)m);
	case TF_FRAME_INDEX:
		return check_index(&c, (const void *)m);
	case TF_FRAME_SUMMARY: {
		const Vmscope__Trace__Summary *s = (const void *)m;

		if (s->final_stats && check_stats(&c, s->final_stats))
			return -EINVAL;
		for (size_t i = 0; i < s->n_files; i++)
			if (check_origin(&c, s->files[i]->origin, 0))
				return -EINVAL;
		return 0;
	}
	}
	return bad(&c, "frame type %u carries no message", type);
}
