// SPDX-License-Identifier: GPL-2.0
/* A raw trace's host sub-buffers for the live source's tap: see feed_src.h. */
#include <stdio.h>

#include "feed_src.h"
#include "msg.h"

int next_chunk(struct src *s, uint32_t buf, struct rec_chunk *out,
	       Vmscope__Trace__StreamChunk **keep)
{
	struct tf_frame f;
	ProtobufCMessage *m;
	char why[160];

	while (!s->done && tf_reader_next(s->r, &f) == 1) {
		if (f.type != TF_FRAME_CHUNK)
			continue;
		if (tf_msg_decode(f.type, f.payload, f.length, 0, &m, why, sizeof(why))) {
			fprintf(stderr, "feed: %s\n", why);
			return -1;
		}
		Vmscope__Trace__StreamChunk *c = (Vmscope__Trace__StreamChunk *)m;

		*out = (struct rec_chunk){ .buf = buf, .cpu = c->origin ? c->origin->cpu : 0,
					   .seq = c->seq, .begin_ts = c->begin_ts,
					   .end_ts = c->end_ts, .lost_before = c->lost_before,
					   .nr_records = c->nr_records,
					   .len = (uint32_t)c->records.len,
					   .data = c->records.data };
		*keep = c;
		return 1;
	}
	s->done = true;
	return 0;
}
