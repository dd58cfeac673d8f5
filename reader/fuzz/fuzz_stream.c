/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libFuzzer target: the reader's record-level decoding (reader/reader.c):
 * stream frames -> chunks -> records -> stored descriptors -> text, on
 * hostile input. tracefmt's own fuzzers cover the frames and message
 * decoding; this one gets past the CRCs and protobuf by building the
 * frames from the input:
 *
 *   byte 0, bit 0: the metadata is the rest of a fixed valid session
 *     (the compiled-in host descriptors) or, when set, the input's first
 *     length-prefixed blob read as a metadata file (usually no session:
 *     every record then is undecodable, also a path to cover).
 *   then frames: kind byte, u16 length, bytes. kind % 4: 0 file header
 *     (host or guest by bit 2), 1 chunk (seq, lost_before, begin_ts,
 *     nr_records from the first 5 bytes, the rest are the records),
 *     2 a frame of any type with the bytes as payload, 3 a loss record.
 *
 * Oracle: no crash or leak (ASan), events only with a descriptor and a
 * payload at least its size, each formats, to the same text through its
 * compiled format (format_prog.c, what `vmscope dump` uses); per-event counts sum to the
 * event count; the stream ends with a kind.
 */
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "decode.h"
#include "format_prog.h"
#include "reader.h"
#include "vmscope_events.h"

#define IMG_MAX (1u << 20)

static uint8_t img[IMG_MAX], meta[1u << 16];

static size_t put_frame(uint8_t *buf, size_t off, size_t cap, uint16_t type, uint32_t seq,
			const void *p, size_t len)
{
	struct tf_frame_hdr h = { .type = type, .length = (uint32_t)len, .seq = seq };

	if (off + TF_FRAME_HDR_SIZE + len > cap)
		return off;
	h.payload_crc = tf_crc32c(0, p, len);
	tf_frame_hdr_encode(&h, buf + off);
	memcpy(buf + off + TF_FRAME_HDR_SIZE, p, len);
	return off + TF_FRAME_HDR_SIZE + len;
}

static size_t put_msg(uint8_t *buf, size_t off, size_t cap, uint16_t type, uint32_t seq,
		      const ProtobufCMessage *m)
{
	size_t len = protobuf_c_message_get_packed_size(m);
	uint8_t *p = malloc(len ? len : 1);

	if (!p)
		return off;
	protobuf_c_message_pack(m, p);
	off = put_frame(buf, off, cap, type, seq, p, len);
	free(p);
	return off;
}

static size_t valid_meta(void)
{
	static struct vr_pb_events ev;
	Vmscope__Trace__SessionMetadata s = VMSCOPE__TRACE__SESSION_METADATA__INIT;
	Vmscope__Trace__VmInfo vm = VMSCOPE__TRACE__VM_INFO__INIT, *vms[1] = { &vm };

	vr_events_to_pb(&ev, vmscope_event_descs, VMSCOPE_NR_EVENTS,
			VMSCOPE__TRACE__SIDE__SIDE_HOST, 0, "fuzz");
	s.host_events = &ev.table;
	vm.guest_events = &ev.table;	/* the guest claims the same table */
	s.n_vms = 1;
	s.vms = vms;
	return put_msg(meta, 0, sizeof(meta), TF_FRAME_SESSION, 0, &s.base);
}

/*
 * One frame of kind @kind % 4 with the input's bytes @b, appended at @off
 * with sequence number (*@seq)++; none when @b is too short for the kind.
 */
static size_t put_input_frame(size_t off, uint32_t *seq, unsigned int kind, const uint8_t *b,
			      size_t len)
{
	Vmscope__Trace__Origin o = VMSCOPE__TRACE__ORIGIN__INIT;

	o.side = kind & 4 ? VMSCOPE__TRACE__SIDE__SIDE_GUEST : VMSCOPE__TRACE__SIDE__SIDE_HOST;
	o.vm = (kind >> 3) & 1;
	switch (kind % 4) {
	case 0: {
		Vmscope__Trace__FileHeader h = VMSCOPE__TRACE__FILE_HEADER__INIT;
		Vmscope__Trace__StreamCut cut = VMSCOPE__TRACE__STREAM_CUT__INIT;

		h.role = VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM;
		h.origin = &o;
		/* a snapshot window's stream: it begins at the input's cut */
		if (kind & 16 && len >= 2) {
			cut.seq = b[0];
			cut.lost_before = b[1];
			h.cut = &cut;
		}
		return put_msg(img, off, sizeof(img), TF_FRAME_FILE_HEADER, (*seq)++, &h.base);
	}
	case 1: {
		Vmscope__Trace__StreamChunk c = VMSCOPE__TRACE__STREAM_CHUNK__INIT;

		if (len < 5)
			return off;
		c.origin = &o;
		c.seq = b[0];
		c.lost_before = b[1];
		c.begin_ts = (uint64_t)b[2] << 24 | (uint64_t)b[3] << 8;
		c.end_ts = c.begin_ts + (1ull << 31);
		c.nr_records = b[4];
		c.records.data = (uint8_t *)b + 5;
		c.records.len = len - 5;
		return put_msg(img, off, sizeof(img), TF_FRAME_CHUNK, (*seq)++, &c.base);
	}
	case 2:
		if (len < 1)
			return off;
		return put_frame(img, off, sizeof(img), 1 + b[0] % 9, (*seq)++, b + 1, len - 1);
	default: {
		Vmscope__Trace__LossRecord l = VMSCOPE__TRACE__LOSS_RECORD__INIT;

		l.origin = &o;
		l.kind = 1 + (len ? b[0] : 0) % 6;
		l.events = len > 1 ? b[1] : 0;
		return put_msg(img, off, sizeof(img), TF_FRAME_LOSS, (*seq)++, &l.base);
	}
	}
}

