// SPDX-License-Identifier: GPL-2.0
/*
 * The live host source's ordering stage (live_order.h), on sub-buffers
 * built as the ring lays them out:
 *
 * - two buffers, each in its own order: released in (time, buffer)
 *   order, nothing before the other buffer has said it cannot go earlier;
 * - a quiet buffer does not hold the others for ever (the lag bound); a
 *   record it then delivers below what was released is not released, and
 *   one VR_LOSS (LO_LATE) stands for it at that point; its later records
 *   rejoin; a buffer that has delivered nothing yet is given the lag from
 *   the first record of any buffer (timestamps far from 0), not declared
 *   late at once;
 * - a buffer whose reader says when it found it empty (lo_drained) is
 *   waited for whatever the lag (a starved reader's records, late in host
 *   time, come out in order, none lost), until its reader's word moves it
 *   on: to the moment it was found empty, in host time from the clocks'
 *   offset (the largest chunk end - taken), less the lag; a record it
 *   then delivers below what was released is late;
 * - a rise of lost_before is a VR_LOSS, a skipped sequence number a
 *   VR_GAP, both before the sub-buffer's records; damaged records a VR_BAD;
 * - queues of 4 against a silent buffer and no lag: the first full queue
 *   declares it late, 200 records come out in order, no queue above 4.
 */
#include <string.h>

#include "../../tests/lib/check.h"
#include "live_order.h"
#include "vmscope/ringbuf_abi.h"

#define OUT_MAX 1024

static struct lo_rec out[OUT_MAX];
static size_t nout;

static int collect(void *ctx, const struct lo_rec *r)
{
	(void)ctx;
	if (nout < OUT_MAX)
		out[nout] = *r;
	nout++;
	return 0;
}

/* A sub-buffer's records: one 8-byte payload each (its own ts), the
 * header word as the ring writes it. */
struct sb {
	uint8_t data[4096];
	struct lo_chunk c;
};

static void build(struct sb *s, uint64_t seq, uint64_t lost, const uint64_t *ts, size_t n)
{
	size_t off = 0;

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < n; i++) {
		uint64_t h = VMSCOPE_RB_REC_HDR(ts[i], 7, 8, 0);

		memcpy(s->data + off, &h, 8);
		memcpy(s->data + off + 8, &ts[i], 8);
		off += 16;
	}
	s->c = (struct lo_chunk){ .seq = seq, .begin_ts = n ? ts[0] : 0,
				  .end_ts = n ? ts[n - 1] : 0, .lost_before = lost,
				  .nr_records = (uint32_t)n, .len = (uint32_t)off,
				  .data = s->data };
}

/* Two buffers (lag @lag), buffer 0 delivering @n records at @ts, then
 * buffer 1 @m at @ts1: nothing released before buffer 1 spoke. */
static void two(struct lo *l, uint64_t lag, const uint64_t *ts, size_t n, const uint64_t *ts1,
		size_t m)
{
	struct sb s;

	nout = 0;
	CHECK_EQ(lo_init(l, 2, 16, lag, collect, NULL), 0);
	build(&s, 0, 0, ts, n);
	CHECK_EQ(lo_chunk(l, 0, &s.c), 0);
	CHECK_EQ(nout, 0);
	build(&s, 0, 0, ts1, m);
	CHECK_EQ(lo_chunk(l, 1, &s.c), 0);
}

static void two_buffers(void)
{
	static const uint64_t a[] = { 10, 30, 50 }, b[] = { 20, 40, 60 };
	struct lo l;

	/* before buffer 1, nothing: it may still deliver anything */
	two(&l, 0, a, 3, b, 3);
	CHECK_EQ(nout, 5);	/* 60 waits: buffer 0 may still deliver 50..60 */
	CHECK_EQ(lo_finish(&l), 0);
	CHECK_EQ(nout, 6);
	for (size_t i = 0; i < 6 && i < nout; i++) {
		uint64_t p;

		CHECK_EQ(out[i].kind, VR_EVENT);
		CHECK_EQ(out[i].ts, 10 * (i + 1));
		CHECK_EQ(out[i].buf, i % 2);
		CHECK_EQ(out[i].id, 7);
		memcpy(&p, out[i].payload, 8);
		CHECK_EQ(p, out[i].ts);
	}
	lo_free(&l);
}

