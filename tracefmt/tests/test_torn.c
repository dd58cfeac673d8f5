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

int main(void)
{
	char dir[64];
	int dfd = tf_test_mkdir(dir, sizeof(dir));
	uint32_t sizes[N];
	uint64_t offs[N + 1];
	size_t len;
	struct tf_end_info end;

	for (size_t i = 0; i < N; i++)
		sizes[i] = i == N - 1 ? 5000 : i % 5 == 0 ? 0 : (uint32_t)(i * 53 % 300);
	uint8_t *img = tf_test_build(dfd, "t.vtf", sizes, N, offs, &len);
	uint8_t *z = malloc(len + 4096);
	size_t cuts = 0;

	/* every cut, in memory, bare and zero-padded */
	for (size_t cut = 0; cut <= len; cut++) {
		expect(offs, cut, tf_test_read_all(img, cut, &end), &end, 0);
		size_t pad = 1 + (cut * 131) % 4096;

		memcpy(z, img, cut);
		memset(z + cut, 0, pad);
		expect(offs, cut, tf_test_read_all(z, cut + pad, &end), &end, 1);
		cuts++;
	}

	/* on disk: cut the last three frames at every offset, fd reader */
	int fd = openat(dfd, "t.vtf", O_RDWR | O_CLOEXEC);

	for (size_t cut = len; cut + 1 > offs[N - 3] && cut <= len; cut--) {
		struct tf_reader *r;
		struct tf_frame f;
		size_t got = 0;

		CHECK_EQ(ftruncate(fd, (off_t)cut), 0);
		CHECK_EQ(tf_reader_open_fd(&r, fd), 0);
		while (tf_reader_next(r, &f) == 1) {
			CHECK(f.length == sizes[got] &&
			      memcmp(f.payload, img + offs[got] + TF_FRAME_HDR_SIZE, f.length) == 0);
			got++;
		}
		expect(offs, cut, got, tf_reader_end(r), 0);
		tf_reader_close(r);
		if (cut == 0)
			break;
	}
	close(fd);
	printf("%zu cuts of a %zu-byte file of %d frames\n", cuts, len, N);
	free(z);
	free(img);
	close(dfd);
	tf_test_rmdir(dir);
	return tf_test_result("tracefmt-torn");
}
