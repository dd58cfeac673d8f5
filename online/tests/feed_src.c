// SPDX-License-Identifier: GPL-2.0
/* A raw trace's host sub-buffers for the live source's tap: see feed_src.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "feed_src.h"
#include "msg.h"
#include "stream.pb-c.h"

int feed_open(struct feed *f, const char *dir, bool guests, struct hb *h)
{
	static const unsigned char mapped;
	struct dirent *de;
	unsigned int nhost = 0;

	memset(f, 0, sizeof(*f));
	f->d = opendir(dir);
	if (!f->d) {
		fprintf(stderr, "feed: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	for (int pass = 0; pass < (guests ? 2 : 1); pass++) {
		rewinddir(f->d);
		while ((de = readdir(f->d)) && f->n < FEED_MAX) {
			unsigned int vm = 0, cpu = 0;

			if (pass == 0 && strncmp(de->d_name, "host-", 5))
				continue;
			if (pass == 1 && sscanf(de->d_name, "guest%u-cpu%u.vtf", &vm, &cpu) != 2)
				continue;
			if (tf_reader_open(&f->src[f->n].r, dirfd(f->d), de->d_name)) {
				fprintf(stderr, "feed: %s: cannot open\n", de->d_name);
				return -1;
			}
			f->src[f->n].guest = pass == 1;
			f->src[f->n].vm = vm;
			f->src[f->n].cpu = cpu;
			f->map[f->n++] = &mapped;
			if (pass == 0)
				nhost++;
		}
	}
	h->nbuf = nhost;
	h->map = f->map;
	return 0;
}

/* The next StreamChunk (or, of a guest stream, LossRecord) of stream @i
 * as the tap gets it (*@keep: its message, to free after the tap): 1, 0
 * at its end, -1 when it does not decode (said). */
static int next_chunk(struct feed *f, uint32_t i, struct rec_chunk *out,
		      ProtobufCMessage **keep)
{
	struct feed_stream *s = &f->src[i];
	struct tf_frame fr;
	ProtobufCMessage *m;
	char why[160];

	while (!s->done && tf_reader_next(s->r, &fr) == 1) {
		if (fr.type != TF_FRAME_CHUNK && (fr.type != TF_FRAME_LOSS || !s->guest))
			continue;
		if (tf_msg_decode(fr.type, fr.payload, fr.length, 0, &m, why, sizeof(why))) {
			fprintf(stderr, "feed: %s\n", why);
			return -1;
		}
		*keep = m;
		if (fr.type == TF_FRAME_LOSS) {
			Vmscope__Trace__LossRecord *l = (Vmscope__Trace__LossRecord *)m;

			*out = (struct rec_chunk){ .kind = REC_TAP_LOSS, .guest = true,
						   .vm = s->vm, .cpu = s->cpu,
						   .begin_ts = l->begin_ts,
						   .loss_kind = l->kind,
						   .loss_events = l->events,
						   .loss_subbufs = l->subbufs };
			return 1;
		}
		Vmscope__Trace__StreamChunk *c = (Vmscope__Trace__StreamChunk *)m;

		*out = (struct rec_chunk){ .buf = i, .cpu = c->origin ? c->origin->cpu : 0,
					   .chan = c->origin ? c->origin->channel : 0,
					   .seq = c->seq, .begin_ts = c->begin_ts,
					   .end_ts = c->end_ts, .lost_before = c->lost_before,
					   .nr_records = c->nr_records,
					   .len = (uint32_t)c->records.len,
					   .data = c->records.data, .guest = s->guest,
					   .vm = s->vm };
		if (s->guest)
			out->cpu = s->cpu;
		return 1;
	}
	s->done = true;
	return 0;
}

int feed_run(struct feed *f, bool ahead, rec_tap_fn *tap, void *ctx)
{
	unsigned int left;
	int e = 0;

	bool hosts_done = !f->guests_last;

	do {
		left = 0;
		for (unsigned int i = 0; i < f->n && !e; i++) {
			if (ahead && i > 0 && !f->src[0].done)
				break;
			if (!hosts_done && f->src[i].guest)
				continue;
			ProtobufCMessage *c = NULL;
			struct rec_chunk rc;
			int got = next_chunk(f, i, &rc, &c);

			if (got < 0)
				e = -1;
			if (got == 1) {
				left++;
				e = tap(ctx, &rc);
			}
			if (c)
				tf_msg_free(c);
		}
		if (!left && !hosts_done) {
			hosts_done = true;
			left = 1;
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
