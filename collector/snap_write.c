// SPDX-License-Identifier: GPL-2.0
/* A snapshot window written as a trace: see snap_write.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <vmscope/version.h>

#include "file.pb-c.h"
#include "session.pb-c.h"
#include "snap_write.h"
#include "stream.pb-c.h"
#include "tracefmt.h"
#include "util_clock.h"
#include "util_fs.h"

#define SN_WRITER "vmscope record " VMSCOPE_VERSION_STRING " (snapshot window)"

/* What one stream file of the window came to, for the Summary. */
struct sn_file {
	char name[32];
	Vmscope__Trace__Origin o;
	uint64_t frames, bytes, chunks, records, rbytes, first_ts, last_ts;
};

static int fail(char *err, size_t errlen, int e, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < errlen)
		snprintf(err + n, errlen - (size_t)n, ": %s", strerror(-e));
	return e;
}

static bool stamped_in(const struct sn_item *it, const struct sn_window *w)
{
	return it->stamp >= w->begin_ts && it->stamp <= w->end_ts;
}

/* A guest chunk: by its placed records, else by its stamp. */
static bool chunk_in(const struct sn_item *it, const struct sn_window *w)
{
	if (it->placed)
		return it->h_lo <= w->end_ts && it->h_hi >= w->begin_ts;
	return stamped_in(it, w);
}

/* A guest stream's chunks in the window, from the first to the last, with
 * the losses next to them (snap_write.h). */
struct sel {
	const struct sn_item *from, *to;	/* NULL: none */
	bool by_arrival;			/* an unplaced chunk among them */
};

static void select_guest(const struct sn_stream *s, const struct sn_window *w, struct sel *sl)
{
	const struct sn_item *run = NULL;	/* losses just before a chunk */
	bool after_in = false;

	*sl = (struct sel){ 0 };
	for (const struct sn_item *it = s->head; it; it = it->next) {
		if (it->c.kind != REC_TAP_CHUNK) {
			if (!run)
				run = it;
			if (after_in)
				sl->to = it;
			continue;
		}
		after_in = chunk_in(it, w);
		if (after_in) {
			if (!sl->from)
				sl->from = run ? run : it;
			sl->to = it;
			sl->by_arrival |= !it->placed;
		}
		run = NULL;
	}
}

/* Is @it, the next item of stream @s from its head on, the window's?
 * @on: false at the head. */
static bool take(const struct sn_stream *s, const struct sn_item *it, const struct sel *sl,
		 const struct sn_window *w, bool *on)
{
	bool t;

	if (!s->guest)
		return stamped_in(it, w);
	if (it == sl->from)
		*on = true;
	if (*on)
		t = it->c.kind != REC_TAP_CHUNK || chunk_in(it, w);
	else
		t = it->c.kind != REC_TAP_CHUNK && stamped_in(it, w);
	if (it == sl->to)
		*on = false;
	return t;
}

/* The recording's session id (its metadata's FileHeader) and its latest
 * whole SessionMetadata; a torn tail is the recorder writing it now. */
static int read_meta(const char *rec_path, uint8_t sid[16],
		     Vmscope__Trace__SessionMetadata **sm, char *err, size_t errlen)
{
	struct tf_reader *r;
	struct tf_frame f;
	char why[160];
	int dfd, e;

	*sm = NULL;
	e = tf_trace_open(rec_path, &dfd);
	if (e)
		return fail(err, errlen, e, "%s", rec_path);
	e = tf_reader_open(&r, dfd, TF_TRACE_METADATA);
	close(dfd);
	if (e)
		return fail(err, errlen, e, "%s/%s", rec_path, TF_TRACE_METADATA);
	memset(sid, 0, 16);
	while (tf_reader_next(r, &f) == 1) {
		ProtobufCMessage *m;

		if (f.type != TF_FRAME_SESSION && f.type != TF_FRAME_FILE_HEADER)
			continue;
		e = tf_msg_decode(f.type, f.payload, f.length, 0, &m, why, sizeof(why));
		if (e) {
			snprintf(err, errlen, "%s/%s: frame at offset %llu: %s", rec_path,
				 TF_TRACE_METADATA, (unsigned long long)f.offset, why);
			break;
		}
		if (f.type == TF_FRAME_FILE_HEADER) {
			Vmscope__Trace__FileHeader *h = (Vmscope__Trace__FileHeader *)m;

			if (h->session_id.len == 16)
				memcpy(sid, h->session_id.data, 16);
			tf_msg_free(m);
			continue;
		}
		if (*sm)
			tf_msg_free(&(*sm)->base);
		*sm = (Vmscope__Trace__SessionMetadata *)m;
	}
	tf_reader_close(r);
	if (!e && !*sm) {
		snprintf(err, errlen, "%s/%s: no session metadata yet", rec_path,
			 TF_TRACE_METADATA);
		e = -ENODATA;
	}
	if (e && *sm) {
		tf_msg_free(&(*sm)->base);
		*sm = NULL;
	}
	return e;
}

