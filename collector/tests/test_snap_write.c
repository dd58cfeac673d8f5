/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A snapshot window written (snap_write.h) and read back by the reader:
 * a host stream whose chunks are seq 10 (100 ring losses so far), 11
 * (100), 13 (130), 14 (130), the window from seq 11's end to seq 13's, so
 * it starts mid-stream. Read back: exactly seq 11 and 13's chunks, no
 * gap and no loss at the start (the cut: seq 11 and its 100 losses are
 * where the window begins), then the gap of seq 12 and its 30 losses,
 * counted as in any recording; the stream began with a cut; a guest
 * stream's loss in the window kept with its events; the trace has no
 * damage (its Summary lists exactly its files); the window is in DIR/TIME,
 * nothing left under a dot name; its metadata holds the trigger. A
 * window with nothing in it is still a trace (metadata only). A guest
 * stream whose chunks the live merge placed (sn_placed): a chunk is the
 * window's by its placed records' host times, not by when it came (one
 * that came after the window's end is in it, one that came inside it
 * but whose records lie before is not), the losses next to those
 * chunks with them; a chunk not placed goes by its arrival, counted.
 */
#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../tests/lib/check.h"
#include "reader.h"
#include "session.pb-c.h"
#include "snap_write.h"
#include "tracefmt.h"

/* A recording's metadata.vtf: a FileHeader and a bare SessionMetadata. */
static void fake_recording(const char *path)
{
	Vmscope__Trace__FileHeader fh = VMSCOPE__TRACE__FILE_HEADER__INIT;
	Vmscope__Trace__SessionMetadata sm = VMSCOPE__TRACE__SESSION_METADATA__INIT;
	static uint8_t sid[16] = { 1, 2, 3 };
	struct tf_writer *w;
	int dfd;

	CHECK_EQ(tf_trace_create(path, &dfd), 0);
	CHECK_EQ(tf_writer_create(&w, dfd, TF_TRACE_METADATA, NULL), 0);
	fh.format_version = 1;
	fh.session_id.data = sid;
	fh.session_id.len = 16;
	fh.role = VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_METADATA;
	sm.format_version = 1;
	sm.session_id = fh.session_id;
	CHECK_EQ(tf_writer_append_msg(w, TF_FRAME_FILE_HEADER, &fh.base), 0);
	CHECK_EQ(tf_writer_append_msg(w, TF_FRAME_SESSION, &sm.base), 0);
	CHECK_EQ(tf_writer_close(w), 0);
	close(dfd);
}

static void add(struct sn_store *st, struct rec_chunk c)
{
	CHECK_EQ(sn_add(st, &c), 0);
}

static struct rec_chunk host(uint64_t seq, uint64_t lost, uint64_t end)
{
	return (struct rec_chunk){ .kind = REC_TAP_CHUNK, .seq = seq, .lost_before = lost,
				   .begin_ts = end - 10, .end_ts = end };
}

static struct rec_chunk guest(uint64_t seq, uint64_t g_begin)
{
	return (struct rec_chunk){ .kind = REC_TAP_CHUNK, .guest = true, .vm = 1, .cpu = 0,
				   .seq = seq, .begin_ts = g_begin, .end_ts = g_begin + 99 };
}

static struct rec_chunk gloss(uint64_t events)
{
	return (struct rec_chunk){ .kind = REC_TAP_LOSS, .guest = true, .vm = 1, .cpu = 0,
				   .loss_kind = VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_STREAM,
				   .loss_events = events };
}

/* The guest stream's chunks and loss events in the window at @out. */
static void read_guest(const char *out, uint64_t *chunks, uint64_t *lost)
{
	struct vr_trace *t;
	struct vr_stream *s;
	struct vr_item it;
	char err[256];

	*chunks = *lost = 0;
	CHECK_EQ(vr_trace_open(&t, out, err, sizeof(err)), 0);
	for (size_t i = 0; t && i < vr_trace_nr_streams(t); i++) {
		if (strcmp(vr_trace_stream_name(t, i), "guest1-cpu0.vtf"))
			continue;
		CHECK_EQ(vr_stream_open(&s, t, i), 0);
		while (vr_stream_next(s, &it) == 1)
			if (it.kind == VR_LOSS)
				*lost += it.events;
		*chunks = vr_stream_stats(s)->chunks;
		CHECK_EQ(vr_damage_count(vr_stream_damage(s)), 0);
		vr_stream_close(s);
	}
	if (t)
		vr_trace_close(t);
}

