/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vmscope ring buffer: per-CPU buffers of N sub-buffers, lock-free
 * reserve/commit by the owning CPU (nesting-safe), one reader per buffer
 * taking whole committed sub-buffers with get/put. Memory layout and record
 * format: include/vmscope/ringbuf_abi.h. Design notes: ringbuf/README.md.
 */
#ifndef VMSCOPE_RINGBUF_H
#define VMSCOPE_RINGBUF_H

#include "rb_shim.h"
#include <vmscope/ringbuf_abi.h>

struct vmscope_rb_buf;

/* Called once per delivered (complete) sub-buffer, in writer context (may be
 * NMI): must only flag or queue work (irq_work) for a batched wake-up. */
typedef void (*vmscope_rb_deliver_fn)(struct vmscope_rb_buf *buf, void *arg);

struct vmscope_rb_buf {
	struct vmscope_rb_ctrl *ctrl;	/* shared with readers (mmap) */
	rb_u8 *data;			/* physical sub-buffer 0 */
	rb_u64 *slots;			/* ctrl->slots[0..N-1] */
	rb_u64 *commit;			/* ctrl->slots[N..2N-1] */
	rb_u64 sb_size;
	rb_u64 sb_mask;
	rb_u32 sb_shift;
	rb_u32 n_shift;
	rb_u64 n_mask;
	rb_u32 mode;
	vmscope_rb_deliver_fn on_deliver;
	void *deliver_arg;

	/*
	 * Set by a writer whose record this buffer dropped (lost_full,
	 * lost_too_big), before anything else of the drop happens; cleared
	 * by the buffer's user, on the buffer's CPU like a writer. The guest
	 * module restates the CPU's task after a drop (guest-kmod/record.h).
	 */
	bool wr_dropped;

	/* reader-private: one reader per buffer, serialized by the caller */
	rb_u64 rd_seq;			/* next sequence the reader wants
					 * (rb_store: writers' CPUs read it) */
	rb_u32 rd_spare;		/* physical sub-buffer the reader owns */
	rb_u32 rd_held;			/* valid while rd_holding */
	bool rd_holding;
};

/* A channel: one buffer per CPU, all of one mode. */
struct vmscope_rb_chan {
	struct vmscope_rb_buf **bufs;	/* indexed by CPU; NULL if absent */
	rb_u32 nr_bufs;
};

/*
 * A session's channels as its writers see them: the channel of each event
 * id, resolved once when the session starts so that a writer pays one
 * load for the choice. Ids from VMSCOPE_RB_ROUTE_IDS on go nowhere.
 */
#define VMSCOPE_RB_ROUTE_IDS 64
struct vmscope_rb_route {
	struct vmscope_rb_chan *chan[VMSCOPE_RB_ROUTE_IDS];
};

static inline struct vmscope_rb_chan *
vmscope_rb_route_chan(const struct vmscope_rb_route *route, rb_u32 id)
{
	return id < VMSCOPE_RB_ROUTE_IDS ? route->chan[id] : NULL;
}

/* A reservation between reserve and commit. */
struct vmscope_rb_ctx {
	struct vmscope_rb_buf *buf;
	void *payload;		/* where the caller writes len bytes */
	rb_u64 ts;		/* the record's timestamp */
	rb_u64 seq;		/* sub-buffer sequence */
	rb_u32 phys;		/* physical sub-buffer */
	rb_u32 rsize;		/* bytes reserved (aligned) */
	rb_u64 *commit;		/* the slot's commit word */
	rb_u32 sb_size;		/* its byte half when seq is complete */
};

/* What get_subbuf hands the reader. */
struct vmscope_rb_subbuf_ref {
	const void *ptr;	/* sub-buffer start (header) */
	rb_u32 phys;		/* physical index, for mmap readers */
	rb_u32 size;		/* sub-buffer size in bytes */
	rb_u64 seq;
};

/* Sizes. ctrl area is rounded to page_size so data starts page-aligned. */
rb_u64 vmscope_rb_ctrl_bytes(rb_u32 n_shift, rb_u64 page_size);
rb_u64 vmscope_rb_mem_bytes(rb_u32 sb_shift, rb_u32 n_shift, rb_u64 page_size);

