/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Incremental parser of a guest agent's stream (guest_link.h). A small
 * state machine: collect 24 header bytes, verify them, collect the
 * payload into one reused buffer (never larger than max_frame), verify
 * and decode it, apply the stream's rules, call back.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracefmt.h"
#include "guest_link.h"

enum gl_state {
	GL_WANT_FILE_HEADER,
	GL_WANT_HELLO,
	GL_STREAMING,
};

struct gl_cpu {
	uint64_t last_seq;
	int seen;
};

struct guest_link {
	const struct guest_link_ops *ops;
	void *arg;
	uint32_t vm;
	size_t max_frame;
	enum gl_state state;
	int dead;			/* the error returned, once dead */
	char err[160];

	uint8_t hdr[TF_FRAME_HDR_SIZE];
	size_t hdr_have;
	struct tf_frame_hdr h;		/* valid once hdr_have == 24 */
	uint8_t *buf;			/* payload of the current frame */
	size_t buf_cap, buf_have;
	uint32_t next_seq;

	uint32_t nr_cpu_ids;		/* from the hello */
	struct gl_cpu *cpus;
	struct guest_link_stats st;
};

static int die(struct guest_link *gl, int e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(gl->err, sizeof(gl->err), fmt, ap);
	va_end(ap);
	gl->dead = e;
	return e;
}

struct guest_link *guest_link_new(uint32_t vm, size_t max_frame,
				  const struct guest_link_ops *ops, void *arg)
{
	struct guest_link *gl = calloc(1, sizeof(*gl));

	if (!gl)
		return NULL;
	gl->ops = ops;
	gl->arg = arg;
	gl->vm = vm;
	gl->max_frame = max_frame ? max_frame : GUEST_LINK_MAX_FRAME_DEF;
	if (gl->max_frame > TF_FRAME_MAX_PAYLOAD)
		gl->max_frame = TF_FRAME_MAX_PAYLOAD;
	return gl;
}

void guest_link_free(struct guest_link *gl)
{
	if (!gl)
		return;
	free(gl->buf);
	free(gl->cpus);
	free(gl);
}

const char *guest_link_error(const struct guest_link *gl)
{
	return gl->err;
}

int guest_link_at_boundary(const struct guest_link *gl)
{
	return !gl->dead && gl->hdr_have == 0;
}

void guest_link_stats(const struct guest_link *gl, struct guest_link_stats *st)
{
	*st = gl->st;
}

/* The origin must say GUEST; its vm is replaced by the one we know. */
static int fix_origin(struct guest_link *gl, Vmscope__Trace__Origin *o,
		      const char *what)
{
	if (!o || o->side != VMSCOPE__TRACE__SIDE__SIDE_GUEST)
		return die(gl, -EPROTO, "%s: origin is not a guest", what);
	o->vm = gl->vm;
	return 0;
}

static int on_file_header(struct guest_link *gl, Vmscope__Trace__FileHeader *fh)
{
	if (fh->role != VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM)
		return die(gl, -EPROTO, "file header: role %d, not STREAM",
			   (int)fh->role);
	if (fix_origin(gl, fh->origin, "file header"))
		return gl->dead;
	gl->state = GL_WANT_HELLO;
	return 0;
}

static int on_hello(struct guest_link *gl, Vmscope__Trace__GuestHello *h)
{
	if (h->protocol_version != VMSCOPE_GUEST_PROTOCOL)
		return die(gl, -EPROTO, "hello: protocol %u, not %u",
			   h->protocol_version, VMSCOPE_GUEST_PROTOCOL);
	if (!h->events || !h->clock)
		return die(gl, -EPROTO, "hello: no event table or clock");
	if (fix_origin(gl, h->events->origin, "hello event table"))
		return gl->dead;
	/* tf_msg_check bounded nr_cpu_ids to 1..4096 */
	gl->nr_cpu_ids = h->state->nr_cpu_ids;
	gl->cpus = calloc(gl->nr_cpu_ids, sizeof(*gl->cpus));
	if (!gl->cpus)
		return die(gl, -ENOMEM, "hello: no memory for %u CPUs",
			   gl->nr_cpu_ids);
	if ((size_t)h->subbuf_size + 4096 > gl->max_frame)
		return die(gl, -EMSGSIZE, "hello: sub-buffers of %u bytes exceed "
			   "the %zu-byte frame limit", h->subbuf_size,
			   gl->max_frame);
	gl->state = GL_STREAMING;
	return gl->ops->hello ? gl->ops->hello(gl->arg, h) : 0;
}

static int on_chunk(struct guest_link *gl, Vmscope__Trace__StreamChunk *c)
{
	struct gl_cpu *cpu;
	uint64_t gap = 0;

	if (fix_origin(gl, c->origin, "chunk"))
		return gl->dead;
	if (c->origin->cpu >= gl->nr_cpu_ids)
		return die(gl, -EPROTO, "chunk: cpu %u, hello said %u CPUs",
			   c->origin->cpu, gl->nr_cpu_ids);
	cpu = &gl->cpus[c->origin->cpu];
	if (cpu->seen) {
		if (c->seq <= cpu->last_seq)
			return die(gl, -EPROTO, "chunk: cpu %u seq %llu after %llu",
				   c->origin->cpu, (unsigned long long)c->seq,
				   (unsigned long long)cpu->last_seq);
		gap = c->seq - cpu->last_seq - 1;
	}
	cpu->seen = 1;
	cpu->last_seq = c->seq;
	gl->st.chunks++;
	gl->st.records += c->nr_records;
	gl->st.seq_gaps += gap;
	return gl->ops->chunk ? gl->ops->chunk(gl->arg, c, gap) : 0;
}

