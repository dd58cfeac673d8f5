// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unit tests of the ring buffer with a hand-driven clock: header encoding,
 * reserve/commit, sub-buffer switches (including exact fits), extended
 * timestamps, nesting, discard-mode loss counting, the switch timer's
 * reader-behind rule, flight-mode overwrite
 * accounting, the reader's spare sub-buffer, and decoder rejections.
 */
#include <stdint.h>
#include <string.h>

#include "rb_test_util.h"

static uint64_t now = 1000;
static uint64_t tick = 1;

static rb_u64 mock_clock(void)
{
	now += tick;
	return now;
}

rb_u64 (*vmscope_rb_mock_clock)(void) = mock_clock;

struct seen {
	uint64_t ts;
	uint16_t id;
	uint16_t size;
	uint64_t val;		/* first 8 payload bytes, 0 if shorter */
};

struct drain {
	struct seen recs[8192];
	unsigned nrec;
	uint64_t seqs[1024];
	struct vmscope_rb_subbuf_hdr hdrs[1024];
	unsigned nsb;
};

static struct drain D;

/*
 * Take every delivered sub-buffer as the reader does: its header must
 * name its sequence number and its records decode to the end. @rec sees
 * each record; @sb, if not NULL, each sub-buffer's header first.
 */
static void take_each(struct vmscope_rb_buf *b,
		      void (*sb)(const struct vmscope_rb_subbuf_hdr *h),
		      void (*rec)(const struct vmscope_rb_rec *r, void *ctx), void *ctx)
{
	struct vmscope_rb_subbuf_ref ref;

	while (vmscope_rb_get_subbuf(b, &ref) == 0) {
		struct vmscope_rb_iter it;
		struct vmscope_rb_rec r;
		int rc;

		CHECK_EQ(vmscope_rb_iter_init(&it, ref.ptr, ref.size), 0);
		CHECK_EQ(it.hdr.seq, ref.seq);
		if (sb)
			sb(&it.hdr);
		while ((rc = vmscope_rb_iter_next(&it, &r)) == 1)
			rec(&r, ctx);
		CHECK_EQ(rc, 0);
		vmscope_rb_put_subbuf(b);
	}
}

static void remember_sb(const struct vmscope_rb_subbuf_hdr *h)
{
	if (D.nsb < 1024) {
		D.seqs[D.nsb] = h->seq;
		D.hdrs[D.nsb] = *h;
		D.nsb++;
	}
}

static void remember_rec(const struct vmscope_rb_rec *r, void *ctx)
{
	struct seen *s = &D.recs[D.nrec < 8191 ? D.nrec++ : 8191];

	(void)ctx;
	s->ts = r->ts;
	s->id = r->id;
	s->size = r->size;
	s->val = 0;
	if (r->size >= 8)
		memcpy(&s->val, r->payload, 8);
}

/* Take every delivered sub-buffer, decode and remember it (D). */
static void drain(struct vmscope_rb_buf *b)
{
	take_each(b, remember_sb, remember_rec, NULL);
}

/* Close the open sub-buffer (the flush timer's work), then read what is
 * delivered. */
static void flush_drain(struct vmscope_rb_buf *b)
{
	vmscope_rb_flush(b);
	drain(b);
}

/* The sub-buffers delivered so far (since reset_drain), after reading the
 * new ones; delivered_after_flush(): after closing the open one first. */
static unsigned delivered(struct vmscope_rb_buf *b)
{
	drain(b);
	return D.nsb;
}

static unsigned delivered_after_flush(struct vmscope_rb_buf *b)
{
	flush_drain(b);
	return D.nsb;
}

static void reset_drain(void)
{
	memset(&D, 0, sizeof(D));
}

