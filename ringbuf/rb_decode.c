// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Sub-buffer decoder: see rb_decode.h and the layout in ringbuf_abi.h. */
#include "rb_decode.h"

#include <string.h>

int vmscope_rb_iter_init(struct vmscope_rb_iter *it, const void *sb, size_t len)
{
	memset(it, 0, sizeof(*it));
	if (len < VMSCOPE_RB_SB_HDR_SIZE)
		return -VMSCOPE_RB_ERR_SHORT;
	memcpy(&it->hdr, sb, sizeof(it->hdr));
	if (it->hdr.magic != VMSCOPE_RB_SB_MAGIC)
		return -VMSCOPE_RB_ERR_MAGIC;
	if (it->hdr.data_size < VMSCOPE_RB_SB_HDR_SIZE ||
	    it->hdr.data_size > len ||
	    it->hdr.data_size % VMSCOPE_RB_ALIGN)
		return -VMSCOPE_RB_ERR_SIZE;
	if (it->hdr.end_ts < it->hdr.begin_ts)
		return -VMSCOPE_RB_ERR_TIME;
	it->base = sb;
	it->end = it->hdr.data_size;
	it->off = VMSCOPE_RB_SB_HDR_SIZE;
	it->prev_ts = it->hdr.begin_ts;
	return 0;
}

int vmscope_rb_iter_init_records(struct vmscope_rb_iter *it, const void *recs,
				 size_t len, uint64_t begin_ts, uint64_t end_ts,
				 uint32_t nr_records)
{
	memset(it, 0, sizeof(*it));
	if (len > UINT32_MAX || len % VMSCOPE_RB_ALIGN)
		return -VMSCOPE_RB_ERR_SIZE;
	if (end_ts < begin_ts)
		return -VMSCOPE_RB_ERR_TIME;
	it->hdr.begin_ts = begin_ts;
	it->hdr.end_ts = end_ts;
	it->hdr.records = nr_records;
	it->hdr.data_size = (uint32_t)len;
	it->base = recs;
	it->end = (uint32_t)len;
	it->off = 0;
	it->prev_ts = begin_ts;
	it->uncounted = nr_records == 0;
	return 0;
}

int vmscope_rb_iter_next(struct vmscope_rb_iter *it, struct vmscope_rb_rec *rec)
{
	uint64_t w, ts, room, need;
	uint32_t hdr_len;

	if (it->off >= it->end)
		return it->uncounted || it->count == it->hdr.records ?
			0 : -VMSCOPE_RB_ERR_COUNT;
	room = (uint64_t)it->end - it->off;
	if (room < VMSCOPE_RB_REC_HDR_SIZE)
		return -VMSCOPE_RB_ERR_TRUNC;
	memcpy(&w, it->base + it->off, sizeof(w));
	hdr_len = VMSCOPE_RB_REC_HDR_SIZE;
	if (VMSCOPE_RB_REC_IS_EXT(w)) {
		hdr_len += VMSCOPE_RB_REC_EXT_SIZE;
		if (room < hdr_len)
			return -VMSCOPE_RB_ERR_TRUNC;
		memcpy(&ts, it->base + it->off + VMSCOPE_RB_REC_HDR_SIZE,
		       sizeof(ts));
		/* the low word is redundant; a mismatch is corruption */
		if ((uint32_t)ts != VMSCOPE_RB_REC_TS_LOW(w) || ts < it->prev_ts)
			return -VMSCOPE_RB_ERR_TIME;
	} else {
		uint32_t delta = VMSCOPE_RB_REC_TS_LOW(w) - (uint32_t)it->prev_ts;

		ts = it->prev_ts + delta;
		if (ts < it->prev_ts)		/* wrapped past 2^64 */
			return -VMSCOPE_RB_ERR_TIME;
	}
	if (ts > it->hdr.end_ts)
		return -VMSCOPE_RB_ERR_TIME;
	need = (uint64_t)hdr_len + VMSCOPE_RB_REC_SIZE(w);
	need = (need + VMSCOPE_RB_ALIGN - 1) & ~(uint64_t)(VMSCOPE_RB_ALIGN - 1);
	if (need > room)
		return -VMSCOPE_RB_ERR_TRUNC;
	rec->ts = ts;
	rec->id = VMSCOPE_RB_REC_ID(w);
	rec->size = VMSCOPE_RB_REC_SIZE(w);
	rec->payload = it->base + it->off + hdr_len;
	rec->offset = it->off;
	it->off += (uint32_t)need;
	it->prev_ts = ts;
	it->count++;
	return 1;
}

size_t vmscope_rb_rec_encode(uint8_t *buf, uint64_t prev_ts, uint64_t ts, unsigned int id,
			     const void *payload, uint16_t size)
{
	int ext = ts - prev_ts >= ((uint64_t)1 << 32);
	uint64_t h = VMSCOPE_RB_REC_HDR(ts, id, size, ext);
	size_t off = 8;

	memcpy(buf, &h, 8);
	if (ext) {
		memcpy(buf + off, &ts, 8);
		off += 8;
	}
	memcpy(buf + off, payload, size);
	off += size;
	while (off % VMSCOPE_RB_ALIGN)
		buf[off++] = 0;
	return off;
}
