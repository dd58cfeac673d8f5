/* SPDX-License-Identifier: GPL-2.0 */
/* The trace reader: see reader.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rb_decode.h"
#include "reader.h"

/* A trace with more stream files than this is refused as not ours. */
#define VR_MAX_STREAMS	65536

struct vr_trace {
	int dirfd;			/* -1: memory trace */
	char *path;
	ProtobufCMessage *session, *summary, *stats;
	struct tf_end_info meta_end;
	char problem[256];
	char **names;
	size_t n_names;
	struct vr_events *host_events;
	struct vr_events **vm_events;	/* [session->n_vms] */
	/* damage: of the metadata and the folder (dmg); per stream file,
	 * what opening found (inv) and, once read to its end, all of it
	 * (sd, read); the sum (total) */
	struct vr_damage dmg, total;
	struct vr_damage *inv, *sd;
	bool *read;
	int64_t *listed_frames;		/* -1: not in the Summary */
	Vmscope__Trace__Origin *orig;	/* from each file's header */
	bool *has_orig;
};

/* Items produced ahead of the records of a chunk (gap, loss, note). */
#define VR_PENDING	4

struct vr_stream {
	struct vr_trace *t;
	size_t idx;			/* SIZE_MAX: memory image */
	const char *name;
	struct tf_reader *r;
	struct vr_stream_stats st;
	struct vr_damage dmg;
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

/* Count one problem in @n of @d; the first one's text is kept. */
static void note(struct vr_damage *d, uint64_t *n, const char *fmt, ...)
{
	va_list ap;

	if (n)
		(*n)++;
	if (d->first[0])
		return;
	va_start(ap, fmt);
	vsnprintf(d->first, sizeof(d->first), fmt, ap);
	va_end(ap);
}

static void damage_add(struct vr_damage *to, const struct vr_damage *d)
{
	to->torn += d->torn;
	to->corrupt += d->corrupt;
	to->unreadable += d->unreadable;
	to->bad += d->bad;
	to->undecodable += d->undecodable;
	to->inventory += d->inventory;
	to->metadata += d->metadata;
	to->write_errors += d->write_errors;
	to->marked |= d->marked;
	if (!to->first[0] && vr_damage_count(d))
		memcpy(to->first, d->first, sizeof(to->first));
}

uint64_t vr_damage_count(const struct vr_damage *d)
{
	return (d->no_summary ? 0 : d->torn) + d->corrupt + d->unreadable + d->bad +
	       d->undecodable + d->inventory + d->metadata + d->write_errors + d->marked;
}

const struct vr_damage *vr_trace_damage(struct vr_trace *t)
{
	t->total = t->dmg;
	for (size_t i = 0; t->inv && i < t->n_names; i++)
		damage_add(&t->total, t->read[i] ? &t->sd[i] : &t->inv[i]);
	return &t->total;
}

int vr_damage_describe(struct vr_trace *t, const char *path, char *buf, size_t len)
{
	const struct vr_damage *d = vr_trace_damage(t);

	if (!vr_damage_count(d))
		return 0;
	snprintf(buf, len, "%s is damaged (%llu torn%s, %llu corrupt, %llu unreadable, "
		 "%llu bad, %llu undecodable, %llu inventory, %llu metadata, "
		 "%llu write errors%s): %s", path,
		 (unsigned long long)d->torn, d->no_summary ? " without a summary" : "",
		 (unsigned long long)d->corrupt, (unsigned long long)d->unreadable,
		 (unsigned long long)d->bad, (unsigned long long)d->undecodable,
		 (unsigned long long)d->inventory, (unsigned long long)d->metadata,
		 (unsigned long long)d->write_errors,
		 d->marked ? ", made from damaged input" : "", d->first);
	return 1;
}

const char *vr_strerror(int e)
{
	return e == -EINVAL ? "not a regular file" : strerror(-e);
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

		if (first && f.type != TF_FRAME_FILE_HEADER) {
			problem(t, "metadata file does not start with a file header");
			note(&t->dmg, &t->dmg.metadata, "%s: does not start with a file header",
			     TF_TRACE_METADATA);
		}
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
			note(&t->dmg, &t->dmg.metadata, "%s: frame at offset %llu: %s",
			     TF_TRACE_METADATA, (unsigned long long)f.offset, why);
			continue;
		}
		tf_msg_free(*keep);
		*keep = m;
	}
	t->meta_end = *tf_reader_end(r);
	if (t->meta_end.kind != TF_END_CLEAN) {
		const struct tf_end_info *me = &t->meta_end;

		problem(t, "metadata file: %s at offset %llu: %s", tf_end_str(me->kind),
			(unsigned long long)me->offset, me->reason);
		if (me->kind == TF_END_TORN && !t->summary)
			t->dmg.torn++;	/* killed writer: no summary frame */
		else
			note(&t->dmg, me->kind == TF_END_TORN ? &t->dmg.torn :
			     me->kind == TF_END_IO ? &t->dmg.unreadable : &t->dmg.metadata,
			     "%s: %s at offset %llu of %llu: %s", TF_TRACE_METADATA,
			     tf_end_str(me->kind), (unsigned long long)me->offset,
			     (unsigned long long)me->size, me->reason);
	}
	if (!t->session) {
		problem(t, "no session metadata: records cannot be decoded");
		note(&t->dmg, &t->dmg.metadata, "%s: no session metadata", TF_TRACE_METADATA);
	}
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

