// SPDX-License-Identifier: GPL-2.0
/* The merged trace: writer and reader (see out.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vmscope/ringbuf_abi.h>

#include "out.h"
#include "rb_decode.h"

/* Records per output chunk: the size of a host sub-buffer. */
#define MO_CHUNK_BYTES	(64u << 10)
#define MO_CHUNK_RECS	(MO_CHUNK_BYTES / VMSCOPE_RB_REC_HDR_SIZE)

struct mo {
	int dirfd;
	struct tf_writer *meta, *w;
	struct mo_union u;	/* the one event table, written in the metadata */
	Vmscope__Trace__Origin origin;
	/* the chunk being built */
	uint8_t recs[MO_CHUNK_BYTES];
	size_t len;
	/* the chunk's RecordOrigins columns */
	uint64_t o_ts[MO_CHUNK_RECS];
	uint32_t o_cpu[MO_CHUNK_RECS], o_origin[MO_CHUNK_RECS], o_vcpu[MO_CHUNK_RECS];
	int32_t o_tid[MO_CHUNK_RECS];
	uint32_t n;
	uint64_t begin_ts, prev_ts, seq;
	uint64_t chunks;
	int err;
	/* for the Summary, written last */
	uint64_t stop_realtime_ns, stop_ts;
	Vmscope__Trace__InputAccount in;
	char in_path[4096], in_first[320];
};

static void header(struct tf_writer *w, const Vmscope__Trace__SessionMetadata *s,
		   int role, Vmscope__Trace__Origin *o)
{
	Vmscope__Trace__FileHeader fh = VMSCOPE__TRACE__FILE_HEADER__INIT;

	fh.format_version = 1;
	fh.role = role;
	fh.origin = o;
	if (s)
		fh.session_id = s->session_id;
	fh.writer = "vmscope merge";
	tf_writer_append_msg(w, TF_FRAME_FILE_HEADER, &fh.base);
}

/* The metadata file: the session with the union event table. */
static int write_meta(struct mo *m, const char *path, const struct vr_trace *t,
		      Vmscope__Trace__VmInfo **vms,
		      char *err, size_t errlen)
{
	const Vmscope__Trace__SessionMetadata *s = vr_trace_session(t);
	Vmscope__Trace__SessionMetadata copy = VMSCOPE__TRACE__SESSION_METADATA__INIT;
	int e = mo_union_build(&m->u, t, err, errlen);

	if (e)
		goto out;
	if (s)
		copy = *s;
	if (s && vms)
		copy.vms = vms;
	copy.host_events = &m->u.table;
	e = tf_writer_create(&m->meta, m->dirfd, TF_TRACE_METADATA, NULL);
	if (!e) {
		header(m->meta, s, VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_METADATA, NULL);
		e = tf_writer_append_msg(m->meta, TF_FRAME_SESSION, &copy.base);
		/* the Summary (the merged trace's own files, the input's
		 * account) is appended by mo_close() */
	}
out:
	if (e && !err[0])
		snprintf(err, errlen, "%s/%s: %s", path, TF_TRACE_METADATA, strerror(-e));
	return e;
}

static void mo_free(struct mo *m)
{
	if (m->meta)
		tf_writer_close(m->meta);
	if (m->dirfd >= 0)
		close(m->dirfd);
	mo_union_free(&m->u);
	free(m);
}

int mo_create(struct mo **out, const char *path, struct vr_trace *t,
	      char *err, size_t errlen)
{
	return mo_create_vms(out, path, t, NULL, err, errlen);
}