static int write_header(struct tf_writer *w, const uint8_t sid[16], int role,
			Vmscope__Trace__Origin *o, Vmscope__Trace__StreamCut *cut)
{
	Vmscope__Trace__FileHeader fh = VMSCOPE__TRACE__FILE_HEADER__INIT;

	fh.format_version = 1;
	fh.session_id.data = (uint8_t *)sid;
	fh.session_id.len = 16;
	fh.role = role;
	fh.origin = o;
	fh.cut = cut;
	fh.created_realtime_ns = util_realtime_ns();
	fh.writer = SN_WRITER;
	return tf_writer_append_msg(w, TF_FRAME_FILE_HEADER, &fh.base);
}

static int append_index(struct tf_writer *w, uint64_t *off, uint64_t *b, uint64_t *e, size_t n)
{
	Vmscope__Trace__FileIndex fi = VMSCOPE__TRACE__FILE_INDEX__INIT;
	struct tf_writer_stats st;

	tf_writer_get_stats(w, &st);
	fi.chunk_offset = off;
	fi.chunk_begin_ts = b;
	fi.chunk_end_ts = e;
	fi.n_chunk_offset = fi.n_chunk_begin_ts = fi.n_chunk_end_ts = n;
	fi.frames = st.frames_held;
	fi.bytes = st.offset;
	return tf_writer_append_msg(w, TF_FRAME_INDEX, &fi.base);
}

/* One item: a chunk or a guest loss. */
static int append_item(struct tf_writer *w, const struct sn_item *it, Vmscope__Trace__Origin *o,
		       struct sn_file *f)
{
	const struct rec_chunk *c = &it->c;

	if (c->kind == REC_TAP_LOSS) {
		Vmscope__Trace__LossRecord lr = VMSCOPE__TRACE__LOSS_RECORD__INIT;

		lr.origin = o;
		lr.kind = c->loss_kind;
		lr.events = c->loss_events;
		lr.subbufs = c->loss_subbufs;
		lr.begin_ts = f->last_ts;	/* where the stream is, as record writes it */
		lr.detail = "guest stream (snapshot window)";
		return tf_writer_append_msg(w, TF_FRAME_LOSS, &lr.base);
	}

	Vmscope__Trace__StreamChunk ch = VMSCOPE__TRACE__STREAM_CHUNK__INIT;

	ch.origin = o;
	ch.seq = c->seq;
	ch.begin_ts = c->begin_ts;
	ch.end_ts = c->end_ts;
	ch.lost_before = c->lost_before;
	ch.nr_records = c->nr_records;
	ch.records.data = (uint8_t *)c->data;
	ch.records.len = c->len;
	if (!f->chunks)
		f->first_ts = c->begin_ts;
	f->last_ts = c->end_ts;
	f->chunks++;
	f->records += c->nr_records;
	f->rbytes += c->len;
	return tf_writer_append_msg(w, TF_FRAME_CHUNK, &ch.base);
}

/* Stream @s's items in the window into its file in folder @dfd. 1 when
 * written, 0 when it has none, or -errno. */
