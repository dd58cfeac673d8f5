/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libFuzzer target: guest_link on hostile bytes, fed in pieces whose sizes
 * the first input bytes choose. Oracles: no crash, leak or sanitizer
 * report; a dead link stays dead; it never hands over a chunk whose origin
 * is not a guest CPU below the hello's count, or whose vm is not ours.
 * Seed it with gl_test_stream() (-seed via the corpus helper below when
 * run with no corpus: the first run feeds a valid stream).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tracefmt.h"
#include "guest_link.h"
#include "gl_stream.h"

static uint32_t ncpu;

static int on_hello(void *arg, const Vmscope__Trace__GuestHello *h)
{
	(void)arg;
	ncpu = h->state->nr_cpu_ids;
	if (h->events->origin->vm != 3)
		abort();
	return 0;
}

static int on_chunk(void *arg, const Vmscope__Trace__StreamChunk *c, uint64_t gap)
{
	(void)arg;
	(void)gap;
	if (c->origin->vm != 3 || c->origin->cpu >= ncpu ||
	    c->origin->side != VMSCOPE__TRACE__SIDE__SIDE_GUEST)
		abort();
	return 0;
}

static const struct guest_link_ops ops = { on_hello, on_chunk, NULL };

static void run(const uint8_t *data, size_t size, size_t step)
{
	struct guest_link *gl = guest_link_new(3, 1 << 16, &ops, NULL);
	int e = 0;

	ncpu = 0;
	for (size_t off = 0; off < size && !e;) {
		size_t n = step < size - off ? step : size - off;

		e = guest_link_feed(gl, data + off, n);
		off += n;
	}
	if (e && guest_link_feed(gl, data, size ? 1 : 0) != e)
		abort();
	guest_link_free(gl);
}

/*
 * Byte 0: mode. Bit 0 clear: the rest is raw stream bytes (framing and
 * checksums as they come), fed in pieces of 1 + byte 1 % 64. Bit 0 set:
 * the rest is (type, 2-byte length, payload) triples that become frames
 * with valid seqs and checksums, so that mutations reach the message
 * decoding and the stream rules instead of dying at a CRC; bit 1 set also
 * puts a valid FileHeader + hello in front, so chunks and losses are
 * reached.
 */
static uint8_t *frames_from(const uint8_t *d, size_t n, int prefix, size_t *len)
{
	size_t offs[8], plen = 0, cap = 2 * n + 64, at = 0;
	uint8_t *pre = prefix ? gl_test_stream(0, &plen, offs) : NULL;
	uint8_t *out;
	uint32_t seq = 0;

	if (prefix)
		plen = offs[2];	/* header and hello only */
	out = malloc(plen + cap + 24 * (n / 3 + 1));
	if (!out)
		abort();
	if (prefix) {
		memcpy(out, pre, plen);
		at = plen;
		seq = 2;
	}
	free(pre);
	while (n >= 3) {
		struct tf_frame_hdr h = { .type = d[0], .seq = seq++ };
		size_t l = (size_t)d[1] | (size_t)d[2] << 8;

		d += 3;
		n -= 3;
		if (l > n)
			l = n;
		h.length = (uint32_t)l;
		h.payload_crc = tf_crc32c(0, d, l);
		tf_frame_hdr_encode(&h, out + at);
		memcpy(out + at + TF_FRAME_HDR_SIZE, d, l);
		at += TF_FRAME_HDR_SIZE + l;
		d += l;
		n -= l;
	}
	*len = at;
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int seeded;

	if (!seeded) {
		size_t len;
		uint8_t *img = gl_test_stream(4, &len, NULL);

		seeded = 1;
		run(img, len, 13);
		free(img);
	}
	if (size < 2)
		return 0;
	if (data[0] & 1) {
		size_t len;
		uint8_t *img = frames_from(data + 2, size - 2, data[0] & 2, &len);

		run(img, len, 1 + data[1] % 64);
		free(img);
	} else {
		run(data + 2, size - 2, 1 + data[1] % 64);
	}
	return 0;
}
