/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Recording into the guest session's ring buffers.
 */
#ifndef VMSCOPE_GUEST_RECORD_H
#define VMSCOPE_GUEST_RECORD_H

#include "../ringbuf/ringbuf.h"

/*
 * The recording session's channels (which one each event goes to), or
 * NULL: published by the session code (kmod-session/) through
 * vmscope_session_ops, cleared and followed by a grace period before the
 * buffers are flushed and freed.
 */
extern const struct vmscope_rb_route *vmscope_guest_rec_route;

/*
 * One record into the recording session's channel for @id, if any.
 * Writers run with preemption disabled (probes, hrtimer), so the grace
 * period after unpublishing covers them.
 */
static __always_inline void vmscope_guest_record(unsigned int id,
						 const void *payload,
						 size_t size)
{
	const struct vmscope_rb_route *route = READ_ONCE(vmscope_guest_rec_route);
	struct vmscope_rb_chan *chan;

	if (!route)
		return;
	chan = vmscope_rb_route_chan(route, id);
	if (chan)
		vmscope_rb_chan_write(chan, id, payload, size);
}

#endif
