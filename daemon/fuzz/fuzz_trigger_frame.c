/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ol_trig_parse on what a recorder sends vmscoped (online/trigger_frame.h):
 * no crash; a refusal always says why; what it accepts encodes back to the
 * very bytes (one encoding). Inputs starting with 'T' become a well-formed
 * frame first (kind, numbers and the three texts' lengths and bytes from
 * the input), so that the mutations reach the text checks and not only
 * the head's.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trigger_frame.h"
#include "util_endian.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t frame[OL_TG_FRAME_MAX + 64], back[OL_TG_FRAME_MAX];

static size_t structured(const uint8_t *data, size_t size)
{
	size_t in = 1, out = OL_TG_HEAD;

	memset(frame, 0, OL_TG_HEAD);
	le_put32(frame, OL_TG_MAGIC);
	le_put16(frame + 4, OL_TG_VERSION);
	frame[6] = in < size ? data[in++] % 4 : 1;
	for (unsigned int i = 8; i < OL_TG_HEAD && in < size; i++)
		frame[i] = data[in++];
	for (int k = 0; k < 3; k++) {
		size_t l = in < size ? data[in++] % (OL_TG_TEXT + 2) : 0;

		if (out + 1 + l > sizeof(frame))
			break;
		frame[out++] = (uint8_t)l;
		for (size_t i = 0; i < l; i++)
			frame[out++] = in < size ? data[in++] : 'a';
	}
	return out;
}

static void check(const uint8_t *buf, size_t len)
{
	struct ol_trig t;
	char why[160];

	why[0] = '\0';
	if (ol_trig_parse(buf, len, &t, why, sizeof(why))) {
		if (!why[0])
			abort();	/* a refusal always says why */
		return;
	}
	if (t.dur_ns <= t.threshold_ns)
		abort();
	if (ol_trig_encode(&t, back) != len || memcmp(back, buf, len))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > OL_TG_FRAME_MAX + 16)
		return 0;
	check(data, size);
	if (size && data[0] == 'T')
		check(frame, structured(data, size));
	return 0;
}
