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
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feed_src.h"
#include "live.h"
#include "view.h"

int main(int argc, char **argv)
{
	struct ol_view view = { .tasks = 10 };
	struct ol_opts o = { .top = 5, .sort = AN_SORT_TOTAL, .view = ol_view_json,
			     .view_ctx = &view };
	static struct feed f;
	struct hb h = { 0 };
	struct live *l;
	char err[1024] = "";
	bool guests = false;
	int e;

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
	if (!view.out || !o.interval_ns) {
		fprintf(stderr, "test_live_feed: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	if (feed_open(&f, argv[1], guests, &h))
		return 1;
	l = ol_live_open(&h, argv[1], &o);
	if (!l)
		return 1;
	e = feed_run(&f, argc == 5, ol_live_tap, l) ? 1 : 0;
	e = ol_live_close(l, e, err, sizeof(err));
	if (err[0])
		fprintf(stderr, "test_live_feed: %s\n", err);
	feed_close(&f);
	fclose(view.out);
	return e ? 1 : 0;
}