static int write_stream(int dfd, const struct sn_stream *s, struct sn_window *w,
			const uint8_t sid[16], struct sn_file *f)
{
	Vmscope__Trace__StreamCut cut = VMSCOPE__TRACE__STREAM_CUT__INIT;
	uint64_t *off = NULL, *ib = NULL, *ie = NULL;
	const struct sn_item *first = NULL;
	struct tf_writer *tw;
	struct tf_writer_stats st;
	size_t n = 0, k = 0;
	struct sel sl = { 0 };
	bool on = false;
	int e;

	if (s->guest)
		select_guest(s, w, &sl);
	w->guest_by_arrival += sl.by_arrival;
	for (const struct sn_item *it = s->head; it; it = it->next)
		if (take(s, it, &sl, w, &on)) {
			n++;
			if (!first && it->c.kind == REC_TAP_CHUNK)
				first = it;
		}
	if (!n)
		return 0;
	vmscope__trace__origin__init(&f->o);
	f->o.side = s->guest ? VMSCOPE__TRACE__SIDE__SIDE_GUEST : VMSCOPE__TRACE__SIDE__SIDE_HOST;
	f->o.vm = s->guest ? s->vm : 0;
	f->o.cpu = s->cpu;
	f->o.channel = s->guest ? 0 : s->chan;
	if (s->guest)
		tf_trace_guest_name(f->name, sizeof(f->name), s->vm, s->cpu);
	else
		tf_trace_host_name(f->name, sizeof(f->name), s->chan, s->cpu);
	if (first) {
		cut.seq = first->c.seq;
		cut.lost_before = first->c.lost_before;
	}
	off = calloc(n, sizeof(*off));
	ib = calloc(n, sizeof(*ib));
	ie = calloc(n, sizeof(*ie));
	if (!off || !ib || !ie) {
		e = -ENOMEM;
		goto out_free;
	}
	e = tf_writer_create(&tw, dfd, f->name, NULL);
	if (e)
		goto out_free;
	e = write_header(tw, sid, VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM, &f->o, &cut);
	on = false;
	for (const struct sn_item *it = s->head; it && !e; it = it->next) {
		if (!take(s, it, &sl, w, &on))
			continue;
		tf_writer_get_stats(tw, &st);
		if (it->c.kind == REC_TAP_CHUNK) {
			off[k] = st.offset;
			ib[k] = it->c.begin_ts;
			ie[k] = it->c.end_ts;
			k++;
		}
		e = append_item(tw, it, &f->o, f);
	}
	if (!e)
		e = append_index(tw, off, ib, ie, k);
	tf_writer_get_stats(tw, &st);
	f->frames = st.frames_held;
	f->bytes = st.offset;
	{
		int ce = tf_writer_close(tw);	/* fsyncs */

		e = e ? e : ce;
	}
out_free:
	free(off);
	free(ib);
	free(ie);
	return e ? e : 1;
}

/* metadata.vtf: header, the session with its snapshot, statistics, summary. */
static int write_meta(int dfd, const uint8_t sid[16], Vmscope__Trace__SessionMetadata *sm,
		      const struct sn_file *fv, size_t nf, uint64_t last_ts)
{
	Vmscope__Trace__StreamStats *ss = calloc(nf + 1, sizeof(*ss)), **ssp = calloc(nf + 1, sizeof(*ssp));
	Vmscope__Trace__FileSummary *fs = calloc(nf + 1, sizeof(*fs)), **fsp = calloc(nf + 1, sizeof(*fsp));
	Vmscope__Trace__Statistics st = VMSCOPE__TRACE__STATISTICS__INIT;
	Vmscope__Trace__Summary sum = VMSCOPE__TRACE__SUMMARY__INIT;
	uint64_t now = util_realtime_ns(), bytes = 0;
	struct tf_writer *w = NULL;
	int e = -ENOMEM;

	if (!ss || !ssp || !fs || !fsp)
		goto out;
	for (size_t i = 0; i < nf; i++) {
		vmscope__trace__stream_stats__init(&ss[i]);
		ss[i].origin = (Vmscope__Trace__Origin *)&fv[i].o;
		ss[i].chunks = fv[i].chunks;
		ss[i].records = fv[i].records;
		ss[i].bytes = fv[i].rbytes;
		ss[i].first_ts = fv[i].first_ts;
		ss[i].last_ts = fv[i].last_ts;
		ssp[i] = &ss[i];
		vmscope__trace__file_summary__init(&fs[i]);
		fs[i].name = (char *)fv[i].name;
		fs[i].role = VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM;
		fs[i].origin = (Vmscope__Trace__Origin *)&fv[i].o;
		fs[i].frames = fv[i].frames;
		fs[i].bytes = fv[i].bytes;
		fs[i].closed_cleanly = 1;
		fsp[i] = &fs[i];
		bytes += fv[i].rbytes;
	}
	e = tf_writer_create(&w, dfd, TF_TRACE_METADATA, NULL);
	if (e)
		goto out;
	e = write_header(w, sid, VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_METADATA, NULL, NULL);
	/* the window's own end, as a stopped recording's */
	sm->stop_realtime_ns = now;
	sm->stop_ts = last_ts;
	if (!e)
		e = tf_writer_append_msg(w, TF_FRAME_SESSION, &sm->base);
	st.realtime_ns = now;
	st.streams = ssp;
	st.n_streams = nf;
	st.bytes_written = bytes;
	if (!e)
		e = tf_writer_append_msg(w, TF_FRAME_STATS, &st.base);
	sum.stop_realtime_ns = now;
	sum.stop_ts = last_ts;
	sum.final_stats = &st;
	sum.files = fsp;
	sum.n_files = nf;
	if (!e)
		e = tf_writer_append_msg(w, TF_FRAME_SUMMARY, &sum.base);
	{
		int ce = tf_writer_close(w);

		e = e ? e : ce;
	}
out:
	free(ss);
	free(ssp);
	free(fs);
	free(fsp);
	return e;
}

