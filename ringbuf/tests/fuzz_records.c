// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libFuzzer target for the reader-side sub-buffer decoder, which parses
 * sub-buffers copied from possibly hostile guests. Beyond memory safety
 * (ASan/UBSan), it checks the decoder's promises: records lie inside
 * data_size, do not overlap, come in order, and timestamps never decrease
 * and never pass end_ts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../rb_decode.h"

static volatile uint8_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vmscope_rb_iter it;
	struct vmscope_rb_rec r;
	uint64_t prev_ts;
	uint32_t next_off = VMSCOPE_RB_SB_HDR_SIZE;
	uint8_t acc = 0;
	int rc;

	/* an unaligned copy, as from a network stream */
	uint8_t *copy = malloc(size + 1);

	if (!copy)
		return 0;
	memcpy(copy + 1, data, size);
	if (vmscope_rb_iter_init(&it, copy + 1, size) != 0) {
		free(copy);
		return 0;
	}
	prev_ts = it.hdr.begin_ts;
	while ((rc = vmscope_rb_iter_next(&it, &r)) == 1) {
		uint32_t i;

		if (r.offset != next_off || r.ts < prev_ts || r.ts > it.hdr.end_ts ||
		    r.payload < copy + 1 + r.offset ||
		    r.payload + r.size > copy + 1 + it.hdr.data_size ||
		    r.id > VMSCOPE_RB_ID_MAX)
			abort();
		for (i = 0; i < r.size; i++)	/* ASan checks every byte */
			acc ^= r.payload[i];
		next_off = it.off;
		prev_ts = r.ts;
	}
	if (rc > 0 || rc < -VMSCOPE_RB_ERR_COUNT)
		abort();
	sink = acc;
	free(copy);
	return 0;
}
