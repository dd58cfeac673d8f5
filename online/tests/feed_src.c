// SPDX-License-Identifier: GPL-2.0
/* A raw trace's host sub-buffers for the live source's tap: see feed_src.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "feed_src.h"
#include "msg.h"
#include "stream.pb-c.h"

int feed_open(struct feed *f, const char *dir, struct hb *h)
{
	static const unsigned char mapped;
	struct dirent *de;

	memset(f, 0, sizeof(*f));
	f->d = opendir(dir);
	if (!f->d) {
		fprintf(stderr, "feed: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(f->d)) && f->n < FEED_MAX) {
		if (strncmp(de->d_name, "host-", 5))
			continue;
		if (tf_reader_open(&f->src[f->n].r, dirfd(f->d), de->d_name)) {
			fprintf(stderr, "feed: %s: cannot open\n", de->d_name);
			return -1;
		}
		f->map[f->n++] = &mapped;
	}
	h->nbuf = f->n;
	h->map = f->map;
	return 0;
}

/* The next StreamChunk of stream @i as the tap's sub-buffer of buffer @i
 * (*@keep: its message, to free after the tap): 1, 0 at its end, -1 when
 * it does not decode (said). */
static int next_chunk(struct feed *f, uint32_t i, struct rec_chunk *out,
		      Vmscope__Trace__StreamChunk **keep)
{
	struct tf_frame fr;
	ProtobufCMessage *m;
	char why[160];

	while (!f->src[i].done && tf_reader_next(f->src[i].r, &fr) == 1) {
		if (fr.type != TF_FRAME_CHUNK)
			continue;
		if (tf_msg_decode(fr.type, fr.payload, fr.length, 0, &m, why, sizeof(why))) {
			fprintf(stderr, "feed: %s\n", why);
			return -1;
		}
		Vmscope__Trace__StreamChunk *c = (Vmscope__Trace__StreamChunk *)m;

		*out = (struct rec_chunk){ .buf = i, .cpu = c->origin ? c->origin->cpu : 0,
					   .seq = c->seq, .begin_ts = c->begin_ts,
					   .end_ts = c->end_ts, .lost_before = c->lost_before,
					   .nr_records = c->nr_records,
					   .len = (uint32_t)c->records.len,
					   .data = c->records.data };
		*keep = c;
		return 1;
	}
	f->src[i].done = true;
	return 0;
}

int feed_run(struct feed *f, bool ahead, rec_tap_fn *tap, void *ctx)
{
	unsigned int left;
	int e = 0;

	do {
		left = 0;
		for (unsigned int i = 0; i < f->n && !e; i++) {
			if (ahead && i > 0 && !f->src[0].done)
				break;
			Vmscope__Trace__StreamChunk *c = NULL;
			struct rec_chunk rc;
			int got = next_chunk(f, i, &rc, &c);

			if (got < 0)
				e = -1;
			if (got == 1) {
				left++;
				e = tap(ctx, &rc);
			}
			if (c)
				tf_msg_free(&c->base);
		}
	} while (left && !e);
	return e;
}

void feed_close(struct feed *f)
{
	for (unsigned int i = 0; i < f->n; i++)
		tf_reader_close(f->src[i].r);
	if (f->d)
		closedir(f->d);
}
