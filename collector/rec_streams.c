// SPDX-License-Identifier: GPL-2.0
/* The stream files of one recording: opened, and finished at the stop. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "file.pb-c.h"
#include "rec_int.h"
#include "stream.pb-c.h"

/*
 * A guest CPU's stream, its file created at its first chunk or loss (a
 * guest says how many CPUs it has; only those that send get a file).
 * NULL when it cannot be created: the recording stops with the error.
 */
struct stream_w *rec_guest_stream(struct rec *r, uint32_t vm, uint32_t cpu)
{
	static const struct tf_writer_opts wo = { .buf_size = 256u << 10 };
	struct stream_w *s = &r->gsw[vm][cpu];
	char name[64];
	int e;

	if (s->used)
		return s->w ? s : NULL;
	__atomic_add_fetch(&r->guest_streams, 1, __ATOMIC_RELAXED);
	s->used = s->guest = true;
	s->vm = vm;
	s->cpu = cpu;
	tf_trace_guest_name(name, sizeof(name), vm, cpu);
	e = tf_writer_create(&s->w, r->dirfd, name, &wo);
	if (!e)
		e = rec_write_header(r, s->w, VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM, s);
	if (e) {
		fprintf(stderr, "vmscope record: %s/%s: %s\n", r->o->path, name, strerror(-e));
		rec_set_err(&r->write_err, -e);
		if (s->w)
			tf_writer_close(s->w);
		s->w = NULL;
		return NULL;
	}
	return s;
}

void rec_origin_of(const struct stream_w *s, Vmscope__Trace__Origin *o)
{
	o->side = s->guest ? VMSCOPE__TRACE__SIDE__SIDE_GUEST : VMSCOPE__TRACE__SIDE__SIDE_HOST;
	o->vm = s->vm;
	o->cpu = s->cpu;
	o->channel = s->chan;
}

/* Events a stream lost that the trace says so: the host ring's counters,
 * or what the guest reported plus the gaps of broken connections. */
uint64_t rec_stream_lost(struct rec *r, const struct stream_w *s)
{
	struct hb_losses l;

	if (s->guest)
		return s->guest_lost + s->writer_lost;
	hb_losses(r->h, s->buf, &l);
	return l.full + l.too_big + l.overwritten + s->writer_lost;
}


/* What the ring lost after the last sub-buffer we got, and what we could
 * not write, as LossRecords; then the index. Returns the first error. */
int rec_finish_stream(struct rec *r, struct stream_w *s, uint64_t *lost_total)
{
	Vmscope__Trace__Origin o = VMSCOPE__TRACE__ORIGIN__INIT;
	uint64_t total = s->guest ? 0 : rec_stream_lost(r, s) - s->writer_lost;
	int e = 0;

	*lost_total += rec_stream_lost(r, s);
	rec_origin_of(s, &o);
	if (total > s->last_lost) {
		Vmscope__Trace__LossRecord lr = VMSCOPE__TRACE__LOSS_RECORD__INIT;

		lr.origin = &o;
		lr.kind = r->h->cfg.chan[s->chan].mode == VMSCOPE_RB_MODE_FLIGHT ?
			  VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_RING_OVERWRITE :
			  VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_RING_DISCARD;
		lr.events = total - s->last_lost;
		lr.begin_ts = s->last_ts;
		lr.detail = "ring buffer, after the last sub-buffer recorded";
		e = tf_writer_append_msg(s->w, TF_FRAME_LOSS, &lr.base);
	}
	if (s->writer_lost && !e) {	/* unlikely to get through, but try */
		Vmscope__Trace__LossRecord lr = VMSCOPE__TRACE__LOSS_RECORD__INIT;

		lr.origin = &o;
		lr.kind = VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_WRITER;
		lr.events = s->writer_lost;
		lr.detail = "not written after a write error";
		e = tf_writer_append_msg(s->w, TF_FRAME_LOSS, &lr.base);
	}
	if (!e) {
		Vmscope__Trace__FileIndex fi = VMSCOPE__TRACE__FILE_INDEX__INIT;
		struct tf_writer_stats st;

		tf_writer_get_stats(s->w, &st);
		fi.chunk_offset = s->idx_off;
		fi.chunk_begin_ts = s->idx_b;
		fi.chunk_end_ts = s->idx_e;
		fi.n_chunk_offset = fi.n_chunk_begin_ts = fi.n_chunk_end_ts = s->nidx;
		fi.frames = st.frames_held;
		fi.bytes = st.offset;
		e = tf_writer_append_msg(s->w, TF_FRAME_INDEX, &fi.base);
	}
	return e;
}

/* Every stream of the recording, host buffers first; returns how many. */
unsigned int rec_all_streams(struct rec *r, struct stream_w **out)
{
	unsigned int k = 0;

	for (unsigned int i = 0; r->sw && i < r->h->nbuf; i++)
		if (r->sw[i].used)
			out[k++] = &r->sw[i];
	for (unsigned int vm = 0; r->gsw && vm < r->o->nvms; vm++)
		for (unsigned int cpu = 0; cpu < REC_GUEST_CPUS; cpu++)
			if (r->gsw[vm][cpu].used)
				out[k++] = &r->gsw[vm][cpu];
	return k;
}

unsigned int rec_max_streams(struct rec *r)
{
	return r->h->nbuf + r->o->nvms * REC_GUEST_CPUS + 1;
}

int rec_open_streams(struct rec *r)
{
	char name[64];
	int e;

	for (unsigned int i = 0; i < r->h->nbuf; i++) {
		struct stream_w *s = &r->sw[i];

		if (!r->h->map[i])
			continue;
		s->cpu = hb_cpu(r->h, i);
		s->chan = hb_chan(r->h, i);
		s->buf = i;
		tf_trace_host_name(name, sizeof(name), s->chan, s->cpu);
		e = tf_writer_create(&s->w, r->dirfd, name, NULL);
		if (!e)
			e = rec_write_header(r, s->w, VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM, s);
		if (!e)
			e = tf_writer_flush(s->w);
		if (e) {
			fprintf(stderr, "vmscope record: %s/%s: %s\n", r->o->path, name,
				strerror(-e));
			return -1;
		}
		s->used = true;
	}
	return 0;
}
