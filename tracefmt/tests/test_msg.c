/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stored messages through frames: every message type written with
 * tf_writer_append_msg (also one larger than the writer's buffer) is read
 * back and decoded by tf_msg_decode to an identical encoding. Decoding
 * refuses: payloads over the allocation budget (many empty
 * sub-messages), wrong frame types, and each semantic check.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <vmscope/ringbuf_abi.h>

#include "common.pb-c.h"
#include "file.pb-c.h"
#include "session.pb-c.h"
#include "stream.pb-c.h"

#include "util.h"

static Vmscope__Trace__Origin host1 = { PROTOBUF_C_MESSAGE_INIT(&vmscope__trace__origin__descriptor),
					VMSCOPE__TRACE__SIDE__SIDE_HOST, 0, 1, 0 };

static int decode_ok(uint16_t type, const uint8_t *p, size_t n)
{
	ProtobufCMessage *m;
	char err[128] = "";
	int r = tf_msg_decode(type, p, n, 0, &m, err, sizeof(err));

	if (r == 0)
		tf_msg_free(m);
	else
		fprintf(stderr, "  decode type %u: %d %s\n", type, r, err);
	return r;
}

/* Pack m alone and decode it as type; returns tf_msg_decode's result. */
static int try_msg(uint16_t type, const ProtobufCMessage *m)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *p = malloc(n + 1);
	int r;

	protobuf_c_message_pack(m, p);
	r = decode_ok(type, p, n);
	free(p);
	return r;
}

/* One message of each type, and what they point to. */
struct msgs {
	Vmscope__Trace__FileHeader fh;
	Vmscope__Trace__ClockDesc clk;
	Vmscope__Trace__FieldDesc fd0, *fds[1];
	Vmscope__Trace__EventDesc ev, *evs[1];
	Vmscope__Trace__EventTable tab;
	Vmscope__Trace__SessionMetadata sm;
	uint8_t recs[16 + 32 + 8];	/* plain 8+8, EXT 8+8+16, empty 8 */
	Vmscope__Trace__StreamChunk ch, big;
	Vmscope__Trace__LossRecord lr;
	Vmscope__Trace__Statistics stats;
	uint64_t offs[2], tss[2];
	Vmscope__Trace__FileIndex fi;
	Vmscope__Trace__Summary sum;
};

static void msgs_init(struct msgs *ms)
{
	static uint8_t uuid[16] = { 9, 9, 9 };
	/* bigger than the 4 KiB buffer: the direct-write path */
	static uint8_t bigrecs[20000];
	uint64_t h, ts = 1234567;

	vmscope__trace__file_header__init(&ms->fh);
	ms->fh.format_version = 1; ms->fh.session_id.data = uuid; ms->fh.session_id.len = 16;
	ms->fh.role = VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM; ms->fh.origin = &host1;
	ms->fh.writer = "test";

	vmscope__trace__clock_desc__init(&ms->clk);
	ms->clk.name = "local_clock"; ms->clk.unit = "ns"; ms->clk.ns_mul = 1; ms->clk.ns_div = 1;
	ms->clk.byte_order = VMSCOPE__TRACE__BYTE_ORDER__BYTE_ORDER_LITTLE;
	vmscope__trace__field_desc__init(&ms->fd0);
	ms->fd0.name = "reason"; ms->fd0.type = VMSCOPE__TRACE__FIELD_TYPE__FIELD_TYPE_U32;
	ms->fd0.offset = 0; ms->fd0.size = 4;
	ms->fds[0] = &ms->fd0;
	vmscope__trace__event_desc__init(&ms->ev);
	ms->ev.id = 3; ms->ev.name = "kvm_exit"; ms->ev.payload_size = 8; ms->ev.n_fields = 1;
	ms->ev.fields = ms->fds;
	ms->evs[0] = &ms->ev;
	vmscope__trace__event_table__init(&ms->tab);
	ms->tab.n_events = 1; ms->tab.events = ms->evs;
	vmscope__trace__session_metadata__init(&ms->sm);
	ms->sm.format_version = 1; ms->sm.host_clock = &ms->clk; ms->sm.host_events = &ms->tab;

	/* a chunk of real records: one plain, one EXT, one empty payload */
	h = VMSCOPE_RB_REC_HDR(ts, 3, 8, 0);
	memcpy(ms->recs, &h, 8); memset(ms->recs + 8, 0xab, 8);
	h = VMSCOPE_RB_REC_HDR(ts + 10, 3, 13, 1);
	memcpy(ms->recs + 16, &h, 8); memcpy(ms->recs + 24, &ts, 8);
	memset(ms->recs + 32, 0xcd, 16);
	h = VMSCOPE_RB_REC_HDR(ts + 20, 4, 0, 0);
	memcpy(ms->recs + 48, &h, 8);
	vmscope__trace__stream_chunk__init(&ms->ch);
	ms->ch.origin = &host1; ms->ch.seq = 7; ms->ch.begin_ts = ts; ms->ch.end_ts = ts + 20;
	ms->ch.nr_records = 3; ms->ch.records.data = ms->recs;
	ms->ch.records.len = sizeof(ms->recs);

	vmscope__trace__loss_record__init(&ms->lr);
	ms->lr.origin = &host1; ms->lr.kind = VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_RING_DISCARD;
	ms->lr.events = 10;

	vmscope__trace__statistics__init(&ms->stats);
	ms->stats.bytes_written = 99;

	ms->offs[0] = 24; ms->offs[1] = 200; ms->tss[0] = 1; ms->tss[1] = 2;
	vmscope__trace__file_index__init(&ms->fi);
	ms->fi.n_chunk_offset = ms->fi.n_chunk_begin_ts = ms->fi.n_chunk_end_ts = 2;
	ms->fi.chunk_offset = ms->offs; ms->fi.chunk_begin_ts = ms->fi.chunk_end_ts = ms->tss;
	ms->fi.bytes = 300;

	vmscope__trace__summary__init(&ms->sum);
	ms->sum.stop_ts = 5; ms->sum.final_stats = &ms->stats;

	for (size_t i = 0; i < sizeof(bigrecs); i += 16) {
		h = VMSCOPE_RB_REC_HDR(ts + i, 1, 8, 0);
		memcpy(bigrecs + i, &h, 8);
	}
	ms->big = ms->ch;
	ms->big.nr_records = sizeof(bigrecs) / 16;
	ms->big.records.data = bigrecs; ms->big.records.len = sizeof(bigrecs);
}

