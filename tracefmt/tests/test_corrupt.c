/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Mid-file corruption: every byte of a middle frame (header and payload),
 * flipped in turn, makes the reader return exactly the frames before it
 * and stop with TF_END_CORRUPT at that frame's offset; nothing after it is
 * returned. The same damage in the last frame is a torn tail. Also:
 * swapped and duplicated frames (seq), huge and "negative" lengths with a
 * valid header CRC, unknown flags.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"
#include "util_endian.h"

#define N 12

/* Rewrite the header at p with a given length, flags and a valid CRC. */
static void forge(uint8_t *p, uint32_t length, uint16_t flags)
{
	le_put32(p + 8, length);
	le_put16(p + 6, flags);
	le_put32(p + 20, tf_crc32c(0, p, 20));
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
		sizes[i] = 40 + (uint32_t)i * 17;
	uint8_t *img = tf_test_build(dfd, "c.vtf", sizes, N, offs, &len);
	uint8_t *m = malloc(len);

	for (size_t victim = 0; victim < N; victim++) {
		for (uint64_t at = offs[victim]; at < offs[victim + 1]; at++) {
			memcpy(m, img, len);
			m[at] ^= (uint8_t)(1u << (at % 8));
			size_t got = tf_test_read_all(m, len, &end);

			CHECK_EQ(got, victim);
			CHECK_EQ(end.offset, offs[victim]);
			CHECK_EQ(end.kind, victim == N - 1 ? TF_END_TORN : TF_END_CORRUPT);
		}
	}

	/* swapped frames 3 and 4 (same size class differs: copy bytes) */
	size_t a = offs[3], b = offs[4], c = offs[5];

	memcpy(m, img, a);
	memcpy(m + a, img + b, c - b);
	memcpy(m + a + (c - b), img + a, b - a);
	memcpy(m + c, img + c, len - c);
	CHECK_EQ(tf_test_read_all(m, len, &end), 3);
	CHECK_EQ(end.kind, TF_END_CORRUPT);
	CHECK_EQ(end.offset, offs[3]);

	/* a duplicated frame (a block written twice) */
	uint8_t *d = malloc(len + (b - a));

	memcpy(d, img, b);
	memcpy(d + b, img + a, len - a);
	CHECK_EQ(tf_test_read_all(d, len + (b - a), &end), 4);
	CHECK_EQ(end.kind, TF_END_CORRUPT);
	CHECK_EQ(end.offset, offs[4]);
	free(d);

	/* forged lengths: huge, "negative" as int32, just above the max:
	 * rejected from the header alone, nothing allocated */
	const uint32_t bad_len[] = { 0xffffffffu, 0x80000000u, TF_FRAME_MAX_PAYLOAD + 1 };

	for (size_t i = 0; i < 3; i++) {
		memcpy(m, img, len);
		forge(m + offs[5], bad_len[i], 0);
		CHECK_EQ(tf_test_read_all(m, len, &end), 5);
		CHECK_EQ(end.kind, TF_END_CORRUPT);
		CHECK_EQ(end.offset, offs[5]);
		CHECK(strstr(end.reason, "maximum") != NULL);
	}
	/* a legal but huge length reaching past the end: a torn tail, and
	 * the fd reader must not allocate it (it is never read) */
	memcpy(m, img, len);
	forge(m + offs[5], TF_FRAME_MAX_PAYLOAD, 0);
	CHECK_EQ(tf_test_read_all(m, len, &end), 5);
	CHECK_EQ(end.kind, TF_END_TORN);
	/* unknown flags with a valid CRC: a format we do not understand */
	memcpy(m, img, len);
	forge(m + offs[5], sizes[5], 1);
	CHECK_EQ(tf_test_read_all(m, len, &end), 5);
	CHECK_EQ(end.kind, TF_END_CORRUPT);
	CHECK(strstr(end.reason, "flags") != NULL);

	/* garbage that is not a trace at all */
	for (size_t i = 0; i < len; i++)
		m[i] = (uint8_t)(i * 7 + 3);
	CHECK_EQ(tf_test_read_all(m, len, &end), 0);
	CHECK_EQ(end.kind, TF_END_TORN);	/* no intact frame anywhere */

	free(m);
	free(img);
	close(dfd);
	tf_test_rmdir(dir);
	return tf_test_result("tracefmt-corrupt");
}
