/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The snapshot window's store (snap_store.h): items copied (the caller's
 * buffer reused at once), kept per stream in order; eviction by age (a
 * host chunk by its end, a guest item by the host time when it came;
 * stamps before now - keep go, at now - keep stay), by bytes (a stream
 * over its cap loses its oldest, the other streams keep theirs), a hold
 * that keeps old items until it is lifted, and the counts of each; the
 * live merge's placements (sn_placed) given to the chunk holding each
 * record's guest time, the stream's latest kept, a placement whose chunk
 * was evicted dropped, and the next one found from the head again.
 * Every expectation is computed here from the items fed, not read back
 * from the store's own counters.
 */
#include <stdint.h>
#include <string.h>

#include "../../tests/lib/check.h"
#include "snap_store.h"

static struct rec_chunk host(uint32_t buf, uint64_t seq, uint64_t b, uint64_t e,
			     const uint8_t *data, uint32_t len)
{
	return (struct rec_chunk){ .kind = REC_TAP_CHUNK, .buf = buf, .cpu = buf, .seq = seq,
				   .begin_ts = b, .end_ts = e, .nr_records = len / 8,
				   .len = len, .data = data };
}

static struct rec_chunk guest(uint32_t vm, uint32_t cpu, uint64_t seq, const uint8_t *data,
			      uint32_t len)
{
	/* guest clock: far from the host's, so a stamp taken from it shows */
	return (struct rec_chunk){ .kind = REC_TAP_CHUNK, .guest = true, .vm = vm, .cpu = cpu,
				   .seq = seq, .begin_ts = 7, .end_ts = 9, .nr_records = len / 8,
				   .len = len, .data = data };
}

static int add(struct sn_store *st, struct rec_chunk c)
{
	return sn_add(st, &c);
}

/* The seqs a stream holds, oldest first, into @out; how many. */
static size_t seqs(const struct sn_store *st, size_t i, uint64_t *out, size_t max)
{
	size_t n = 0;

	for (const struct sn_item *it = st->s[i].head; it && n < max; it = it->next)
		out[n++] = it->c.seq;
	return n;
}

static void test_age(void)
{
	struct sn_store st;
	uint8_t buf[64];
	uint64_t s[16];

	sn_init(&st, &(struct sn_cfg){ .keep_ns = 1000, .cap_bytes = 1u << 20 });
	/* host buffer 0: chunks ending at 100, 200, .. 1000 */
	for (uint64_t k = 1; k <= 10; k++) {
		memset(buf, (int)k, sizeof(buf));
		CHECK(add(&st, host(0, k, k * 100 - 50, k * 100, buf, 64)) == 0);
	}
	memset(buf, 0xee, sizeof(buf));	/* the store has its own copies */
	CHECK_EQ(st.ns, 1);
	CHECK_EQ(seqs(&st, 0, s, 16), 10);
	for (unsigned int k = 0; k < 10; k++)
		CHECK_EQ(s[k], k + 1);
	{
		const struct sn_item *it = st.s[0].head;

		for (uint64_t k = 1; it; k++, it = it->next) {
			CHECK_EQ(((const uint8_t *)it->c.data)[0], k);
			CHECK_EQ(((const uint8_t *)it->c.data)[63], k);
			CHECK(it->c.data == it->data);
			CHECK_EQ(it->stamp, k * 100);
		}
	}
	/* a guest chunk comes at host time 1000: stamped 1000, not 9 */
	CHECK(add(&st, guest(0, 1, 5, buf, 16)) == 0);
	CHECK_EQ(st.ns, 2);
	CHECK_EQ(st.s[1].head->stamp, 1000);
	/* host 1100: keep 1000 ns, so stamps below 100 go; 100 stays */
	CHECK(add(&st, host(0, 11, 1050, 1100, buf, 64)) == 0);
	CHECK_EQ(seqs(&st, 0, s, 16), 11);
	CHECK_EQ(s[0], 1);
	/* host 1150 on another buffer: 100 < 150 goes from buffer 0 too */
	CHECK(add(&st, host(1, 1, 1120, 1150, buf, 64)) == 0);
	CHECK_EQ(seqs(&st, 0, s, 16), 10);
	CHECK_EQ(s[0], 2);
	CHECK_EQ(st.s[0].evicted_age, 1);
	/* a hold from 200 keeps 200.. until lifted, at host time 2000 */
	sn_hold(&st, 200);
	CHECK(add(&st, host(1, 2, 1900, 2000, buf, 64)) == 0);
	CHECK_EQ(seqs(&st, 0, s, 16), 10);
	CHECK_EQ(s[0], 2);
	CHECK_EQ(seqs(&st, 1, s, 16), 1);	/* the guest's, stamped 1000 */
	sn_hold(&st, UINT64_MAX);
	/* now 2000, keep 1000: stamps below 1000 go; 1000 and 1100 stay */
	CHECK_EQ(seqs(&st, 0, s, 16), 2);
	CHECK(s[0] == 10 && s[1] == 11);
	CHECK_EQ(seqs(&st, 1, s, 16), 1);	/* guest, stamp 1000: at the limit */
	CHECK_EQ(st.s[0].evicted_age, 9);
	CHECK_EQ(st.s[0].evicted_cap, 0);
	/* bytes: 2 host chunks of buffer 0, the guest's, 2 of buffer 1 */
	CHECK_EQ(st.bytes, 4 * (SN_ITEM_COST + 64) + SN_ITEM_COST + 16);
	sn_free(&st);
}