/* Each message written and read back to the same encoding. */
static void test_roundtrip(int dfd, struct msgs *ms)
{
	struct tf_writer_opts o = { .buf_size = 4096 };
	const struct { uint16_t type; const ProtobufCMessage *m; } all[] = {
		{ TF_FRAME_FILE_HEADER, &ms->fh.base }, { TF_FRAME_SESSION, &ms->sm.base },
		{ TF_FRAME_CHUNK, &ms->ch.base },
		{ TF_FRAME_LOSS, &ms->lr.base }, { TF_FRAME_STATS, &ms->stats.base },
		{ TF_FRAME_CHUNK, &ms->big.base },
		{ TF_FRAME_INDEX, &ms->fi.base }, { TF_FRAME_SUMMARY, &ms->sum.base },
	};
	const size_t nall = sizeof(all) / sizeof(all[0]);
	struct tf_writer *w;
	struct tf_reader *r;
	struct tf_frame f;
	size_t n = 0;

	CHECK_EQ(tf_writer_create(&w, dfd, "m.vtf", &o), 0);
	for (size_t i = 0; i < nall; i++)
		CHECK_EQ(tf_writer_append_msg(w, all[i].type, all[i].m), 0);
	/* a message under the wrong frame type is refused */
	CHECK_EQ(tf_writer_append_msg(w, TF_FRAME_INDEX, &ms->lr.base), -EINVAL);
	CHECK_EQ(tf_writer_close(w), 0);

	CHECK_EQ(tf_reader_open(&r, dfd, "m.vtf"), 0);
	while (tf_reader_next(r, &f) == 1 && n < nall) {
		ProtobufCMessage *m;
		char err[128];

		CHECK_EQ(f.type, all[n].type);
		CHECK_EQ(tf_msg_decode(f.type, f.payload, f.length, 0, &m, err, sizeof(err)), 0);
		if (m) {
			size_t len = protobuf_c_message_get_packed_size(m);
			uint8_t *p = malloc(len + 1);

			CHECK_EQ(len, protobuf_c_message_get_packed_size(all[n].m));
			protobuf_c_message_pack(m, p);
			CHECK(len == f.length && memcmp(p, f.payload, len) == 0);
			free(p);
			tf_msg_free(m);
		}
		n++;
	}
	CHECK_EQ(n, nall);
	CHECK_EQ(tf_reader_end(r)->kind, TF_END_CLEAN);
	tf_reader_close(r);
}

