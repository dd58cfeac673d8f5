/* SPDX-License-Identifier: GPL-2.0 */
/* The trace reader: see reader.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rb_decode.h"
#include "reader.h"

/* A trace with more stream files than this is refused as not ours. */
#define VR_MAX_STREAMS	65536

struct vr_trace {
	int dirfd;			/* -1: memory trace */
	ProtobufCMessage *session, *summary, *stats;
	struct tf_end_info meta_end;
	char problem[256];
	char **names;
	size_t n_names;
	struct vr_events *host_events;
	struct vr_events **vm_events;	/* [session->n_vms] */
};

/* Items produced ahead of the records of a chunk (gap, loss, note). */
#define VR_PENDING	4

struct vr_stream {
	struct vr_trace *t;
	struct tf_reader *r;
	struct vr_stream_stats st;
	bool ended, seen_first, have_seq;
	uint64_t next_seq, lost_before;
	/* the chunk whose records are being returned */
	Vmscope__Trace__StreamChunk *chunk;
	struct vmscope_rb_iter it;
	uint64_t chunk_offset;
	struct vr_item pending[VR_PENDING];
	char pending_text[VR_PENDING][200];
	unsigned int npending, ipending;
	uint64_t *counts;
	char text[200];
};

static void problem(struct vr_trace *t, const char *fmt, ...)
{
	va_list ap;

	if (t->problem[0])	/* the first problem is the one to fix */
		return;
	va_start(ap, fmt);
	vsnprintf(t->problem, sizeof(t->problem), fmt, ap);
	va_end(ap);
}

uint64_t vr_clock_ns(const Vmscope__Trace__ClockDesc *c, uint64_t ticks)
{
	if (!c || c->ns_div == 0 || c->ns_mul == c->ns_div)
		return ticks;
	return (uint64_t)((unsigned __int128)ticks * c->ns_mul / c->ns_div);
}

/* Event tables of the session just read (host, then each VM's). */
static int load_tables(struct vr_trace *t)
{
	const Vmscope__Trace__SessionMetadata *s = (const void *)t->session;

	if (!s)
		return vr_events_from_pb(&t->host_events, NULL);
	if (vr_events_from_pb(&t->host_events, s->host_events))
		return -ENOMEM;
	t->vm_events = calloc(s->n_vms ? s->n_vms : 1, sizeof(*t->vm_events));
	if (!t->vm_events)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_vms; i++)
		if (vr_events_from_pb(&t->vm_events[i], s->vms[i]->guest_events))
			return -ENOMEM;
	return 0;
}

/* Walk the metadata file: keep the last good session, stats and summary. */
static int read_meta(struct vr_trace *t, struct tf_reader *r)
{
	struct tf_frame f;
	char why[160];
	bool first = true;

	while (tf_reader_next(r, &f) == 1) {
		ProtobufCMessage *m, **keep = NULL;
		int e;

		if (first && f.type != TF_FRAME_FILE_HEADER)
			problem(t, "metadata file does not start with a file header");
		first = false;
		if (f.type == TF_FRAME_SESSION)
			keep = &t->session;
		else if (f.type == TF_FRAME_SUMMARY)
			keep = &t->summary;
		else if (f.type == TF_FRAME_STATS)
			keep = &t->stats;
		else
			continue;
		e = tf_msg_decode(f.type, f.payload, f.length, 0, &m, why, sizeof(why));
		if (e == -ENOMEM)
			return e;
		if (e) {
			problem(t, "metadata frame at offset %llu: %s",
				(unsigned long long)f.offset, why);
			continue;
		}
		tf_msg_free(*keep);
		*keep = m;
	}
	t->meta_end = *tf_reader_end(r);
	if (t->meta_end.kind != TF_END_CLEAN)
		problem(t, "metadata file: %s at offset %llu: %s",
			tf_end_str(t->meta_end.kind),
			(unsigned long long)t->meta_end.offset, t->meta_end.reason);
	if (!t->session)
		problem(t, "no session metadata: records cannot be decoded");
	return load_tables(t);
}

