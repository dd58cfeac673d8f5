// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Ring buffer core, compiled unchanged into the kernel modules and into
 * userspace (tests, benchmark); primitives come from rb_shim.h.
 *
 * Positions are free-running byte offsets: sub-buffer sequence s covers
 * [s*S, (s+1)*S) and lives in logical slot s mod N, whose table entry names
 * the physical sub-buffer currently backing it. Offset o with o mod S == 0
 * means "sub-buffer o/S not begun yet"; the writer that moves the offset
 * onto or past a boundary closes the sub-buffer it leaves (switch-out), and
 * the writer that reserves the first record of a sub-buffer begins it
 * (switch-in). A sub-buffer is complete when S bytes were committed into
 * its slot for that lap: header and padding are committed at switch-out,
 * each record by its writer, so the switch-out always happens before
 * completion and the begin header is written before the switch-in writer's
 * own record is committed. The completing commit delivers the sub-buffer.
 * See README.md for the nesting and memory-ordering argument.
 */
#include "ringbuf.h"

#ifndef __KERNEL__
__thread unsigned int vmscope_rb_user_cpu;
#endif

/*
 * Unit tests build with VMSCOPE_RB_TEST_HOOKS to run nested writers at the
 * most delicate points, deterministically (like an interrupt landing
 * exactly there). Empty everywhere else.
 */
#ifdef VMSCOPE_RB_TEST_HOOKS
void (*vmscope_rb_test_hook)(struct vmscope_rb_buf *b, int point);
#define RB_HOOK(b, point)						\
	do {								\
		if (vmscope_rb_test_hook)				\
			vmscope_rb_test_hook((b), (point));		\
	} while (0)
#else
#define RB_HOOK(b, point) do { } while (0)
#endif

/* The ABI promises these sizes to readers on both sides. */
_Static_assert(sizeof(struct vmscope_rb_subbuf_hdr) == VMSCOPE_RB_SB_HDR_SIZE,
	       "sub-buffer header size");
_Static_assert(sizeof(struct vmscope_rb_ctrl) % 64 == 0,
	       "control area fixed part is whole cache lines");

#define RB_TAG_BITS	40
#define rb_tag_of	vmscope_rb_tag_of	/* ringbuf.h */

/* a - b in the 40-bit tag space, as a signed number. */
static inline long long rb_tag_diff(rb_u64 a, rb_u64 b)
{
	return (long long)((a - b) << (64 - RB_TAG_BITS)) >> (64 - RB_TAG_BITS);
}

static inline rb_u64 rb_align(rb_u64 v)
{
	return (v + VMSCOPE_RB_ALIGN - 1) & ~(rb_u64)(VMSCOPE_RB_ALIGN - 1);
}

static inline struct vmscope_rb_subbuf_hdr *rb_sb(struct vmscope_rb_buf *b,
						  rb_u32 phys)
{
	return (struct vmscope_rb_subbuf_hdr *)(b->data +
						((rb_u64)phys << b->sb_shift));
}

rb_u64 vmscope_rb_ctrl_bytes(rb_u32 n_shift, rb_u64 page_size)
{
	rb_u64 n = 1ull << n_shift;

	return (VMSCOPE_RB_CTRL_SIZE(n) + page_size - 1) & ~(page_size - 1);
}

rb_u64 vmscope_rb_mem_bytes(rb_u32 sb_shift, rb_u32 n_shift, rb_u64 page_size)
{
	return vmscope_rb_ctrl_bytes(n_shift, page_size) +
	       (((1ull << n_shift) + 1) << sb_shift);
}

