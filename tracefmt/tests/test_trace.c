/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trace folder: created once, never over an existing path; its file
 * names; and a small trace written the way the collector will (file
 * header first, chunks, index last; metadata file with session and
 * summary) reads back file by file. Also: an fsync failure at close is
 * reported and sticky.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vmscope/ringbuf_abi.h>

#include "common.pb-c.h"
#include "file.pb-c.h"
#include "session.pb-c.h"
#include "stream.pb-c.h"

#include "trace.h"
#include "util.h"

static int eio_fsync(void *ctx, int fd)
{
	(void)ctx;
	(void)fd;
	errno = EIO;
	return -1;
}

int main(void)
{
	char base[64], path[128], name[64];
	int bfd = tf_test_mkdir(base, sizeof(base));
	int dfd, dfd2;

	snprintf(path, sizeof(path), "%s/trace1/", base);
	CHECK_EQ(tf_trace_create(path, &dfd), 0);
	CHECK_EQ(tf_trace_create(path, &dfd2), -EEXIST);
	CHECK_EQ(dfd2, -1);

	tf_trace_host_name(name, sizeof(name), 0, 3);
	CHECK(strcmp(name, "host-cpu3.vtf") == 0);
	tf_trace_host_name(name, sizeof(name), 1, 3);
	CHECK(strcmp(name, "host-ch1-cpu3.vtf") == 0);
	tf_trace_guest_name(name, sizeof(name), 1, 0);
	CHECK(strcmp(name, "guest1-cpu0.vtf") == 0);
	tf_trace_sync_name(name, sizeof(name), 2);
	CHECK(strcmp(name, "sync-guest2.vtf") == 0);

	/* a stream file as the collector writes it */
	Vmscope__Trace__Origin o = VMSCOPE__TRACE__ORIGIN__INIT;
	o.side = VMSCOPE__TRACE__SIDE__SIDE_HOST; o.cpu = 3;
	Vmscope__Trace__FileHeader fh = VMSCOPE__TRACE__FILE_HEADER__INIT;
	fh.format_version = 1; fh.role = VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM;
	fh.origin = &o;
	struct tf_writer *w;
	struct tf_writer_stats st;
	uint64_t offs[5], bts[5], ets[5];
	uint8_t recs[16] = { 0 };

	tf_trace_host_name(name, sizeof(name), 0, 3);
	CHECK_EQ(tf_writer_create(&w, dfd, name, NULL), 0);
	CHECK_EQ(tf_writer_append_msg(w, TF_FRAME_FILE_HEADER, &fh.base), 0);
	for (int i = 0; i < 5; i++) {
		Vmscope__Trace__StreamChunk ch = VMSCOPE__TRACE__STREAM_CHUNK__INIT;
		uint64_t h = VMSCOPE_RB_REC_HDR(100 * i, 1, 8, 0);

		memcpy(recs, &h, 8);
		ch.origin = &o; ch.seq = (uint64_t)i; ch.begin_ts = bts[i] = 100u * i;
		ch.end_ts = ets[i] = 100u * i + 50; ch.nr_records = 1;
		ch.records.data = recs; ch.records.len = sizeof(recs);
		tf_writer_get_stats(w, &st);
		offs[i] = st.offset;
		CHECK_EQ(tf_writer_append_msg(w, TF_FRAME_CHUNK, &ch.base), 0);
	}
	Vmscope__Trace__FileIndex fi = VMSCOPE__TRACE__FILE_INDEX__INIT;
	tf_writer_get_stats(w, &st);
	fi.n_chunk_offset = fi.n_chunk_begin_ts = fi.n_chunk_end_ts = 5;
	fi.chunk_offset = offs; fi.chunk_begin_ts = bts; fi.chunk_end_ts = ets;
	fi.frames = st.frames; fi.bytes = st.offset;
	CHECK_EQ(tf_writer_append_msg(w, TF_FRAME_INDEX, &fi.base), 0);
	CHECK_EQ(tf_writer_close(w), 0);

	/* read it back by the index: seek-free here, but offsets must match */
	struct tf_reader *r;
	struct tf_frame f;
	int n = 0, chunks = 0;

	CHECK_EQ(tf_reader_open(&r, dfd, name), 0);
	while (tf_reader_next(r, &f) == 1) {
		ProtobufCMessage *m;

		CHECK_EQ(tf_msg_decode(f.type, f.payload, f.length, 0, &m, NULL, 0), 0);
		if (n == 0)
			CHECK_EQ(f.type, TF_FRAME_FILE_HEADER);
		if (f.type == TF_FRAME_CHUNK)
			CHECK_EQ(f.offset, offs[chunks++]);
		if (f.type == TF_FRAME_INDEX) {
			const Vmscope__Trace__FileIndex *x = (const void *)m;

			CHECK_EQ(x->chunk_offset[4], offs[4]);
			CHECK_EQ(x->bytes, f.offset);
		}
		tf_msg_free(m);
		n++;
	}
	CHECK_EQ(n, 7);
	CHECK_EQ(tf_reader_end(r)->kind, TF_END_CLEAN);
	tf_reader_close(r);

	/* fsync failing at close: reported, and sticky */
	struct tf_io io = { .fsync = eio_fsync };
	struct tf_writer_opts opt = { .io = &io };

	CHECK_EQ(tf_writer_create(&w, dfd, TF_TRACE_METADATA, &opt), 0);
	CHECK_EQ(tf_writer_append(w, TF_FRAME_RAW, "x", 1), 0);
	CHECK_EQ(tf_writer_sync(w), -EIO);
	CHECK_EQ(tf_writer_append(w, TF_FRAME_RAW, "y", 1), -EIO);
	CHECK_EQ(tf_writer_close(w), -EIO);

	close(dfd);
	snprintf(path, sizeof(path), "%s/trace1", base);
	unlinkat(bfd, "trace1/host-cpu3.vtf", 0);
	unlinkat(bfd, "trace1/" TF_TRACE_METADATA, 0);
	rmdir(path);
	close(bfd);
	tf_test_rmdir(base);
	return check_result("tracefmt-trace");
}
