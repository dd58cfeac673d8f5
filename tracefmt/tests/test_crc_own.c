/* SPDX-License-Identifier: GPL-2.0 */
/*
 * crc32c_own.c (the static agent's CRC32C) against ISA-L's (tf_crc32c of
 * crc32c.c): random buffers of random lengths at every alignment, random
 * running values, splits; both of its ways (SSE4.2 instruction, table) and
 * the dispatching one. Seed: argv[1], else the clock (printed, so a
 * failure can be replayed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "crc32c_own.h"
#include "util.h"
#include "../../tests/lib/xorshift.h"

static uint64_t rng;

static uint64_t next(void)
{
	return vmscope_xorshift64(&rng);
}

#define MAX_LEN 70000

static void check_one(const uint8_t *p, size_t len, uint32_t crc, int sse42)
{
	uint32_t want = tf_crc32c(crc, p, len);

	CHECK_EQ(tf_crc32c_own_table(crc, p, len), want);
	CHECK_EQ(tf_crc32c_own(crc, p, len), want);
	if (sse42)
		CHECK_EQ(tf_crc32c_own_sse42(crc, p, len), want);
}

int main(int argc, char **argv)
{
	static const uint32_t known[] = { 0x8A9136AAu, 0x62A8AB43u, 0x46DD794Eu };
	int sse42 = tf_crc32c_own_has_sse42();
	uint8_t *buf = malloc(MAX_LEN + 16);
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : (uint64_t)time(NULL);
	unsigned runs = 0;

	if (!buf)
		return 1;
	rng = seed | 1;
	printf("seed %llu, sse4.2 %s\n", (unsigned long long)seed,
	       sse42 ? "yes: instruction and table checked" : "no: table only");

	/* the standard check value and RFC 3720 B.4, from ~0 as ISA-L's */
	CHECK_EQ(tf_crc32c_own_table(0, "123456789", 9), 0xE3069283u);
	CHECK_EQ(tf_crc32c_own(0, "123456789", 9), 0xE3069283u);
	for (int v = 0; v < 3; v++) {
		for (int i = 0; i < 32; i++)
			buf[i] = v == 0 ? 0 : v == 1 ? 0xff : (uint8_t)i;
		CHECK_EQ(tf_crc32c_own(0, buf, 32), known[v]);
		CHECK_EQ(tf_crc32c_own_table(0, buf, 32), known[v]);
	}

	for (size_t i = 0; i < MAX_LEN + 16; i++)
		buf[i] = (uint8_t)next();
	/* lengths spread over every power of two up to MAX_LEN, every alignment */
	for (int it = 0; it < 3000; it++, runs++) {
		size_t len = next() % ((size_t)1 << (next() % 17)) % MAX_LEN;
		size_t off = next() % 16;
		uint32_t crc = it % 4 ? (uint32_t)next() : 0;

		check_one(buf + off, len, crc, sse42);
		/* a running value split anywhere equals the whole */
		if (len) {
			size_t k = next() % len;
			uint32_t whole = tf_crc32c(crc, buf + off, len);

			CHECK_EQ(tf_crc32c_own(tf_crc32c_own(crc, buf + off, k),
					       buf + off + k, len - k), whole);
		}
		/* every buffer a little different */
		buf[next() % (MAX_LEN + 16)] ^= (uint8_t)(next() | 1);
	}
	/* every length 0..64 at every alignment, where the head/tail loops work */
	for (size_t off = 0; off < 8; off++)
		for (size_t len = 0; len <= 64; len++, runs++)
			check_one(buf + off, len, (uint32_t)next(), sse42);
	printf("%u comparisons with ISA-L\n", runs);
	free(buf);
	return check_result("tracefmt-crc-own");
}