/* Bytes that are no message of the frame's type. */
static void test_undecodable(void)
{
	ProtobufCMessage *m;

	/* not a message type */
	CHECK_EQ(tf_msg_decode(TF_FRAME_RAW, (const uint8_t *)"", 0, 0, &m, NULL, 0), -ENOENT);
	/* undecodable: a truncated varint */
	CHECK_EQ(tf_msg_decode(TF_FRAME_STATS, (const uint8_t *)"\x08\xff", 2, 0, &m, NULL, 0),
		 -EBADMSG);

	/* field number 0 (overlong tag 80 00), accepted by protobuf-c but not
	 * re-readable once re-encoded: refused, at top level and nested */
	CHECK_EQ(tf_msg_decode(TF_FRAME_SESSION, (const uint8_t *)"\x80\x00\x2f", 3, 0,
			       &m, NULL, 0), -EINVAL);
	CHECK_EQ(tf_msg_decode(TF_FRAME_SESSION, (const uint8_t *)"\x1a\x03\x80\x00\x2f",
			       5, 0, &m, NULL, 0), -EINVAL);
}

/* @nb bytes of empty StreamStats entries, malloc'd. */
static uint8_t *empty_entries(size_t nb)
{
	uint8_t *bomb = malloc(nb);

	for (size_t i = 0; i < nb; i += 2) {
		bomb[i] = 0x12;		/* field 2 (streams), length-delimited */
		bomb[i + 1] = 0;	/* empty */
	}
	return bomb;
}

/* The allocation budget: what refuses a bomb, and what an honest one holds. */
static void test_budget(void)
{
	struct rusage ru0, ru1;
	ProtobufCMessage *m;
	size_t nb = 100000;
	uint8_t *bomb = empty_entries(nb);

	/* budget: 50000 empty StreamStats are 100 KB on the wire but ~5 MB
	 * decoded: refused under the default budget, fine with a larger one */
	CHECK_EQ(tf_msg_decode(TF_FRAME_STATS, bomb, nb, 0, &m, NULL, 0), -EBADMSG);
	CHECK_EQ(tf_msg_decode(TF_FRAME_STATS, bomb, nb, 64u << 20, &m, NULL, 0), 0);
	tf_msg_free(m);
	free(bomb);

	/* a 64 MiB metadata frame of empty entries: refused within the
	 * metadata budget (it cost 1.1 GB under a budget of 2 GiB) */
	nb = (size_t)64 << 20;
	bomb = empty_entries(nb);
	CHECK(tf_msg_budget(TF_FRAME_STATS, nb) == TF_MSG_META_BUDGET);
	CHECK(tf_msg_budget(TF_FRAME_SESSION, nb) == TF_MSG_META_BUDGET);
	CHECK(tf_msg_budget(TF_FRAME_CHUNK, nb) <= 3 * nb);
	getrusage(RUSAGE_SELF, &ru0);
	CHECK_EQ(tf_msg_decode(TF_FRAME_STATS, bomb, nb, 0, &m, NULL, 0), -EBADMSG);
	getrusage(RUSAGE_SELF, &ru1);
	CHECK(ru1.ru_maxrss - ru0.ru_maxrss < 400 * 1024);	/* KiB */
	free(bomb);
}

/* What an honest Statistics holds decodes: 65536 idle streams. */
static void test_honest_stats(void)
{
	size_t ns = 65536;
	Vmscope__Trace__StreamStats *ss = calloc(ns, sizeof(*ss)), **ssp = calloc(ns, sizeof(*ssp));
	Vmscope__Trace__Origin *so = calloc(ns, sizeof(*so));
	Vmscope__Trace__Statistics big = VMSCOPE__TRACE__STATISTICS__INIT;
	ProtobufCMessage *m;
	uint8_t *img;
	size_t len;

	for (size_t i = 0; i < ns; i++) {
		vmscope__trace__origin__init(&so[i]);
		so[i].side = VMSCOPE__TRACE__SIDE__SIDE_HOST;
		so[i].cpu = (uint32_t)i;
		vmscope__trace__stream_stats__init(&ss[i]);
		ss[i].origin = &so[i];
		ssp[i] = &ss[i];
	}
	big.n_streams = ns;
	big.streams = ssp;
	len = protobuf_c_message_get_packed_size(&big.base);
	img = malloc(len);
	protobuf_c_message_pack(&big.base, img);
	CHECK_EQ(tf_msg_decode(TF_FRAME_STATS, img, len, 0, &m, NULL, 0), 0);
	tf_msg_free(m);
	free(img);
	free(ss);
	free(ssp);
	free(so);
}