/*
 * Initialise a buffer in mem (vmscope_rb_mem_bytes() bytes, any content).
 * sb_shift: 9..22 (512 B .. 4 MiB sub-buffers); n_shift: 1..16 (2..65536
 * sub-buffers). Returns 0 or -RB_EINVAL.
 */
int vmscope_rb_init(struct vmscope_rb_buf *buf, void *mem, rb_u32 sb_shift,
		    rb_u32 n_shift, rb_u32 mode, rb_u32 cpu, rb_u64 page_size);

/* Writer side: only on the buffer's CPU (with preemption disabled). */
int vmscope_rb_reserve_slow(struct vmscope_rb_buf *buf,
			    struct vmscope_rb_ctx *ctx, rb_u32 id, rb_u32 len);
rb_u32 vmscope_rb_claim_slow(struct vmscope_rb_buf *buf, rb_u64 seq);

/* Tag of sequence seq in a slot entry (40 bits; 0 means never claimed). */
static inline rb_u64 vmscope_rb_tag_of(rb_u64 seq)
{
	return (seq + 1) & ((1ull << 40) - 1);
}

/*
 * Reserve len payload bytes for event id. Returns 0 (ctx filled: write
 * ctx->payload, then vmscope_rb_commit()), -ENOSPC (dropped, counted),
 * -E2BIG (too big, counted) or -EINVAL (bad id).
 *
 * Inline fast path: the record fits in the open sub-buffer without
 * closing it, and the compact header can encode its time. The clock is
 * read after the offset, as in the slow path (see rb_core.c); anything
 * else, including a lost CAS, goes to the slow path, which starts over.
 */
static inline int vmscope_rb_reserve(struct vmscope_rb_buf *b,
				     struct vmscope_rb_ctx *ctx,
				     rb_u32 id, rb_u32 len)
{
	struct vmscope_rb_ctrl *c = b->ctrl;
	rb_u64 old = rb_load(&c->offset);
	rb_u64 ts = rb_clock();
	rb_u64 u = old & b->sb_mask;
	rb_u64 rsize = ((rb_u64)len + VMSCOPE_RB_REC_HDR_SIZE +
			VMSCOPE_RB_ALIGN - 1) & ~(rb_u64)(VMSCOPE_RB_ALIGN - 1);
	rb_u64 seq, e;
	rb_u32 phys;
	rb_u8 *rec;

	if (rb_unlikely(u == 0 || u + rsize >= b->sb_size ||
			id > VMSCOPE_RB_ID_MAX ||
			ts - rb_load(&c->last_ts) > VMSCOPE_RB_REC_TS_MASK ||
			!rb_cas_local(&c->offset, &old, old + rsize)))
		return vmscope_rb_reserve_slow(b, ctx, id, len);
	rb_store(&c->last_ts, ts);
	seq = old >> b->sb_shift;
	e = rb_load(&b->slots[seq & b->n_mask]);
	if (rb_likely(VMSCOPE_RB_SLOT_TAG(e) == vmscope_rb_tag_of(seq)))
		phys = VMSCOPE_RB_SLOT_PHYS(e);
	else	/* switch-in writer interrupted before its claim: help */
		phys = vmscope_rb_claim_slow(b, seq);
	rec = b->data + ((rb_u64)phys << b->sb_shift) + u;
	*(rb_u64 *)rec = VMSCOPE_RB_REC_HDR(ts, id, len, 0);
	ctx->buf = b;
	ctx->payload = rec + VMSCOPE_RB_REC_HDR_SIZE;
	ctx->ts = ts;
	ctx->seq = seq;
	ctx->phys = phys;
	ctx->rsize = (rb_u32)rsize;
	ctx->commit = &b->commit[seq & b->n_mask];
	ctx->sb_size = (rb_u32)b->sb_size;
	return 0;
}
/* slow path of commit: the sub-buffer is complete (v: final commit word) */
void vmscope_rb_deliver_ctx(const struct vmscope_rb_ctx *ctx, rb_u64 v);

/* Publish a reserved record. Inline: one local add (bytes and a record
 * count at once) and a compare; exactly one commit per sub-buffer lap
 * brings the bytes to the sub-buffer size and delivers it. */
