/* SPDX-License-Identifier: GPL-2.0 */
/*
 * guest_link: a valid stream is accepted whole, byte by byte and in odd
 * splits, with the claimed VM replaced; every single-byte corruption and
 * every stream-rule violation kills the link with an error; memory stays
 * within the frame bound.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tests/lib/check.h"
#include "tracefmt.h"
#include "guest_link.h"
#include "gl_stream.h"

struct seen {
	unsigned hellos, chunks, losses, records, bad_vm;
	uint64_t gaps;
};

static int on_hello(void *arg, const Vmscope__Trace__GuestHello *h)
{
	struct seen *s = arg;

	s->hellos++;
	if (h->events->origin->vm != 7)
		s->bad_vm++;
	return 0;
}

static int on_chunk(void *arg, const Vmscope__Trace__StreamChunk *c, uint64_t gap)
{
	struct seen *s = arg;

	s->chunks++;
	s->records += c->nr_records;
	s->gaps += gap;
	if (c->origin->vm != 7)
		s->bad_vm++;
	return 0;
}

static int on_loss(void *arg, const Vmscope__Trace__LossRecord *l)
{
	struct seen *s = arg;

	s->losses++;
	if (l->origin->vm != 7)
		s->bad_vm++;
	return 0;
}

static const struct guest_link_ops ops = { on_hello, on_chunk, on_loss };

/* Feeds img in pieces of `step` bytes (0: all at once). */
static int feed(const uint8_t *img, size_t len, size_t step, struct seen *s,
		int *boundary)
{
	struct guest_link *gl = guest_link_new(7, 0, &ops, s);
	int e = 0;

	memset(s, 0, sizeof(*s));
	for (size_t off = 0; off < len && !e;) {
		size_t n = step && step < len - off ? step : len - off;

		e = guest_link_feed(gl, img + off, n);
		off += n;
	}
	if (e)	/* dead stays dead */
		CHECK(guest_link_feed(gl, img, 1) == e && guest_link_error(gl)[0]);
	if (boundary)
		*boundary = guest_link_at_boundary(gl);
	guest_link_free(gl);
	return e;
}

static void test_valid(void)
{
	size_t len, steps[] = { 0, 1, 7, 23, 24, 25, 1000 };
	uint8_t *img = gl_test_stream(6, &len, NULL);
	struct seen s;
	int b;

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		CHECK(feed(img, len, steps[i], &s, &b) == 0);
		CHECK(b);
		CHECK(s.hellos == 1 && s.chunks == 6 && s.losses == 1);
		CHECK(s.records == 6 * GL_TEST_RECORDS_PER_CHUNK);
		CHECK(s.gaps == 0 && s.bad_vm == 0);
	}
	/* cut anywhere inside a frame: not at a boundary */
	CHECK(feed(img, len - 1, 0, &s, &b) == 0 && !b);
	free(img);
}

/* Every byte flipped, one at a time: always an error, never a crash. */
static void test_every_byte(void)
{
	size_t len;
	uint8_t *img = gl_test_stream(3, &len, NULL);
	struct seen s;
	unsigned missed = 0;

	for (size_t i = 0; i < len; i++) {
		img[i] ^= 0x41;
		if (feed(img, len, 0, &s, NULL) == 0)
			missed++;
		img[i] ^= 0x41;
	}
	CHECK(missed == 0);
	free(img);
}

/* Frames in a wrong order or repeated: reassembled with fresh seqs. */
static uint8_t *reorder(const uint8_t *img, const size_t *offs,
			const int *order, size_t n, size_t *len)
{
	uint8_t *out = malloc(offs[5] * 2 + 1024);
	size_t at = 0;

	for (size_t i = 0; i < n; i++) {
		const uint8_t *f = img + offs[order[i]];
		size_t flen = offs[order[i] + 1] - offs[order[i]];
		struct tf_frame_hdr h;

		CHECK(tf_frame_hdr_decode(f, &h) == TF_HDR_OK);
		h.seq = (uint32_t)i;
		memcpy(out + at, f, flen);
		tf_frame_hdr_encode(&h, out + at);
		at += flen;
	}
	*len = at;
	return out;
}

