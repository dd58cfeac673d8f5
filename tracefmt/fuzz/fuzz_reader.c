/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libFuzzer target: the frame reader, and the decoding of every frame it
 * returns, on hostile bytes. Two modes (low bit of the first byte):
 *
 *  raw         the input is a trace file. Oracle: the reader stops with a
 *              kind, frames are contiguous from offset 0, the stop offset
 *              is where the last frame ended, clean only at end of file.
 *  structured  the input describes frames (type, length, payload), which
 *              are encoded with correct CRCs (a fuzzer cannot find CRCs),
 *              then optionally cut or one byte flipped. Oracle: without
 *              damage every frame comes back identical and the end is
 *              clean; with a cut, exactly the frames before the cut; with
 *              a flip in frame k, exactly frames 0..k-1, never a later
 *              one (CRC32C catches every single-byte change).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tracefmt.h"

#define MAX_FRAMES 256

static void decode(const struct tf_frame *f)
{
	ProtobufCMessage *m;
	char err[128];

	if (tf_msg_decode(f->type, f->payload, f->length, 0, &m, err, sizeof(err)) == 0)
		tf_msg_free(m);
}

static size_t read_all(const uint8_t *img, size_t len, const uint8_t *const *want,
		       const uint32_t *want_len, size_t nwant, struct tf_end_info *end)
{
	struct tf_reader *r;
	struct tf_frame f;
	uint64_t next = 0;
	size_t n = 0;

	if (tf_reader_open_mem(&r, img, len))
		abort();
	while (tf_reader_next(r, &f) == 1) {
		if (f.offset != next || f.seq != n)
			abort();
		next = f.offset + TF_FRAME_HDR_SIZE + f.length;
		if (next > len)
			abort();
		if (want && (n >= nwant || f.length != want_len[n] ||
			     memcmp(f.payload, want[n], f.length) != 0))
			abort();
		decode(&f);
		n++;
	}
	*end = *tf_reader_end(r);
	if (end->kind == TF_END_NONE || end->kind == TF_END_IO ||
	    end->offset != next || end->frames != n ||
	    (end->kind == TF_END_CLEAN) != (next == len))
		abort();
	tf_reader_close(r);
	return n;
}

static uint16_t frame_type(uint8_t b)
{
	return b % 9 == 8 ? TF_FRAME_RAW : (uint16_t)(1 + b % 9);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tf_end_info end;

	if (size < 1)
		return 0;
	if (!(data[0] & 1)) {
		read_all(data + 1, size - 1, NULL, NULL, 0, &end);
		return 0;
	}
	if (size < 6)
		return 0;

	/* structured: [mode][damage][pos u32] then (type, len u16, payload)* */
	uint8_t damage = data[1] % 3;
	uint32_t pos = (uint32_t)data[2] | (uint32_t)data[3] << 8 |
		       (uint32_t)data[4] << 16 | (uint32_t)data[5] << 24;
	const uint8_t *p = data + 6, *e = data + size;
	const uint8_t *want[MAX_FRAMES];
	uint32_t want_len[MAX_FRAMES];
	uint64_t offs[MAX_FRAMES + 1];
	size_t n = 0, len = 0;
	uint8_t *img = malloc(size * 2 + 64 * MAX_FRAMES);

	while (p + 3 <= e && n < MAX_FRAMES) {
		struct tf_frame_hdr h;
		uint32_t l = (uint32_t)p[1] | (uint32_t)p[2] << 8;

		if (l > (size_t)(e - p - 3))
			l = (uint32_t)(e - p - 3);
		h.type = frame_type(p[0]);
		h.flags = 0;
		h.length = l;
		h.seq = (uint32_t)n;
		h.payload_crc = tf_crc32c(0, p + 3, l);
		offs[n] = len;
		tf_frame_hdr_encode(&h, img + len);
		memcpy(img + len + TF_FRAME_HDR_SIZE, p + 3, l);
		want[n] = p + 3;
		want_len[n] = l;
		len += TF_FRAME_HDR_SIZE + l;
		p += 3 + l;
		n++;
	}
	offs[n] = len;

	if (damage == 0) {
		if (read_all(img, len, want, want_len, n, &end) != n || end.kind != TF_END_CLEAN)
			abort();
	} else if (len > 0) {
		size_t at = pos % len, k = 0;

		while (k < n && offs[k + 1] <= at)
			k++;		/* frame k contains byte at */
		if (damage == 1) {
			/* cut at 'at': frames ending at or before it survive */
			size_t keep = (k < n && offs[k] == at) ? k : k;

			if (read_all(img, at, want, want_len, n, &end) != keep ||
			    end.kind != (offs[keep] == at ? TF_END_CLEAN : TF_END_TORN))
				abort();
		} else {
			img[at] ^= (uint8_t)(1u + (pos >> 24) % 255);
			if (read_all(img, len, want, want_len, n, &end) != k ||
			    end.kind == TF_END_CLEAN || end.offset != offs[k])
				abort();
		}
	}
	free(img);
	return 0;
}
