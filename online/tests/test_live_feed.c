// SPDX-License-Identifier: GPL-2.0
/*
 * `top --pid`'s path without the module (cli/tests/top-live-feed-test.sh):
 * the host sub-buffers of a raw trace, as `record` stored them, handed to
 * the live source's tap (online/live.h) one at a time, the host streams
 * taken in turn (each in its own order, none ahead of the others by more
 * than a sub-buffer: as reader threads deliver them), with the trace's
 * metadata as the recording's; with AHEAD, the first host stream whole
 * before the others (a reader far ahead of the rest). Its JSON lines go
 * to OUT.
 *
 *   test_live_feed RAW_TRACE OUT INTERVAL_NS [AHEAD]
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "feed_src.h"
#include "live.h"
#include "view.h"

#define MAX_STREAMS 64

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
	unsigned int n = 0, left;
	DIR *d;
	int dfd, e = 0;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: test_live_feed RAW_TRACE OUT INTERVAL_NS [AHEAD]\n");
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
	while ((de = readdir(d)) && n < MAX_STREAMS) {
		if (strncmp(de->d_name, "host-", 5))
			continue;
		if (tf_reader_open(&src[n].r, dfd, de->d_name)) {
			fprintf(stderr, "test_live_feed: %s: cannot open\n", de->d_name);
			return 1;
		}
		map[n] = &mapped;
		n++;
	}
	h.nbuf = n;
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
			Vmscope__Trace__StreamChunk *c = NULL;
			struct rec_chunk rc;
			int got = next_chunk(&src[i], i, &rc, &c);

			if (got < 0)
				e = 1;
			if (got == 1) {
				left++;
				e = ol_live_tap(l, &rc);
			}
			if (c)
				tf_msg_free(&c->base);
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
