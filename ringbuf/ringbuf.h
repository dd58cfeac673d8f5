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

	/* reader-private: one reader per buffer, serialized by the caller */
	rb_u64 rd_seq;			/* next sequence the reader wants */
	rb_u32 rd_spare;		/* physical sub-buffer the reader owns */
	rb_u32 rd_held;			/* valid while rd_holding */
	bool rd_holding;
};

/* A channel: one buffer per CPU, all of one mode. */
struct vmscope_rb_chan {
	struct vmscope_rb_buf **bufs;	/* indexed by CPU; NULL if absent */
	rb_u32 nr_bufs;
};

/* A reservation between reserve and commit. */
struct vmscope_rb_ctx {
	struct vmscope_rb_buf *buf;
	void *payload;		/* where the caller writes len bytes */
	rb_u64 ts;		/* the record's timestamp */
	rb_u64 seq;		/* sub-buffer sequence */
	rb_u32 phys;		/* physical sub-buffer */
	rb_u32 rsize;		/* bytes reserved (aligned) */
	rb_u64 *commit;		/* the slot's commit counter */
	rb_u64 lap_end;		/* its value once seq is complete */
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
int vmscope_rb_reserve(struct vmscope_rb_buf *buf, struct vmscope_rb_ctx *ctx,
		       rb_u32 id, rb_u32 len);
/* slow path of commit: the sub-buffer is complete */
void vmscope_rb_deliver_ctx(const struct vmscope_rb_ctx *ctx);

/* Publish a reserved record. Inline: one local add and a compare; exactly
 * one commit per sub-buffer lap reaches lap_end and delivers it. */
static inline void vmscope_rb_commit(const struct vmscope_rb_ctx *ctx)
{
	if (rb_unlikely(rb_add_return_local(ctx->commit, ctx->rsize) ==
			ctx->lap_end))
		vmscope_rb_deliver_ctx(ctx);
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

/* Reader side: one reader per buffer, from any CPU. */
int vmscope_rb_get_subbuf(struct vmscope_rb_buf *buf,
			  struct vmscope_rb_subbuf_ref *ref);
void vmscope_rb_put_subbuf(struct vmscope_rb_buf *buf);

/* Events lost so far (all causes). */
rb_u64 vmscope_rb_lost(const struct vmscope_rb_buf *buf);

/* Channel helpers: pick the current CPU's buffer. */
static inline int vmscope_rb_chan_write(struct vmscope_rb_chan *chan, rb_u32 id,
					const void *payload, rb_u32 len)
{
	unsigned int cpu;
	int ret = -RB_EINVAL;

	rb_preempt_disable();
	cpu = rb_this_cpu();
	if (rb_likely(cpu < chan->nr_bufs && chan->bufs[cpu]))
		ret = vmscope_rb_write(chan->bufs[cpu], id, payload, len);
	rb_preempt_enable();
	return ret;
}

/* On success preemption stays disabled until vmscope_rb_chan_commit(). */
static inline int vmscope_rb_chan_reserve(struct vmscope_rb_chan *chan,
					  struct vmscope_rb_ctx *ctx,
					  rb_u32 id, rb_u32 len)
{
	unsigned int cpu;
	int ret = -RB_EINVAL;

	rb_preempt_disable();
	cpu = rb_this_cpu();
	if (rb_likely(cpu < chan->nr_bufs && chan->bufs[cpu]))
		ret = vmscope_rb_reserve(chan->bufs[cpu], ctx, id, len);
	if (ret)
		rb_preempt_enable();
	return ret;
}

static inline void vmscope_rb_chan_commit(const struct vmscope_rb_ctx *ctx)
{
	vmscope_rb_commit(ctx);
	rb_preempt_enable();
}

#endif