static void test_header_encoding(void)
{
	uint64_t h = VMSCOPE_RB_REC_HDR(0x123456789abcull, 0x7fff, 0xffff, 1);

	CHECK_EQ(VMSCOPE_RB_REC_TS_LOW(h), 0x56789abcu);
	CHECK_EQ(VMSCOPE_RB_REC_ID(h), 0x7fff);
	CHECK_EQ(VMSCOPE_RB_REC_SIZE(h), 0xffff);
	CHECK(VMSCOPE_RB_REC_IS_EXT(h));
	h = VMSCOPE_RB_REC_HDR(0xffffffffull, 0, 0, 0);
	CHECK_EQ(VMSCOPE_RB_REC_TS_LOW(h), 0xffffffffu);
	CHECK_EQ(VMSCOPE_RB_REC_ID(h), 0);
	CHECK_EQ(VMSCOPE_RB_REC_SIZE(h), 0);
	CHECK(!VMSCOPE_RB_REC_IS_EXT(h));
	/* id bits never leak into EXT */
	h = VMSCOPE_RB_REC_HDR(0, 0xffff, 1, 0);
	CHECK(!VMSCOPE_RB_REC_IS_EXT(h));
	CHECK_EQ(sizeof(struct vmscope_rb_subbuf_hdr), VMSCOPE_RB_SB_HDR_SIZE);
	CHECK_EQ(sizeof(struct vmscope_rb_ctrl) % 64, 0);
	h = VMSCOPE_RB_SLOT(0xffffffffffull, 0x3fffff, VMSCOPE_RB_SLOT_DELIVERED);
	CHECK_EQ(VMSCOPE_RB_SLOT_TAG(h), 0xffffffffffull);
	CHECK_EQ(VMSCOPE_RB_SLOT_PHYS(h), 0x3fffff);
	CHECK_EQ(VMSCOPE_RB_SLOT_STATE(h), VMSCOPE_RB_SLOT_DELIVERED);
}

static void test_reserve_commit(void)
{
	struct vmscope_rb_buf *b = rb_test_new(12, 2, VMSCOPE_RB_MODE_DISCARD, 0);
	struct vmscope_rb_ctx ctx;
	uint64_t v, ts[5];
	unsigned i;

	reset_drain();
	for (i = 0; i < 5; i++) {
		CHECK_EQ(vmscope_rb_reserve(b, &ctx, 10 + i, 8 + i), 0);
		CHECK_EQ((uintptr_t)ctx.payload % 8, 0);
		v = 100 + i;
		memcpy(ctx.payload, &v, 8);
		memset((char *)ctx.payload + 8, 0xab, i);
		ts[i] = ctx.ts;
		vmscope_rb_commit(&ctx);
	}
	/* nothing delivered before the sub-buffer is closed */
	CHECK_EQ(delivered(b), 0);
	CHECK_EQ(delivered_after_flush(b), 1);
	CHECK_EQ(D.nrec, 5);
	for (i = 0; i < 5 && i < D.nrec; i++) {
		CHECK_EQ(D.recs[i].id, 10 + i);
		CHECK_EQ(D.recs[i].size, 8 + i);
		CHECK_EQ(D.recs[i].val, 100 + i);
		CHECK_EQ(D.recs[i].ts, ts[i]);
	}
	CHECK_EQ(D.hdrs[0].seq, 0);
	CHECK_EQ(D.hdrs[0].begin_ts, ts[0]);
	CHECK(D.hdrs[0].end_ts > ts[4]);
	CHECK_EQ(D.hdrs[0].lost_before, 0);
	/* 5 records of 16, 24, 24, 24, 24 bytes */
	CHECK_EQ(D.hdrs[0].data_size, VMSCOPE_RB_SB_HDR_SIZE + 16 + 4 * 24);
	/* flushing an empty buffer is a no-op */
	CHECK_EQ(delivered_after_flush(b), 1);
	/* bad id and too big are refused; too big is counted */
	CHECK_EQ(vmscope_rb_write(b, VMSCOPE_RB_ID_MAX + 1, &v, 8), -EINVAL);
	CHECK_EQ(vmscope_rb_write(b, 1, NULL, 4096), -E2BIG);
	CHECK_EQ(b->ctrl->lost_too_big, 1);
	rb_test_free(b);
}