static int name_cmp(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

static int list_streams(struct vr_trace *t)
{
	size_t cap = 0;
	struct dirent *de;
	DIR *d;
	int fd = dup(t->dirfd);

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name), sl = strlen(TF_TRACE_SUFFIX);

		if (len <= sl || strcmp(de->d_name + len - sl, TF_TRACE_SUFFIX) ||
		    !strcmp(de->d_name, TF_TRACE_METADATA))
			continue;
		if (t->n_names == VR_MAX_STREAMS) {
			closedir(d);
			return -E2BIG;
		}
		if (t->n_names == cap) {
			size_t nc = cap ? 2 * cap : 16;
			char **nn = realloc(t->names, nc * sizeof(*nn));

			if (!nn) {
				closedir(d);
				return -ENOMEM;
			}
			t->names = nn;
			cap = nc;
		}
		t->names[t->n_names] = strdup(de->d_name);
		if (!t->names[t->n_names]) {
			closedir(d);
			return -ENOMEM;
		}
		t->n_names++;
	}
	closedir(d);
	if (t->n_names)
		qsort(t->names, t->n_names, sizeof(*t->names), name_cmp);
	return 0;
}

static struct vr_trace *trace_new(void)
{
	struct vr_trace *t = calloc(1, sizeof(*t));

	if (t)
		t->dirfd = -1;
	return t;
}

int vr_trace_open(struct vr_trace **out, const char *path, char *err, size_t errlen)
{
	struct vr_trace *t = trace_new();
	struct tf_reader *r;
	int e;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	e = tf_trace_open(path, &t->dirfd);
	if (e) {
		snprintf(err, errlen, "%s: %s", path, strerror(-e));
		goto fail;
	}
	e = list_streams(t);
	if (e) {
		snprintf(err, errlen, "%s: listing streams: %s", path, strerror(-e));
		goto fail;
	}
	e = tf_reader_open(&r, t->dirfd, TF_TRACE_METADATA);
	if (e == -ENOENT) {
		problem(t, "no %s: records cannot be decoded", TF_TRACE_METADATA);
		e = load_tables(t);
	} else if (e) {
		snprintf(err, errlen, "%s/%s: %s", path, TF_TRACE_METADATA, strerror(-e));
		goto fail;
	} else {
		e = read_meta(t, r);
		tf_reader_close(r);
	}
	if (e) {
		snprintf(err, errlen, "%s: %s", path, strerror(-e));
		goto fail;
	}
	*out = t;
	return 0;
fail:
	vr_trace_close(t);
	return e;
}

int vr_trace_open_mem(struct vr_trace **out, const void *meta, size_t len)
{
	struct vr_trace *t = trace_new();
	struct tf_reader *r;
	int e;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	if (!meta) {
		problem(t, "no metadata");
		e = load_tables(t);
	} else {
		e = tf_reader_open_mem(&r, meta, len);
		if (!e) {
			e = read_meta(t, r);
			tf_reader_close(r);
		}
	}
	if (e) {
		vr_trace_close(t);
		return e;
	}
	*out = t;
	return 0;
}

void vr_trace_close(struct vr_trace *t)
{
	if (!t)
		return;
	if (t->vm_events) {
		const Vmscope__Trace__SessionMetadata *s = (const void *)t->session;

		for (size_t i = 0; s && i < s->n_vms; i++)
			vr_events_free(t->vm_events[i]);
		free(t->vm_events);
	}
	vr_events_free(t->host_events);
	tf_msg_free(t->session);
	tf_msg_free(t->summary);
	tf_msg_free(t->stats);
	for (size_t i = 0; i < t->n_names; i++)
		free(t->names[i]);
	free(t->names);
	if (t->dirfd >= 0)
		close(t->dirfd);
	free(t);
}

const Vmscope__Trace__SessionMetadata *vr_trace_session(const struct vr_trace *t)
{
	return (const void *)t->session;
}

const Vmscope__Trace__Summary *vr_trace_summary(const struct vr_trace *t)
{
	return (const void *)t->summary;
}

const Vmscope__Trace__Statistics *vr_trace_stats(const struct vr_trace *t)
{
	return (const void *)t->stats;
}

