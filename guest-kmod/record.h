/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Recording into the guest session's ring buffers.
 */
#ifndef VMSCOPE_GUEST_RECORD_H
#define VMSCOPE_GUEST_RECORD_H

#include <linux/irqflags.h>
#include "../ringbuf/ringbuf.h"

/*
 * The recording session's channels (which one each event goes to), or
 * NULL: published by the session code (kmod-session/) through
 * vmscope_session_ops, cleared and followed by a grace period before the
 * buffers are flushed and freed.
 */
extern const struct vmscope_rb_route *vmscope_guest_rec_route;

/* probes.c: a cpu_task record of current into @buf. */
void vmscope_guest_write_cpu_task(struct vmscope_rb_buf *buf);

/*
 * One record into the recording session's channel for @id, if any.
 * Writers run with preemption disabled (probes, hrtimer), so the grace
 * period after unpublishing covers them.
 *
 * After the buffer dropped a record, a cpu_task record restating the task
 * running here goes first: a reader that sees the loss no longer knows
 * this CPU's task (its sched_switch may be among the lost records), and
 * the drop closed the open sub-buffer, so the restatement lands after the
 * loss in the stream and gives the task back at once, not at the CPU's
 * next switch. The flag is cleared before the restatement is written, so
 * a drop of that record (or of a nested writer's) sets it again. Clearing
 * and writing happen with interrupts off: an interrupt's writer (the
 * switch timer's flush IPI, a vector entry) that ran in between would see
 * the flag clear and put its record first after the loss, and a flush
 * could then deliver it alone, the restatement in the next sub-buffer.
 */
static __always_inline void vmscope_guest_record(unsigned int id,
						 const void *payload,
						 size_t size)
{
	const struct vmscope_rb_route *route = READ_ONCE(vmscope_guest_rec_route);
	struct vmscope_rb_chan *chan;
	struct vmscope_rb_buf *buf;

	if (!route)
		return;
	chan = vmscope_rb_route_chan(route, id);
	if (!chan)
		return;
	buf = vmscope_rb_chan_get_buf(chan);
	if (likely(buf)) {
		if (unlikely(READ_ONCE(buf->wr_dropped))) {
			unsigned long flags;

			local_irq_save(flags);
			if (READ_ONCE(buf->wr_dropped)) {
				WRITE_ONCE(buf->wr_dropped, false);
				vmscope_guest_write_cpu_task(buf);
			}
			local_irq_restore(flags);
		}
		vmscope_rb_write(buf, id, payload, size);
	}
	vmscope_rb_chan_put_buf();
}

#endif