static void test_subbuf_switch(void)
{
	/* 512-byte sub-buffers: 464 bytes of records each */
	struct vmscope_rb_buf *b = rb_test_new(9, 3, VMSCOPE_RB_MODE_DISCARD, 0);
	uint64_t payload[7] = {0};	/* 56 bytes + 8 header = 64 per record */
	unsigned i;

	reset_drain();
	/* 7 records fill 448 bytes; an 8th (64) does not fit in 464 */
	for (i = 0; i < 16; i++) {
		payload[0] = i;
		CHECK_EQ(vmscope_rb_write(b, 1, payload, sizeof(payload)), 0);
	}
	CHECK_EQ(delivered(b), 2);		/* third sub-buffer still open */
	CHECK_EQ(delivered_after_flush(b), 3);
	CHECK_EQ(D.nrec, 16);
	for (i = 0; i < D.nrec; i++)
		CHECK_EQ(D.recs[i].val, i);
	for (i = 0; i < D.nsb; i++) {
		CHECK_EQ(D.seqs[i], i);
		CHECK_EQ(D.hdrs[i].seq, i);
		CHECK(D.hdrs[i].begin_ts <= D.hdrs[i].end_ts);
		if (i)
			CHECK(D.hdrs[i - 1].end_ts <= D.hdrs[i].begin_ts);
	}
	CHECK_EQ(D.hdrs[0].data_size, 48 + 7 * 64);
	CHECK_EQ(D.hdrs[2].data_size, 48 + 2 * 64);

	/* exact fit: 464 bytes = 1 record of 464 (payload 456) */
	reset_drain();
	{
		static uint8_t big[456];

		big[0] = 7;
		CHECK_EQ(vmscope_rb_write(b, 2, big, sizeof(big)), 0);
		/* closed and delivered at once, before any flush */
		CHECK_EQ(delivered(b), 1);
		CHECK_EQ(D.hdrs[0].data_size, 512);
		CHECK_EQ(D.nrec, 1);
		CHECK_EQ(D.recs[0].size, 456);
		/* flush after an exact fit has nothing to close */
		vmscope_rb_flush(b);
		CHECK_EQ(vmscope_rb_write(b, 3, big, 8), 0);
		CHECK_EQ(delivered_after_flush(b), 2);
		CHECK_EQ(D.seqs[1], D.seqs[0] + 1);
	}
	rb_test_free(b);
}

static void test_ext_timestamps(void)
{
	struct vmscope_rb_buf *b = rb_test_new(12, 2, VMSCOPE_RB_MODE_DISCARD, 0);
	uint64_t v = 0, want[6];
	struct vmscope_rb_ctx ctx;
	unsigned i;
	static const uint64_t jumps[6] = {
		5, 0xfffffff0ull, 0x100000000ull, 3, 0x7000000000ull, 1,
	};

	reset_drain();
	for (i = 0; i < 6; i++) {
		now += jumps[i];
		CHECK_EQ(vmscope_rb_reserve(b, &ctx, 1, 8), 0);
		v = i;
		memcpy(ctx.payload, &v, 8);
		want[i] = ctx.ts;
		vmscope_rb_commit(&ctx);
	}
	flush_drain(b);
	CHECK_EQ(D.nrec, 6);
	for (i = 0; i < 6 && i < D.nrec; i++) {
		CHECK_EQ(D.recs[i].ts, want[i]);
		CHECK_EQ(D.recs[i].val, i);
	}
	/* 1st: begin (compact); 2nd: gap < 2^32 compact; 3rd, 5th: ext */
	CHECK_EQ(D.hdrs[0].data_size, 48 + 16 + 16 + 24 + 16 + 24 + 16);
	rb_test_free(b);
}

/*
 * Nesting by hand: an "interrupt" writes between the outer writer's reserve
 * and commit, including enough records to close the outer's sub-buffer.
 * The sub-buffer may only be delivered once the outer commits.
 */
static void test_nesting(void)
{
	struct vmscope_rb_buf *b = rb_test_new(9, 2, VMSCOPE_RB_MODE_DISCARD, 0);
	struct vmscope_rb_ctx outer, inner;
	uint64_t v = 1, payload[7] = {0};
	unsigned i;

	reset_drain();
	CHECK_EQ(vmscope_rb_reserve(b, &outer, 1, 8), 0);
	memcpy(outer.payload, &v, 8);
	CHECK_EQ(vmscope_rb_reserve(b, &inner, 2, 8), 0);
	CHECK(inner.ts > outer.ts);	/* its own, later, timestamp */
	v = 2;
	memcpy(inner.payload, &v, 8);
	vmscope_rb_commit(&inner);
	for (i = 0; i < 10; i++) {	/* overflow into the next sub-buffer */
		payload[0] = 10 + i;
		CHECK_EQ(vmscope_rb_write(b, 3, payload, sizeof(payload)), 0);
	}
	CHECK_EQ(delivered(b), 0);		/* outer not committed yet */
	vmscope_rb_commit(&outer);
	CHECK_EQ(delivered(b), 1);
	CHECK_EQ(delivered_after_flush(b), 2);
	CHECK_EQ(D.nrec, 12);
	CHECK_EQ(D.recs[0].val, 1);
	CHECK_EQ(D.recs[1].val, 2);
	for (i = 1; i < D.nrec; i++)
		CHECK(D.recs[i].ts > D.recs[i - 1].ts);

	/* nested writer begins the sub-buffer while the outer switch-in
	 * writer is between its reserve and commit */
	reset_drain();
	{
		static uint8_t fill[456];

		CHECK_EQ(vmscope_rb_write(b, 4, fill, sizeof(fill)), 0); /* exact */
		CHECK_EQ(vmscope_rb_reserve(b, &outer, 5, 8), 0);      /* switch-in */
		CHECK_EQ(vmscope_rb_write(b, 6, &v, 8), 0);
		vmscope_rb_flush(b);	/* "timer" closes the outer's sub-buffer */
		CHECK_EQ(delivered(b), 1);	/* only the exact-fit one */
		memcpy(outer.payload, &v, 8);
		vmscope_rb_commit(&outer);
		CHECK_EQ(delivered(b), 2);
		CHECK_EQ(D.nrec, 3);
		CHECK_EQ(D.recs[1].id, 5);
		CHECK_EQ(D.recs[2].id, 6);
		CHECK_EQ(D.hdrs[1].begin_ts, D.recs[1].ts);
	}
	rb_test_free(b);
}