const struct tf_end_info *vr_trace_meta_end(const struct vr_trace *t)
{
	return &t->meta_end;
}

const char *vr_trace_problem(const struct vr_trace *t)
{
	return t->problem[0] ? t->problem : NULL;
}

size_t vr_trace_nr_streams(const struct vr_trace *t)
{
	return t->n_names;
}

const char *vr_trace_stream_name(const struct vr_trace *t, size_t i)
{
	return i < t->n_names ? t->names[i] : NULL;
}

const struct vr_events *vr_trace_events(const struct vr_trace *t, int side, uint32_t vm)
{
	const Vmscope__Trace__SessionMetadata *s = (const void *)t->session;

	if (side == VMSCOPE__TRACE__SIDE__SIDE_HOST)
		return t->host_events;
	if (side == VMSCOPE__TRACE__SIDE__SIDE_GUEST && s && vm < s->n_vms)
		return t->vm_events[vm];
	return NULL;
}

/* ---- streams ---- */

static int stream_new(struct vr_stream **out, struct vr_trace *t)
{
	struct vr_stream *s = calloc(1, sizeof(*s));

	*out = s;
	if (!s)
		return -ENOMEM;
	s->t = t;
	vmscope__trace__origin__init(&s->st.origin);
	return 0;
}

int vr_stream_open(struct vr_stream **out, struct vr_trace *t, size_t i)
{
	int e;

	if (i >= t->n_names || t->dirfd < 0)
		return -EINVAL;
	e = stream_new(out, t);
	if (e)
		return e;
	e = tf_reader_open(&(*out)->r, t->dirfd, t->names[i]);
	if (e) {
		free(*out);
		*out = NULL;
	}
	return e;
}

int vr_stream_open_mem(struct vr_stream **out, struct vr_trace *t,
		       const void *data, size_t len)
{
	int e = stream_new(out, t);

	if (e)
		return e;
	e = tf_reader_open_mem(&(*out)->r, data, len);
	if (e) {
		free(*out);
		*out = NULL;
	}
	return e;
}

void vr_stream_close(struct vr_stream *s)
{
	if (!s)
		return;
	tf_msg_free(s->chunk ? &s->chunk->base : NULL);
	tf_reader_close(s->r);
	free(s->counts);
	free(s);
}

const struct vr_stream_stats *vr_stream_stats(const struct vr_stream *s)
{
	return &s->st;
}

static struct vr_item *push(struct vr_stream *s, enum vr_item_kind kind,
			    uint64_t ts, uint64_t offset)
{
	struct vr_item *it;

	if (s->npending == VR_PENDING)	/* cannot happen: at most 3 per frame */
		return NULL;
	it = &s->pending[s->npending];
	memset(it, 0, sizeof(*it));
	it->kind = kind;
	it->ts = ts;
	it->offset = offset;
	it->text = s->pending_text[s->npending];
	s->pending_text[s->npending][0] = 0;
	s->npending++;
	return it;
}

static void push_bad(struct vr_stream *s, uint64_t ts, uint64_t offset,
		     const char *fmt, ...)
{
	struct vr_item *it = push(s, VR_BAD, ts, offset);
	va_list ap;

	s->st.bad++;
	if (!it)
		return;
	va_start(ap, fmt);
	vsnprintf((char *)it->text, sizeof(s->pending_text[0]), fmt, ap);
	va_end(ap);
}

/* The file's origin decides which event table decodes its records. */
static void set_origin(struct vr_stream *s, const Vmscope__Trace__Origin *o)
{
	const struct vr_events *ev;

	s->st.origin.side = o->side;
	s->st.origin.vm = o->vm;
	s->st.origin.cpu = o->cpu;
	s->st.origin.channel = o->channel;
	ev = vr_trace_events(s->t, o->side, o->vm);
	s->st.events_table = ev;
	free(s->counts);
	s->counts = ev && ev->n ? calloc(ev->n, sizeof(*s->counts)) : NULL;
	s->st.counts = s->counts;
}

static bool same_origin(const Vmscope__Trace__Origin *a, const Vmscope__Trace__Origin *b)
{
	return a->side == b->side && a->cpu == b->cpu && a->channel == b->channel &&
	       (a->side != VMSCOPE__TRACE__SIDE__SIDE_GUEST || a->vm == b->vm);
}