static int find_name(const struct vr_trace *t, const char *name)
{
	char *const *p;

	if (!t->n_names)
		return -1;
	p = bsearch(&name, t->names, t->n_names, sizeof(*t->names), name_cmp);
	return p ? (int)(p - t->names) : -1;
}

/*
 * What the trace's own metadata says went wrong: the input's damage a
 * derived trace carries in its Summary, and the writer's failed writes in
 * its final Statistics (a recording cut short by a full disk: the events
 * it could not write are lost, and its last loss record may not have made
 * it into the stream).
 */
static void take_marked(struct vr_trace *t)
{
	const Vmscope__Trace__Summary *sum = (const void *)t->summary;
	const Vmscope__Trace__Statistics *st = (const void *)t->stats;

	if (st && st->write_errors) {
		uint64_t lost = 0;

		for (size_t i = 0; i < st->n_streams; i++)
			lost += st->streams[i]->lost_events;
		t->dmg.write_errors = st->write_errors;
		note(&t->dmg, NULL, "the writer's final statistics: %llu write error(s); "
		     "%llu events lost in all, what could not be written among them",
		     (unsigned long long)st->write_errors, (unsigned long long)lost);
	}

	if (sum && sum->input && sum->input->damaged) {
		t->dmg.marked = true;
		note(&t->dmg, NULL, "made from damaged input %s: %s",
		     sum->input->path ? sum->input->path : "?",
		     sum->input->first_problem ? sum->input->first_problem : "?");
	}
}

/*
 * The Summary's list of files against the folder: each stream file
 * listed is there with the bytes listed (its frames are compared when it
 * has been read), and no other stream file is. A Summary that lists no
 * file leaves every stream file unlisted.
 */
