/* SPDX-License-Identifier: GPL-2.0 */
/* Reading the fuzzer's bytes as values, for merge's fuzz targets. */
#ifndef VMSCOPE_MERGE_FUZZ_INPUT_H
#define VMSCOPE_MERGE_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define ASSERT(c) do { if (!(c)) abort(); } while (0)

struct in {
	const uint8_t *p;
	size_t n;
};

/* The next @bytes bytes, big-endian; zeros past the end. */
static inline uint64_t take(struct in *in, int bytes)
{
	uint64_t v = 0;

	for (int i = 0; i < bytes; i++) {
		v <<= 8;
		if (in->n) {
			v |= *in->p++;
			in->n--;
		}
	}
	return v;
}

/* A value from a small set near @base (so that keys collide), or raw. */
static inline uint64_t val(struct in *in, uint64_t base, uint64_t spread)
{
	uint8_t b = (uint8_t)take(in, 1);

	if (b == 0xff)
		return take(in, 8);
	return base + (b % 16) * spread;
}

#endif
