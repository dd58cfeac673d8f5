/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `vmscope agent` (inside a guest): its state, shared by cmd_agent.c (the
 * session and the poll loop), agent_hello.c (the handshake) and
 * agent_link.c (the connection and the frames).
 */
#ifndef VMSCOPE_AGENT_AGENT_H
#define VMSCOPE_AGENT_AGENT_H

#include <stddef.h>
#include <stdint.h>

#include <vmscope/ioctl.h>

#include "cmd_agent.h"
#include "guest.pb-c.h"

struct agent_cpu {
	const uint8_t *map;		/* the CPU's buffer, read-only; NULL: none */
	int holding;			/* a taken sub-buffer not yet sent */
	struct vmscope_subbuf_req req;	/* ... which one */
	uint64_t next_seq;		/* the seq after the last one sent */
	uint64_t chunks_sent;		/* handed to earlier connections */
	uint64_t records_sent;
	uint64_t conn_chunks;		/* ... and to the current one */
	uint64_t conn_records;
	uint64_t lost_total;		/* the ring buffer's, last seen */
	uint64_t lost_before;		/* ... as the last chunk sent said */
};

struct agent {
	int dev;
	struct vmscope_session_cfg cfg;
	struct agent_cpu *cpus;		/* cfg.nr_cpu_ids of them */
	uint32_t cid, port;
	int sock;			/* -1 while disconnected */
	uint32_t frame_seq;		/* next frame's seq on this connection */
	uint32_t connection;		/* connections made so far */
	uint8_t *frame;			/* one frame at a time, frame_cap bytes */
	size_t frame_cap;
	Vmscope__Trace__GuestHello *hello;	/* built once, cursors per connection */
	int verbose;
	/* the guest kernel's symbols (agent_syms.h); NULL: /proc's files */
	const char *kallsyms_path, *modules_path;
	/* totals, printed at the end */
	uint64_t chunks, records, bytes, send_failures;
};

/* agent_hello.c: descriptors, state dump, kernel and clock. 0 or -errno. */
int agent_hello_build(struct agent *a, uint64_t token, int sync_available,
		      uint64_t period_ns);
void agent_hello_free(struct agent *a);

/*
 * agent_link.c. agent_connect(): a new connection, FileHeader and hello
 * sent; 0, or -errno with the socket closed. agent_link_start(): the same
 * on a stream socket already connected (agent_connect()'s vsock one, or a
 * unit test's socketpair); it owns fd from then on. agent_send_chunk(): one
 * taken sub-buffer as a StreamChunk; 0, or -errno after which the
 * connection is closed (the sub-buffer stays taken, to be sent on the
 * next connection).
 */
/* The one frame buffer: a sub-buffer plus framing, or the hello if larger. */
int agent_frame_alloc(struct agent *a);
int agent_connect(struct agent *a);
int agent_link_start(struct agent *a, int fd);
int agent_send_chunk(struct agent *a, uint32_t cpu);
/*
 * Takes every delivered sub-buffer of every CPU from the module
 * (GET_SUBBUF), sends it, gives it back (PUT_SUBBUF), while connected.
 * Returns 0, or -1 on an ioctl error (fatal); a broken connection is not
 * an error here (agent_send_chunk() closed it, the sub-buffer stays
 * taken; the caller reconnects).
 */
int agent_drain(struct agent *a);
/* At the end: ring buffer drops no chunk reported (after the last one began). */
int agent_send_tail_loss(struct agent *a, uint32_t cpu);
void agent_disconnect(struct agent *a);

#endif
