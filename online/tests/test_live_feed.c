// SPDX-License-Identifier: GPL-2.0
/*
 * `top --pid`'s path without the module (cli/tests/top-live-feed-test.sh):
 * the host sub-buffers of a raw trace, as `record` stored them, handed to
 * the live source's tap (online/live.h) one at a time, the host streams
 * taken in turn (each in its own order, none ahead of the others by more
 * than a sub-buffer: as reader threads deliver them), with the trace's
 * metadata as the recording's; with AHEAD, the first host stream whole
 * before the others (a reader far ahead of the rest); with guests, the
 * guest CPU streams' chunks and loss records too, each stream in turn
 * with the host's (as the agents' connections deliver them: the guest
 * side through the online merge, fed). Its JSON lines go to OUT.
 *
 *   test_live_feed RAW_TRACE OUT INTERVAL_NS [AHEAD | guests]
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "live.h"
#include "msg.h"
#include "reader.h"
#include "stream.pb-c.h"
#include "view.h"

#define MAX_STREAMS 64

struct src {
	struct tf_reader *r;
	bool done, guest;
	uint32_t vm, cpu;	/* guest: from the file name */
};

/* The next StreamChunk (or, of a guest stream, LossRecord) of @s as the
 * tap gets it: 1, 0 at its end. */
static int next_chunk(struct src *s, uint32_t buf, struct rec_chunk *out,
		      ProtobufCMessage **keep)
{
	struct tf_frame f;
	ProtobufCMessage *m;
	char why[160];

	while (!s->done && tf_reader_next(s->r, &f) == 1) {
		if (f.type != TF_FRAME_CHUNK && (f.type != TF_FRAME_LOSS || !s->guest))
			continue;
		if (tf_msg_decode(f.type, f.payload, f.length, 0, &m, why, sizeof(why))) {
			fprintf(stderr, "test_live_feed: %s\n", why);
			return -1;
		}
		*keep = m;
		if (f.type == TF_FRAME_LOSS) {
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

		*out = (struct rec_chunk){ .buf = buf, .cpu = c->origin ? c->origin->cpu : 0,
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

int main(int argc, char **argv)
{
	static const unsigned char mapped;
	const unsigned char *map[MAX_STREAMS];
	struct src src[MAX_STREAMS] = { 0 };
	struct ol_view view = { .tasks = 10 };
	struct ol_opts o = { .top = 5, .sort = AN_SORT_TOTAL, .view = ol_view_json,
			     .view_ctx = &view };
	struct hb h = { 0 };
	struct live *l;
	struct dirent *de;
	char err[1024] = "";
	unsigned int n = 0, nhost = 0, left;
	bool guests = false;
	DIR *d;
	int dfd, e = 0;

	if (argc == 5 && !strcmp(argv[4], "guests")) {
		guests = true;
		argc--;
	}
	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: test_live_feed RAW_TRACE OUT INTERVAL_NS [AHEAD | guests]\n");
		return 2;
	}
	o.interval_ns = strtoull(argv[3], NULL, 10);
	view.out = fopen(argv[2], "w");
	d = opendir(argv[1]);
	if (!view.out || !d || !o.interval_ns) {
		fprintf(stderr, "test_live_feed: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	dfd = dirfd(d);
	/* the host streams first (the buffers are 0..nhost-1), then, with
	 * GUESTS, the guest CPU streams (guestV-cpuC.vtf) */
	for (int pass = 0; pass < (guests ? 2 : 1); pass++) {
		rewinddir(d);
		while ((de = readdir(d)) && n < MAX_STREAMS) {
			unsigned int vm, cpu;

			if (pass == 0 && strncmp(de->d_name, "host-", 5))
				continue;
			if (pass == 1 && sscanf(de->d_name, "guest%u-cpu%u.vtf", &vm, &cpu) != 2)
				continue;
			if (tf_reader_open(&src[n].r, dfd, de->d_name)) {
				fprintf(stderr, "test_live_feed: %s: cannot open\n", de->d_name);
				return 1;
			}
			src[n].guest = pass == 1;
			src[n].vm = pass == 1 ? vm : 0;
			src[n].cpu = pass == 1 ? cpu : 0;
			map[n] = &mapped;
			if (pass == 0)
				nhost++;
			n++;
		}
	}
	h.nbuf = nhost;
	h.map = map;
	l = ol_live_open(&h, argv[1], &o);
	if (!l)
		return 1;
	/* in turn: each stream one sub-buffer ahead at most; or, AHEAD, the
	 * first stream whole, then the others in turn */
	do {
		left = 0;
		for (unsigned int i = 0; i < n && !e; i++) {
			if (argc == 5 && i > 0 && !src[0].done)
				break;
			ProtobufCMessage *c = NULL;
			struct rec_chunk rc;
			int got = next_chunk(&src[i], i, &rc, &c);

			if (got < 0)
				e = 1;
			if (got == 1) {
				left++;
				e = ol_live_tap(l, &rc);
			}
			if (c)
				tf_msg_free(c);
		}
	} while (left && !e);
	e = ol_live_close(l, e, err, sizeof(err));
	if (err[0])
		fprintf(stderr, "test_live_feed: %s\n", err);
	for (unsigned int i = 0; i < n; i++)
		tf_reader_close(src[i].r);
	closedir(d);
	fclose(view.out);
	return e ? 1 : 0;
}
