// SPDX-License-Identifier: GPL-2.0
/*
 * The pipe of one recording: a reader thread per host buffer (poll, take
 * a sub-buffer, copy it into a queue node, give it back) and the writer
 * thread that appends each node to its stream's file. See record.h for
 * the threads and the bounds.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <urcu/wfcqueue.h>

#include "rec_guests.h"
#include "rec_int.h"
#include "stream.pb-c.h"
#include "tsan_hb.h"
#include "util_clock.h"

/* FileIndex entries kept per stream at most */
#define IDX_MAX (1u << 20)
/* With a tap: a NODE_DRAINED per buffer at most this often */
#define DRAINED_EVERY_NS 100000000ull

/* ---- reader threads ---- */

/* Copy one taken sub-buffer into a queue node. NULL when out of memory. */
static struct node *copy_subbuf(struct rec *r, unsigned int buf, const unsigned char *sb)
{
	size_t sb_size = hb_subbuf_size(r->h, buf);
	struct vmscope_rb_subbuf_hdr hdr;
	struct node *n;
	size_t len;

	memcpy(&hdr, sb, sizeof(hdr));
	/* the module wrote it, but a bad size must not make us read past */
	len = hdr.data_size >= VMSCOPE_RB_SB_HDR_SIZE && hdr.data_size <= sb_size ?
	      hdr.data_size - VMSCOPE_RB_SB_HDR_SIZE : 0;
	n = node_pool_get(&r->pool, len);
	if (!n)
		return NULL;
	n->kind = NODE_CHUNK;
	n->cpu = hb_cpu(r->h, buf);
	n->buf = buf;
	n->nr_records = len ? hdr.records : 0;
	n->len = (uint32_t)len;
	n->seq = hdr.seq;
	n->begin_ts = hdr.begin_ts;
	n->end_ts = hdr.end_ts;
	n->lost_before = hdr.lost_before;
	memcpy(n->data, sb + VMSCOPE_RB_SB_HDR_SIZE, len);
	return n;
}

