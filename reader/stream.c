/* SPDX-License-Identifier: GPL-2.0 */
/* The trace reader's streams: one stream file's frames as items (reader.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader_int.h"

static int stream_new(struct vr_stream **out, struct vr_trace *t)
{
	struct vr_stream *s = calloc(1, sizeof(*s));

	*out = s;
	if (!s)
		return -ENOMEM;
	s->t = t;
	s->idx = SIZE_MAX;
	s->name = "stream";
	s->dmg.no_summary = t->dmg.no_summary;
	vmscope__trace__origin__init(&s->st.origin);
	return 0;
}

/* A stream file that cannot be read at all is damage of the trace. */
int vr_stream_open(struct vr_stream **out, struct vr_trace *t, size_t i)
{
	int e;

	if (i >= t->n_names || t->dirfd < 0)
		return -EINVAL;
	e = stream_new(out, t);
	if (e)
		return e;
	(*out)->idx = i;
	(*out)->name = t->names[i];
	(*out)->dmg = t->inv[i];
	e = tf_reader_open(&(*out)->r, t->dirfd, t->names[i]);
	if (e) {
		t->sd[i] = t->inv[i];
		vr_note(&t->sd[i], &t->sd[i].unreadable, "%s: %s", t->names[i],
		     vr_strerror(e));
		t->read[i] = true;
		free(*out);
		*out = NULL;
	}
	return e;
}

const struct vr_damage *vr_stream_damage(const struct vr_stream *s)
{
	return &s->dmg;
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
	vr_note(&s->dmg, NULL, "%s: offset %llu: %s", s->name, (unsigned long long)offset,
	     it->text);
}

static bool same_origin(const Vmscope__Trace__Origin *a, const Vmscope__Trace__Origin *b);

/* Two files of one origin: a copied or duplicated stream. */
static void check_duplicate(struct vr_stream *s)
{
	struct vr_trace *t = s->t;

	if (s->idx == SIZE_MAX)
		return;
	for (size_t j = 0; j < t->n_names; j++)
		if (j != s->idx && t->has_orig[j] && same_origin(&t->orig[j], &s->st.origin)) {
			vr_note(&s->dmg, &s->dmg.inventory,
			     "%s: same origin as %s (a duplicated stream)", s->name,
			     t->names[j]);
			break;
		}
	t->orig[s->idx] = s->st.origin;
	t->has_orig[s->idx] = true;
}

/* The stream ended: how, and against the inventory. */
static void stream_ended(struct vr_stream *s)
{
	const struct tf_end_info *end = &s->st.end;
	struct vr_trace *t = s->t;

	s->dmg.bad = s->st.bad;
	s->dmg.undecodable = s->st.undecodable;
	if (end->kind == TF_END_TORN && s->dmg.no_summary)
		s->dmg.torn++;	/* expected: dump says so, it is not damage */
	else if (end->kind != TF_END_CLEAN)
		vr_note(&s->dmg, end->kind == TF_END_TORN ? &s->dmg.torn :
		     end->kind == TF_END_CORRUPT ? &s->dmg.corrupt : &s->dmg.unreadable,
		     "%s: %s at offset %llu of %llu: %s", s->name, tf_end_str(end->kind),
		     (unsigned long long)end->offset, (unsigned long long)end->size,
		     end->reason);
	else if (!end->frames)
		vr_note(&s->dmg, &s->dmg.torn, "%s: empty (no frames)", s->name);
	if (s->idx == SIZE_MAX)
		return;
	if (t->listed_frames[s->idx] >= 0 && (uint64_t)t->listed_frames[s->idx] != end->frames)
		vr_note(&s->dmg, &s->dmg.inventory, "%s: %llu frames read, the summary lists %lld",
		     s->name, (unsigned long long)end->frames,
		     (long long)t->listed_frames[s->idx]);
	t->sd[s->idx] = s->dmg;
	t->read[s->idx] = true;
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
	check_duplicate(s);
	if (h->cut) {
		/* a window's stream: its first chunk is a cut, not a gap or a
		 * loss; those are counted from here on */
		s->st.cut = true;
		s->have_seq = true;
		s->next_seq = h->cut->seq;
		s->lost_before = h->cut->lost_before;
	}
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
	s->rec_index = 0;
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
	if (l->origin) {
		it->has_loss_origin = true;
		vmscope__trace__origin__init(&it->loss_origin);
		it->loss_origin.side = l->origin->side;
		it->loss_origin.vm = l->origin->vm;
		it->loss_origin.cpu = l->origin->cpu;
		it->loss_origin.channel = l->origin->channel;
	}
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
		stream_ended(s);
		return 0;
	}
	s->st.frames++;
	if (f.type >= TF_FRAME_RAW || (f.type != TF_FRAME_FILE_HEADER &&
	    f.type != TF_FRAME_CHUNK && f.type != TF_FRAME_LOSS &&
	    f.type != TF_FRAME_INDEX)) {
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
			vr_note(&s->dmg, NULL, "%s: offset %llu: %s", s->name,
			     (unsigned long long)s->chunk_offset, s->text);
		}
		tf_msg_free(&s->chunk->base);
		s->chunk = NULL;
		return e < 0;
	}
	memset(it, 0, offsetof(struct vr_item, loss_origin));
	it->ts = rec.ts;
	it->offset = s->chunk_offset;
	it->origins = s->chunk->origins;
	it->rec_index = s->rec_index++;
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
		vr_note(&s->dmg, NULL, "%s: offset %llu: undecodable record: %s", s->name,
		     (unsigned long long)s->chunk_offset, s->text);
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