static void quiet_buffer(void)
{
	uint64_t t[50], late[2] = { 5, 6 }, back[1] = { 1000 };
	struct sb s;
	struct lo l;
	size_t i, before;

	nout = 0;
	CHECK_EQ(lo_init(&l, 2, 64, 100, collect, NULL), 0);
	for (i = 0; i < 50; i++)
		t[i] = 10 + 10 * i;
	build(&s, 0, 0, t, 50);
	CHECK_EQ(lo_chunk(&l, 0, &s.c), 0);
	/* buffer 1 said nothing: once 100 ns behind, it is not waited for */
	CHECK(nout >= 40);
	for (i = 1; i < nout; i++)
		CHECK(out[i].ts >= out[i - 1].ts);
	before = nout;
	build(&s, 0, 0, late, 2);
	CHECK_EQ(lo_chunk(&l, 1, &s.c), 0);
	CHECK_EQ(l.st.late, 2);
	build(&s, 1, 0, back, 1);
	CHECK_EQ(lo_chunk(&l, 1, &s.c), 0);
	CHECK_EQ(lo_finish(&l), 0);
	/* the rest of buffer 0, one loss for the two late records, 1000 */
	CHECK_EQ(nout, 50 + 1 + 1);
	for (i = 1; i < nout && i < OUT_MAX; i++)
		CHECK(out[i].ts >= out[i - 1].ts);
	size_t losses = 0;

	for (i = before; i < nout; i++) {
		if (out[i].kind != VR_LOSS)
			continue;
		losses++;
		CHECK_EQ(out[i].loss_kind, LO_LATE);
		CHECK_EQ(out[i].events, 2);
		CHECK_EQ(out[i].buf, 1);
	}
	CHECK_EQ(losses, 1);
	CHECK_EQ(out[nout - 1].ts, 1000);
	CHECK_EQ(out[nout - 1].buf, 1);
	lo_free(&l);
}

/* Timestamps far from 0 (a host's clock since boot): a buffer that has
 * delivered nothing yet gets the lag from the first record, not from its
 * watermark 0, so its first sub-buffer, a little later, is still in order. */
static void late_start(void)
{
	static const uint64_t a[] = { 5000000010, 5000000030, 5000000050 },
			      b[] = { 5000000020 };
	struct lo l;

	/* buffer 1: 40 ns after the first record, within the lag of 100 */
	two(&l, 100, a, 3, b, 1);
	CHECK_EQ(lo_finish(&l), 0);
	CHECK_EQ(nout, 4);
	CHECK_EQ(l.st.late, 0);
	CHECK_EQ(out[1].ts, 5000000020);
	CHECK_EQ(out[1].buf, 1);
	lo_free(&l);
}

static void drained_buffers(void)
{
	uint64_t t[50], t2[1] = { 600 }, starved[2] = { 5, 6 }, below[1] = { 400 };
	struct sb s;
	struct lo l;
	size_t i;

	nout = 0;
	CHECK_EQ(lo_init(&l, 2, 64, 100, collect, NULL), 0);
	/* no clock offset known yet: the word only marks the buffer */
	CHECK_EQ(lo_drained(&l, 1, 900), 0);
	for (i = 0; i < 50; i++)
		t[i] = 10 + 10 * i;
	build(&s, 0, 0, t, 50);
	s.c.taken_ns = 1000;	/* host = monotonic - 500, at least */
	CHECK_EQ(lo_chunk(&l, 0, &s.c), 0);
	build(&s, 1, 0, t2, 1);
	s.c.taken_ns = 2000;	/* taken late: a smaller offset, not kept */
	CHECK_EQ(lo_chunk(&l, 0, &s.c), 0);
	CHECK_EQ(l.off, -500);
	/* 590 ns behind, lag 100: still waited for, its reader said nothing since */
	CHECK_EQ(nout, 0);
	/* the starved reader's records: in order, none late */
	build(&s, 0, 0, starved, 2);
	s.c.taken_ns = 1010;
	CHECK_EQ(lo_chunk(&l, 1, &s.c), 0);
	CHECK_EQ(nout, 2);
	CHECK_EQ(out[0].ts, 5);
	CHECK_EQ(out[1].ts, 6);
	/* found empty at 1200: host 700 at least, less the lag: up to 600 */
	CHECK_EQ(lo_drained(&l, 1, 1200), 0);
	CHECK_EQ(nout, 2 + 51);
	for (i = 1; i < nout; i++)
		CHECK(out[i].ts >= out[i - 1].ts);
	CHECK_EQ(l.st.late, 0);
	/* below what its reader's word allowed: late, not moved up to it */
	build(&s, 1, 0, below, 1);
	s.c.taken_ns = 1300;
	CHECK_EQ(lo_chunk(&l, 1, &s.c), 0);
	CHECK_EQ(l.st.late, 1);
	CHECK_EQ(lo_finish(&l), 0);
	/* the 51 records of buffer 0 and one loss for the late one */
	CHECK_EQ(nout, 2 + 51 + 1);
	CHECK_EQ(out[nout - 1].kind, VR_LOSS);
	CHECK_EQ(out[nout - 1].loss_kind, LO_LATE);
	CHECK_EQ(out[nout - 1].buf, 1);
	lo_free(&l);
}