static void test_cap(void)
{
	struct sn_store st;
	static uint8_t buf[1000];
	uint64_t s[64];
	const uint64_t cap = 3 * (SN_ITEM_COST + 1000);

	sn_init(&st, &(struct sn_cfg){ .keep_ns = UINT64_MAX / 2, .cap_bytes = cap });
	/* stream A fills its cap with 3 items; a 4th removes the oldest */
	for (uint64_t k = 0; k < 4; k++)
		CHECK(add(&st, host(2, k, k, k + 1, buf, 1000)) == 0);
	CHECK_EQ(seqs(&st, 0, s, 64), 3);
	CHECK(s[0] == 1 && s[1] == 2 && s[2] == 3);
	CHECK_EQ(st.s[0].evicted_cap, 1);
	CHECK_EQ(st.s[0].bytes, cap);
	/* a guest stream's small items: 10 fit beside A without touching it */
	for (uint64_t k = 0; k < 10; k++)
		CHECK(add(&st, guest(1, 0, k, buf, 8)) == 0);
	CHECK_EQ(seqs(&st, 0, s, 64), 3);
	CHECK_EQ(seqs(&st, 1, s, 64), 10);
	/* a guest loss counts too (no records: its fixed cost) */
	{
		struct rec_chunk l = { .kind = REC_TAP_LOSS, .guest = true, .vm = 1, .cpu = 0,
				       .loss_kind = 3, .loss_events = 42 };

		CHECK(sn_add(&st, &l) == 0);
		CHECK_EQ(st.s[1].tail->c.kind, REC_TAP_LOSS);
		CHECK_EQ(st.s[1].tail->c.loss_events, 42);
	}
	/* one item larger than the cap: kept nothing of A (at most cap) */
	{
		static uint8_t big[4000];

		CHECK(add(&st, host(2, 9, 10, 11, big, sizeof(big))) == 0);
		CHECK_EQ(st.s[0].items, 0);
		CHECK_EQ(st.s[0].bytes, 0);
		CHECK_EQ(st.s[0].evicted_cap, 5);
	}
	/* hello and gone are not kept */
	{
		struct rec_chunk h = { .kind = REC_TAP_HELLO, .guest = true, .vm = 1 };

		CHECK(sn_add(&st, &h) == 0);
		CHECK_EQ(st.s[1].items, 11);
	}
	CHECK_EQ(st.peak_bytes, cap + 10 * (SN_ITEM_COST + 8) + SN_ITEM_COST);
	sn_free(&st);
}

static void test_placed(void)
{
	uint8_t d[8] = { 0 };
	struct sn_store st;
	struct rec_chunk c;
	const struct sn_item *a, *b;

	/* room for two items of the stream */
	sn_init(&st, &(struct sn_cfg){ .keep_ns = UINT64_MAX / 2,
				       .cap_bytes = 2 * (SN_ITEM_COST + 8) });
	c = guest(0, 1, 0, d, 8);
	c.begin_ts = 100, c.end_ts = 199;
	CHECK_EQ(sn_add(&st, &c), 0);
	c.seq = 1, c.begin_ts = 200, c.end_ts = 299;
	CHECK_EQ(sn_add(&st, &c), 0);
	sn_placed(&st, 0, 1, 150, 5000);
	sn_placed(&st, 0, 1, 199, 5049);
	sn_placed(&st, 0, 1, 250, 5100);
	sn_placed(&st, 0, 2, 250, 9999);	/* no such stream: nothing */
	a = st.s[0].head;
	b = a->next;
	CHECK(a->placed && a->h_lo == 5000 && a->h_hi == 5049);
	CHECK(b->placed && b->h_lo == 5100 && b->h_hi == 5100);
	CHECK_EQ(st.s[0].h_placed, 5100);
	/* a third chunk evicts the first (the cap) */
	c.seq = 2, c.begin_ts = 300, c.end_ts = 399;
	CHECK_EQ(sn_add(&st, &c), 0);
	CHECK_EQ(st.s[0].items, 2);
	b = st.s[0].head;
	CHECK_EQ(b->c.seq, 1);
	sn_placed(&st, 0, 1, 299, 5150);
	sn_placed(&st, 0, 1, 310, 5200);
	CHECK(b->h_lo == 5100 && b->h_hi == 5150);
	CHECK(b->next->placed && b->next->h_lo == 5200);
	/* the chunk being placed evicted: found again from the head */
	c.seq = 3, c.begin_ts = 400, c.end_ts = 499;
	CHECK_EQ(sn_add(&st, &c), 0);
	c.seq = 4, c.begin_ts = 500, c.end_ts = 599;
	CHECK_EQ(sn_add(&st, &c), 0);
	sn_placed(&st, 0, 1, 350, 5250);	/* its chunk (seq 2) is gone */
	sn_placed(&st, 0, 1, 450, 5300);
	CHECK_EQ(st.s[0].head->c.seq, 3);
	CHECK(st.s[0].head->placed && st.s[0].head->h_lo == 5300);
	CHECK(!st.s[0].head->next->placed);
	CHECK_EQ(st.s[0].h_placed, 5300);
	sn_free(&st);
}

int main(void)
{
	test_age();
	test_cap();
	test_placed();
	return check_result("test_snap_store");
}