int vmscope_rb_init(struct vmscope_rb_buf *b, void *mem, rb_u32 sb_shift,
		    rb_u32 n_shift, rb_u32 mode, rb_u32 cpu, rb_u64 page_size)
{
	struct vmscope_rb_ctrl *c = mem;
	rb_u64 n, i, ctrl_bytes;

	if (sb_shift < 9 || sb_shift > 22 || n_shift < 1 || n_shift > 16 ||
	    mode > VMSCOPE_RB_MODE_FLIGHT || page_size == 0 ||
	    (page_size & (page_size - 1)))
		return -RB_EINVAL;
	n = 1ull << n_shift;
	ctrl_bytes = vmscope_rb_ctrl_bytes(n_shift, page_size);
	memset(c, 0, VMSCOPE_RB_CTRL_SIZE(n));
	c->abi_version = VMSCOPE_RB_ABI_VERSION;
	c->mode = mode;
	c->subbuf_shift = sb_shift;
	c->nr_subbuf_shift = n_shift;
	c->cpu = cpu;
	c->ctrl_size = (rb_u32)ctrl_bytes;

	b->ctrl = c;
	b->data = (rb_u8 *)mem + ctrl_bytes;
	b->slots = c->slots;
	b->commit = c->slots + n;
	b->sb_shift = sb_shift;
	b->sb_size = 1ull << sb_shift;
	b->sb_mask = b->sb_size - 1;
	b->n_shift = n_shift;
	b->n_mask = n - 1;
	b->mode = mode;
	b->on_deliver = NULL;
	b->deliver_arg = NULL;
	/* slot i starts FREE on physical i; physical N is the reader's */
	for (i = 0; i < n; i++)
		b->slots[i] = VMSCOPE_RB_SLOT(0, i, VMSCOPE_RB_SLOT_FREE);
	b->rd_seq = 0;
	b->wr_dropped = false;
	b->rd_spare = (rb_u32)n;
	b->rd_held = 0;
	b->rd_holding = false;
	return 0;
}

rb_u64 vmscope_rb_lost(const struct vmscope_rb_buf *b)
{
	struct vmscope_rb_ctrl *c = b->ctrl;

	return rb_load(&c->lost_full) + rb_load(&c->lost_too_big) +
	       rb_load(&c->lost_overwritten);
}

/*
 * Can sequence seq begin in its slot? The slot must hold the previous lap
 * (seq - N), claimed and completely committed, or be untouched for the
 * first lap; in discard mode the reader must also have taken that lap.
 * An older tag means seq - N was begun but its claim is still pending in
 * an interrupted writer: not usable. A newer tag means our view is stale
 * (another writer began seq): true, and the caller's offset CAS fails.
 */
static bool rb_slot_usable(struct vmscope_rb_buf *b, rb_u64 seq)
{
	rb_u64 e = rb_load_acquire(&b->slots[seq & b->n_mask]);
	rb_u64 prev_tag = seq > b->n_mask ? rb_tag_of(seq - b->n_mask - 1) : 0;
	long long d = rb_tag_diff(VMSCOPE_RB_SLOT_TAG(e), prev_tag);
	rb_u32 st = VMSCOPE_RB_SLOT_STATE(e);

	if (d > 0)
		return true;
	if (d < 0)
		return false;
	if (st == VMSCOPE_RB_SLOT_FREE)
		return true;
	if (st == VMSCOPE_RB_SLOT_DELIVERED)
		return b->mode == VMSCOPE_RB_MODE_FLIGHT;
	return false;
}

/*
 * Physical sub-buffer backing sequence seq, claiming the slot for it if
 * nobody did yet. Any writer whose reservation lies in seq calls this
 * before touching the memory, so a nested writer never writes into a
 * physical sub-buffer that the reader could still swap out: once the entry
 * is WRITING with seq's tag, only the completing commit changes it.
 * Claiming a DELIVERED entry overwrites it (flight mode): its events are
 * added to lost_overwritten by whoever wins the CAS, exactly once.
 */