/* A chunk's semantic checks, one violation each. */
static void test_chunk_rules(struct msgs *ms)
{
	Vmscope__Trace__StreamChunk *ch = &ms->ch;

	CHECK_EQ(try_msg(TF_FRAME_CHUNK, &ch->base), 0);
	ch->records.len = sizeof(ms->recs) - 8;	/* last record cut */
	ch->nr_records = 0;
	CHECK_EQ(try_msg(TF_FRAME_CHUNK, &ch->base), 0);	/* 2 whole records */
	ch->records.len = sizeof(ms->recs) - 12;
	CHECK_EQ(try_msg(TF_FRAME_CHUNK, &ch->base), -EINVAL);	/* record cut */
	ch->records.len = sizeof(ms->recs) - 4;
	CHECK_EQ(try_msg(TF_FRAME_CHUNK, &ch->base), -EINVAL);	/* stray bytes */
	ch->records.len = 40;		/* EXT record overruns */
	CHECK_EQ(try_msg(TF_FRAME_CHUNK, &ch->base), -EINVAL);
	ch->records.len = sizeof(ms->recs);
	ch->nr_records = 4;		/* count disagrees */
	CHECK_EQ(try_msg(TF_FRAME_CHUNK, &ch->base), -EINVAL);
	ch->nr_records = 3;
	ch->end_ts = ch->begin_ts - 1;
	CHECK_EQ(try_msg(TF_FRAME_CHUNK, &ch->base), -EINVAL);
	ch->end_ts = ch->begin_ts;
	ch->origin = NULL;
	CHECK_EQ(try_msg(TF_FRAME_CHUNK, &ch->base), -EINVAL);
	ch->origin = &host1;
	host1.side = 7;
	CHECK_EQ(try_msg(TF_FRAME_CHUNK, &ch->base), -EINVAL);
	host1.side = VMSCOPE__TRACE__SIDE__SIDE_HOST;
}

/* The other messages' semantic checks, one violation each. */
static void test_meta_rules(struct msgs *ms)
{
	ms->fi.n_chunk_end_ts = 1;
	CHECK_EQ(try_msg(TF_FRAME_INDEX, &ms->fi.base), -EINVAL);
	ms->fi.n_chunk_end_ts = 2;
	ms->offs[1] = 10;		/* out of order */
	CHECK_EQ(try_msg(TF_FRAME_INDEX, &ms->fi.base), -EINVAL);
	ms->offs[1] = 200;
	ms->lr.kind = 0;
	CHECK_EQ(try_msg(TF_FRAME_LOSS, &ms->lr.base), -EINVAL);
	ms->fh.session_id.len = 5;
	CHECK_EQ(try_msg(TF_FRAME_FILE_HEADER, &ms->fh.base), -EINVAL);
	ms->fh.session_id.len = 16;
	ms->fh.origin = NULL;		/* a stream file must say whose */
	CHECK_EQ(try_msg(TF_FRAME_FILE_HEADER, &ms->fh.base), -EINVAL);
	CHECK_EQ(try_msg(TF_FRAME_SESSION, &ms->sm.base), 0);
	ms->clk.ns_div = 0;
	CHECK_EQ(try_msg(TF_FRAME_SESSION, &ms->sm.base), -EINVAL);
	ms->clk.ns_div = 1;
	ms->fd0.offset = 6;		/* field beyond the 8-byte payload */
	CHECK_EQ(try_msg(TF_FRAME_SESSION, &ms->sm.base), -EINVAL);
	ms->fd0.offset = 0xfffffffe;	/* offset + size wraps in 32 bits */
	CHECK_EQ(try_msg(TF_FRAME_SESSION, &ms->sm.base), -EINVAL);
	ms->fd0.offset = 0;
	ms->ev.id = 0x8000;
	CHECK_EQ(try_msg(TF_FRAME_SESSION, &ms->sm.base), -EINVAL);
	ms->ev.id = 3;
	CHECK_EQ(try_msg(TF_FRAME_SESSION, &ms->sm.base), 0);
}

int main(void)
{
	static struct msgs ms;
	char dir[64];
	int dfd = tf_test_mkdir(dir, sizeof(dir));

	msgs_init(&ms);
	test_roundtrip(dfd, &ms);
	test_undecodable();
	test_budget();
	test_honest_stats();
	test_chunk_rules(&ms);
	test_meta_rules(&ms);
	close(dfd);
	tf_test_rmdir(dir);
	return check_result("tracefmt-msg");
}
