/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host side of one guest agent connection: an incremental parser of
 * the guest→host stream. Everything in it is hostile input.
 *
 * The stream (AF_VSOCK, host CID 2, default port VMSCOPE_AGENT_PORT) is a
 * sequence of tracefmt frames (tracefmt/frame.h: 24-byte header with
 * magic, type, length, seq counted from 0 per connection, CRC32C of the
 * payload and of the header), each payload one protobuf message:
 *
 *   seq 0      FileHeader    role STREAM, origin side GUEST
 *   seq 1      GuestHello    protocol version, sync token, kernel, clock,
 *                            event table, state dump, per-CPU cursors,
 *                            kernel symbols (checked: tracefmt/gsym.h)
 *   seq 2...   StreamChunk   one committed guest sub-buffer, origin cpu n
 *              LossRecord    what the agent knows it dropped
 *
 * guest_link_feed() takes bytes as they arrive (any split), verifies every
 * frame (header CRC, flags, length bound, seq, payload CRC, type allowed in
 * this state) and every message (tf_msg_decode(): bounded allocation,
 * semantic checks; then the stream's own rules: origin side GUEST, cpu
 * below the hello's nr_cpu_ids, per-CPU chunk seqs increasing), and hands
 * each message to a callback. Memory is bounded: one frame of at most
 * max_frame payload bytes at a time, plus a per-CPU array sized by the
 * checked hello.
 *
 * Attribution: the callbacks get messages as the guest sent them; the
 * origin's vm field is whatever the guest claimed and must be ignored
 * (the caller knows the peer CID). guest_link overwrites origin.vm with
 * the vm number given at creation, so a careless consumer cannot use the
 * claimed one.
 */
#ifndef VMSCOPE_COLLECTOR_GUEST_LINK_H
#define VMSCOPE_COLLECTOR_GUEST_LINK_H

#include <stddef.h>
#include <stdint.h>

#include <vmscope/agent_port.h>

#include "file.pb-c.h"
#include "guest.pb-c.h"
#include "stream.pb-c.h"

#define VMSCOPE_GUEST_PROTOCOL	1
/* Default bound of one frame's payload: a 4 MiB sub-buffer plus framing. */
#define GUEST_LINK_MAX_FRAME_DEF	((4u << 20) + 4096)

/*
 * Callbacks: the message is valid only during the call. A non-zero return
 * stops the link (guest_link_feed() returns it, the error says so).
 * seq_gap (chunk): sub-buffers skipped since the previous chunk of that
 * CPU on this connection (the ring buffer was overwritten in flight mode);
 * the chunk's lost_before counts their events.
 */
struct guest_link_ops {
	int (*hello)(void *arg, const Vmscope__Trace__GuestHello *h);
	int (*chunk)(void *arg, const Vmscope__Trace__StreamChunk *c,
		     uint64_t seq_gap);
	int (*loss)(void *arg, const Vmscope__Trace__LossRecord *l);
};

struct guest_link;

/* max_frame 0: GUEST_LINK_MAX_FRAME_DEF. NULL on allocation failure. */
struct guest_link *guest_link_new(uint32_t vm, size_t max_frame,
				  const struct guest_link_ops *ops, void *arg);
void guest_link_free(struct guest_link *gl);

/*
 * Consume len bytes. 0: fine, more welcome. Negative errno on a violation
 * (-EPROTO stream rule, -EBADMSG checksum/undecodable, -EINVAL message
 * check, -EMSGSIZE frame too long, -ENOMEM) or the callback's own non-zero
 * value; the link is then dead: every later call returns the same value.
 */
int guest_link_feed(struct guest_link *gl, const uint8_t *data, size_t len);

/* Why the link died ("" while it lives). */
const char *guest_link_error(const struct guest_link *gl);

/* True between frames: a stream that ends here ended cleanly. */
int guest_link_at_boundary(const struct guest_link *gl);

/* Counters of what was accepted. */
struct guest_link_stats {
	uint64_t frames;
	uint64_t chunks;
	uint64_t records;
	uint64_t losses;
	uint64_t seq_gaps;	/* sub-buffers skipped, summed */
};
void guest_link_stats(const struct guest_link *gl, struct guest_link_stats *st);

/*
 * Losses across connections. The agent cannot know what a receiver kept of
 * a broken connection (no acknowledgements); each hello's cursors say what
 * it sent on earlier connections, per CPU. A receiver that counts what it
 * kept of one agent session (every connection, guest_link_kept per CPU)
 * calls this for each cursor of a reconnect's hello: the cursor minus what
 * was kept is what the broken connection lost. Returns the records lost
 * (0: none) and sets *chunks to the sub-buffers lost; *kept moves up to the
 * cursor, so a loss is counted once. A cursor below what was kept (an
 * agent that lies) counts nothing and leaves *kept alone.
 */
struct guest_link_kept {
	uint64_t chunks;
	uint64_t records;
};
uint64_t guest_link_reconnect_loss(struct guest_link_kept *kept,
				   const Vmscope__Trace__GuestCpuCursor *c,
				   uint64_t *chunks);

#endif
