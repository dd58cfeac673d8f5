/* SPDX-License-Identifier: GPL-2.0 */
#include "crc32c.h"
#include "frame.h"
#include "util_endian.h"

void tf_frame_hdr_encode(const struct tf_frame_hdr *h, uint8_t *out)
{
	le_put32(out, TF_FRAME_MAGIC);
	le_put16(out + 4, h->type);
	le_put16(out + 6, h->flags);
	le_put32(out + 8, h->length);
	le_put32(out + 12, h->seq);
	le_put32(out + 16, h->payload_crc);
	le_put32(out + 20, tf_crc32c(0, out, 20));
}

enum tf_hdr_check tf_frame_hdr_decode(const uint8_t *in, struct tf_frame_hdr *h)
{
	if (le_get32(in) != TF_FRAME_MAGIC)
		return TF_HDR_BAD_MAGIC;
	if (le_get32(in + 20) != tf_crc32c(0, in, 20))
		return TF_HDR_BAD_CRC;
	/* Checked after the CRC: with a valid CRC these are not bit rot but
	 * a writer we do not understand, or a forgery. */
	if (le_get16(in + 6) != 0)
		return TF_HDR_BAD_FLAGS;
	if (le_get32(in + 8) > TF_FRAME_MAX_PAYLOAD)
		return TF_HDR_TOO_LONG;
	h->type = le_get16(in + 4);
	h->flags = 0;
	h->length = le_get32(in + 8);
	h->seq = le_get32(in + 12);
	h->payload_crc = le_get32(in + 16);
	return TF_HDR_OK;
}

const char *tf_hdr_check_str(enum tf_hdr_check c)
{
	switch (c) {
	case TF_HDR_OK:		return "ok";
	case TF_HDR_BAD_MAGIC:	return "bad frame magic";
	case TF_HDR_BAD_CRC:	return "bad frame header CRC";
	case TF_HDR_BAD_FLAGS:	return "unknown frame flags";
	case TF_HDR_TOO_LONG:	return "frame length above the maximum";
	}
	return "?";
}