void rec_wake_writer(struct rec *r)
{
	uint64_t one = 1;

	if (write(r->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		rec_set_err(&r->read_err, errno);
}

void rec_enqueue(struct rec *r, struct node *n)
{
	__atomic_add_fetch(&r->queued, node_pool_cost(&r->pool, n), __ATOMIC_RELAXED);
	TSAN_RELEASE(n);
	cds_wfcq_enqueue(&r->qh, &r->qt, &n->qn);
	rec_wake_writer(r);
}

/*
 * Take what buffer @buf has delivered. Returns sub-buffers taken, -1 on
 * error; *@empty_ns: when the buffer was found with nothing more to take
 * (CLOCK_MONOTONIC just before the attempt), else 0.
 */
static int drain(struct rec *r, unsigned int buf, bool final, uint64_t *empty_ns)
{
	size_t sb_size = hb_subbuf_size(r->h, buf);
	struct vmscope_subbuf_req req;
	const unsigned char *sb;
	int taken = 0, got;
	uint64_t t;

	*empty_ns = 0;
	for (;;) {
		if (__atomic_load_n(&r->queued, __ATOMIC_RELAXED) +
		    node_pool_need(&r->pool, sb_size) > r->qcap) {
			/* the writer is behind: leave it in the ring (its mode
			 * decides); at the end, wait for the writer instead */
			__atomic_add_fetch(&r->stalls, 1, __ATOMIC_RELAXED);
			if (!final)
				return taken;
			usleep(1000);
			continue;
		}
		t = util_mono_ns();
		got = hb_get(r->h, buf, &req, &sb);
		if (got <= 0) {
			*empty_ns = got ? 0 : t;
			return got < 0 ? -1 : taken;
		}
		struct node *n = copy_subbuf(r, buf, sb);

		if (n)
			n->taken_ns = util_mono_ns();
		if (hb_put(r->h, buf)) {
			node_pool_put(&r->pool, n);
			return -1;
		}
		if (!n) {
			rec_set_err(&r->read_err, ENOMEM);
			return -1;
		}
			rec_enqueue(r, n);
		taken++;
	}
}

/*
 * For the live consumer: buffer @t's reader found it empty at @empty_ns
 * (CLOCK_MONOTONIC), so every sub-buffer the module delivered before then
 * is ahead of this node in the queue. The live ordering stage waits for
 * a buffer until its reader says so, rather than guessing from the other
 * buffers' records that it is quiet (a reader starved of CPU is not a
 * quiet buffer). A hint: without memory, none is sent.
 */
static void say_drained(struct rthread *t, uint64_t empty_ns)
{
	struct rec *r = t->r;
	struct node *n;

	if (!r->o->tap || !empty_ns || empty_ns - t->drained_ns < DRAINED_EVERY_NS)
		return;
	n = calloc(1, sizeof(*n));
	if (!n)
		return;
	cds_wfcq_node_init(&n->qn);
	n->kind = NODE_DRAINED;
	n->buf = t->buf;
	n->cpu = hb_cpu(r->h, t->buf);
	n->taken_ns = empty_ns;
	t->drained_ns = empty_ns;
	rec_enqueue(r, n);
}

static void *reader_main(void *arg)
{
	struct rthread *t = arg;
	struct rec *r = t->r;
	struct pollfd p = { .fd = r->h->fd, .events = POLLIN };
	uint64_t empty_ns;

	for (;;) {
		if (__atomic_load_n(&r->draining, __ATOMIC_ACQUIRE)) {
			/* the session is stopped and flushed: take the rest */
			if (drain(r, t->buf, true, &empty_ns) < 0)
				rec_set_err(&r->read_err, EIO);
			break;
		}
		int ready = poll(&p, 1, 100);
		int taken = drain(r, t->buf, false, &empty_ns);

		if (taken < 0) {
			rec_set_err(&r->read_err, EIO);
			break;
		}
		say_drained(t, empty_ns);
		/* poll() says "some buffer has data": when it is not ours,
		 * do not spin on another buffer's sub-buffers */
		if (ready > 0 && taken == 0)
			usleep(2000);
	}
	__atomic_sub_fetch(&r->readers_left, 1, __ATOMIC_RELEASE);
	rec_wake_writer(r);
	return NULL;
}

/* ---- writer thread ---- */

static void index_chunk(struct stream_w *s, uint64_t off, uint64_t b, uint64_t e)
{
	if (s->nidx == s->capidx) {
		size_t nc = s->capidx ? 2 * s->capidx : 256;
		uint64_t *o, *bb, *ee;

		if (nc > IDX_MAX)
			return;
		o = realloc(s->idx_off, nc * sizeof(*o));
		if (o)
			s->idx_off = o;
		bb = realloc(s->idx_b, nc * sizeof(*bb));
		if (bb)
			s->idx_b = bb;
		ee = realloc(s->idx_e, nc * sizeof(*ee));
		if (ee)
			s->idx_e = ee;
		if (!o || !bb || !ee)
			return;
		s->capidx = nc;
	}
	s->idx_off[s->nidx] = off;
	s->idx_b[s->nidx] = b;
	s->idx_e[s->nidx] = e;
	s->nidx++;
}

/* A loss a guest reported, or a broken guest connection's gap. */
static void write_loss(struct rec *r, struct node *n)
{
	struct stream_w *s = rec_guest_stream(r, n->vm, n->cpu);
	Vmscope__Trace__LossRecord lr = VMSCOPE__TRACE__LOSS_RECORD__INIT;
	Vmscope__Trace__Origin o = VMSCOPE__TRACE__ORIGIN__INIT;
	int e;

	if (!s || __atomic_load_n(&r->write_err, __ATOMIC_RELAXED))
		return;
	rec_origin_of(s, &o);
	lr.origin = &o;
	lr.kind = n->loss_kind;
	lr.events = n->loss_events;
	lr.subbufs = n->loss_subbufs;
	lr.begin_ts = s->last_ts;
	lr.detail = (char *)n->loss_detail;
	e = tf_writer_append_msg(s->w, TF_FRAME_LOSS, &lr.base);
	if (e)
		rec_set_err(&r->write_err, -e);
	else
		s->guest_lost += n->loss_events;
}

static void write_chunk(struct rec *r, struct node *n)
{
	struct stream_w *s = n->guest ? rec_guest_stream(r, n->vm, n->cpu) : &r->sw[n->buf];
	Vmscope__Trace__StreamChunk c = VMSCOPE__TRACE__STREAM_CHUNK__INIT;
	Vmscope__Trace__Origin o = VMSCOPE__TRACE__ORIGIN__INIT;
	struct tf_writer_stats st;
	int e;

	if (!s)		/* a guest stream whose file failed: the error stops us */
		return;
	if (n->seq > s->next_seq)
		s->gap_subbufs += n->seq - s->next_seq;
	s->next_seq = n->seq + 1;
	if (__atomic_load_n(&r->write_err, __ATOMIC_RELAXED) || !s->w) {
		s->writer_lost += n->nr_records;
		return;
	}
	rec_origin_of(s, &o);
	c.origin = &o;
	c.seq = n->seq;
	c.begin_ts = n->begin_ts;
	c.end_ts = n->end_ts;
	c.lost_before = n->lost_before;
	c.nr_records = n->nr_records;
	c.records.data = n->data;
	c.records.len = n->len;
	tf_writer_get_stats(s->w, &st);
	e = tf_writer_append_msg(s->w, TF_FRAME_CHUNK, &c.base);
	if (e) {
		rec_set_err(&r->write_err, -e);
		s->writer_lost += n->nr_records;
		return;
	}
	index_chunk(s, st.offset, n->begin_ts, n->end_ts);
	if (!s->chunks)
		s->first_ts = n->begin_ts;
	s->last_ts = n->end_ts;
	s->last_lost = n->lost_before;
	s->chunks++;
	s->records += n->nr_records;
	s->bytes += n->len;
	__atomic_add_fetch(&r->events, n->nr_records, __ATOMIC_RELAXED);
	__atomic_add_fetch(&r->bytes, n->len, __ATOMIC_RELAXED);
}

/*
 * The queue is empty: hand what the writers buffered to the kernel (no
 * fsync), so a killed recorder loses only what was still queued, not up
 * to a writer buffer per CPU. Costs a write per chunk at low rates only.
 */
static void flush_idle(struct rec *r)
{
	for (unsigned int i = 0; i < r->h->nbuf; i++) {
		int e;

		if (!r->sw[i].w)
			continue;
		e = tf_writer_flush(r->sw[i].w);
		if (e)
			rec_set_err(&r->write_err, -e);
	}
	for (unsigned int vm = 0; r->gsw && vm < r->o->nvms; vm++)
		for (unsigned int cpu = 0; cpu < REC_GUEST_CPUS; cpu++) {
			int e;

			if (!r->gsw[vm][cpu].w)
				continue;
			e = tf_writer_flush(r->gsw[vm][cpu].w);
			if (e)
				rec_set_err(&r->write_err, -e);
		}
}

/* A node to the live consumer, if there is one. */
static void tap_chunk(struct rec *r, const struct node *n)
{
	static const uint8_t kinds[] = { [NODE_CHUNK] = REC_TAP_CHUNK, [NODE_LOSS] = REC_TAP_LOSS,
					 [NODE_HELLO] = REC_TAP_HELLO, [NODE_GONE] = REC_TAP_GONE,
					 [NODE_DRAINED] = REC_TAP_DRAINED };
	const struct rec_chunk c = { .buf = n->buf, .cpu = n->cpu, .seq = n->seq,
				     .chan = n->guest ? 0 : hb_chan(r->h, n->buf),
				     .begin_ts = n->begin_ts, .end_ts = n->end_ts,
				     .lost_before = n->lost_before, .taken_ns = n->taken_ns,
				     .nr_records = n->nr_records, .len = n->len,
				     .data = n->data, .kind = kinds[n->kind],
				     .guest = n->guest, .vm = n->vm,
				     .loss_kind = n->loss_kind,
				     .loss_events = n->loss_events,
				     .loss_subbufs = n->loss_subbufs };

	if (__atomic_load_n(&r->tap_stop, __ATOMIC_RELAXED))
		return;
	if (r->o->tap(r->o->tap_ctx, &c))
		__atomic_store_n(&r->tap_stop, 1, __ATOMIC_RELAXED);
}

static void *writer_main(void *arg)
{
	struct rec *r = arg;
	struct pollfd p = { .fd = r->efd, .events = POLLIN };

	for (;;) {
		struct cds_wfcq_node *qn = __cds_wfcq_dequeue_blocking(&r->qh, &r->qt);

		if (!qn) {
			uint64_t v;

			if (!__atomic_load_n(&r->readers_left, __ATOMIC_ACQUIRE)) {
				/* readers are gone: what is queued is all */
				qn = __cds_wfcq_dequeue_blocking(&r->qh, &r->qt);
				if (!qn)
					break;
			} else {
				flush_idle(r);
				if (poll(&p, 1, 100) > 0 && read(r->efd, &v, sizeof(v)) < 0)
					(void)0;	/* EAGAIN: another wake consumed it */
				continue;
			}
		}
		struct node *n = caa_container_of(qn, struct node, qn);

		TSAN_ACQUIRE(n);
		if (r->o->tap)
			tap_chunk(r, n);
		if (r->o->no_streams || n->kind == NODE_HELLO || n->kind == NODE_GONE ||
		    n->kind == NODE_DRAINED)
			;	/* the tap was the consumer */
		else if (n->kind == NODE_LOSS)
			write_loss(r, n);
		else
			write_chunk(r, n);
		/* every node counts in the bound, as it was counted in */
		__atomic_sub_fetch(&r->queued, node_pool_cost(&r->pool, n), __ATOMIC_RELAXED);
		node_pool_put(&r->pool, n);
	}
	return NULL;
}

int rec_start_threads(struct rec *r)
{
	sigset_t all, old;
	pthread_t wt;
	int e = 0;

	/* signals go to the main thread only */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r->rt = calloc(r->h->nbuf ? r->h->nbuf : 1, sizeof(*r->rt));
	if (!r->rt) {
		e = ENOMEM;
		goto out;
	}
	for (unsigned int i = 0; i < r->h->nbuf; i++) {
		if (!r->h->map[i])
			continue;
		r->rt[r->nrt].r = r;
		r->rt[r->nrt].buf = i;
		__atomic_add_fetch(&r->readers_left, 1, __ATOMIC_RELAXED);
		e = pthread_create(&r->rt[r->nrt].t, NULL, reader_main, &r->rt[r->nrt]);
		if (e) {
			__atomic_sub_fetch(&r->readers_left, 1, __ATOMIC_RELAXED);
			goto out;
		}
		r->nrt++;
	}
	e = pthread_create(&wt, NULL, writer_main, r);
	if (!e)
		r->wt = wt, r->have_wt = true;
out:
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e)
		fprintf(stderr, "vmscope record: starting threads: %s\n", strerror(e));
	return e ? -1 : 0;
}

void rec_stop_threads(struct rec *r)
{
	__atomic_store_n(&r->draining, 1, __ATOMIC_RELEASE);
	for (unsigned int i = 0; i < r->nrt; i++)
		pthread_join(r->rt[i].t, NULL);
	rg_stop(r);
	if (r->have_wt) {
		rec_wake_writer(r);
		pthread_join(r->wt, NULL);
	}
}

void rec_set_err(int *slot, int err)
{
	int zero = 0;

	__atomic_compare_exchange_n(slot, &zero, err, false, __ATOMIC_SEQ_CST,
				    __ATOMIC_SEQ_CST);
}
