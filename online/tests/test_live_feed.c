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
 * side through the online merge, fed). With drained, each host chunk
 * stamped as taken 1 us after its end (CLOCK_MONOTONIC = host time here)
 * and, after the last, every host buffer said found empty 3 s later, as
 * reader threads say it of a VM gone quiet: the intervals up to then are
 * written before the end, and "before the end: N intervals, E exits" goes
 * to stderr. Its JSON lines go to OUT.
 *
 *   test_live_feed RAW_TRACE OUT INTERVAL_NS [AHEAD | guests | drained]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feed_src.h"
#include "live.h"
#include "view.h"

static uint64_t last_end;

/* drained: as a reader stamps what it takes */
static int stamped_tap(void *ctx, const struct rec_chunk *c)
{
	struct rec_chunk s = *c;

	if (!c->guest && c->kind == REC_TAP_CHUNK) {
		s.taken_ns = c->end_ts + 1000;
		if (c->end_ts > last_end)
			last_end = c->end_ts;
	}
	return ol_live_tap(ctx, &s);
}

/* The intervals OUT has so far and their exits. */
static void count_lines(FILE *out, const char *path)
{
	char line[1 << 16];
	unsigned long n = 0, exits = 0;
	FILE *f;

	fflush(out);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		const char *c = strstr(line, "\"counts\":{");

		c = c ? strstr(c, "\"exits\":") : NULL;
		n++;
		if (c)
			exits += strtoul(c + strlen("\"exits\":"), NULL, 10);
	}
	if (f)
		fclose(f);
	fprintf(stderr, "before the end: %lu intervals, %lu exits\n", n, exits);
}

int main(int argc, char **argv)
{
	struct ol_view view = { .tasks = 10 };
	struct ol_opts o = { .top = 5, .sort = AN_SORT_TOTAL, .view = ol_view_json,
			     .view_ctx = &view };
	static struct feed f;
	struct hb h = { 0 };
	struct live *l;
	char err[1024] = "";
	bool guests = false, drained = false;
	int e;

	if (argc == 5 && !strcmp(argv[4], "guests")) {
		guests = true;
		argc--;
	} else if (argc == 5 && !strcmp(argv[4], "drained")) {
		drained = true;
		argc--;
	}
	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: test_live_feed RAW_TRACE OUT INTERVAL_NS "
			"[AHEAD | guests | drained]\n");
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
	e = feed_run(&f, argc == 5, drained ? stamped_tap : ol_live_tap, l) ? 1 : 0;
	for (uint32_t b = 0; drained && !e && b < h.nbuf; b++) {
		struct rec_chunk c = { .kind = REC_TAP_DRAINED, .buf = b,
				       .taken_ns = last_end + 1000 + 3000000000ull };

		e = ol_live_tap(l, &c) ? 1 : 0;
	}
	if (drained)
		count_lines(view.out, argv[2]);
	e = ol_live_close(l, e, err, sizeof(err));
	if (err[0])
		fprintf(stderr, "test_live_feed: %s\n", err);
	feed_close(&f);
	fclose(view.out);
	return e ? 1 : 0;
}
