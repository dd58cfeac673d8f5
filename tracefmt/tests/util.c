/* SPDX-License-Identifier: GPL-2.0 */
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

int tf_test_mkdir(char *path, size_t len)
{
	snprintf(path, len, "/var/tmp/tracefmt-test-XXXXXX");
	if (!mkdtemp(path)) {
		perror("mkdtemp");
		exit(2);
	}
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

static int remove_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p);
}

void tf_test_rmdir(const char *path)
{
	/* depth first, not following links: tests leave subfolders (in/, merged/) */
	nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

uint8_t tf_test_payload_byte(size_t frame, size_t i)
{
	uint32_t x = (uint32_t)(frame * 2654435761u + i * 40503u);

	return (uint8_t)(x ^ (x >> 13));
}

uint16_t tf_test_type(size_t frame)
{
	return frame % 9 == 8 ? TF_FRAME_RAW : (uint16_t)(1 + frame % 9);
}

uint8_t *tf_test_build(int dirfd, const char *name, const uint32_t *sizes,
		       size_t n, uint64_t *offs, size_t *len)
{
	struct tf_writer_opts o = { .buf_size = 4096 };
	struct tf_writer *w;
	struct tf_writer_stats st;

	if (tf_writer_create(&w, dirfd, name, &o))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		uint8_t *p = malloc(sizes[i] + 1);

		for (size_t k = 0; k < sizes[i]; k++)
			p[k] = tf_test_payload_byte(i, k);
		tf_writer_get_stats(w, &st);
		offs[i] = st.offset;
		CHECK_EQ(tf_writer_append(w, tf_test_type(i), p, sizes[i]), 0);
		free(p);
	}
	tf_writer_get_stats(w, &st);
	offs[n] = st.offset;
	CHECK_EQ(tf_writer_close(w), 0);
	return util_read_all(dirfd, name, len);
}

void tf_test_file(struct tf_test_file *t, const char *name, size_t n,
		  uint32_t (*size_of)(size_t i))
{
	t->dfd = tf_test_mkdir(t->dir, sizeof(t->dir));
	t->sizes = malloc(n * sizeof(*t->sizes));
	t->offs = malloc((n + 1) * sizeof(*t->offs));
	if (!t->sizes || !t->offs) {
		fprintf(stderr, "tf_test_file: out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < n; i++)
		t->sizes[i] = size_of(i);
	t->img = tf_test_build(t->dfd, name, t->sizes, n, t->offs, &t->len);
}

void tf_test_file_free(struct tf_test_file *t)
{
	free(t->img);
	free(t->sizes);
	free(t->offs);
	close(t->dfd);
	tf_test_rmdir(t->dir);
}

size_t tf_test_read_all(const uint8_t *img, size_t len, struct tf_end_info *end)
{
	struct tf_reader *r;
	struct tf_frame f;
	size_t n = 0;

	if (tf_reader_open_mem(&r, img, len))
		return 0;
	while (tf_reader_next(r, &f) == 1) {
		int ok = f.seq == n && f.type == tf_test_type(n);

		for (size_t k = 0; ok && k < f.length; k++)
			ok = f.payload[k] == tf_test_payload_byte(n, k);
		CHECK(ok);
		n++;
	}
	*end = *tf_reader_end(r);
	tf_reader_close(r);
	return n;
}