static void on_header(struct vr_stream *s, const struct tf_frame *f,
		      const Vmscope__Trace__FileHeader *h)
{
	if (s->st.has_header || s->seen_first) {
		push_bad(s, 0, f->offset, "file header in the middle of the file");
		return;
	}
	if (h->role != VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM) {
		push_bad(s, 0, f->offset, "not a stream file (role %d)", (int)h->role);
		return;
	}
	s->st.has_header = true;
	set_origin(s, h->origin);
}

static void on_chunk(struct vr_stream *s, const struct tf_frame *f,
		     Vmscope__Trace__StreamChunk *c)
{
	struct vr_item *it;
	int e;

	if (!s->st.has_header && !s->seen_first)
		set_origin(s, c->origin);	/* no header: trust the first chunk */
	if (!same_origin(c->origin, &s->st.origin)) {
		push_bad(s, c->begin_ts, f->offset,
			 "chunk seq %llu: origin differs from the file's; skipped",
			 (unsigned long long)c->seq);
		tf_msg_free(&c->base);
		return;
	}
	if (s->have_seq && c->seq < s->next_seq) {
		push_bad(s, c->begin_ts, f->offset,
			 "chunk seq %llu after %llu: out of order; skipped",
			 (unsigned long long)c->seq, (unsigned long long)s->next_seq - 1);
		tf_msg_free(&c->base);
		return;
	}
	if (c->seq > s->next_seq) {
		it = push(s, VR_GAP, c->begin_ts, f->offset);
		if (it) {
			it->first = s->next_seq;
			it->last = c->seq - 1;
		}
		s->st.gap_subbufs += c->seq - s->next_seq;
	}
	s->have_seq = true;
	s->next_seq = c->seq + 1;
	if (c->lost_before > s->lost_before) {
		it = push(s, VR_LOSS, c->begin_ts, f->offset);
		if (it) {
			it->events = c->lost_before - s->lost_before;
			snprintf((char *)it->text, sizeof(s->pending_text[0]),
				 "ring buffer, before sub-buffer %llu",
				 (unsigned long long)c->seq);
		}
		s->st.lost_events += c->lost_before - s->lost_before;
		s->lost_before = c->lost_before;
	} else if (c->lost_before < s->lost_before) {
		push_bad(s, c->begin_ts, f->offset,
			 "chunk seq %llu: lost count went down (%llu after %llu)",
			 (unsigned long long)c->seq, (unsigned long long)c->lost_before,
			 (unsigned long long)s->lost_before);
		s->lost_before = c->lost_before;
	}
	if (s->st.chunks && c->begin_ts < s->st.last_ts)
		push_bad(s, c->begin_ts, f->offset,
			 "chunk seq %llu begins before the previous chunk's last event",
			 (unsigned long long)c->seq);
	e = vmscope_rb_iter_init_records(&s->it, c->records.data, c->records.len,
					 c->begin_ts, c->end_ts, c->nr_records);
	if (e) {
		push_bad(s, c->begin_ts, f->offset, "chunk seq %llu: bad records (%d)",
			 (unsigned long long)c->seq, -e);
		tf_msg_free(&c->base);
		return;
	}
	s->st.chunks++;
	s->chunk = c;
	s->chunk_offset = f->offset;
}

static void on_loss(struct vr_stream *s, const struct tf_frame *f,
		    const Vmscope__Trace__LossRecord *l)
{
	struct vr_item *it = push(s, VR_LOSS, l->begin_ts, f->offset);

	s->st.lost_events += l->events;
	if (!it)
		return;
	it->events = l->events;
	it->loss_kind = l->kind;
	it->first = l->subbufs;
	snprintf((char *)it->text, sizeof(s->pending_text[0]), "%s",
		 l->detail ? l->detail : "");
}