static void test_discard_loss(void)
{
	/* 4 sub-buffers of 512 B, 7 records of 64 B each */
	struct vmscope_rb_buf *b = rb_test_new(9, 2, VMSCOPE_RB_MODE_DISCARD, 0);
	uint64_t payload[7] = {0};
	unsigned i, ok = 0, dropped = 0;

	reset_drain();
	for (i = 0; i < 100; i++) {
		int rc;

		payload[0] = i;
		rc = vmscope_rb_write(b, 1, payload, sizeof(payload));
		if (rc == 0)
			ok++;
		else if (rc == -ENOSPC)
			dropped++;
	}
	/* 4 * 7 fit; the 29th does not (its sub-buffer would be slot 0) */
	CHECK_EQ(ok, 28);
	CHECK_EQ(dropped, 72);
	CHECK_EQ(b->ctrl->lost_full, 72);
	CHECK_EQ(vmscope_rb_lost(b), 72);
	CHECK_EQ(delivered(b), 4);		/* the first loss closed the 4th */
	/* reader freed slots: writing resumes, the loss shows in lost_before */
	for (i = 0; i < 8; i++) {
		payload[0] = 1000 + i;
		CHECK_EQ(vmscope_rb_write(b, 1, payload, sizeof(payload)), 0);
	}
	CHECK_EQ(delivered_after_flush(b), 6);		/* seq 4 (7 records, an exact fit), 5 */
	CHECK_EQ(D.nrec, 36);
	CHECK_EQ(D.hdrs[3].lost_before, 0);
	CHECK_EQ(D.hdrs[4].lost_before, 72);
	CHECK_EQ(ok + 8, D.nrec);
	for (i = 0; i + 1 < D.nsb; i++)
		CHECK_EQ(D.seqs[i + 1], D.seqs[i] + 1);
	/* data kept is the oldest: 0..27 then 1000.. */
	CHECK_EQ(D.recs[27].val, 27);
	CHECK_EQ(D.recs[28].val, 1000);
	rb_test_free(b);
}

/*
 * Where a loss shows: a record that still fits the open sub-buffer after
 * a bigger one was lost is written after the loss, so it must not go
 * before the lost_before that counts it. 2 sub-buffers of 512 B: 3 + 3
 * records of 136 B fill them but for a tail of 56 B; the 7th big record
 * is lost, and an 8-byte one that would fit the tail is lost too (the
 * loss closed the sub-buffer); once read, the next record begins a
 * sub-buffer whose lost_before is 2.
 */
static void test_discard_loss_position(void)
{
	struct vmscope_rb_buf *b = rb_test_new(9, 1, VMSCOPE_RB_MODE_DISCARD, 0);
	uint64_t big[16] = {0}, v = 7;
	unsigned i;

	reset_drain();
	for (i = 0; i < 6; i++)
		CHECK_EQ(vmscope_rb_write(b, 1, big, 128), 0);
	CHECK(!b->wr_dropped);
	CHECK_EQ(vmscope_rb_write(b, 1, big, 128), -ENOSPC);
	CHECK(b->wr_dropped);	/* for the writer's user: a drop happened */
	CHECK_EQ(vmscope_rb_write(b, 2, &v, sizeof(v)), -ENOSPC);
	CHECK_EQ(vmscope_rb_lost(b), 2);
	CHECK_EQ(delivered(b), 2);
	CHECK_EQ(D.nrec, 6);
	CHECK_EQ(vmscope_rb_write(b, 2, &v, sizeof(v)), 0);
	CHECK_EQ(delivered_after_flush(b), 3);
	CHECK_EQ(D.hdrs[2].lost_before, 2);
	CHECK_EQ(D.nrec, 7);
	CHECK_EQ(D.recs[6].id, 2);
	rb_test_free(b);
}