/* Guest chunks by their placed records (see the top). */
static void placed_window(const char *rec, const char *dir)
{
	struct sn_window w = { .kind = "exit", .what = "hlt", .task = "", .host_task = "",
			       .begin_ts = 1050, .end_ts = 1300 };
	char out[4096], err[512];
	struct sn_store st;
	uint64_t chunks, lost;

	sn_init(&st, &(struct sn_cfg){ .keep_ns = 1u << 30, .cap_bytes = 1u << 20 });
	add(&st, host(1, 0, 1000));
	add(&st, guest(1, 100));		/* its records at 900..990 */
	add(&st, host(2, 0, 1100));
	add(&st, gloss(5));			/* next to seq 2: the window's */
	add(&st, guest(2, 200));		/* came at 1100, records 1040..1120 */
	add(&st, host(3, 0, 1500));
	add(&st, guest(3, 300));		/* came at 1500, records 1200..1310 */
	add(&st, gloss(7));			/* next to seq 3 */
	add(&st, guest(4, 400));		/* records 1320..1400 */
	add(&st, gloss(11));			/* came at 1500, after the window */
	add(&st, guest(5, 500));		/* never placed, came at 1500 */
	sn_placed(&st, 1, 0, 100, 900);
	sn_placed(&st, 1, 0, 199, 990);
	sn_placed(&st, 1, 0, 200, 1040);
	sn_placed(&st, 1, 0, 250, 1080);
	sn_placed(&st, 1, 0, 299, 1120);
	sn_placed(&st, 1, 0, 300, 1200);
	sn_placed(&st, 1, 0, 399, 1310);
	sn_placed(&st, 1, 0, 400, 1320);
	sn_placed(&st, 1, 0, 499, 1400);
	CHECK_EQ(st.s[1].h_placed, 1400);
	CHECK_EQ(sn_write(&st, rec, &w, dir, out, sizeof(out), err, sizeof(err)), 0);
	read_guest(out, &chunks, &lost);
	CHECK_EQ(chunks, 2);
	CHECK_EQ(lost, 5 + 7);
	CHECK_EQ(w.guest_by_arrival, 0);

	/* a chunk never placed that came inside the span: by its arrival */
	add(&st, host(4, 0, 1200));	/* host now stays 1500: stamped 1500 */
	w.end_ts = 1600;
	CHECK_EQ(sn_write(&st, rec, &w, dir, out, sizeof(out), err, sizeof(err)), 0);
	read_guest(out, &chunks, &lost);
	CHECK_EQ(chunks, 4);		/* seq 2, 3, 4 placed, 5 by arrival */
	CHECK_EQ(lost, 5 + 7 + 11);
	CHECK_EQ(w.guest_by_arrival, 1);
	sn_free(&st);
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
	(void)sb, (void)flag, (void)f;
	return remove(p);
}

/* The only entry of @dir into @name; how many entries there are. */
static int entries(const char *dir, char *name, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			if (strlen(de->d_name) < len)
				memcpy(name, de->d_name, strlen(de->d_name) + 1);
			n++;
		}
	closedir(d);
	return n;
}