static rb_u32 rb_claim(struct vmscope_rb_buf *b, rb_u64 seq)
{
	rb_u64 *slot = &b->slots[seq & b->n_mask];
	rb_u64 tag = rb_tag_of(seq);
	rb_u64 e = rb_load(slot);

	while (VMSCOPE_RB_SLOT_TAG(e) != tag) {
		rb_u64 ne = VMSCOPE_RB_SLOT(tag, VMSCOPE_RB_SLOT_PHYS(e),
					    VMSCOPE_RB_SLOT_WRITING);
		bool victim = VMSCOPE_RB_SLOT_STATE(e) == VMSCOPE_RB_SLOT_DELIVERED;
		/* read before the claim: once claimed, a nested writer may
		 * rewrite the header at once. If anything changed meanwhile
		 * (reader swap, nested claim), the CAS fails and n is dropped. */
		rb_u64 n = victim ? rb_sb(b, VMSCOPE_RB_SLOT_PHYS(e))->records : 0;

		RB_HOOK(b, 2);	/* victim counted, claim not done */
		if (rb_cas_shared(slot, &e, ne)) {
			if (victim) {
				if (n)
					(void)rb_add_return_local(&b->ctrl->lost_overwritten, n);
				rb_inc_local(&b->ctrl->subbufs_overwritten);
			}
			return VMSCOPE_RB_SLOT_PHYS(e);
		}
		/* the reader swapped in its spare, or a nested writer
		 * claimed it: look again */
	}
	return VMSCOPE_RB_SLOT_PHYS(e);
}

/* Fast path of rb_claim: the slot is already ours for seq. */
static inline rb_u32 rb_phys_of(struct vmscope_rb_buf *b, rb_u64 seq)
{
	rb_u64 e = rb_load(&b->slots[seq & b->n_mask]);

	if (rb_likely(VMSCOPE_RB_SLOT_TAG(e) == rb_tag_of(seq)))
		return VMSCOPE_RB_SLOT_PHYS(e);
	return rb_claim(b, seq);
}

rb_u32 vmscope_rb_claim_slow(struct vmscope_rb_buf *b, rb_u64 seq)
{
	return rb_claim(b, seq);
}

/* v: the slot's final commit word for seq (bytes == S). */
static void rb_deliver(struct vmscope_rb_buf *b, rb_u64 seq, rb_u32 phys,
		       rb_u64 v)
{
	rb_sb(b, phys)->records = (rb_u32)(v >> 32);
	/* Nobody commits into this slot again before the next lap is
	 * claimed, which needs the DELIVERED store below: reset is safe. */
	rb_store(&b->commit[seq & b->n_mask], 0);
	/* release: header and every record of seq, all written by this CPU
	 * before this point, are visible to the reader that acquires it */
	rb_store_release(&b->slots[seq & b->n_mask],
			 VMSCOPE_RB_SLOT(rb_tag_of(seq), phys,
					 VMSCOPE_RB_SLOT_DELIVERED));
	rb_inc_local(&b->ctrl->subbufs_delivered);
	rb_store(&b->ctrl->wakeup_pending, 1);
	if (b->on_deliver)
		b->on_deliver(b, b->deliver_arg);
}

/* Commit header and padding (no record). */
static void rb_commit_bytes(struct vmscope_rb_buf *b, rb_u64 seq, rb_u32 phys,
			    rb_u64 bytes)
{
	rb_u64 v = rb_add_return_local(&b->commit[seq & b->n_mask], bytes);

	/* exactly one commit brings the lap to S bytes */
	if ((rb_u32)v == b->sb_size)
		rb_deliver(b, seq, phys, v);
}

/* Close sequence seq: used bytes (header included) and end timestamp,
 * then commit header + padding. */
static void rb_switch_out(struct vmscope_rb_buf *b, rb_u64 seq, rb_u64 end_ts,
			  rb_u64 used)
{
	rb_u32 phys = rb_phys_of(b, seq);
	struct vmscope_rb_subbuf_hdr *h = rb_sb(b, phys);

	h->end_ts = end_ts;
	h->data_size = (rb_u32)used;
	RB_HOOK(b, 4);	/* closed, header and padding not committed yet */
	rb_commit_bytes(b, seq, phys,
			VMSCOPE_RB_SB_HDR_SIZE + (b->sb_size - used));
}

/*
 * The whole reservation algorithm; vmscope_rb_reserve() (ringbuf.h) inlines
 * the common case (record fits in the open sub-buffer, compact header, CAS
 * wins) and comes here for everything else, having changed nothing.
 */