/*
 * A switch timer that flushes only while the reader is not behind never
 * spends the ring on nearly empty sub-buffers: 40 periods with one small
 * record each and no read lose nothing in 4 slots, where flushing every
 * period loses all but the first 4 records.
 */
static void test_periodic_flush_reader_behind(void)
{
	struct vmscope_rb_buf *b = rb_test_new(12, 2, VMSCOPE_RB_MODE_DISCARD, 0);
	uint64_t v;
	unsigned i, flushed = 0;

	reset_drain();
	CHECK(!vmscope_rb_reader_behind(b));
	for (i = 0; i < 40; i++) {
		v = i;
		CHECK_EQ(vmscope_rb_write(b, 1, &v, sizeof(v)), 0);
		if (!vmscope_rb_reader_behind(b)) {
			vmscope_rb_flush(b);
			flushed++;
		}
	}
	/* the first period's flush; then the reader is behind until it reads */
	CHECK_EQ(flushed, 1);
	CHECK(vmscope_rb_reader_behind(b));
	CHECK_EQ(vmscope_rb_lost(b), 0);
	CHECK_EQ(delivered(b), 1);
	CHECK(!vmscope_rb_reader_behind(b));	/* caught up: the next period flushes */
	CHECK_EQ(delivered_after_flush(b), 2);
	CHECK_EQ(D.nrec, 40);
	for (i = 0; i < 40 && i < D.nrec; i++)
		CHECK_EQ(D.recs[i].val, i);
	rb_test_free(b);

	/* the same periods, each flushed regardless of the reader */
	b = rb_test_new(12, 2, VMSCOPE_RB_MODE_DISCARD, 0);
	reset_drain();
	for (i = 0; i < 40; i++) {
		v = i;
		vmscope_rb_write(b, 1, &v, sizeof(v));
		vmscope_rb_flush(b);
	}
	CHECK_EQ(vmscope_rb_lost(b), 36);
	drain(b);
	CHECK_EQ(D.nrec, 4);
	rb_test_free(b);
}

static void test_flight_overwrite(void)
{
	struct vmscope_rb_buf *b = rb_test_new(9, 2, VMSCOPE_RB_MODE_FLIGHT, 0);
	uint64_t payload[7] = {0};
	unsigned i;

	reset_drain();
	for (i = 0; i < 100; i++) {
		payload[0] = i;
		CHECK_EQ(vmscope_rb_write(b, 1, payload, sizeof(payload)), 0);
	}
	/* 100 records = 14 full sub-buffers + 2 records in the 15th (seq 14).
	 * Slots hold seqs 11..14; 0..10 were overwritten: 11 * 7 events. */
	CHECK_EQ(b->ctrl->subbufs_overwritten, 11);
	CHECK_EQ(b->ctrl->lost_overwritten, 77);
	CHECK_EQ(b->ctrl->lost_full, 0);
	CHECK_EQ(delivered_after_flush(b), 4);
	CHECK_EQ(D.seqs[0], 11);
	CHECK_EQ(D.nrec, 23);
	CHECK_EQ(D.recs[0].val, 77);
	CHECK_EQ(D.recs[22].val, 99);
	CHECK_EQ(D.nrec + vmscope_rb_lost(b), 100);
	CHECK_EQ(D.hdrs[0].lost_before, 49);	/* seq 11 began before it overwrote seq 7 */
	rb_test_free(b);
}