/*
 * The stream's account once read: a kind at the end, per-event counts
 * that sum, nothing unusable passed as success, the metadata's damage
 * counted. @bad_items: the VR_BAD items read.
 */
static void check_account(struct vr_trace *t, struct vr_stream *s, uint64_t bad_items)
{
	const struct vr_stream_stats *st = vr_stream_stats(s);
	const struct vr_damage *d = vr_stream_damage(s);
	uint64_t sum = 0;

	if (st->end.kind == TF_END_NONE)
		abort();
	for (unsigned int k = 0; st->counts && k < st->events_table->n; k++)
		sum += st->counts[k];
	if (sum != st->events)
		abort();
	/* nothing that failed passes as success: every unusable frame,
	 * chunk or record, a damaged end, an empty file is in the damage
	 * account; a torn tail is damage unless the trace has no Summary */
	if ((bad_items || st->undecodable || st->end.kind == TF_END_CORRUPT ||
	     st->end.kind == TF_END_IO || (st->end.kind == TF_END_TORN && !d->no_summary)) &&
	    !vr_damage_count(d))
		abort();
	if (d->bad != st->bad || d->undecodable != st->undecodable ||
	    d->torn != (st->end.kind == TF_END_TORN || !st->end.frames) ||
	    d->no_summary != !vr_trace_summary(t))
		abort();
	/* damaged metadata is counted too (a killed writer's torn tail, without
	 * a Summary, is not damage) */
	if (vr_trace_problem(t) && !vr_damage_count(vr_trace_damage(t)) &&
	    !(vr_trace_meta_end(t)->kind == TF_END_TORN && !vr_trace_summary(t)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vr_trace *t;
	struct vr_stream *s;
	struct vr_item it;
	size_t off = 0, i = 1, mlen;
	uint32_t seq = 0;
	char text[512], text2[512];
	uint64_t bad_items = 0;
	struct vmscope_fmt_prog prog;

	if (size < 1)
		return 0;
	if (data[0] & 1) {
		if (size < 3)
			return 0;
		mlen = (size_t)data[1] | (size_t)data[2] << 8;
		if (mlen > size - 3)
			mlen = size - 3;
		memcpy(meta, data + 3, mlen);
		i = 3 + mlen;
	} else {
		mlen = valid_meta();
	}
	while (i + 3 <= size) {
		unsigned int kind = data[i];
		size_t len = (size_t)data[i + 1] | (size_t)data[i + 2] << 8;
		const uint8_t *b = data + i + 3;

		i += 3;
		if (len > size - i)
			len = size - i;
		i += len;
		off = put_input_frame(off, &seq, kind, b, len);
	}
	if (vr_trace_open_mem(&t, meta, mlen))
		return 0;
	if (vr_stream_open_mem(&s, t, img, off)) {
		vr_trace_close(t);
		return 0;
	}
	while (vr_stream_next(s, &it) == 1) {
		if (it.kind < VR_EVENT || it.kind > VR_BAD)
			abort();
		bad_items += it.kind == VR_BAD;
		if (it.kind != VR_EVENT)
			continue;
		if (!it.desc || it.size < it.desc->payload_size ||
		    vmscope_format_event(it.desc, it.payload, it.size, text, sizeof(text)) < 0)
			abort();
		/* what `vmscope dump` prints with: the same text */
		vmscope_fmt_compile(&prog, it.desc);
		if (vmscope_fmt_run(&prog, it.payload, it.size, text2, sizeof(text2)) < 0 ||
		    strcmp(text, text2))
			abort();
	}
	check_account(t, s, bad_items);
	vr_stream_close(s);
	vr_trace_close(t);
	return 0;
}