/* DIR/.STAMP created: the folder's name in @name, its fd in *@dfd. */
static int make_tmp(const char *dir, char *name, size_t len, int *dfd)
{
	char stamp[20], path[4096];
	time_t t = (time_t)(util_realtime_ns() / 1000000000u);
	struct tm tm;
	struct stat sb;

	gmtime_r(&t, &tm);
	if (!strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm))
		return -EINVAL;
	for (int n = 1; n < 100; n++) {
		int e;

		if (n == 1)
			snprintf(name, len, "%s", stamp);
		else
			snprintf(name, len, "%s-%d", stamp, n);
		/* the final name must be free too: rename never replaces */
		if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
			return -ENAMETOOLONG;
		if (!lstat(path, &sb))
			continue;
		snprintf(path, sizeof(path), "%s/.%s", dir, name);
		e = tf_trace_create(path, dfd);
		if (e != -EEXIST)
			return e;
	}
	return -EEXIST;
}

int sn_write(const struct sn_store *st, const char *rec_path, struct sn_window *w,
	     const char *dir, char *out, size_t outlen, char *err, size_t errlen)
{
	Vmscope__Trace__SnapshotWindow sw = VMSCOPE__TRACE__SNAPSHOT_WINDOW__INIT;
	Vmscope__Trace__SessionMetadata *sm;
	struct sn_file *fv = NULL;
	char name[64], tmp[4096];
	uint64_t last_ts = 0;
	uint8_t sid[16];
	size_t nf = 0;
	int dfd = -1, e;

	e = read_meta(rec_path, sid, &sm, err, errlen);
	if (e)
		return e;
	e = util_mkdir_p(dir, 0750);
	if (e) {
		fail(err, errlen, e, "%s", dir);
		goto out;
	}
	e = make_tmp(dir, name, sizeof(name), &dfd);
	if (e) {
		fail(err, errlen, e, "%s: a new snapshot folder", dir);
		goto out;
	}
	snprintf(tmp, sizeof(tmp), "%s/.%s", dir, name);
	w->guest_by_arrival = 0;
	fv = calloc(st->ns + 1, sizeof(*fv));
	if (!fv) {
		e = fail(err, errlen, -ENOMEM, "%s", tmp);
		goto out;
	}
	for (size_t i = 0; i < st->ns; i++) {
		int got = write_stream(dfd, &st->s[i], w, sid, &fv[nf]);

		if (got < 0) {
			e = fail(err, errlen, got, "%s/%s", tmp, fv[nf].name);
			goto out;
		}
		if (got) {
			if (fv[nf].last_ts > last_ts)
				last_ts = fv[nf].last_ts;
			nf++;
		}
	}
	sw.kind = (char *)w->kind;
	sw.what = (char *)w->what;
	sw.dur_ns = w->dur_ns;
	sw.threshold_ns = w->threshold_ns;
	sw.vcpu = w->vcpu;
	sw.task = (char *)w->task;
	sw.host_task = (char *)w->host_task;
	sw.trigger_ts = w->trigger_ts;
	sw.begin_ts = w->begin_ts;
	sw.end_ts = w->end_ts;
	sw.recording = (char *)rec_path;
	sw.ended_early = w->ended_early;
	sw.guest_incomplete = w->guest_incomplete;
	sw.guest_by_arrival = w->guest_by_arrival;
	sm->snapshot = &sw;
	e = write_meta(dfd, sid, sm, fv, nf, last_ts);
	sm->snapshot = NULL;	/* not the decoded message's to free */
	if (e) {
		fail(err, errlen, e, "%s/%s", tmp, TF_TRACE_METADATA);
		goto out;
	}
	if (fsync(dfd)) {
		e = fail(err, errlen, -errno, "%s", tmp);
		goto out;
	}
	if (snprintf(out, outlen, "%s/%s", dir, name) >= (int)outlen) {
		e = fail(err, errlen, -ENAMETOOLONG, "%s", tmp);
		goto out;
	}
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, out, RENAME_NOREPLACE)) {
		e = fail(err, errlen, -errno, "renaming %s to %s", tmp, out);
		goto out;
	}
	e = tf_trace_sync_parent(out);
	if (e)
		fail(err, errlen, e, "%s: its folder's fsync", out);
out:
	if (dfd >= 0)
		close(dfd);
	free(fv);
	tf_msg_free(&sm->base);
	return e;
}