/* The reader's sub-buffer survives the writer lapping the buffer. */
static void test_flight_reader_holds(void)
{
	struct vmscope_rb_buf *b = rb_test_new(9, 1, VMSCOPE_RB_MODE_FLIGHT, 0);
	struct vmscope_rb_subbuf_ref ref;
	uint64_t payload[7] = {0};
	uint8_t copy[512];
	unsigned i, total = 0;

	reset_drain();
	for (i = 0; i < 8; i++, total++) {
		payload[0] = i;
		CHECK_EQ(vmscope_rb_write(b, 1, payload, sizeof(payload)), 0);
	}
	CHECK_EQ(vmscope_rb_get_subbuf(b, &ref), 0);
	CHECK_EQ(ref.seq, 0);
	CHECK_EQ(vmscope_rb_get_subbuf(b, &ref), -EBUSY);
	memcpy(copy, ref.ptr, sizeof(copy));
	for (i = 0; i < 200; i++, total++) {
		payload[0] = 100 + i;
		CHECK_EQ(vmscope_rb_write(b, 1, payload, sizeof(payload)), 0);
	}
	CHECK(memcmp(copy, ref.ptr, sizeof(copy)) == 0);
	vmscope_rb_put_subbuf(b);
	flush_drain(b);
	CHECK(D.nsb >= 1);
	CHECK(D.seqs[0] > 1);		/* skipped the overwritten ones */
	CHECK_EQ(D.nrec + 7 + vmscope_rb_lost(b), total);
	rb_test_free(b);
}

/* Flight mode never reclaims a slot whose older lap is not committed. */
static void test_flight_uncommitted_wrap(void)
{
	struct vmscope_rb_buf *b = rb_test_new(9, 1, VMSCOPE_RB_MODE_FLIGHT, 0);
	struct vmscope_rb_ctx outer;
	uint64_t payload[7] = {0};
	unsigned i, dropped = 0;

	CHECK_EQ(vmscope_rb_reserve(b, &outer, 1, 8), 0);
	for (i = 0; i < 30; i++)
		if (vmscope_rb_write(b, 1, payload, sizeof(payload)) == -ENOSPC)
			dropped++;
	/* seq 0 (7 more records fit after the outer's 16 bytes) and seq 1
	 * (7) written; seq 2 would need slot 0, still held by the
	 * uncommitted outer record */
	CHECK_EQ(dropped, 30 - 14);
	CHECK_EQ(b->ctrl->lost_full, dropped);
	vmscope_rb_commit(&outer);
	CHECK_EQ(vmscope_rb_write(b, 1, payload, sizeof(payload)), 0);
	CHECK_EQ(b->ctrl->subbufs_overwritten, 1);
	CHECK_EQ(b->ctrl->lost_overwritten, 8);
	rb_test_free(b);
}

static void test_mixed_channel_modes(void)
{
	struct vmscope_rb_buf *hi = rb_test_new(9, 1, VMSCOPE_RB_MODE_FLIGHT, 0);
	struct vmscope_rb_buf *meta = rb_test_new(9, 1, VMSCOPE_RB_MODE_DISCARD, 0);
	struct vmscope_rb_chan chan_hi = { &hi, 1 }, chan_meta = { &meta, 1 };
	uint64_t payload[7] = {0};
	unsigned i, meta_ok = 0;

	vmscope_rb_user_cpu = 0;
	for (i = 0; i < 50; i++) {
		CHECK_EQ(vmscope_rb_chan_write(&chan_hi, 1, payload, sizeof(payload)), 0);
		meta_ok += vmscope_rb_chan_write(&chan_meta, 2, payload, sizeof(payload)) == 0;
	}
	CHECK_EQ(meta_ok, 14);
	CHECK_EQ(meta->ctrl->lost_full, 36);
	CHECK(hi->ctrl->lost_overwritten > 0);
	CHECK_EQ(hi->ctrl->lost_full, 0);
	vmscope_rb_user_cpu = 5;	/* no buffer for that CPU */
	CHECK_EQ(vmscope_rb_chan_write(&chan_hi, 1, payload, 8), -EINVAL);
	vmscope_rb_user_cpu = 0;
	rb_test_free(hi);
	rb_test_free(meta);
}

static unsigned delivered_calls;

static void on_deliver(struct vmscope_rb_buf *b, void *arg)
{
	(void)b;
	*(unsigned *)arg += 1;
}

/* The wake-up hook fires once per completed sub-buffer, never per event,
 * and channel reserve/commit goes to the current CPU's buffer. */
