/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Writer and reader agree: frames of every size class (empty, small,
 * larger than the writer's buffer) come back in order with their type,
 * seq, offset and bytes, through the fd reader and the memory reader.
 * Plus the writer's refusals: O_EXCL, type 0, oversize payload.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

#define N 300

/* empty frames, frames past the writer's buffer, and sizes in between */
static uint32_t size_of(size_t i)
{
	return i % 50 == 0 ? 0 : i % 37 == 0 ? 9000 + (uint32_t)i * 13 :
	       (uint32_t)((i * 7919) % 700);
}

int main(void)
{
	struct tf_test_file t;
	struct tf_end_info end;

	tf_test_file(&t, "a.vtf", N, size_of);

	CHECK(t.img != NULL);
	CHECK_EQ(t.len, t.offs[N]);
	for (size_t i = 0; i < N; i++)
		CHECK_EQ(t.offs[i + 1] - t.offs[i], TF_FRAME_HDR_SIZE + t.sizes[i]);

	/* memory reader */
	CHECK_EQ(tf_test_read_all(t.img, t.len, &end), N);
	CHECK_EQ(end.kind, TF_END_CLEAN);
	CHECK_EQ(end.offset, t.len);
	CHECK_EQ(end.frames, N);

	/* fd reader: same frames, same offsets */
	struct tf_reader *r;
	struct tf_frame f;
	size_t n = 0;

	CHECK_EQ(tf_reader_open(&r, t.dfd, "a.vtf"), 0);
	while (tf_reader_next(r, &f) == 1) {
		CHECK_EQ(f.offset, t.offs[n]);
		CHECK_EQ(f.length, t.sizes[n]);
		CHECK_EQ(f.type, tf_test_type(n));
		CHECK(memcmp(f.payload, t.img + t.offs[n] + TF_FRAME_HDR_SIZE, f.length) == 0);
		n++;
	}
	CHECK_EQ(n, N);
	CHECK_EQ(tf_reader_end(r)->kind, TF_END_CLEAN);
	CHECK_EQ(tf_reader_next(r, &f), 0);	/* stays stopped */
	tf_reader_close(r);

	/* an empty file is a clean, empty trace file */
	CHECK_EQ(tf_test_read_all(t.img, 0, &end), 0);
	CHECK_EQ(end.kind, TF_END_CLEAN);

	/* a directory is not a trace file */
	CHECK_EQ(tf_reader_open(&r, AT_FDCWD, t.dir), -EINVAL);

	/* refusals */
	struct tf_writer *w;

	CHECK_EQ(tf_writer_create(&w, t.dfd, "a.vtf", NULL), -EEXIST);
	CHECK_EQ(tf_writer_create(&w, t.dfd, "b.vtf", NULL), 0);
	CHECK_EQ(tf_writer_append(w, 0, "x", 1), -EINVAL);
	/* oversize: refused before touching the (here bogus-length) data */
	CHECK_EQ(tf_writer_append(w, TF_FRAME_RAW, t.img, (size_t)TF_FRAME_MAX_PAYLOAD + 1),
		 -EMSGSIZE);
	CHECK_EQ(tf_writer_error(w), 0);
	CHECK_EQ(tf_writer_append(w, TF_FRAME_RAW, "ok", 2), 0);
	CHECK_EQ(tf_writer_close(w), 0);
	free(t.img);
	t.img = util_read_all(t.dfd, "b.vtf", &t.len);
	CHECK_EQ(t.len, TF_FRAME_HDR_SIZE + 2);
	CHECK(tf_reader_open_mem(&r, t.img, t.len) == 0 && tf_reader_next(r, &f) == 1 &&
	      f.seq == 0 && f.length == 2 && memcmp(f.payload, "ok", 2) == 0);
	tf_reader_close(r);

	tf_test_file_free(&t);	/* and b.vtf's image, now in t.img */
	return check_result("tracefmt-frames");
}