static void test_rules(void)
{
	size_t offs[8], len, rlen;
	uint8_t *img = gl_test_stream(2, &len, offs), *r;
	/* frames: 0 header, 1 hello, 2 chunk cpu0, 3 chunk cpu1, 4 loss */
	static const int bad[][6] = {
		{ 1, 0, 2, -1 },	/* hello first */
		{ 0, 2, -1 },		/* chunk before hello */
		{ 0, 1, 1, -1 },	/* hello twice */
		{ 0, 0, -1 },		/* header twice */
		{ 0, 1, 2, 2, -1 },	/* same chunk seq twice */
	};
	struct seen s;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t n = 0;

		while (bad[i][n] >= 0)
			n++;
		r = reorder(img, offs, bad[i], n, &rlen);
		CHECK(feed(r, rlen, 0, &s, NULL) == -EPROTO);
		free(r);
	}
	/* a valid reorder: the loss before the chunks */
	{
		static const int ok[] = { 0, 1, 4, 2, 3 };

		r = reorder(img, offs, ok, 5, &rlen);
		CHECK(feed(r, rlen, 0, &s, NULL) == 0 && s.chunks == 2 && s.losses == 1);
		free(r);
	}
	/* frame seq skipped: frame 2 dropped, seqs kept as sent */
	{
		uint8_t *cut = malloc(len);
		size_t clen = offs[2];

		memcpy(cut, img, offs[2]);
		memcpy(cut + clen, img + offs[3], len - offs[3]);
		clen += len - offs[3];
		CHECK(feed(cut, clen, 0, &s, NULL) == -EPROTO);
		free(cut);
	}
	/* a frame above the link's bound */
	{
		struct guest_link *gl = guest_link_new(7, 64, &ops, &s);

		CHECK(guest_link_feed(gl, img, len) == -EMSGSIZE);
		guest_link_free(gl);
	}
	free(img);
}

/* A chunk of a CPU the hello did not announce, and a non-guest origin. */
static void test_origin(void)
{
	size_t offs[8], len;
	uint8_t *img = gl_test_stream(1, &len, offs);
	Vmscope__Trace__Origin o = VMSCOPE__TRACE__ORIGIN__INIT;
	Vmscope__Trace__StreamChunk c = VMSCOPE__TRACE__STREAM_CHUNK__INIT;
	uint8_t buf[256];
	struct seen s;
	struct guest_link *gl;
	size_t n;

	c.origin = &o;
	c.seq = 1;
	for (int host = 0; host < 2; host++) {	/* an unannounced CPU; the host's */
		o.side = host ? VMSCOPE__TRACE__SIDE__SIDE_HOST : VMSCOPE__TRACE__SIDE__SIDE_GUEST;
		o.cpu = host ? 0 : GL_TEST_CPUS;
		n = tf_msg_frame_encode(TF_FRAME_CHUNK, 2, &c.base, buf);
		gl = guest_link_new(7, 0, &ops, &s);
		CHECK(guest_link_feed(gl, img, offs[2]) == 0);
		CHECK(guest_link_feed(gl, buf, n) == -EPROTO);
		guest_link_free(gl);
	}

	/* a seq gap within a CPU is passed on, counted */
	o.side = VMSCOPE__TRACE__SIDE__SIDE_GUEST;
	gl = guest_link_new(7, 0, &ops, &s);
	memset(&s, 0, sizeof(s));
	CHECK(guest_link_feed(gl, img, offs[3]) == 0);	/* chunk cpu0 seq 10 */
	c.seq = 14;
	n = tf_msg_frame_encode(TF_FRAME_CHUNK, 3, &c.base, buf);
	CHECK(guest_link_feed(gl, buf, n) == 0);
	CHECK(s.gaps == 3);
	guest_link_free(gl);
	free(img);
}

/* guest_link_reconnect_loss(): counted once, never below what was kept. */
static void test_reconnect_loss(void)
{
	Vmscope__Trace__GuestCpuCursor c = VMSCOPE__TRACE__GUEST_CPU_CURSOR__INIT;
	struct guest_link_kept k = { .chunks = 4, .records = 40 };
	uint64_t chunks = 99;

	c.chunks_sent = 4;	/* all kept: nothing lost */
	c.records_sent = 40;
	CHECK(guest_link_reconnect_loss(&k, &c, &chunks) == 0 && chunks == 0);
	c.chunks_sent = 6;	/* two sub-buffers of 25 records never processed */
	c.records_sent = 65;
	CHECK(guest_link_reconnect_loss(&k, &c, &chunks) == 25 && chunks == 2);
	CHECK(k.chunks == 6 && k.records == 65);
	CHECK(guest_link_reconnect_loss(&k, &c, &chunks) == 0 && chunks == 0);
	c.chunks_sent = 1;	/* a cursor below what was kept: a lie, no loss */
	c.records_sent = 10;
	CHECK(guest_link_reconnect_loss(&k, &c, &chunks) == 0 && chunks == 0);
	CHECK(k.chunks == 6 && k.records == 65);
	c.chunks_sent = 6;	/* records without a sub-buffer more: records only */
	c.records_sent = 70;
	CHECK(guest_link_reconnect_loss(&k, &c, &chunks) == 5 && chunks == 0);
}

int main(void)
{
	test_valid();
	test_every_byte();
	test_rules();
	test_origin();
	test_reconnect_loss();
	return check_result("test_guest_link");
}