static void test_deliver_hook(void)
{
	struct vmscope_rb_buf *b = rb_test_new(9, 2, VMSCOPE_RB_MODE_DISCARD, 1);
	struct vmscope_rb_buf *bufs[2] = { NULL, b };
	struct vmscope_rb_chan chan = { bufs, 2 };
	struct vmscope_rb_ctx ctx;
	uint64_t payload[7] = {0};
	unsigned i;

	b->on_deliver = on_deliver;
	b->deliver_arg = &delivered_calls;
	vmscope_rb_user_cpu = 1;
	for (i = 0; i < 20; i++) {	/* 7 per sub-buffer */
		CHECK_EQ(vmscope_rb_chan_reserve(&chan, &ctx, 1, sizeof(payload)), 0);
		memcpy(ctx.payload, payload, sizeof(payload));
		vmscope_rb_chan_commit(&ctx);
	}
	CHECK_EQ(delivered_calls, 2);
	CHECK_EQ(b->ctrl->subbufs_delivered, 2);
	CHECK_EQ(b->ctrl->wakeup_pending, 1);
	vmscope_rb_flush(b);
	CHECK_EQ(delivered_calls, 3);
	vmscope_rb_user_cpu = 0;	/* no buffer on CPU 0 */
	CHECK_EQ(vmscope_rb_chan_reserve(&chan, &ctx, 1, 8), -EINVAL);
	rb_test_free(b);
}

/*
 * Nested writers run from hooks inside the core at the delicate points
 * (after the offset CAS, before a claim CAS, after claiming, after closing
 * a sub-buffer), two levels deep, as an interrupt landing exactly there
 * would. Every record must be read once or counted lost, in order.
 */
extern void (*vmscope_rb_test_hook)(struct vmscope_rb_buf *b, int point);

struct hook_stream {
	uint64_t seq, ok, drop;
};

static struct hook_stream hs[3];
static unsigned hook_depth, hook_calls, hook_points[5];

static void hooked_emit(struct vmscope_rb_buf *b, unsigned stream)
{
	uint64_t payload[12] = {0};
	uint32_t len = 16 + (uint32_t)((hs[stream].seq * 7 + stream * 13) % 80);
	int rc;

	payload[0] = stream;
	payload[1] = hs[stream].seq++;
	rc = vmscope_rb_write(b, 1 + stream, payload, len);
	if (rc == 0)
		hs[stream].ok++;
	else if (rc == -ENOSPC)
		hs[stream].drop++;
	else
		CHECK(!"unexpected reserve error");
}

static void hook(struct vmscope_rb_buf *b, int point)
{
	unsigned n;

	if (hook_depth >= 2 || (hook_calls++ % 3) == 2)
		return;
	hook_points[point]++;
	hook_depth++;
	for (n = 0; n < 1 + hook_calls % 3; n++)
		hooked_emit(b, hook_depth);
	hook_depth--;
}

/* The hooked writers' streams as read: per stream, the last sequence
 * number and the records read. */
struct hooked_read {
	uint64_t *last, *read;
};

/* A record of stream p[0], number p[1]: in order within its stream. */
static void hooked_rec(const struct vmscope_rb_rec *r, void *ctx)
{
	struct hooked_read *h = ctx;
	uint64_t p[2];

	memcpy(p, r->payload, sizeof(p));
	CHECK(p[0] < 3);
	if (p[0] >= 3)
		return;
	CHECK_EQ(r->id, 1 + p[0]);
	CHECK(h->last[p[0]] == UINT64_MAX || p[1] > h->last[p[0]]);
	h->last[p[0]] = p[1];
	h->read[p[0]]++;
}

static void hooked_drain(struct vmscope_rb_buf *b, uint64_t *last, uint64_t *read)
{
	struct hooked_read h = { last, read };

	take_each(b, NULL, hooked_rec, &h);
}

static void test_hooked_nesting(unsigned mode)
{
	struct vmscope_rb_buf *b = rb_test_new(9, 2, mode, 0);
	uint64_t last[3] = { UINT64_MAX, UINT64_MAX, UINT64_MAX }, read[3] = {0};
	uint64_t ok = 0, drop = 0, rd = 0;
	unsigned i, s;

	memset(hs, 0, sizeof(hs));
	memset(hook_points, 0, sizeof(hook_points));
	hook_calls = 0;
	vmscope_rb_test_hook = hook;
	for (i = 0; i < 4000; i++) {
		hooked_emit(b, 0);
		/* a reader that falls behind now and then */
		if (i % 97 < 40)
			hooked_drain(b, last, read);
	}
	/* no nested writer may run inside the final flush: it would open a
	 * sub-buffer that nothing closes */
	vmscope_rb_test_hook = NULL;
	vmscope_rb_flush(b);
	hooked_drain(b, last, read);
	for (s = 0; s < 3; s++) {
		ok += hs[s].ok;
		drop += hs[s].drop;
		rd += read[s];
		CHECK(hs[s].seq > 0);
	}
	for (i = 1; i <= 4; i++)
		CHECK(hook_points[i] > 0);	/* every point was exercised */
	CHECK(hook_points[2] > 0);
	CHECK_EQ(drop, b->ctrl->lost_full);
	CHECK_EQ(ok, rd + b->ctrl->lost_overwritten);
	CHECK_EQ(ok + drop, rd + vmscope_rb_lost(b));
	if (mode == VMSCOPE_RB_MODE_DISCARD)
		for (s = 0; s < 3; s++)
			CHECK_EQ(read[s], hs[s].ok);
	else
		CHECK(b->ctrl->lost_overwritten > 0);
	rb_test_free(b);
}

