/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Recording into the guest session's ring buffers.
 */
#ifndef VMSCOPE_GUEST_RECORD_H
#define VMSCOPE_GUEST_RECORD_H

#include "../ringbuf/ringbuf.h"

/*
 * The recording session's per-CPU buffers, or NULL: published by the
 * session code (kmod-session/) through vmscope_session_ops, cleared and
 * followed by a grace period before the buffers are flushed and freed.
 * Writers run with preemption disabled and READ_ONCE() it once.
 */
extern struct vmscope_rb_chan *vmscope_guest_rec_chan;

#endif
