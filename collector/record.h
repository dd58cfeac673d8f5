/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One host recording into a trace folder (`vmscope record`):
 *
 *   reader thread per CPU ──(copy of one sub-buffer's records)──┐
 *     poll + GET_SUBBUF, copy, PUT_SUBBUF                        │ liburcu
 *                                                                ▼ wfcqueue
 *   writer thread: StreamChunk frames into TRACE/host-cpuN.vtf, one
 *   tf_writer per file; metadata.vtf by the main thread (start, stop).
 *
 * Memory is bounded: the queue holds at most max_queue bytes of copies;
 * a reader that finds it full stops taking sub-buffers, so the module's
 * ring buffer fills and its mode decides (discard counts the drops,
 * flight overwrites the oldest): the collector never grows without bound
 * when the disk is slower than the events.
 */
#ifndef VMSCOPE_COLLECTOR_RECORD_H
#define VMSCOPE_COLLECTOR_RECORD_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "host_bufs.h"
#include "vms.h"

/* What the writer thread dequeued, for a live consumer (rec_opts.tap). */
enum rec_tap_kind {
	REC_TAP_CHUNK,		/* a sub-buffer: host, or a guest CPU's */
	REC_TAP_LOSS,		/* a guest CPU's loss (its agent's, or a broken connection's) */
	REC_TAP_HELLO,		/* a guest agent connected: data, len its packed GuestHello */
	REC_TAP_GONE,		/* a guest agent's connection ended: data its reason (a string) */
	REC_TAP_DRAINED,	/* host buffer buf had delivered nothing more at taken_ns */
};

/* A sub-buffer as the writer thread dequeues it (its ring header's facts
 * and its records), or a guest connection's other news (kind). */
struct rec_chunk {
	uint32_t buf, cpu;		/* host: hb's buffer number, its CPU; guest: -, its CPU */
	uint32_t chan;			/* host: the buffer's session channel */
	uint64_t seq, begin_ts, end_ts, lost_before;
	/*
	 * Host: CLOCK_MONOTONIC when the reader took the sub-buffer (after
	 * the module delivered it, so end_ts was then in the past), or, for
	 * REC_TAP_DRAINED, just before the reader found the buffer empty:
	 * every sub-buffer delivered before then came ahead of it.
	 */
	uint64_t taken_ns;
	uint32_t nr_records, len;
	const void *data;		/* valid during the call */
	uint8_t kind;			/* enum rec_tap_kind */
	bool guest;			/* of VM vm's guest */
	uint32_t vm;
	/* REC_TAP_LOSS: as the LossRecord record writes; begin_ts 0 (the
	 * writer's: where the stream is) */
	uint32_t loss_kind;
	uint64_t loss_events, loss_subbufs;
};

/* Called on the writer thread for every host sub-buffer (in each buffer's
 * order) and, in each guest connection's order, for its hello, chunks,
 * losses and end; non-zero stops the recording as *stop would (the
 * consumer's reason is its own). */
typedef int rec_tap_fn(void *ctx, const struct rec_chunk *c);

struct rec_opts {
	const char *path;		/* trace folder; must not exist */
	struct vmscope_probe_ctl ctl;	/* which processes (nr_pids 0: all)
					 * and events (VMSCOPE_CTL_EVENTS) */
	const char *events;		/* the --events list as given, or NULL */
	unsigned int nvms;
	const struct vm_desc *vms;
	double duration_s;		/* 0: until *stop */
	uint64_t max_queue;		/* bytes; 0: the size of the ring buffers */
	int status;			/* live one-line status on stderr */
	int argc;
	char **argv;
	const char *module_version;
	uint32_t guest_port;		/* vsock port for the guest agents */
	/* >= 0: take the agents' connections from this AF_UNIX socket
	 * (SCM_RIGHTS, one per message) instead of listening on guest_port */
	int guest_handoff_fd;
	/* a live consumer of the host sub-buffers (`vmscope top`), or NULL */
	rec_tap_fn *tap;
	void *tap_ctx;
	/* with a tap: called once probing is on (the live consumer says so) */
	void (*tap_started)(void *ctx, const struct hb *h);
	/* only the metadata file is written (the tap is the consumer): no
	 * stream files, and nothing said on stderr at the start and end */
	bool no_streams;
};

/*
 * Record until *stop becomes non-zero or the duration passes. @h is
 * initialised (hb_init) with h->cfg holding the wished geometry and mode;
 * this starts the session. Returns 0, or 1 after printing why (trace
 * exists, session refused, write error such as a full disk: what was
 * written stays readable).
 */
int rec_run(struct hb *h, const struct rec_opts *o, volatile sig_atomic_t *stop);

#endif
