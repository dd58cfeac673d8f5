/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of one recording share: record.c (the run), rec_pipe.c
 * (host readers, writer), rec_streams.c (stream files), rec_meta.c
 * (metadata) and rec_guests.c (guest agent connections): the queue's node,
 * the per-stream write state, the recording itself and their functions.
 * Not an API.
 */
#ifndef VMSCOPE_COLLECTOR_REC_INT_H
#define VMSCOPE_COLLECTOR_REC_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <urcu/lfstack.h>
#include <urcu/wfcqueue.h>

#include "node_pool.h"
#include "reserve.h"
#include "record.h"
#include "session.pb-c.h"
#include "tracefmt.h"

/* A guest CPU number at or above this ends its connection (each guest
 * stream costs a file and a writer buffer: a guest must not make many). */
#define REC_GUEST_CPUS	256

/* NODE_HELLO, NODE_GONE, NODE_DRAINED: only with a tap (a guest's hello,
 * packed, its connection's end, the reason in data, and a host buffer
 * found empty), for the live consumer */
enum node_kind { NODE_CHUNK, NODE_LOSS, NODE_HELLO, NODE_GONE, NODE_DRAINED };

/* One sub-buffer's records (copied out of the ring, or out of a guest
 * frame), or a loss to record, on its way to the writer thread. */
struct node {
	struct cds_wfcq_node qn;
	struct cds_lfs_node free_node;	/* in node_pool's free stack */
	uint8_t kind;			/* enum node_kind */
	bool guest;
	bool pooled;			/* a node_pool slot, not malloc'd */
	uint32_t vm, cpu, nr_records, len;
	uint32_t buf;			/* host: hb's buffer number */
	uint64_t seq, begin_ts, end_ts, lost_before;
	/* host: CLOCK_MONOTONIC when the reader took the sub-buffer, or
	 * (NODE_DRAINED) just before it found the buffer empty */
	uint64_t taken_ns;
	uint32_t loss_kind;		/* NODE_LOSS: LossKind */
	uint64_t loss_events, loss_subbufs;
	const char *loss_detail;	/* a string literal */
	uint8_t data[];
};

/* Write side of one stream file (writer thread only). */
struct stream_w {
	struct tf_writer *w;
	bool used, guest, closed_ok;
	uint32_t vm, cpu;
	uint32_t chan, buf;		/* host: session channel, hb's buffer */
	uint64_t chunks, records, bytes, first_ts, last_ts;
	uint64_t last_lost, next_seq, gap_subbufs;
	uint64_t writer_lost;		/* events not written after an error */
	uint64_t guest_lost;		/* events in guest LossRecords */
	uint64_t frames_end, bytes_end;	/* at close */
	/* FileIndex columns; indexing stops at IDX_MAX chunks (optional) */
	uint64_t *idx_off, *idx_b, *idx_e;
	size_t nidx, capidx;
};

struct rthread {
	struct rec *r;
	unsigned int buf;		/* hb's buffer number */
	pthread_t t;
	uint64_t drained_ns;		/* the last NODE_DRAINED's taken_ns */
};

struct rec_guests;

struct rec {
	struct hb *h;
	const struct rec_opts *o;
	int dirfd, efd;
	uint8_t session_id[16];
	struct cds_wfcq_head qh;
	struct cds_wfcq_tail qt;
	uint64_t queued, qcap;		/* atomic */
	int draining, readers_left;	/* atomic; readers_left counts guest
					 * threads too: the writer ends after
					 * every producer */
	int write_err, read_err;	/* atomic: first errno */
	int tap_stop;			/* atomic: the tap asked to stop */
	uint64_t events, bytes, stalls;	/* atomic, for the status line */
	struct stream_w *sw;		/* [h->nbuf] */
	struct stream_w **gsw;		/* [nvms][REC_GUEST_CPUS], writer thread */
	struct rthread *rt;		/* [nrt] */
	unsigned int nrt;
	pthread_t wt;
	bool have_wt;
	struct tf_writer *meta;
	uint64_t session_bytes;		/* the last SessionMetadata frame's */
	struct rec_reserve reserve;	/* room for the final frames */
	unsigned int guest_streams;	/* atomic: opened by the writer */
	uint64_t start_rt, stop_rt;
	struct rec_guests *g;
	int meta_dirty;			/* atomic: a guest said hello */
	struct vm_tscs *tsc;		/* [nvms]: KVM's TSC relation at start */
	/* [nvms]: o->vms plus the vCPU threads that appeared since (main
	 * thread: rescan_vcpus, write_session) */
	struct vm_desc vms[VMSCOPE_MAX_PIDS];
	struct node_pool pool;		/* the queue's nodes (node_pool.h) */
};

void rec_set_err(int *slot, int err);

/* rec_pipe.c: the readers and the writer */
void rec_wake_writer(struct rec *r);
/* Hand a node to the writer, counted in the queue's bound (r->queued)
 * until the writer is done with it; whether it fits is the caller's
 * business. */
void rec_enqueue(struct rec *r, struct node *n);
/* A reader thread per mapped host buffer and the writer; 0 or -1 (said). */
int rec_start_threads(struct rec *r);
/* Readers take the rest (the session is stopped), then the writer ends. */
void rec_stop_threads(struct rec *r);

/* rec_streams.c: the stream files */
int rec_open_streams(struct rec *r);
struct stream_w *rec_guest_stream(struct rec *r, uint32_t vm, uint32_t cpu);
void rec_origin_of(const struct stream_w *s, Vmscope__Trace__Origin *o);
uint64_t rec_stream_lost(struct rec *r, const struct stream_w *s);
int rec_finish_stream(struct rec *r, struct stream_w *s, uint64_t *lost_total);
unsigned int rec_all_streams(struct rec *r, struct stream_w **out);
unsigned int rec_max_streams(struct rec *r);

/* rec_meta.c: the metadata file */
int rec_write_header(struct rec *r, struct tf_writer *w, int role, const struct stream_w *s);
int rec_write_session(struct rec *r, uint64_t stop_rt, uint64_t first_ts, uint64_t last_ts);
void rec_read_tsc(struct rec *r);
void rec_rescan_vcpus(struct rec *r);
int rec_write_final(struct rec *r, uint64_t last_ts);
/* Room for the final frames (reserve.h): for the streams open now or those
 * the VMs' vCPUs will open, whichever are more. */
uint64_t rec_final_room(struct rec *r);

#endif