static inline void vmscope_rb_commit(const struct vmscope_rb_ctx *ctx)
{
	rb_u64 v = rb_add_return_local(ctx->commit,
				       ctx->rsize + VMSCOPE_RB_COMMIT_REC);

	if (rb_unlikely((rb_u32)v == ctx->sb_size))
		vmscope_rb_deliver_ctx(ctx, v);
}

/* Reserve, one memcpy of the payload (inlined for constant len), commit. */
static inline int vmscope_rb_write(struct vmscope_rb_buf *buf, rb_u32 id,
				   const void *payload, rb_u32 len)
{
	struct vmscope_rb_ctx ctx;
	int ret = vmscope_rb_reserve(buf, &ctx, id, len);

	if (rb_unlikely(ret))
		return ret;
	rb_memcpy(ctx.payload, payload, len);
	vmscope_rb_commit(&ctx);
	return 0;
}
/* Close the current sub-buffer early so the reader can get it (switch
 * timer, session stop). On the buffer's CPU, like a writer. */
void vmscope_rb_flush(struct vmscope_rb_buf *buf);

/*
 * True while the reader has not yet taken every sub-buffer before the open
 * one. A switch timer flushes only when this is false: a reader that is
 * behind has data to read anyway, and each flush spends a whole slot, so a
 * reader away for N timer periods would otherwise come back to N nearly
 * empty sub-buffers and writers losing events with the ring's bytes almost
 * all free. Any CPU; the answer may be stale by the time it is used, which
 * costs at most one flush too many or one period of delay.
 */
bool vmscope_rb_reader_behind(const struct vmscope_rb_buf *buf);

/* Reader side: one reader per buffer, from any CPU. */
int vmscope_rb_get_subbuf(struct vmscope_rb_buf *buf,
			  struct vmscope_rb_subbuf_ref *ref);
void vmscope_rb_put_subbuf(struct vmscope_rb_buf *buf);

/* Events lost so far (all causes). */
rb_u64 vmscope_rb_lost(const struct vmscope_rb_buf *buf);

/*
 * Channel helpers: the current CPU's buffer of a channel. Every writer
 * reaches it here: vmscope_rb_chan_get_buf() disables preemption, so the
 * CPU (and a writer's claim on its buffer) stays the same until
 * vmscope_rb_chan_put_buf(), and returns that CPU's buffer, or NULL when
 * the channel has none there (preemption disabled all the same). Inline:
 * on the probes' fast path this is the compare and load the writers
 * below always made.
 */
static inline struct vmscope_rb_buf *
vmscope_rb_chan_get_buf(const struct vmscope_rb_chan *chan)
{
	unsigned int cpu;

	rb_preempt_disable();
	cpu = rb_this_cpu();
	return rb_likely(cpu < chan->nr_bufs) ? chan->bufs[cpu] : NULL;
}

static inline void vmscope_rb_chan_put_buf(void)
{
	rb_preempt_enable();
}

static inline int vmscope_rb_chan_write(struct vmscope_rb_chan *chan, rb_u32 id,
					const void *payload, rb_u32 len)
{
	struct vmscope_rb_buf *buf = vmscope_rb_chan_get_buf(chan);
	int ret = -RB_EINVAL;

	if (rb_likely(buf))
		ret = vmscope_rb_write(buf, id, payload, len);
	vmscope_rb_chan_put_buf();
	return ret;
}

/* On success preemption stays disabled until vmscope_rb_chan_commit(). */
static inline int vmscope_rb_chan_reserve(struct vmscope_rb_chan *chan,
					  struct vmscope_rb_ctx *ctx,
					  rb_u32 id, rb_u32 len)
{
	struct vmscope_rb_buf *buf = vmscope_rb_chan_get_buf(chan);
	int ret = -RB_EINVAL;

	if (rb_likely(buf))
		ret = vmscope_rb_reserve(buf, ctx, id, len);
	if (ret)
		vmscope_rb_chan_put_buf();
	return ret;
}

static inline void vmscope_rb_chan_commit(const struct vmscope_rb_ctx *ctx)
{
	vmscope_rb_commit(ctx);
	vmscope_rb_chan_put_buf();
}

#endif
