/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reader over traces written with the tracefmt writer the way the
 * collector writes them: events decode through the stored descriptors to
 * the same text as through the module's own; gaps, ring losses and loss
 * records come out where they are; an unknown event id and a stored
 * descriptor that fails the checks give "bad" items, never a misread; a
 * stream cut at every byte offset yields exactly the items of the whole
 * frames before the cut and a torn tail; a flipped byte in the middle
 * stops the stream as corrupt after the frames before it; a trace
 * without metadata still walks its streams (records undecodable).
 *
 * `test_reader --write DIR` writes the trace folder DIR and exits (used
 * by cli/tests/dump-test.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <vmscope/ringbuf_abi.h>

#include "../../tracefmt/tests/util.h"
#include "common.pb-c.h"
#include "decode.h"
#include "rb_decode.h"
#include "reader.h"
#include "vmscope_events.h"

static void origin(Vmscope__Trace__Origin *o, int side, uint32_t vm, uint32_t cpu)
{
	vmscope__trace__origin__init(o);
	o->side = side;
	o->vm = vm;
	o->cpu = cpu;
}

static void header(struct tf_writer *w, int role, Vmscope__Trace__Origin *o)
{
	Vmscope__Trace__FileHeader fh = VMSCOPE__TRACE__FILE_HEADER__INIT;
	static uint8_t sid[16] = { 1, 2, 3 };

	fh.format_version = 1;
	fh.role = role;
	fh.origin = o;
	fh.session_id.data = sid;
	fh.session_id.len = 16;
	CHECK_EQ(tf_writer_append_msg(w, TF_FRAME_FILE_HEADER, &fh.base), 0);
}

/* Stream file @name of (@side, @vm, @cpu) begun: its writer in *@w, its
 * origin in @o, its FileHeader written. */
static void stream_file(struct tf_writer **w, int dfd, const char *name,
			Vmscope__Trace__Origin *o, int side, uint32_t vm, uint32_t cpu)
{
	origin(o, side, vm, cpu);
	CHECK_EQ(tf_writer_create(w, dfd, name, NULL), 0);
	header(*w, VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM, o);
}

static void chunk(struct tf_writer *w, Vmscope__Trace__Origin *o, uint64_t seq,
		  uint64_t lost, uint64_t bts, uint64_t ets, uint8_t *recs, size_t len,
		  uint32_t n)
{
	Vmscope__Trace__StreamChunk c = VMSCOPE__TRACE__STREAM_CHUNK__INIT;

	c.origin = o;
	c.seq = seq;
	c.lost_before = lost;
	c.begin_ts = bts;
	c.end_ts = ets;
	c.records.data = recs;
	c.records.len = len;
	c.nr_records = n;
	CHECK_EQ(tf_writer_append_msg(w, TF_FRAME_CHUNK, &c.base), 0);
}

static struct vmscope_ev_kvm_exit ex1 = {
	.vcpu_id = 1, .exit_reason = 0x7b, .guest_rip = 0xffffffff81000000ull,
	.info1 = 0x800000, .info2 = 2, .intr_info = 3, .error_code = 4, .isa = 1,
	.reason_valid = 1,
};
static struct vmscope_ev_kvm_entry en1 = { .rip = 0x1234, .vcpu_id = 1 };

/* The guest table: event 0 usable, event 1 with a format that does not
 * fit its field (%s for a u32): rejected, its records "bad". */
static void guest_table(Vmscope__Trace__EventTable *t, Vmscope__Trace__EventDesc *ev,
			Vmscope__Trace__EventDesc **evp, Vmscope__Trace__FieldDesc *f,
			Vmscope__Trace__FieldDesc **fp, Vmscope__Trace__Origin *o)
{
	vmscope__trace__event_table__init(t);
	origin(o, VMSCOPE__TRACE__SIDE__SIDE_GUEST, 0, 0);
	t->origin = o;
	for (int i = 0; i < 2; i++) {
		vmscope__trace__event_desc__init(&ev[i]);
		vmscope__trace__field_desc__init(&f[i]);
		ev[i].id = (uint32_t)i;
		ev[i].name = i ? "bad_event" : "guest_tick";
		ev[i].system = "guest";
		ev[i].tracepoint = "tick";
		ev[i].format = i ? "n %s" : "n %u";
		ev[i].payload_size = 4;
		f[i].name = "n";
		f[i].type = VMSCOPE__TRACE__FIELD_TYPE__FIELD_TYPE_U32;
		f[i].size = 4;
		fp[i] = &f[i];
		ev[i].n_fields = 1;
		ev[i].fields = &fp[i];
		evp[i] = &ev[i];
	}
	t->n_events = 2;
	t->events = evp;
}

/* How a trace's metadata ends: no Summary (a killed recorder), one
 * listing the stream files as they are, or one that lists none. */
enum meta_end { META_KILLED, META_SUMMARY, META_WRITE_ERROR, META_NO_FILES };

static const char *const stream_names[] = { "guest0-cpu1.vtf", "host-cpu0.vtf" };

/* The frames and bytes of stream file @name, as the collector lists them. */
static void list_file(int dfd, const char *name, Vmscope__Trace__FileSummary *fs,
		      Vmscope__Trace__Origin *o)
{
	struct tf_reader *r;
	struct tf_frame f;

	vmscope__trace__file_summary__init(fs);
	fs->name = (char *)name;
	fs->role = VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM;
	fs->origin = o;
	fs->closed_cleanly = true;
	CHECK_EQ(tf_reader_open(&r, dfd, name), 0);
	while (tf_reader_next(r, &f) == 1)
		fs->frames++;
	fs->bytes = tf_reader_end(r)->size;
	tf_reader_close(r);
}

static void write_meta(int dfd, enum meta_end how)
{
	Vmscope__Trace__FileSummary fs[2], *fsp[2] = { &fs[0], &fs[1] };
	Vmscope__Trace__Origin fo[2];
	static struct vr_pb_events hostev;
	Vmscope__Trace__SessionMetadata s = VMSCOPE__TRACE__SESSION_METADATA__INIT;
	Vmscope__Trace__ClockDesc clk = VMSCOPE__TRACE__CLOCK_DESC__INIT;
	Vmscope__Trace__VmInfo vm = VMSCOPE__TRACE__VM_INFO__INIT, *vms[1] = { &vm };
	Vmscope__Trace__EventTable gt;
	Vmscope__Trace__EventDesc gev[2], *gevp[2];
	Vmscope__Trace__FieldDesc gf[2], *gfp[2];
	Vmscope__Trace__Origin go, mo;
	Vmscope__Trace__Summary sum = VMSCOPE__TRACE__SUMMARY__INIT;
	struct tf_writer *w;

	vr_events_to_pb(&hostev, vmscope_event_descs, VMSCOPE_NR_EVENTS,
			VMSCOPE__TRACE__SIDE__SIDE_HOST, 0, "test");
	clk.name = "test";
	clk.unit = "ns";
	clk.ns_mul = clk.ns_div = 1;
	clk.byte_order = VMSCOPE__TRACE__BYTE_ORDER__BYTE_ORDER_LITTLE;
	clk.ts_bits = 64;
	s.format_version = 1;
	s.host_clock = &clk;
	s.host_events = &hostev.table;
	guest_table(&gt, gev, gevp, gf, gfp, &go);
	vm.name = "vm0";
	vm.qemu_pid = 42;
	vm.guest_events = &gt;
	vm.guest_clock = &clk;
	s.n_vms = 1;
	s.vms = vms;
	origin(&mo, VMSCOPE__TRACE__SIDE__SIDE_HOST, 0, 0);
	CHECK_EQ(tf_writer_create(&w, dfd, TF_TRACE_METADATA, NULL), 0);
	header(w, VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_METADATA, NULL);
	CHECK_EQ(tf_writer_append_msg(w, TF_FRAME_SESSION, &s.base), 0);
	sum.stop_realtime_ns = 1;
	origin(&fo[0], VMSCOPE__TRACE__SIDE__SIDE_GUEST, 0, 1);
	origin(&fo[1], VMSCOPE__TRACE__SIDE__SIDE_HOST, 0, 0);
	for (int i = 0; i < 2; i++)
		list_file(dfd, stream_names[i], &fs[i], &fo[i]);
	sum.n_files = how == META_NO_FILES ? 0 : 2;
	sum.files = fsp;
	if (how == META_WRITE_ERROR) {
		/* a writer that stopped on a full disk, losing 9 events */
		Vmscope__Trace__Statistics st = VMSCOPE__TRACE__STATISTICS__INIT;
		Vmscope__Trace__StreamStats ss = VMSCOPE__TRACE__STREAM_STATS__INIT, *ssp = &ss;

		ss.origin = &fo[1];
		ss.lost_events = 9;
		st.n_streams = 1;
		st.streams = &ssp;
		st.write_errors = 1;
		CHECK_EQ(tf_writer_append_msg(w, TF_FRAME_STATS, &st.base), 0);
	}
	if (how != META_KILLED)
		CHECK_EQ(tf_writer_append_msg(w, TF_FRAME_SUMMARY, &sum.base), 0);
	CHECK_EQ(tf_writer_close(w), 0);
}

static void write_host(int dfd)
{
	Vmscope__Trace__Origin o;
	Vmscope__Trace__LossRecord l = VMSCOPE__TRACE__LOSS_RECORD__INIT;
	Vmscope__Trace__FileIndex fi = VMSCOPE__TRACE__FILE_INDEX__INIT;
	struct tf_writer_stats st;
	struct tf_writer *w;
	uint8_t recs[512];
	uint32_t unknown = 5;
	size_t n;

	stream_file(&w, dfd, "host-cpu0.vtf", &o, VMSCOPE__TRACE__SIDE__SIDE_HOST, 0, 0);
	n = vmscope_rb_rec_encode(recs, 1000, 1000, VMSCOPE_EV_kvm_exit, &ex1, sizeof(ex1));
	n += vmscope_rb_rec_encode(recs + n, 1000, 1500, VMSCOPE_EV_kvm_entry, &en1, sizeof(en1));
	chunk(w, &o, 0, 0, 1000, 1600, recs, n, 2);
	/* a full timestamp 2^33 ns later: the EXT form */
	n = vmscope_rb_rec_encode(recs, 2000, 2000 + (1ull << 33), VMSCOPE_EV_kvm_exit, &ex1,
				  sizeof(ex1));
	chunk(w, &o, 1, 0, 2000, 3000 + (1ull << 33), recs, n, 1);
	/* sub-buffer 2 overwritten, 7 events lost before 3 */
	n = vmscope_rb_rec_encode(recs, 5000 + (1ull << 33), 5000 + (1ull << 33),
				  VMSCOPE_EV_kvm_entry, &en1, sizeof(en1));
	n += vmscope_rb_rec_encode(recs + n, 5000 + (1ull << 33), 5001 + (1ull << 33), 999,
				   &unknown, 4);
	chunk(w, &o, 3, 7, 5000 + (1ull << 33), 6000 + (1ull << 33), recs, n, 2);
	origin(&o, VMSCOPE__TRACE__SIDE__SIDE_HOST, 0, 0);
	l.origin = &o;
	l.kind = VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_RING_DISCARD;
	l.events = 3;
	l.detail = "after the last sub-buffer";
	CHECK_EQ(tf_writer_append_msg(w, TF_FRAME_LOSS, &l.base), 0);
	tf_writer_get_stats(w, &st);
	fi.frames = st.frames;
	fi.bytes = st.offset;
	CHECK_EQ(tf_writer_append_msg(w, TF_FRAME_INDEX, &fi.base), 0);
	CHECK_EQ(tf_writer_close(w), 0);
}

static void write_guest(int dfd)
{
	Vmscope__Trace__Origin o;
	struct tf_writer *w;
	uint8_t recs[64];
	uint32_t v = 77;
	size_t n;

	stream_file(&w, dfd, "guest0-cpu1.vtf", &o, VMSCOPE__TRACE__SIDE__SIDE_GUEST, 0, 1);
	n = vmscope_rb_rec_encode(recs, 10, 10, 0, &v, 4);
	n += vmscope_rb_rec_encode(recs + n, 10, 11, 1, &v, 4);
	chunk(w, &o, 0, 0, 10, 20, recs, n, 2);
	/* a chunk claiming another origin is not this file's */
	origin(&o, VMSCOPE__TRACE__SIDE__SIDE_HOST, 0, 1);
	chunk(w, &o, 1, 0, 30, 40, recs, n, 2);
	CHECK_EQ(tf_writer_close(w), 0);
}

/* The streams, then the metadata that lists them. */
static void write_trace(int dfd, enum meta_end how)
{
	write_host(dfd);
	write_guest(dfd);
	write_meta(dfd, how);
}

struct item_rec {
	enum vr_item_kind kind;
	uint64_t offset, ts, events;
	char text[256];
};

/* All items of a stream image; returns how many, *st filled. */
static size_t read_items(struct vr_trace *t, const uint8_t *img, size_t len,
			 struct item_rec *out, size_t max, struct vr_stream_stats *st)
{
	struct vr_stream *s;
	struct vr_item it;
	size_t n = 0;

	CHECK_EQ(vr_stream_open_mem(&s, t, img, len), 0);
	while (vr_stream_next(s, &it) == 1) {
		if (n < max) {
			out[n].kind = it.kind;
			out[n].offset = it.offset;
			out[n].ts = it.ts;
			out[n].events = it.events;
			if (it.kind == VR_EVENT)
				vmscope_format_event(it.desc, it.payload, it.size,
						     out[n].text, sizeof(out[n].text));
			else
				snprintf(out[n].text, sizeof(out[n].text), "%s",
					 it.text ? it.text : "");
		}
		n++;
	}
	*st = *vr_stream_stats(s);
	/* the counts live with the stream: keep a copy */
	static uint64_t counts[VR_MAX_EVENTS];

	memset(counts, 0, sizeof(counts));
	if (st->counts)
		memcpy(counts, st->counts, st->events_table->n * sizeof(*counts));
	st->counts = counts;
	vr_stream_close(s);
	return n;
}

static void test_host(struct vr_trace *t, const uint8_t *img, size_t len)
{
	struct item_rec it[32];
	struct vr_stream_stats st;
	char want[256];
	size_t n = read_items(t, img, len, it, 32, &st);

	CHECK_EQ(n, 8);
	CHECK_EQ(it[0].kind, VR_EVENT);
	CHECK_EQ(it[0].ts, 1000);
	vmscope_format_event(&vmscope_event_descs[VMSCOPE_EV_kvm_exit], &ex1, sizeof(ex1),
			     want, sizeof(want));
	CHECK(strcmp(it[0].text, want) == 0);
	CHECK(strstr(it[0].text, "reason 0x7b rip 0xffffffff81000000") != NULL);
	CHECK_EQ(it[1].kind, VR_EVENT);
	CHECK_EQ(it[1].ts, 1500);
	CHECK_EQ(it[2].kind, VR_EVENT);
	CHECK_EQ(it[2].ts, 2000 + (1ull << 33));
	CHECK_EQ(it[3].kind, VR_GAP);
	CHECK_EQ(it[4].kind, VR_LOSS);
	CHECK_EQ(it[4].events, 7);
	CHECK_EQ(it[5].kind, VR_EVENT);
	CHECK_EQ(it[6].kind, VR_BAD);
	CHECK(strstr(it[6].text, "event 999: no descriptor") != NULL);
	CHECK_EQ(it[7].kind, VR_LOSS);
	CHECK_EQ(it[7].events, 3);
	CHECK_EQ(st.events, 4);
	CHECK_EQ(st.undecodable, 1);
	CHECK_EQ(st.lost_events, 10);
	CHECK_EQ(st.gap_subbufs, 1);
	CHECK_EQ(st.chunks, 3);
	CHECK(st.has_header && st.has_index);
	CHECK_EQ(st.end.kind, TF_END_CLEAN);
	CHECK_EQ(st.counts[VMSCOPE_EV_kvm_exit], 2);
	CHECK_EQ(st.counts[VMSCOPE_EV_kvm_entry], 2);
}

/* A chunk with @ro as its origins (merge/out.h's merged chunks). */
static void chunk_origins(struct tf_writer *w, Vmscope__Trace__Origin *o, uint64_t seq,
			  uint64_t bts, uint8_t *recs, size_t len, uint32_t n,
			  Vmscope__Trace__RecordOrigins *ro)
{
	Vmscope__Trace__StreamChunk c = VMSCOPE__TRACE__STREAM_CHUNK__INIT;

	c.origin = o;
	c.seq = seq;
	c.begin_ts = bts;
	c.end_ts = bts + 100;
	c.records.data = recs;
	c.records.len = len;
	c.nr_records = n;
	c.origins = ro;
	CHECK_EQ(tf_writer_append_msg(w, TF_FRAME_CHUNK, &c.base), 0);
}

/*
 * Record origins come with their chunk, entry i for record i, undecodable
 * records keeping their place; a chunk whose columns are not as long as
 * its records is skipped as bad (tracefmt's check), whichever is off.
 */
static void test_origins(struct vr_trace *t, int dfd)
{
	uint64_t ts[3] = { 11, 12, 13 };
	uint32_t cpu[3] = { 0, 1, 2 }, org[3] = { 0, 1, 1 }, v1[4] = { 0, 2, 3, 4 };
	int32_t tid[3] = { 7, -1, -1 };
	Vmscope__Trace__RecordOrigins ro = VMSCOPE__TRACE__RECORD_ORIGINS__INIT;
	Vmscope__Trace__Origin o;
	struct tf_writer *w;
	struct vr_stream *s;
	struct vr_item it;
	uint8_t recs[256], *img;
	uint32_t unknown = 5;
	size_t n, len;
	int k = 0, bad = 0, gaps = 0;

	origin(&o, VMSCOPE__TRACE__SIDE__SIDE_HOST, 0, 0);
	CHECK_EQ(tf_writer_create(&w, dfd, "origins.vtf", NULL), 0);
	header(w, VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM, &o);
	n = vmscope_rb_rec_encode(recs, 100, 100, VMSCOPE_EV_kvm_exit, &ex1, sizeof(ex1));
	n += vmscope_rb_rec_encode(recs + n, 100, 101, 999, &unknown, 4);
	n += vmscope_rb_rec_encode(recs + n, 101, 102, VMSCOPE_EV_kvm_entry, &en1, sizeof(en1));
	ro.orig_ts = ts;
	ro.cpu = cpu;
	ro.tid = tid;
	ro.origin = org;
	ro.vcpu = v1;
	ro.n_orig_ts = ro.n_cpu = ro.n_tid = ro.n_origin = ro.n_vcpu = 3;
	chunk_origins(w, &o, 0, 100, recs, n, 3, &ro);
	/* one column short, then all of them: skipped (before their
	 * records are looked at: these are the first chunk's) */
	ro.n_tid = 2;
	chunk_origins(w, &o, 1, 200, recs, n, 3, &ro);
	ro.n_orig_ts = ro.n_cpu = ro.n_tid = ro.n_origin = ro.n_vcpu = 2;
	chunk_origins(w, &o, 2, 300, recs, n, 3, &ro);
	/* one column long: skipped, also when the chunk does not count its
	 * records */
	ro.n_orig_ts = ro.n_cpu = ro.n_tid = ro.n_origin = 3;
	ro.n_vcpu = 4;
	chunk_origins(w, &o, 3, 400, recs, n, 0, &ro);
	/* a chunk without origins: its records have none */
	n = vmscope_rb_rec_encode(recs, 500, 500, VMSCOPE_EV_kvm_exit, &ex1, sizeof(ex1));
	n += vmscope_rb_rec_encode(recs + n, 500, 501, VMSCOPE_EV_kvm_entry, &en1, sizeof(en1));
	n += vmscope_rb_rec_encode(recs + n, 501, 502, VMSCOPE_EV_kvm_entry, &en1, sizeof(en1));
	chunk_origins(w, &o, 4, 500, recs, n, 3, NULL);
	CHECK_EQ(tf_writer_close(w), 0);

	img = util_read_all(dfd, "origins.vtf", &len);
	CHECK_EQ(vr_stream_open_mem(&s, t, img, len), 0);
	while (vr_stream_next(s, &it) == 1) {
		if (it.kind == VR_BAD && strstr(it.text, "record origins do not match")) {
			bad++;
			continue;
		}
		if (it.kind == VR_GAP) {	/* the skipped chunks' sequence numbers */
			CHECK(it.first == 1 && it.last == 3);
			gaps++;
			continue;
		}
		if (k < 3) {	/* the first chunk's records, the bad one too */
			CHECK(it.origins != NULL);
			CHECK_EQ(it.rec_index, (uint32_t)k);
			CHECK_EQ(it.kind, k == 1 ? VR_BAD : VR_EVENT);
			if (it.origins && it.rec_index < 3) {
				CHECK_EQ(it.origins->orig_ts[it.rec_index], ts[k]);
				CHECK_EQ(it.origins->tid[it.rec_index], tid[k]);
				CHECK_EQ(it.origins->vcpu[it.rec_index], v1[k]);
			}
		} else {	/* the last chunk's */
			CHECK(it.origins == NULL);
			CHECK_EQ(it.rec_index, (uint32_t)(k - 3));
		}
		k++;
	}
	CHECK_EQ(k, 6);
	CHECK_EQ(bad, 3);
	CHECK_EQ(gaps, 1);
	CHECK_EQ(vr_stream_stats(s)->chunks, 2);
	vr_stream_close(s);
	free(img);
	CHECK_EQ(unlinkat(dfd, "origins.vtf", 0), 0);
}

/* Frame boundaries of an image: ends[i] = end offset of frame i. */
static size_t frame_ends(const uint8_t *img, size_t len, uint64_t *offs, uint64_t *ends,
			 size_t max)
{
	struct tf_reader *r;
	struct tf_frame f;
	size_t n = 0;

	CHECK_EQ(tf_reader_open_mem(&r, img, len), 0);
	while (tf_reader_next(r, &f) == 1 && n < max) {
		offs[n] = f.offset;
		ends[n] = f.offset + TF_FRAME_HDR_SIZE + f.length;
		n++;
	}
	tf_reader_close(r);
	return n;
}

static uint64_t end_of(uint64_t off, const uint64_t *offs, const uint64_t *ends, size_t nf)
{
	for (size_t i = 0; i < nf; i++)
		if (offs[i] == off)
			return ends[i];
	return UINT64_MAX;
}

/* Cut at every byte: the items of whole frames, then a torn (or clean) end. */
static void test_cuts(struct vr_trace *t, const uint8_t *img, size_t len)
{
	struct item_rec full[32], cut[32];
	struct vr_stream_stats st;
	uint64_t offs[16], ends[16];
	size_t nf = frame_ends(img, len, offs, ends, 16);
	size_t nfull = read_items(t, img, len, full, 32, &st), bad = 0;

	for (size_t L = 0; L <= len; L++) {
		size_t n = read_items(t, img, L, cut, 32, &st), want = 0;
		int boundary = L == 0;

		for (size_t i = 0; i < nfull; i++)
			if (end_of(full[i].offset, offs, ends, nf) <= L)
				want++;
		for (size_t i = 0; i < nf; i++)
			boundary |= ends[i] == L;
		if (n != want || st.end.kind != (boundary ? TF_END_CLEAN : TF_END_TORN))
			bad++;
		for (size_t i = 0; i < n && i < want; i++)
			if (cut[i].kind != full[i].kind || strcmp(cut[i].text, full[i].text))
				bad++;
	}
	CHECK_EQ(bad, 0);
}

/* A flipped byte in chunk 1's payload: chunk 0's items, then corrupt. */
static void test_flip(struct vr_trace *t, const uint8_t *img, size_t len)
{
	struct item_rec it[32];
	struct vr_stream_stats st;
	uint64_t offs[16], ends[16];
	uint8_t *copy = malloc(len);
	size_t nf = frame_ends(img, len, offs, ends, 16), n;

	CHECK(nf >= 4);
	memcpy(copy, img, len);
	copy[offs[2] + TF_FRAME_HDR_SIZE + 3] ^= 0x40;
	n = read_items(t, copy, len, it, 32, &st);
	CHECK_EQ(n, 2);
	CHECK_EQ(st.end.kind, TF_END_CORRUPT);
	CHECK_EQ(st.end.offset, offs[2]);
	free(copy);
}

static void test_guest(struct vr_trace *t, const uint8_t *img, size_t len)
{
	struct item_rec it[8];
	struct vr_stream_stats st;
	size_t n = read_items(t, img, len, it, 8, &st);

	CHECK_EQ(n, 3);
	CHECK_EQ(it[0].kind, VR_EVENT);
	CHECK(strcmp(it[0].text, "n 77") == 0);
	CHECK_EQ(it[1].kind, VR_BAD);
	CHECK(strstr(it[1].text, "bad_event") != NULL);
	CHECK_EQ(it[2].kind, VR_BAD);
	CHECK(strstr(it[2].text, "origin differs") != NULL);
	CHECK_EQ(st.events, 1);
	CHECK_EQ(st.undecodable, 1);
	CHECK_EQ(st.origin.side, VMSCOPE__TRACE__SIDE__SIDE_GUEST);
	CHECK_EQ(st.origin.cpu, 1);
}

/* No metadata: streams still walk, every record is undecodable. */
static void test_no_meta(const uint8_t *img, size_t len)
{
	struct item_rec it[32];
	struct vr_stream_stats st;
	struct vr_trace *t;

	CHECK_EQ(vr_trace_open_mem(&t, NULL, 0), 0);
	CHECK(vr_trace_problem(t) != NULL);
	read_items(t, img, len, it, 32, &st);
	CHECK_EQ(st.events, 0);
	CHECK_EQ(st.undecodable, 5);
	CHECK_EQ(st.end.kind, TF_END_CLEAN);
	vr_trace_close(t);
}

/* ---- damage accounting: each way a trace can be damaged is counted ---- */

static int fresh(const char *base, const char *name, enum meta_end how, char *path,
		 size_t len)
{
	int dfd = -1;

	snprintf(path, len, "%s/%s", base, name);
	CHECK_EQ(tf_trace_create(path, &dfd), 0);
	write_trace(dfd, how);
	return dfd;
}

/* Read every stream of @path to its end: the trace's damage; *rc is
 * vr_trace_open()'s result, @err its reason. */
static struct vr_damage read_all(const char *path, int *rc, char *err, size_t errlen)
{
	struct vr_damage d;
	struct vr_trace *t;

	memset(&d, 0, sizeof(d));
	*rc = vr_trace_open(&t, path, err, errlen);
	if (*rc)
		return d;
	for (size_t i = 0; i < vr_trace_nr_streams(t); i++) {
		struct vr_stream *s;
		struct vr_item it;

		if (vr_stream_open(&s, t, i))
			continue;
		while (vr_stream_next(s, &it) == 1)
			;
		vr_stream_close(s);
	}
	d = *vr_trace_damage(t);
	vr_trace_close(t);
	return d;
}

/* Flip one byte inside the payload of frame @n of file @name. */
static void flip_frame(int dfd, const char *name, unsigned int n)
{
	struct tf_reader *r;
	struct tf_frame f;
	uint64_t at = 0;
	uint8_t b;
	int fd;

	CHECK_EQ(tf_reader_open(&r, dfd, name), 0);
	for (unsigned int i = 0; i <= n && tf_reader_next(r, &f) == 1; i++)
		at = f.offset + 24 + f.length / 2;
	tf_reader_close(r);
	fd = openat(dfd, name, O_RDWR);
	CHECK(fd >= 0);
	CHECK_EQ(pread(fd, &b, 1, (off_t)at), 1);
	b ^= 0x40;
	CHECK_EQ(pwrite(fd, &b, 1, (off_t)at), 1);
	close(fd);
}

/* Damage the summary tells: what it lists against what is there. */
static void test_damage_listed(const char *base)
{
	char path[160], err[256];
	struct vr_damage d;
	int dfd, rc;

	/* as written: only the records and the chunk the test trace holds
	 * on purpose (an unknown id, a descriptor failing the checks, a
	 * chunk of another origin) */
	dfd = fresh(base, "d-clean", META_SUMMARY, path, sizeof(path));
	d = read_all(path, &rc, err, sizeof(err));
	CHECK_EQ(rc, 0);
	CHECK_EQ(d.undecodable, 2);
	CHECK_EQ(d.bad, 1);
	CHECK_EQ(vr_damage_count(&d), 3);
	CHECK(!d.no_summary);
	close(dfd);

	/* the writer's final statistics report a failed write: damage, said */
	dfd = fresh(base, "d-write-error", META_WRITE_ERROR, path, sizeof(path));
	d = read_all(path, &rc, err, sizeof(err));
	CHECK_EQ(rc, 0);
	CHECK_EQ(d.write_errors, 1);
	CHECK_EQ(vr_damage_count(&d), 4);
	CHECK(strstr(d.first, "1 write error(s); 9 events lost in all") != NULL);
	close(dfd);

	/* a flipped byte mid-stream: corrupt, and fewer frames than listed */
	dfd = fresh(base, "d-flip", META_SUMMARY, path, sizeof(path));
	flip_frame(dfd, "host-cpu0.vtf", 2);
	d = read_all(path, &rc, err, sizeof(err));
	CHECK_EQ(d.corrupt, 1);
	CHECK_EQ(d.inventory, 1);
	close(dfd);

	/* a Summary that lists no file: every stream file is unlisted */
	dfd = fresh(base, "d-no-files", META_NO_FILES, path, sizeof(path));
	d = read_all(path, &rc, err, sizeof(err));
	CHECK_EQ(d.inventory, 2);
	CHECK(strstr(d.first, "not in the summary's list of files") != NULL);
	close(dfd);

	/* a listed stream deleted */
	dfd = fresh(base, "d-deleted", META_SUMMARY, path, sizeof(path));
	CHECK_EQ(unlinkat(dfd, "guest0-cpu1.vtf", 0), 0);
	d = read_all(path, &rc, err, sizeof(err));
	CHECK_EQ(rc, 0);
	CHECK_EQ(d.inventory, 1);
	CHECK(strstr(d.first, "guest0-cpu1.vtf: listed in the summary") != NULL);
	close(dfd);
}

/* Damaged, missing, extra and odd files, with and without a summary. */
static void test_damage_files(const char *base)
{
	char path[160], err[256];
	struct vr_damage d;
	struct timespec t0, t1;
	int dfd, rc, fd;

	/* truncated: torn where the summary says it was closed */
	dfd = fresh(base, "d-truncated", META_SUMMARY, path, sizeof(path));
	fd = openat(dfd, "host-cpu0.vtf", O_RDWR);
	CHECK(fd >= 0 && ftruncate(fd, 100) == 0);
	close(fd);
	d = read_all(path, &rc, err, sizeof(err));
	CHECK_EQ(d.torn, 1);
	CHECK(d.inventory >= 1);
	CHECK(vr_damage_count(&d) >= 2);
	close(dfd);

	/* duplicated: a copy of a stream is unlisted and of the same origin */
	dfd = fresh(base, "d-dup", META_SUMMARY, path, sizeof(path));
	{
		size_t len;
		uint8_t *img = util_read_all(dfd, "host-cpu0.vtf", &len);

		fd = openat(dfd, "host-cpu0-copy.vtf", O_WRONLY | O_CREAT | O_EXCL, 0644);
		CHECK(fd >= 0 && write(fd, img, len) == (ssize_t)len);
		close(fd);
		free(img);
	}
	d = read_all(path, &rc, err, sizeof(err));
	CHECK_EQ(d.inventory, 2);	/* not listed; same origin as host-cpu0 */
	close(dfd);

	/* a 0-byte stream: not clean, with or without a summary */
	dfd = fresh(base, "d-empty", META_SUMMARY, path, sizeof(path));
	fd = openat(dfd, "host-cpu7.vtf", O_WRONLY | O_CREAT | O_EXCL, 0644);
	close(fd);
	d = read_all(path, &rc, err, sizeof(err));
	CHECK_EQ(d.torn, 1);
	CHECK_EQ(d.inventory, 1);
	close(dfd);

	/* killed recorder (no summary): torn tails and empty files counted,
	 * said, and not damage */
	dfd = fresh(base, "d-killed", META_KILLED, path, sizeof(path));
	fd = openat(dfd, "host-cpu0.vtf", O_RDWR);
	CHECK(fd >= 0 && ftruncate(fd, 100) == 0);
	close(fd);
	fd = openat(dfd, "host-cpu7.vtf", O_WRONLY | O_CREAT | O_EXCL, 0644);
	close(fd);
	d = read_all(path, &rc, err, sizeof(err));
	CHECK(d.no_summary);
	CHECK_EQ(d.torn, 2);
	CHECK_EQ(vr_damage_count(&d), d.undecodable + d.bad);

	/* a FIFO among the streams: refused at once, not waited on; then as
	 * the metadata file */
	CHECK_EQ(mkfifoat(dfd, "host-cpu9.vtf", 0600), 0);
	d = read_all(path, &rc, err, sizeof(err));
	CHECK_EQ(d.unreadable, 1);
	CHECK_EQ(unlinkat(dfd, "host-cpu9.vtf", 0), 0);
	CHECK_EQ(unlinkat(dfd, "metadata.vtf", 0), 0);
	CHECK_EQ(mkfifoat(dfd, "metadata.vtf", 0600), 0);
	d = read_all(path, &rc, err, sizeof(err));
	CHECK(rc != 0);
	CHECK(strstr(err, "metadata.vtf: not a regular file") != NULL);
	close(dfd);

	/* a 1 TiB sparse stream holding a few hundred bytes: read by its data,
	 * the hole found at once */
	dfd = fresh(base, "d-sparse", META_KILLED, path, sizeof(path));
	fd = openat(dfd, "host-cpu0.vtf", O_RDWR);
	CHECK(fd >= 0 && ftruncate(fd, (off_t)1 << 40) == 0);
	close(fd);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	d = read_all(path, &rc, err, sizeof(err));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK_EQ(d.torn, 1);
	CHECK(t1.tv_sec - t0.tv_sec < 10);
	close(dfd);

	/* metadata corrupt mid-file: the session frame's payload */
	dfd = fresh(base, "d-meta", META_SUMMARY, path, sizeof(path));
	flip_frame(dfd, "metadata.vtf", 1);
	d = read_all(path, &rc, err, sizeof(err));
	CHECK_EQ(rc, 0);
	CHECK(d.metadata >= 1);
	CHECK(strstr(d.first, "metadata.vtf") != NULL);
	close(dfd);

	/* not a trace: no metadata, no stream files */
	snprintf(path, sizeof(path), "%s/d-none", base);
	CHECK_EQ(mkdir(path, 0755), 0);
	d = read_all(path, &rc, err, sizeof(err));
	CHECK_EQ(rc, -ENOENT);
	CHECK(strstr(err, "not a trace") != NULL);
}

int main(int argc, char **argv)
{
	char base[64], path[128];
	int bfd, dfd;
	struct vr_trace *t;
	char err[256];
	size_t hl, gl;

	if (argc == 3 && (!strcmp(argv[1], "--write") || !strcmp(argv[1], "--write-killed"))) {
		CHECK_EQ(tf_trace_create(argv[2], &dfd), 0);
		write_trace(dfd, strcmp(argv[1], "--write") ? META_KILLED : META_SUMMARY);
		close(dfd);
		return check_failures ? 1 : 0;
	}
	bfd = tf_test_mkdir(base, sizeof(base));
	snprintf(path, sizeof(path), "%s/t", base);
	CHECK_EQ(tf_trace_create(path, &dfd), 0);
	write_trace(dfd, META_SUMMARY);
	test_damage_listed(base);
	test_damage_files(base);

	CHECK_EQ(vr_trace_open(&t, path, err, sizeof(err)), 0);
	CHECK(vr_trace_problem(t) == NULL);
	CHECK(vr_trace_session(t) != NULL);
	CHECK(vr_trace_summary(t) != NULL);
	CHECK_EQ(vr_trace_nr_streams(t), 2);
	CHECK(strcmp(vr_trace_stream_name(t, 0), "guest0-cpu1.vtf") == 0);
	CHECK(strcmp(vr_trace_stream_name(t, 1), "host-cpu0.vtf") == 0);

	uint8_t *host = util_read_all(dfd, "host-cpu0.vtf", &hl);
	uint8_t *guest = util_read_all(dfd, "guest0-cpu1.vtf", &gl);

	test_host(t, host, hl);
	test_cuts(t, host, hl);
	test_flip(t, host, hl);
	test_guest(t, guest, gl);
	test_no_meta(host, hl);
	test_origins(t, dfd);
	vr_trace_close(t);

	/* stream files in number order, not byte order */
	Vmscope__Trace__Origin o;
	struct tf_writer *w;
	const char *names[] = { "host-cpu10.vtf", "host-cpu2.vtf" };

	for (int i = 0; i < 2; i++) {
		origin(&o, VMSCOPE__TRACE__SIDE__SIDE_HOST, 0, 0);
		CHECK_EQ(tf_writer_create(&w, dfd, names[i], NULL), 0);
		CHECK_EQ(tf_writer_close(w), 0);
	}
	CHECK_EQ(vr_trace_open(&t, path, err, sizeof(err)), 0);
	CHECK_EQ(vr_trace_nr_streams(t), 4);
	CHECK(strcmp(vr_trace_stream_name(t, 2), "host-cpu2.vtf") == 0);
	CHECK(strcmp(vr_trace_stream_name(t, 3), "host-cpu10.vtf") == 0);
	vr_trace_close(t);

	free(host);
	free(guest);
	close(dfd);
	tf_test_rmdir(path);
	close(bfd);
	tf_test_rmdir(base);
	return check_result("reader");
}