int vmscope_rb_reserve_slow(struct vmscope_rb_buf *b, struct vmscope_rb_ctx *ctx,
			    rb_u32 id, rb_u32 len)
{
	struct vmscope_rb_ctrl *c = b->ctrl;
	rb_u64 old, new, ts, begin, rsize, u, next = 0, lost_snap = 0;
	bool ext, sw_in, sw_out_prev;
	rb_u32 phys;
	rb_u8 *rec;

	if (rb_unlikely(id > VMSCOPE_RB_ID_MAX))
		return -RB_EINVAL;
	/* the first record of a sub-buffer never needs EXT, so this is the
	 * only size that can never be placed */
	if (rb_unlikely(len > VMSCOPE_RB_REC_SIZE_MAX ||
			rb_align(VMSCOPE_RB_REC_HDR_SIZE + len) >
			b->sb_size - VMSCOPE_RB_SB_HDR_SIZE)) {
		rb_store(&b->wr_dropped, true);
		rb_inc_local(&c->lost_too_big);
		return -RB_E2BIG;
	}

	old = rb_load(&c->offset);
	for (;;) {
		/* Read the clock after the offset: a writer that nests in
		 * here and wins the CAS first makes ours fail, and the retry
		 * reads a later time. Hence timestamps never decrease in
		 * buffer order and nested records get their own time. */
		ts = rb_clock();
		u = old & b->sb_mask;
		sw_in = false;
		sw_out_prev = false;
		if (rb_likely(u != 0)) {
			/* last_ts is a lower bound of the previous record's
			 * time (see README), so a small difference proves the
			 * 32-bit delta decodes right. */
			ext = ts - rb_load(&c->last_ts) > VMSCOPE_RB_REC_TS_MASK;
			rsize = rb_align(VMSCOPE_RB_REC_HDR_SIZE +
					 (ext ? VMSCOPE_RB_REC_EXT_SIZE : 0) + len);
			if (rb_likely(u + rsize <= b->sb_size)) {
				begin = old;
				new = old + rsize;
				goto cas;
			}
			next = old - u + b->sb_size;
			sw_out_prev = true;
		} else {
			next = old;
		}
		/* first record of sub-buffer next/S: its time is begin_ts */
		ext = false;
		rsize = rb_align(VMSCOPE_RB_REC_HDR_SIZE + len);
		if (rb_unlikely(!rb_slot_usable(b, next >> b->sb_shift))) {
			rb_u64 cur = rb_load(&c->offset);

			if (cur != old) {	/* stale view: retry */
				old = cur;
				continue;
			}
			rb_store(&b->wr_dropped, true);
			rb_inc_local(&c->lost_full);
			/* close the open sub-buffer: a record that would still
			 * fit there comes after this loss, so it goes to a later
			 * sub-buffer, after the lost_before that counts it, and
			 * a reader sees the loss where it happened */
			vmscope_rb_flush(b);
			return -RB_ENOSPC;
		}
		/* read inside the loop, after the offset: a later sub-buffer
		 * reads it later, so lost_before never decreases with seq */
		lost_snap = vmscope_rb_lost(b);
		sw_in = true;
		begin = next + VMSCOPE_RB_SB_HDR_SIZE;
		new = begin + rsize;
cas:
		if (rb_likely(rb_cas_local(&c->offset, &old, new)))
			break;
	}
	RB_HOOK(b, 1);	/* reserved, nothing claimed or written yet */
	rb_store(&c->last_ts, ts);

	if (sw_out_prev)
		rb_switch_out(b, old >> b->sb_shift, ts, u);

	ctx->seq = begin >> b->sb_shift;
	phys = rb_phys_of(b, ctx->seq);
	RB_HOOK(b, 3);	/* claimed, begin header not written yet */
	if (sw_in) {
		struct vmscope_rb_subbuf_hdr *h = rb_sb(b, phys);

		h->seq = ctx->seq;
		h->begin_ts = ts;
		h->lost_before = lost_snap;
		h->magic = VMSCOPE_RB_SB_MAGIC;
		h->records = 0;		/* set at delivery */
		h->reserved = 0;
	}
	/* exact fit: we close it; delivery still waits for our commit */
	if ((new & b->sb_mask) == 0)
		rb_switch_out(b, ctx->seq, ts, b->sb_size);

	rec = (rb_u8 *)rb_sb(b, phys) + (begin & b->sb_mask);
	*(rb_u64 *)rec = VMSCOPE_RB_REC_HDR(ts, id, len, ext);
	if (ext)
		*(rb_u64 *)(rec + VMSCOPE_RB_REC_HDR_SIZE) = ts;
	ctx->buf = b;
	ctx->payload = rec + VMSCOPE_RB_REC_HDR_SIZE +
		       (ext ? VMSCOPE_RB_REC_EXT_SIZE : 0);
	ctx->ts = ts;
	ctx->phys = phys;
	ctx->rsize = (rb_u32)rsize;
	ctx->commit = &b->commit[ctx->seq & b->n_mask];
	ctx->sb_size = (rb_u32)b->sb_size;
	return 0;
}