int mo_create_vms(struct mo **out, const char *path, struct vr_trace *t,
		  Vmscope__Trace__VmInfo **vms, char *err, size_t errlen)
{
	const Vmscope__Trace__SessionMetadata *s = vr_trace_session(t);
	struct mo *m = calloc(1, sizeof(*m));
	int e;

	*out = NULL;
	if (errlen)
		err[0] = 0;
	if (!m)
		return -ENOMEM;
	m->dirfd = -1;
	e = tf_trace_create(path, &m->dirfd);
	if (e) {
		snprintf(err, errlen, "%s: %s", path, strerror(-e));
		goto fail;
	}
	e = write_meta(m, path, t, vms, err, errlen);
	if (e)
		goto fail;
	e = tf_writer_create(&m->w, m->dirfd, MO_STREAM, NULL);
	if (e) {
		snprintf(err, errlen, "%s/%s: %s", path, MO_STREAM, strerror(-e));
		goto fail;
	}
	if (vr_trace_summary(t)) {	/* the input's stop: how it ended */
		m->stop_realtime_ns = vr_trace_summary(t)->stop_realtime_ns;
		m->stop_ts = vr_trace_summary(t)->stop_ts;
	}
	vmscope__trace__input_account__init(&m->in);
	vmscope__trace__origin__init(&m->origin);
	m->origin.side = VMSCOPE__TRACE__SIDE__SIDE_HOST;
	header(m->w, s, VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM, &m->origin);
	*out = m;
	return 0;
fail:
	mo_free(m);
	return e;
}

int mo_id(const struct mo *m, const struct vr_trace *t, uint32_t origin,
	  const struct vmscope_event_desc *d)
{
	return mo_union_id(&m->u, t, origin, d);
}

/* Record @i's entry of a chunk's origins (the reader checked their
 * lengths against the chunk's records). */
static void origin_get(const Vmscope__Trace__RecordOrigins *c, size_t i, struct mo_origin *o)
{
	o->orig_ts = c->orig_ts[i];
	o->cpu = c->cpu[i];
	o->tid = c->tid[i];
	o->origin = c->origin[i];
	o->vcpu = c->vcpu[i];
}

void mo_origin_of_stream(const Vmscope__Trace__Origin *so, struct mo_origin *o)
{
	bool guest = so->side == VMSCOPE__TRACE__SIDE__SIDE_GUEST;

	*o = (struct mo_origin){ .cpu = so->cpu, .tid = -1, .origin = guest ? so->vm + 1 : 0,
				 .vcpu = guest ? so->cpu : MO_NONE };
}

static int flush(struct mo *m)
{
	Vmscope__Trace__StreamChunk c = VMSCOPE__TRACE__STREAM_CHUNK__INIT;
	Vmscope__Trace__RecordOrigins o = VMSCOPE__TRACE__RECORD_ORIGINS__INIT;
	int e;

	if (!m->n)
		return m->err;
	o.n_orig_ts = o.n_cpu = o.n_tid = o.n_origin = o.n_vcpu = m->n;
	o.orig_ts = m->o_ts;
	o.cpu = m->o_cpu;
	o.tid = m->o_tid;
	o.origin = m->o_origin;
	o.vcpu = m->o_vcpu;
	c.origins = &o;
	c.origin = &m->origin;
	c.seq = m->seq++;
	c.begin_ts = m->begin_ts;
	c.end_ts = m->prev_ts;
	c.nr_records = m->n;
	c.records.data = m->recs;
	c.records.len = m->len;
	e = tf_writer_append_msg(m->w, TF_FRAME_CHUNK, &c.base);
	m->chunks++;
	m->n = 0;
	m->len = 0;
	if (e && !m->err)
		m->err = e;
	return m->err;
}

int mo_event(struct mo *m, int id, uint64_t ts, const void *payload, uint16_t size,
	     const struct mo_origin *o)
{
	size_t need = VMSCOPE_RB_REC_HDR_SIZE + VMSCOPE_RB_REC_EXT_SIZE +
		      (((size_t)size + VMSCOPE_RB_ALIGN - 1) & ~(size_t)(VMSCOPE_RB_ALIGN - 1));

	if (m->err)
		return m->err;
	/* a chunk's records never go back in time, nor does the stream */
	if (id < 0 || id > (int)VMSCOPE_RB_ID_MAX || need > MO_CHUNK_BYTES ||
	    ts < m->prev_ts)
		return -EINVAL;
	if (m->n && (m->len + need > MO_CHUNK_BYTES || m->n == MO_CHUNK_RECS))
		if (flush(m))
			return m->err;
	if (!m->n)
		m->begin_ts = m->prev_ts = ts;
	m->len += vmscope_rb_rec_encode(m->recs + m->len, m->prev_ts, ts, (unsigned int)id,
				payload, size);
	m->o_ts[m->n] = o->orig_ts;
	m->o_cpu[m->n] = o->cpu;
	m->o_tid[m->n] = o->tid;
	m->o_origin[m->n] = o->origin;
	m->o_vcpu[m->n] = o->vcpu;
	m->n++;
	m->prev_ts = ts;
	return 0;
}