/* Read one frame and queue what it yields. 0: end of file. */
static int next_frame(struct vr_stream *s)
{
	ProtobufCMessage *m;
	struct tf_frame f;
	char why[160];
	int e;

	if (tf_reader_next(s->r, &f) != 1) {
		s->ended = true;
		s->st.end = *tf_reader_end(s->r);
		return 0;
	}
	s->st.frames++;
	if (f.type >= TF_FRAME_RAW || (f.type != TF_FRAME_FILE_HEADER &&
	    f.type != TF_FRAME_CHUNK && f.type != TF_FRAME_LOSS &&
	    f.type != TF_FRAME_SYNC && f.type != TF_FRAME_INDEX)) {
		s->seen_first = true;
		return 1;	/* not a stream's: skip, as the format says */
	}
	e = tf_msg_decode(f.type, f.payload, f.length, 0, &m, why, sizeof(why));
	if (e) {
		push_bad(s, 0, f.offset, "frame %u (type %u): %s", f.seq, f.type, why);
		s->seen_first = true;
		return 1;
	}
	switch (f.type) {
	case TF_FRAME_FILE_HEADER:
		on_header(s, &f, (const void *)m);
		break;
	case TF_FRAME_CHUNK:
		on_chunk(s, &f, (void *)m);
		m = NULL;	/* on_chunk keeps or frees it */
		break;
	case TF_FRAME_LOSS:
		on_loss(s, &f, (const void *)m);
		break;
	case TF_FRAME_SYNC: {
		struct vr_item *it = push(s, VR_SYNC, 0, f.offset);

		if (it)
			it->first = ((const Vmscope__Trace__SyncSamples *)(const void *)m)->n_seq;
		break;
	}
	case TF_FRAME_INDEX:
		s->st.has_index = true;
		break;
	}
	s->seen_first = true;
	tf_msg_free(m);
	return 1;
}

/* The next record of the current chunk as an item; 0 when it is done. */
static int next_record(struct vr_stream *s, struct vr_item *it)
{
	const struct vr_events *ev = s->st.events_table;
	struct vmscope_rb_rec rec;
	int e = vmscope_rb_iter_next(&s->it, &rec), i;

	if (e <= 0) {
		if (e < 0) {
			memset(it, 0, sizeof(*it));
			it->kind = VR_BAD;
			it->offset = s->chunk_offset;
			it->ts = s->it.prev_ts;
			snprintf(s->text, sizeof(s->text),
				 "chunk seq %llu: malformed record at byte %u (%d); rest of chunk skipped",
				 (unsigned long long)s->chunk->seq, s->it.off, -e);
			it->text = s->text;
			s->st.bad++;
		}
		tf_msg_free(&s->chunk->base);
		s->chunk = NULL;
		return e < 0;
	}
	memset(it, 0, sizeof(*it));
	it->ts = rec.ts;
	it->offset = s->chunk_offset;
	if (!s->st.events)
		s->st.first_ts = rec.ts;
	s->st.last_ts = rec.ts;
	i = ev ? vr_events_index(ev, rec.id) : -1;
	if (i < 0 || rec.size < ev->desc[i].payload_size) {
		it->kind = VR_BAD;
		if (i >= 0)
			snprintf(s->text, sizeof(s->text), "%s record of %u bytes, %u expected",
				 ev->desc[i].name, rec.size, ev->desc[i].payload_size);
		else if (ev && ev->by_id[rec.id] >= 0)
			snprintf(s->text, sizeof(s->text), "event %u: %s", rec.id,
				 ev->why[ev->by_id[rec.id]]);
		else
			snprintf(s->text, sizeof(s->text), "event %u: no descriptor", rec.id);
		it->text = s->text;
		s->st.undecodable++;
		return 1;
	}
	it->kind = VR_EVENT;
	it->desc = &ev->desc[i];
	it->payload = rec.payload;
	it->size = rec.size;
	s->st.events++;
	s->counts[i]++;
	return 1;
}

int vr_stream_next(struct vr_stream *s, struct vr_item *it)
{
	for (;;) {
		if (s->ipending < s->npending) {
			*it = s->pending[s->ipending++];
			return 1;
		}
		s->ipending = s->npending = 0;
		if (s->chunk) {
			if (next_record(s, it))
				return 1;
			continue;
		}
		if (s->ended || !next_frame(s))
			return 0;
	}
}