static int on_loss(struct guest_link *gl, Vmscope__Trace__LossRecord *l)
{
	if (fix_origin(gl, l->origin, "loss record"))
		return gl->dead;
	if (l->origin->cpu >= gl->nr_cpu_ids)
		return die(gl, -EPROTO, "loss record: cpu %u of %u",
			   l->origin->cpu, gl->nr_cpu_ids);
	gl->st.losses++;
	return gl->ops->loss ? gl->ops->loss(gl->arg, l) : 0;
}

/* Which frame types each state accepts. */
static int type_allowed(enum gl_state s, uint16_t type)
{
	switch (s) {
	case GL_WANT_FILE_HEADER:
		return type == TF_FRAME_FILE_HEADER;
	case GL_WANT_HELLO:
		return type == TF_FRAME_GUEST_HELLO;
	case GL_STREAMING:
		return type == TF_FRAME_CHUNK || type == TF_FRAME_LOSS;
	}
	return 0;
}

static int on_frame(struct guest_link *gl)
{
	ProtobufCMessage *m;
	char why[128] = "";
	int e;

	if (tf_crc32c(0, gl->buf, gl->h.length) != gl->h.payload_crc)
		return die(gl, -EBADMSG, "frame %u: payload checksum", gl->h.seq);
	e = tf_msg_decode(gl->h.type, gl->buf, gl->h.length, 0, &m, why,
			  sizeof(why));
	if (e)
		return die(gl, e == -ENOMEM ? -ENOMEM : e == -EINVAL ? -EINVAL : -EBADMSG,
			   "frame %u (type %u): %s", gl->h.seq, gl->h.type, why);
	gl->st.frames++;
	switch (gl->h.type) {
	case TF_FRAME_FILE_HEADER:
		e = on_file_header(gl, (void *)m);
		break;
	case TF_FRAME_GUEST_HELLO:
		e = on_hello(gl, (void *)m);
		break;
	case TF_FRAME_CHUNK:
		e = on_chunk(gl, (void *)m);
		break;
	default:
		e = on_loss(gl, (void *)m);
		break;
	}
	tf_msg_free(m);
	if (e && !gl->dead)
		die(gl, e, "frame %u: the consumer stopped the link (%d)",
		    gl->h.seq, e);
	return e;
}

static int on_header(struct guest_link *gl)
{
	enum tf_hdr_check c = tf_frame_hdr_decode(gl->hdr, &gl->h);

	if (c != TF_HDR_OK)
		return die(gl, c == TF_HDR_TOO_LONG ? -EMSGSIZE : -EBADMSG,
			   "frame %u: header: %s", gl->next_seq, tf_hdr_check_str(c));
	if (gl->h.seq != gl->next_seq)
		return die(gl, -EPROTO, "frame seq %u, expected %u", gl->h.seq,
			   gl->next_seq);
	if (!type_allowed(gl->state, gl->h.type))
		return die(gl, -EPROTO, "frame %u: type %u not allowed here",
			   gl->h.seq, gl->h.type);
	if (gl->h.length > gl->max_frame)
		return die(gl, -EMSGSIZE, "frame %u: %u bytes, limit %zu",
			   gl->h.seq, gl->h.length, gl->max_frame);
	if (gl->h.length > gl->buf_cap) {
		/* grows to the largest frame seen, never past max_frame */
		uint8_t *nb = realloc(gl->buf, gl->h.length);

		if (!nb)
			return die(gl, -ENOMEM, "frame %u: no memory", gl->h.seq);
		gl->buf = nb;
		gl->buf_cap = gl->h.length;
	}
	gl->next_seq++;
	gl->buf_have = 0;
	return 0;
}

int guest_link_feed(struct guest_link *gl, const uint8_t *data, size_t len)
{
	int e;

	if (gl->dead)
		return gl->dead;
	while (len) {
		size_t n;

		if (gl->hdr_have < TF_FRAME_HDR_SIZE) {
			n = TF_FRAME_HDR_SIZE - gl->hdr_have;
			n = n < len ? n : len;
			memcpy(gl->hdr + gl->hdr_have, data, n);
			gl->hdr_have += n;
			data += n;
			len -= n;
			if (gl->hdr_have < TF_FRAME_HDR_SIZE)
				break;
			e = on_header(gl);
			if (e)
				return e;
		}
		n = gl->h.length - gl->buf_have;
		n = n < len ? n : len;
		if (n)
			memcpy(gl->buf + gl->buf_have, data, n);
		gl->buf_have += n;
		data += n;
		len -= n;
		if (gl->buf_have < gl->h.length)
			break;
		gl->hdr_have = 0;
		e = on_frame(gl);
		if (e)
			return e;
	}
	return 0;
}

uint64_t guest_link_reconnect_loss(struct guest_link_kept *kept,
				   const Vmscope__Trace__GuestCpuCursor *c,
				   uint64_t *chunks)
{
	uint64_t records;

	*chunks = 0;
	if (c->records_sent <= kept->records)
		return 0;
	records = c->records_sent - kept->records;
	*chunks = c->chunks_sent > kept->chunks ? c->chunks_sent - kept->chunks : 0;
	kept->records = c->records_sent;
	kept->chunks = c->chunks_sent;
	return records;
}