static void test_decoder_rejects(void)
{
	struct vmscope_rb_buf *b = rb_test_new(9, 1, VMSCOPE_RB_MODE_DISCARD, 0);
	struct vmscope_rb_subbuf_ref ref;
	struct vmscope_rb_iter it;
	struct vmscope_rb_rec r;
	uint8_t sb[512], bad[512];
	uint64_t v = 0, w;
	unsigned i;

	for (i = 0; i < 3; i++)
		CHECK_EQ(vmscope_rb_write(b, 1, &v, 8), 0);
	vmscope_rb_flush(b);
	CHECK_EQ(vmscope_rb_get_subbuf(b, &ref), 0);
	memcpy(sb, ref.ptr, sizeof(sb));
	vmscope_rb_put_subbuf(b);

	CHECK_EQ(vmscope_rb_iter_init(&it, sb, 47), -VMSCOPE_RB_ERR_SHORT);
	memcpy(bad, sb, sizeof(bad));
	bad[36] ^= 1;			/* magic */
	CHECK_EQ(vmscope_rb_iter_init(&it, bad, sizeof(bad)), -VMSCOPE_RB_ERR_MAGIC);
	CHECK_EQ(vmscope_rb_iter_init(&it, sb, 48 + 16), -VMSCOPE_RB_ERR_SIZE);
	memcpy(bad, sb, sizeof(bad));
	memcpy(&w, bad + 48 + 16, 8);	/* 2nd record: size past the end */
	w |= 0xffffull << VMSCOPE_RB_REC_SIZE_SHIFT;
	memcpy(bad + 48 + 16, &w, 8);
	CHECK_EQ(vmscope_rb_iter_init(&it, bad, sizeof(bad)), 0);
	CHECK_EQ(vmscope_rb_iter_next(&it, &r), 1);
	CHECK_EQ(vmscope_rb_iter_next(&it, &r), -VMSCOPE_RB_ERR_TRUNC);
	memcpy(bad, sb, sizeof(bad));
	memcpy(&w, bad + 48 + 16, 8);	/* 2nd record: time beyond end_ts */
	w = (w & ~0xffffffffull) | (uint32_t)(VMSCOPE_RB_REC_TS_LOW(w) + 1000000);
	memcpy(bad + 48 + 16, &w, 8);
	CHECK_EQ(vmscope_rb_iter_init(&it, bad, sizeof(bad)), 0);
	CHECK_EQ(vmscope_rb_iter_next(&it, &r), 1);
	CHECK_EQ(vmscope_rb_iter_next(&it, &r), -VMSCOPE_RB_ERR_TIME);
	/* the original decodes fully */
	CHECK_EQ(vmscope_rb_iter_init(&it, sb, sizeof(sb)), 0);
	for (i = 0; vmscope_rb_iter_next(&it, &r) == 1; i++)
		;
	CHECK_EQ(i, 3);
	rb_test_free(b);
}

int main(void)
{
	test_header_encoding();
	test_reserve_commit();
	test_subbuf_switch();
	test_ext_timestamps();
	test_nesting();
	test_discard_loss();
	test_discard_loss_position();
	test_periodic_flush_reader_behind();
	test_flight_overwrite();
	test_flight_reader_holds();
	test_flight_uncommitted_wrap();
	test_mixed_channel_modes();
	test_deliver_hook();
	test_hooked_nesting(VMSCOPE_RB_MODE_DISCARD);
	test_hooked_nesting(VMSCOPE_RB_MODE_FLIGHT);
	test_decoder_rejects();
	return check_result("ringbuf-unit");
}
