/* SPDX-License-Identifier: GPL-2.0 */
/* Values from the fuzzer's bytes that merge's fuzz targets add to tests/lib/. */
#ifndef VMSCOPE_MERGE_FUZZ_INPUT_H
#define VMSCOPE_MERGE_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../tests/lib/fuzz_input.h"

/* A value from a small set near @base (so that keys collide), or raw. */
static inline uint64_t val(struct in *in, uint64_t base, uint64_t spread)
{
	uint8_t b = (uint8_t)take(in, 1);

	if (b == 0xff)
		return take(in, 8);
	return base + (b % 16) * spread;
}

#endif
