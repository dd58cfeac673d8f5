/* SPDX-License-Identifier: GPL-2.0 */
#include "crc32c.h"
#include "frame.h"

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

void tf_frame_hdr_encode(const struct tf_frame_hdr *h, uint8_t *out)
{
	put32(out, TF_FRAME_MAGIC);
	put16(out + 4, h->type);
	put16(out + 6, h->flags);
	put32(out + 8, h->length);
	put32(out + 12, h->seq);
	put32(out + 16, h->payload_crc);
	put32(out + 20, tf_crc32c(0, out, 20));
}

enum tf_hdr_check tf_frame_hdr_decode(const uint8_t *in, struct tf_frame_hdr *h)
{
	if (get32(in) != TF_FRAME_MAGIC)
		return TF_HDR_BAD_MAGIC;
	if (get32(in + 20) != tf_crc32c(0, in, 20))
		return TF_HDR_BAD_CRC;
	/* Checked after the CRC: with a valid CRC these are not bit rot but
	 * a writer we do not understand, or a forgery. */
	if (get16(in + 6) != 0)
		return TF_HDR_BAD_FLAGS;
	if (get32(in + 8) > TF_FRAME_MAX_PAYLOAD)
		return TF_HDR_TOO_LONG;
	h->type = get16(in + 4);
	h->flags = 0;
	h->length = get32(in + 8);
	h->seq = get32(in + 12);
	h->payload_crc = get32(in + 16);
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