static int check_inventory(struct vr_trace *t)
{
	const Vmscope__Trace__Summary *sum = (const void *)t->summary;
	size_t n = t->n_names ? t->n_names : 1;
	bool have = sum;

	t->inv = calloc(n, sizeof(*t->inv));
	t->sd = calloc(n, sizeof(*t->sd));
	t->read = calloc(n, sizeof(*t->read));
	t->listed_frames = malloc(n * sizeof(*t->listed_frames));
	t->orig = calloc(n, sizeof(*t->orig));
	t->has_orig = calloc(n, sizeof(*t->has_orig));
	if (!t->inv || !t->sd || !t->read || !t->listed_frames || !t->orig || !t->has_orig)
		return -ENOMEM;
	t->dmg.no_summary = !sum;
	for (size_t i = 0; i < t->n_names; i++) {
		t->listed_frames[i] = -1;
		t->inv[i].no_summary = !sum;
	}
	for (size_t k = 0; have && k < sum->n_files; k++) {
		const Vmscope__Trace__FileSummary *fs = sum->files[k];
		int i = fs->name ? find_name(t, fs->name) : -1;
		struct stat st;

		if (fs->role == VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_METADATA)
			continue;
		if (i < 0) {
			note(&t->dmg, &t->dmg.inventory,
			     "%s: listed in the summary (%llu frames, %llu bytes), missing",
			     fs->name ? fs->name : "(no name)", (unsigned long long)fs->frames,
			     (unsigned long long)fs->bytes);
			continue;
		}
		if (t->listed_frames[i] >= 0) {
			note(&t->inv[i], &t->inv[i].inventory, "%s: listed twice in the summary",
			     fs->name);
			continue;
		}
		t->listed_frames[i] = (int64_t)(fs->frames & INT64_MAX);
		if (fstatat(t->dirfd, fs->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			note(&t->inv[i], &t->inv[i].unreadable, "%s: %s", fs->name,
			     strerror(errno));
		else if ((uint64_t)st.st_size != fs->bytes)
			note(&t->inv[i], &t->inv[i].inventory,
			     "%s: %llu bytes, the summary lists %llu", fs->name,
			     (unsigned long long)st.st_size, (unsigned long long)fs->bytes);
	}
	for (size_t i = 0; have && i < t->n_names; i++)
		if (t->listed_frames[i] < 0)
			note(&t->inv[i], &t->inv[i].inventory,
			     "%s: not in the summary's list of files", t->names[i]);
	take_marked(t);
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
	t->path = strdup(path);
	if (!t->path) {
		vr_trace_close(t);
		return -ENOMEM;
	}
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
	if (e == -ENOENT && !t->n_names) {
		snprintf(err, errlen, "%s: not a trace: no %s and no stream files", path,
			 TF_TRACE_METADATA);
		e = -ENOENT;
		goto fail;
	} else if (e == -ENOENT) {
		problem(t, "no %s: records cannot be decoded", TF_TRACE_METADATA);
		note(&t->dmg, &t->dmg.metadata, "%s: missing", TF_TRACE_METADATA);
		e = load_tables(t);
	} else if (e) {
		snprintf(err, errlen, "%s/%s: %s", path, TF_TRACE_METADATA,
			 vr_strerror(e));
		goto fail;
	} else {
		e = read_meta(t, r);
		tf_reader_close(r);
	}
	if (!e)
		e = check_inventory(t);
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
		note(&t->dmg, &t->dmg.metadata, "%s: missing", TF_TRACE_METADATA);
		e = load_tables(t);
	} else {
		e = tf_reader_open_mem(&r, meta, len);
		if (!e) {
			e = read_meta(t, r);
			tf_reader_close(r);
		}
	}
	if (!e)
		e = check_inventory(t);
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
	free(t->path);
	free(t->inv);
	free(t->sd);
	free(t->read);
	free(t->listed_frames);
	free(t->orig);
	free(t->has_orig);
	if (t->dirfd >= 0)
		close(t->dirfd);
	free(t);
}

const char *vr_trace_path(const struct vr_trace *t)
{
	return t->path ? t->path : "(memory)";
}

const Vmscope__Trace__SessionMetadata *vr_trace_session(const struct vr_trace *t)
{
	return (const void *)t->session;
}

const Vmscope__Trace__Summary *vr_trace_summary(const struct vr_trace *t)
{
	return (const void *)t->summary;
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
		note(&t->sd[i], &t->sd[i].unreadable, "%s: %s", t->names[i],
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
	note(&s->dmg, NULL, "%s: offset %llu: %s", s->name, (unsigned long long)offset,
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
			note(&s->dmg, &s->dmg.inventory,
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
		note(&s->dmg, end->kind == TF_END_TORN ? &s->dmg.torn :
		     end->kind == TF_END_CORRUPT ? &s->dmg.corrupt : &s->dmg.unreadable,
		     "%s: %s at offset %llu of %llu: %s", s->name, tf_end_str(end->kind),
		     (unsigned long long)end->offset, (unsigned long long)end->size,
		     end->reason);
	else if (!end->frames)
		note(&s->dmg, &s->dmg.torn, "%s: empty (no frames)", s->name);
	if (s->idx == SIZE_MAX)
		return;
	if (t->listed_frames[s->idx] >= 0 && (uint64_t)t->listed_frames[s->idx] != end->frames)
		note(&s->dmg, &s->dmg.inventory, "%s: %llu frames read, the summary lists %lld",
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
			note(&s->dmg, NULL, "%s: offset %llu: %s", s->name,
			     (unsigned long long)s->chunk_offset, s->text);
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
		note(&s->dmg, NULL, "%s: offset %llu: undecodable record: %s", s->name,
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