void vmscope_rb_deliver_ctx(const struct vmscope_rb_ctx *ctx, rb_u64 v)
{
	rb_deliver(ctx->buf, ctx->seq, ctx->phys, v);
}

void vmscope_rb_flush(struct vmscope_rb_buf *b)
{
	struct vmscope_rb_ctrl *c = b->ctrl;
	rb_u64 old = rb_load(&c->offset), u, ts;

	do {
		u = old & b->sb_mask;
		if (u == 0)	/* nothing open */
			return;
		ts = rb_clock();
	} while (!rb_cas_local(&c->offset, &old, old - u + b->sb_size));
	rb_switch_out(b, old >> b->sb_shift, ts, u);
}

bool vmscope_rb_reader_behind(const struct vmscope_rb_buf *b)
{
	rb_u64 open = rb_load(&b->ctrl->offset) >> b->sb_shift;

	return rb_load(&b->rd_seq) < open;
}

int vmscope_rb_get_subbuf(struct vmscope_rb_buf *b,
			  struct vmscope_rb_subbuf_ref *ref)
{
	if (b->rd_holding)
		return -RB_EBUSY;
	for (;;) {
		rb_u64 r = b->rd_seq;
		rb_u64 *slot = &b->slots[r & b->n_mask];
		rb_u64 e = rb_load_acquire(slot);
		rb_u64 tag = VMSCOPE_RB_SLOT_TAG(e);
		long long d = rb_tag_diff(tag, rb_tag_of(r));

		if (d < 0)		/* r not begun yet */
			return -RB_EAGAIN;
		if (d > 0) {
			/* r was overwritten: tag-1 >= r+N was begun, so every
			 * sequence up to tag-1-N is gone too */
			rb_store(&b->rd_seq, r + (rb_u64)d - (b->n_mask + 1) + 1);
			continue;
		}
		if (VMSCOPE_RB_SLOT_STATE(e) != VMSCOPE_RB_SLOT_DELIVERED)
			return -RB_EAGAIN;	/* still being written */
		/* swap our spare in; fails if a writer reclaimed it first */
		if (rb_cas_shared(slot, &e, VMSCOPE_RB_SLOT(tag, b->rd_spare,
							    VMSCOPE_RB_SLOT_FREE))) {
			b->rd_held = VMSCOPE_RB_SLOT_PHYS(e);
			b->rd_holding = true;
			rb_store(&b->rd_seq, r + 1);
			ref->phys = b->rd_held;
			ref->ptr = rb_sb(b, b->rd_held);
			ref->size = (rb_u32)b->sb_size;
			ref->seq = r;
			return 0;
		}
	}
}

void vmscope_rb_put_subbuf(struct vmscope_rb_buf *b)
{
	if (!b->rd_holding)
		return;
	b->rd_spare = b->rd_held;
	b->rd_holding = false;
}