static void losses_and_gaps(void)
{
	static const uint64_t a[] = { 100, 110 }, b[] = { 200 }, c[] = { 300 };
	struct sb s;
	struct lo l;

	nout = 0;
	CHECK_EQ(lo_init(&l, 1, 16, 0, collect, NULL), 0);
	build(&s, 3, 0, a, 2);	/* the first chunk's seq is no gap */
	CHECK_EQ(lo_chunk(&l, 0, &s.c), 0);
	build(&s, 4, 7, b, 1);	/* 7 records overwritten or dropped */
	CHECK_EQ(lo_chunk(&l, 0, &s.c), 0);
	build(&s, 7, 7, c, 1);	/* sub-buffers 5 and 6 never taken */
	CHECK_EQ(lo_chunk(&l, 0, &s.c), 0);
	CHECK_EQ(lo_finish(&l), 0);
	CHECK_EQ(nout, 6);
	CHECK_EQ(out[0].kind, VR_EVENT);
	CHECK_EQ(out[1].kind, VR_EVENT);
	CHECK_EQ(out[2].kind, VR_LOSS);
	CHECK_EQ(out[2].events, 7);
	CHECK_EQ(out[2].ts, 200);
	CHECK_EQ(out[3].kind, VR_EVENT);
	CHECK_EQ(out[4].kind, VR_GAP);
	CHECK_EQ(out[4].events, 2);
	CHECK_EQ(out[5].kind, VR_EVENT);
	CHECK_EQ(out[5].ts, 300);
	CHECK_EQ(l.st.lost_events, 7);
	CHECK_EQ(l.st.gap_subbufs, 2);
	CHECK_EQ(l.st.bad, 0);
	lo_free(&l);

	/* a record that runs past the sub-buffer: the rest of it is one VR_BAD */
	nout = 0;
	CHECK_EQ(lo_init(&l, 1, 16, 0, collect, NULL), 0);
	build(&s, 0, 0, a, 2);
	s.c.len = 24;
	s.c.nr_records = 0;
	CHECK_EQ(lo_chunk(&l, 0, &s.c), 0);
	CHECK_EQ(lo_finish(&l), 0);
	CHECK_EQ(nout, 2);
	CHECK_EQ(out[0].kind, VR_EVENT);
	CHECK_EQ(out[1].kind, VR_BAD);
	CHECK_EQ(l.st.bad, 1);
	lo_free(&l);
}

static void bounded(void)
{
	uint64_t t[20];
	struct sb s;
	struct lo l;

	nout = 0;
	CHECK_EQ(lo_init(&l, 2, 4, 0, collect, NULL), 0);
	for (uint64_t k = 0; k < 10; k++) {
		for (size_t i = 0; i < 20; i++)
			t[i] = 1000 * k + 10 * i + 1;
		build(&s, k, 0, t, 20);
		CHECK_EQ(lo_chunk(&l, 0, &s.c), 0);
		CHECK(l.wm.st.peak <= 4);
	}
	/* buffer 1 never spoke: the first full queue declared it late, and
	 * a late buffer is not waited for */
	CHECK_EQ(nout, 200);
	CHECK_EQ(l.wm.st.stalls, 1);
	CHECK_EQ(lo_finish(&l), 0);
	CHECK_EQ(nout, 200);
	for (size_t i = 1; i < nout && i < OUT_MAX; i++)
		CHECK(out[i].ts > out[i - 1].ts);
	CHECK_EQ(l.st.late, 0);
	CHECK_EQ(l.wm.st.peak, 4);
	lo_free(&l);
}

int main(void)
{
	two_buffers();
	quiet_buffer();
	late_start();
	drained_buffers();
	losses_and_gaps();
	bounded();
	return check_result("online-live-order");
}
