/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ol_msnap_parse on what a recorder sends vmscoped (online/metrics_frame.h):
 * no crash, bounded; what it accepts encodes back to the very bytes (the
 * format has one encoding). Inputs starting with 'F' become a well-formed
 * frame first (its flags, header and reason count from the next bytes, the
 * reasons' names and numbers from the rest), so that the mutations reach
 * the reason checks and not only the header's.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics_frame.h"
#include "util_endian.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t frame[OL_MX_FRAME_MAX + 64], back[OL_MX_FRAME_MAX];

/* A frame from @data: header fields, then per reason a name length, the
 * name and the numbers, each cut from the input as far as it goes. */
static size_t structured(const uint8_t *data, size_t size)
{
	uint32_t n = size > 1 ? data[1] % (OL_MX_REASONS + 2) : 0;
	size_t in, out = OL_MX_HEAD;

	/* bound, steal, stall: each present or not (its fields 0 then) */
	unsigned int flags = size > 2 ? data[2] & 7 : 0;

	in = 3;
	memset(frame, 0, OL_MX_HEAD);
	le_put32(frame, OL_MX_MAGIC);
	le_put16(frame + 4, OL_MX_VERSION);
	le_put16(frame + 6, (uint16_t)flags);
	le_put32(frame + 8, n);
	for (unsigned int i = 0; i < OL_MX_HEAD_U64 && in + 8 <= size; i++, in += 8)
		memcpy(frame + 12 + 8 * i, data + in, 8);
	if (!(flags & 1))
		le_put64(frame + 12 + 8 * 8, 0);
	if (!(flags & 2))
		le_put64(frame + 12 + 9 * 8, 0);
	for (unsigned int i = 10; i < OL_MX_HEAD_U64 && !(flags & 4); i++)
		le_put64(frame + 12 + 8 * i, 0);
	for (uint32_t r = 0; r < n && in < size; r++) {
		size_t l = data[in++] % (OL_MX_NAME + 1);
		size_t body = (2 + OL_MX_BUCKETS) * 8;

		if (out + 1 + l + body > sizeof(frame))
			break;
		frame[out++] = (uint8_t)l;
		for (size_t i = 0; i < l; i++)
			frame[out++] = in < size ? data[in++] : 'a';
		memset(frame + out, 0, body);
		/* small numbers, so that bucket sums often fit the count */
		for (size_t i = 0; i < 2 + OL_MX_BUCKETS && in < size; i++)
			frame[out + 8 * i] = data[in++];
		out += body;
	}
	return out;
}

static void check(const uint8_t *buf, size_t len)
{
	struct ol_msnap s;
	char why[160];

	if (ol_msnap_parse(buf, len, &s, why, sizeof(why))) {
		if (!why[0])
			abort();	/* a refusal always says why */
		return;
	}
	if (ol_msnap_encode(&s, back) != len || memcmp(back, buf, len))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > OL_MX_FRAME_MAX + 16)
		return 0;
	check(data, size);
	if (size && data[0] == 'F')
		check(frame, structured(data, size));
	return 0;
}