int mo_loss(struct mo *m, const Vmscope__Trace__Origin *o, int kind,
	    uint64_t events, uint64_t subbufs, uint64_t ts, const char *detail)
{
	Vmscope__Trace__LossRecord l = VMSCOPE__TRACE__LOSS_RECORD__INIT;
	Vmscope__Trace__Origin oc = *o;
	int e;

	if (flush(m))
		return m->err;
	l.origin = &oc;
	l.kind = kind;
	l.events = events;
	l.subbufs = subbufs;
	l.begin_ts = l.end_ts = ts;
	l.detail = (char *)detail;
	e = tf_writer_append_msg(m->w, TF_FRAME_LOSS, &l.base);
	if (e && !m->err)
		m->err = e;
	return m->err;
}

void mo_input(struct mo *m, struct vr_trace *t, uint64_t lost_events, uint64_t gap_subbufs)
{
	const struct vr_damage *d = vr_trace_damage(t);

	snprintf(m->in_path, sizeof(m->in_path), "%s", vr_trace_path(t));
	snprintf(m->in_first, sizeof(m->in_first), "%s", d->first);
	m->in.path = m->in_path;
	m->in.damaged = vr_damage_count(d) != 0;
	m->in.torn = d->torn;
	m->in.corrupt = d->corrupt;
	m->in.unreadable = d->unreadable;
	m->in.bad = d->bad;
	m->in.undecodable = d->undecodable;
	m->in.inventory = d->inventory;
	m->in.metadata = d->metadata;
	m->in.no_summary = d->no_summary;
	m->in.first_problem = m->in_first;
	m->in.lost_events = lost_events;
	m->in.gap_subbufs = gap_subbufs;
}

/* The Summary: the merged stream as written, the input's account. */
static int write_summary(struct mo *m, const struct tf_writer_stats *st)
{
	Vmscope__Trace__Summary sum = VMSCOPE__TRACE__SUMMARY__INIT;
	Vmscope__Trace__FileSummary fs = VMSCOPE__TRACE__FILE_SUMMARY__INIT, *fsp = &fs;

	fs.name = MO_STREAM;
	fs.role = VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM;
	fs.origin = &m->origin;
	fs.frames = st->frames_held;
	fs.bytes = st->offset;
	fs.closed_cleanly = true;
	sum.stop_realtime_ns = m->stop_realtime_ns;
	sum.stop_ts = m->stop_ts;
	sum.n_files = 1;
	sum.files = &fsp;
	sum.input = &m->in;
	return tf_writer_append_msg(m->meta, TF_FRAME_SUMMARY, &sum.base);
}

int mo_close(struct mo *m, uint64_t *chunks)
{
	Vmscope__Trace__FileIndex fi = VMSCOPE__TRACE__FILE_INDEX__INIT;
	struct tf_writer_stats st = { 0 };
	int e = flush(m), e2;

	if (!e) {
		tf_writer_get_stats(m->w, &st);
		fi.frames = st.frames_held;
		fi.bytes = st.offset;
		e = tf_writer_append_msg(m->w, TF_FRAME_INDEX, &fi.base);
	}
	if (!e)
		tf_writer_get_stats(m->w, &st);
	e2 = tf_writer_close(m->w);
	if (!e)
		e = e2;
	/* the Summary only for a stream written whole: without it, readers
	 * see a merge that did not finish */
	if (!e)
		e = write_summary(m, &st);
	e2 = tf_writer_close(m->meta);
	m->meta = NULL;
	if (!e)
		e = e2;
	if (chunks)
		*chunks = m->chunks;
	mo_free(m);
	return e;
}