int main(void)
{
	struct sn_window w = { .kind = "stall", .what = "running, preempted", .task = "spin/7",
			       .host_task = "hog/9", .dur_ns = 5, .threshold_ns = 4,
			       .trigger_ts = 1100, .vcpu = 1, .begin_ts = 1050, .end_ts = 1300 };
	char base[256], rec[300], dir[300], out[4096], err[512], name[64], path[4500];
	struct sn_store st;
	struct vr_trace *t;
	struct vr_stream *s;
	struct vr_item it;
	int gaps = 0, losses = 0, other = 0, cut_loss = 0;
	uint64_t lost = 0, gap_first = 0, gap_last = 0, guest_lost = 0;

	snprintf(base, sizeof(base), "/var/tmp/test_snap_write-XXXXXX");
	if (!mkdtemp(base))
		return 1;
	snprintf(rec, sizeof(rec), "%s/rec", base);
	snprintf(dir, sizeof(dir), "%s/snaps/web", base);
	fake_recording(rec);
	sn_init(&st, &(struct sn_cfg){ .keep_ns = 1u << 30, .cap_bytes = 1u << 20 });
	add(&st, host(10, 100, 1000));		/* before the window */
	add(&st, host(11, 100, 1100));		/* its first chunk: the cut */
	{
		struct rec_chunk l = { .kind = REC_TAP_LOSS, .guest = true, .vm = 0, .cpu = 1,
				       .loss_kind = VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_STREAM,
				       .loss_events = 42 };

		add(&st, l);			/* stamped 1100 */
	}
	add(&st, host(13, 130, 1300));		/* seq 12 and 30 events lost */
	add(&st, host(14, 130, 1400));		/* after it */
	CHECK_EQ(sn_write(&st, rec, &w, dir, out, sizeof(out), err, sizeof(err)), 0);
	CHECK_EQ(entries(dir, name, sizeof(name)), 1);
	CHECK(name[0] != '.');
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	CHECK(!strcmp(out, path));

	CHECK_EQ(vr_trace_open(&t, out, err, sizeof(err)), 0);
	CHECK_EQ(vr_trace_nr_streams(t), 2);
	for (size_t i = 0; i < vr_trace_nr_streams(t); i++) {
		bool guest = !strncmp(vr_trace_stream_name(t, i), "guest", 5);

		CHECK_EQ(vr_stream_open(&s, t, i), 0);
		while (vr_stream_next(s, &it) == 1) {
			if (guest && it.kind == VR_LOSS) {
				guest_lost += it.events;
			} else if (it.kind == VR_GAP) {
				gaps++;
				gap_first = it.first;
				gap_last = it.last;
			} else if (it.kind == VR_LOSS) {
				losses++;
				lost += it.events;
				/* at the window's first chunk: the cut counted */
				cut_loss += it.ts == 1090;
			} else {
				other++;
			}
		}
		if (!guest) {
			CHECK(vr_stream_stats(s)->cut);
			CHECK_EQ(vr_stream_stats(s)->chunks, 2);
			CHECK_EQ(vr_stream_stats(s)->gap_subbufs, 1);
			CHECK_EQ(vr_stream_stats(s)->lost_events, 30);
		}
		CHECK_EQ(vr_damage_count(vr_stream_damage(s)), 0);
		vr_stream_close(s);
	}
	CHECK_EQ(gaps, 1);
	CHECK(gap_first == 12 && gap_last == 12);
	CHECK_EQ(losses, 1);
	CHECK_EQ(lost, 30);
	CHECK_EQ(cut_loss, 0);
	CHECK_EQ(other, 0);
	CHECK_EQ(guest_lost, 42);
	CHECK_EQ(vr_damage_count(vr_trace_damage(t)), 0);
	{
		const Vmscope__Trace__SessionMetadata *sm = vr_trace_session(t);
		const Vmscope__Trace__SnapshotWindow *sw = sm ? sm->snapshot : NULL;

		CHECK(sw && !strcmp(sw->kind, "stall") && !strcmp(sw->task, "spin/7") &&
		      !strcmp(sw->host_task, "hog/9") && sw->trigger_ts == 1100 &&
		      sw->begin_ts == 1050 && sw->end_ts == 1300 && sw->vcpu == 1 &&
		      sw->dur_ns == 5 && sw->threshold_ns == 4 && !strcmp(sw->recording, rec));
	}
	vr_trace_close(t);

	placed_window(rec, dir);
	CHECK_EQ(entries(dir, name, sizeof(name)), 3);

	/* nothing in the span: a trace with metadata only, the next name */
	w.begin_ts = w.end_ts = 5000;
	CHECK_EQ(sn_write(&st, rec, &w, dir, out, sizeof(out), err, sizeof(err)), 0);
	CHECK_EQ(entries(dir, name, sizeof(name)), 4);
	CHECK_EQ(vr_trace_open(&t, out, err, sizeof(err)), 0);
	CHECK_EQ(vr_trace_nr_streams(t), 0);
	CHECK_EQ(vr_damage_count(vr_trace_damage(t)), 0);
	vr_trace_close(t);
	/* no recording metadata: refused, said */
	CHECK(sn_write(&st, base, &w, dir, out, sizeof(out), err, sizeof(err)) < 0);
	CHECK(strstr(err, "metadata.vtf") != NULL);
	sn_free(&st);
	nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return check_result("test_snap_write");
}
