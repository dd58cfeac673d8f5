/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A killed writer leaves a prefix of what it meant to write, possibly
 * followed by zeros (a file system that extended the size before the data
 * reached the disk). For a cut at every byte offset of the file, the
 * reader must return exactly the frames that end at or before the cut,
 * then report a clean end (cut on a frame boundary) or a torn tail at the
 * first missing frame — never a corrupt file, never a wrong frame. The
 * same with 1..4096 zero bytes after the cut. The last frames are also
 * cut on disk (ftruncate) and read through the fd reader.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

#define N 40

static size_t complete_before(const uint64_t *offs, size_t cut)
{
	size_t k = 0;

	while (k < N && offs[k + 1] <= cut)
		k++;
	return k;
}

static void expect(const uint64_t *offs, size_t cut, size_t got,
		   const struct tf_end_info *end, int zeros)
{
	size_t k = complete_before(offs, cut);

	CHECK_EQ(got, k);
	CHECK_EQ(end->offset, offs[k]);
	if (cut == offs[k] && !zeros)
		CHECK_EQ(end->kind, TF_END_CLEAN);
	else
		CHECK_EQ(end->kind, TF_END_TORN);
	if (check_failures) {
		fprintf(stderr, "cut %zu zeros %d: %s at %llu: %s\n", cut, zeros,
			tf_end_str(end->kind), (unsigned long long)end->offset,
			end->reason);
		exit(1);
	}
}

/* a large last frame, empty ones, small ones */
static uint32_t size_of(size_t i)
{
	return i == N - 1 ? 5000 : i % 5 == 0 ? 0 : (uint32_t)(i * 53 % 300);
}

int main(void)
{
	struct tf_test_file t;
	struct tf_end_info end;

	tf_test_file(&t, "t.vtf", N, size_of);
	uint8_t *z = malloc(t.len + 4096);
	size_t cuts = 0;

	/* every cut, in memory, bare and zero-padded */
	for (size_t cut = 0; cut <= t.len; cut++) {
		expect(t.offs, cut, tf_test_read_all(t.img, cut, &end), &end, 0);
		size_t pad = 1 + (cut * 131) % 4096;

		memcpy(z, t.img, cut);
		memset(z + cut, 0, pad);
		expect(t.offs, cut, tf_test_read_all(z, cut + pad, &end), &end, 1);
		cuts++;
	}

	/* on disk: cut the last three frames at every offset, fd reader */
	int fd = openat(t.dfd, "t.vtf", O_RDWR | O_CLOEXEC);

	for (size_t cut = t.len; cut + 1 > t.offs[N - 3] && cut <= t.len; cut--) {
		struct tf_reader *r;
		struct tf_frame f;
		size_t got = 0;

		CHECK_EQ(ftruncate(fd, (off_t)cut), 0);
		CHECK_EQ(tf_reader_open_fd(&r, fd), 0);
		while (tf_reader_next(r, &f) == 1) {
			CHECK(f.length == t.sizes[got] &&
			      memcmp(f.payload, t.img + t.offs[got] + TF_FRAME_HDR_SIZE, f.length) == 0);
			got++;
		}
		expect(t.offs, cut, got, tf_reader_end(r), 0);
		tf_reader_close(r);
		if (cut == 0)
			break;
	}
	close(fd);
	printf("%zu cuts of a %zu-byte file of %d frames\n", cuts, t.len, N);
	free(z);
	tf_test_file_free(&t);
	return check_result("tracefmt-torn");
}
