/*
 * The fuzz targets' reading of libFuzzer's bytes as values, and their
 * assertion (an abort is what libFuzzer reports as a finding).
 */
#ifndef VMSCOPE_TESTS_FUZZ_INPUT_H
#define VMSCOPE_TESTS_FUZZ_INPUT_H

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

#endif