/* ---- reading ---- */

struct mr {
	struct vr_trace *t;
	struct vr_stream *s;
	uint64_t no_origin;	/* records of chunks without their origins */
};

/*
 * @at_open: what makes the trace unusable from the start (metadata that
 * does not decode, made from damaged input); the rest (its files against
 * its Summary, how its stream ended) once it has been read, so that what
 * was read can still be reported. A merged trace has a Summary once merge
 * finished: without one, it did not, whatever the reader counts of a
 * killed writer's files.
 */
static int merged_damage(struct vr_trace *t, bool at_open, char *buf, size_t len)
{
	const struct vr_damage *d = vr_trace_damage(t);

	if (at_open && !d->marked && !d->metadata)
		return 0;
	if (vr_damage_describe(t, vr_trace_path(t), buf, len))
		return 1;
	if (vr_trace_summary(t))
		return 0;
	snprintf(buf, len, "%s is damaged: no summary in %s: the merge that wrote it did not finish",
		 vr_trace_path(t), TF_TRACE_METADATA);
	return 1;
}

int mr_open(struct mr **out, const char *path, unsigned int flags, char *err, size_t errlen)
{
	struct mr *m = calloc(1, sizeof(*m));
	size_t i;
	int e;

	*out = NULL;
	if (!m)
		return -ENOMEM;
	e = vr_trace_open(&m->t, path, err, errlen);
	if (e)
		goto fail;
	for (i = 0; i < vr_trace_nr_streams(m->t); i++)
		if (!strcmp(vr_trace_stream_name(m->t, i), MO_STREAM))
			break;
	if (i == vr_trace_nr_streams(m->t)) {
		snprintf(err, errlen, "%s: no %s: not a merged trace", path, MO_STREAM);
		e = -ENOENT;
		goto fail;
	}
	if (!(flags & MR_ACCEPT_DAMAGE) && merged_damage(m->t, true, err, errlen)) {
		e = -EBADMSG;
		goto fail;
	}
	e = vr_stream_open(&m->s, m->t, i);
	if (e) {
		snprintf(err, errlen, "%s/%s: %s", path, MO_STREAM, strerror(-e));
		goto fail;
	}
	*out = m;
	return 0;
fail:
	mr_close(m);
	return e;
}

int mr_next(struct mr *m, struct vr_item *it, struct mo_origin *o, bool *has_o)
{
	int r = vr_stream_next(m->s, it);

	*has_o = false;
	if (r == 1 && it->kind == VR_LOSS && it->has_loss_origin) {
		mo_origin_of_stream(&it->loss_origin, o);
		*has_o = true;
	}
	if (r != 1 || it->kind != VR_EVENT)
		return r;
	if (it->origins && it->rec_index < it->origins->n_orig_ts) {
		origin_get(it->origins, it->rec_index, o);
		*has_o = true;
	} else {
		m->no_origin++;
	}
	return 1;
}

int mr_damage(struct mr *m, char *buf, size_t len)
{
	int d = merged_damage(m->t, false, buf, len);
	size_t n = d ? strlen(buf) : 0;

	if (!m->no_origin)
		return d;
	snprintf(buf + n, len - n,
		 "%s%s/%s: %llu records without their origin (a merged trace of a vmscope before 2026-12-07 kept them apart from the chunks: merge the recording again)",
		 d ? "; " : "", vr_trace_path(m->t), MO_STREAM,
		 (unsigned long long)m->no_origin);
	return 1;
}

struct vr_trace *mr_trace(struct mr *m)
{
	return m->t;
}

const struct vr_stream_stats *mr_stats(const struct mr *m)
{
	return vr_stream_stats(m->s);
}

void mr_close(struct mr *m)
{
	if (!m)
		return;
	vr_stream_close(m->s);
	vr_trace_close(m->t);
	free(m);
}
