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

static uint32_t size_of(size_t i)
{
	return 40 + (uint32_t)i * 17;
}

int main(void)
{
	struct tf_test_file t;
	struct tf_end_info end;

	tf_test_file(&t, "c.vtf", N, size_of);
	uint8_t *m = malloc(t.len);

	for (size_t victim = 0; victim < N; victim++) {
		for (uint64_t at = t.offs[victim]; at < t.offs[victim + 1]; at++) {
			memcpy(m, t.img, t.len);
			m[at] ^= (uint8_t)(1u << (at % 8));
			size_t got = tf_test_read_all(m, t.len, &end);

			CHECK_EQ(got, victim);
			CHECK_EQ(end.offset, t.offs[victim]);
			CHECK_EQ(end.kind, victim == N - 1 ? TF_END_TORN : TF_END_CORRUPT);
		}
	}

	/* swapped frames 3 and 4 (same size class differs: copy bytes) */
	size_t a = t.offs[3], b = t.offs[4], c = t.offs[5];

	memcpy(m, t.img, a);
	memcpy(m + a, t.img + b, c - b);
	memcpy(m + a + (c - b), t.img + a, b - a);
	memcpy(m + c, t.img + c, t.len - c);
	CHECK_EQ(tf_test_read_all(m, t.len, &end), 3);
	CHECK_EQ(end.kind, TF_END_CORRUPT);
	CHECK_EQ(end.offset, t.offs[3]);

	/* a duplicated frame (a block written twice) */
	uint8_t *d = malloc(t.len + (b - a));

	memcpy(d, t.img, b);
	memcpy(d + b, t.img + a, t.len - a);
	CHECK_EQ(tf_test_read_all(d, t.len + (b - a), &end), 4);
	CHECK_EQ(end.kind, TF_END_CORRUPT);
	CHECK_EQ(end.offset, t.offs[4]);
	free(d);

	/* forged lengths: huge, "negative" as int32, just above the max:
	 * rejected from the header alone, nothing allocated */
	const uint32_t bad_len[] = { 0xffffffffu, 0x80000000u, TF_FRAME_MAX_PAYLOAD + 1 };

	for (size_t i = 0; i < 3; i++) {
		memcpy(m, t.img, t.len);
		forge(m + t.offs[5], bad_len[i], 0);
		CHECK_EQ(tf_test_read_all(m, t.len, &end), 5);
		CHECK_EQ(end.kind, TF_END_CORRUPT);
		CHECK_EQ(end.offset, t.offs[5]);
		CHECK(strstr(end.reason, "maximum") != NULL);
	}
	/* a legal but huge length reaching past the end: a torn tail, and
	 * the fd reader must not allocate it (it is never read) */
	memcpy(m, t.img, t.len);
	forge(m + t.offs[5], TF_FRAME_MAX_PAYLOAD, 0);
	CHECK_EQ(tf_test_read_all(m, t.len, &end), 5);
	CHECK_EQ(end.kind, TF_END_TORN);
	/* unknown flags with a valid CRC: a format we do not understand */
	memcpy(m, t.img, t.len);
	forge(m + t.offs[5], t.sizes[5], 1);
	CHECK_EQ(tf_test_read_all(m, t.len, &end), 5);
	CHECK_EQ(end.kind, TF_END_CORRUPT);
	CHECK(strstr(end.reason, "flags") != NULL);

	/* garbage that is not a trace at all */
	for (size_t i = 0; i < t.len; i++)
		m[i] = (uint8_t)(i * 7 + 3);
	CHECK_EQ(tf_test_read_all(m, t.len, &end), 0);
	CHECK_EQ(end.kind, TF_END_TORN);	/* no intact frame anywhere */

	free(m);
	tf_test_file_free(&t);
	return check_result("tracefmt-corrupt");
}
