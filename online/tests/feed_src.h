/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tests that feed a recorded trace to the live source without the
 * module (test_live_feed, test_metrics_feed): the host stream files of a
 * raw trace (and, asked, its guest CPU streams' chunks and loss records,
 * as the agents' connections deliver them) read back as the recorder's
 * tap sees them, and handed to a tap in turn per stream, as reader
 * threads deliver them.
 */
#ifndef VMSCOPE_ONLINE_TESTS_FEED_SRC_H
#define VMSCOPE_ONLINE_TESTS_FEED_SRC_H

#include <dirent.h>
#include <stdbool.h>

#include "reader.h"
#include "record.h"

#define FEED_MAX 64

struct feed {
	DIR *d;
	struct feed_stream {
		struct tf_reader *r;
		bool done, guest;
		uint32_t vm, cpu;	/* guest: from the file name */
	} src[FEED_MAX];
	const unsigned char *map[FEED_MAX];
	unsigned int n;
	/* the guest streams only once every host stream is whole (agents
	 * whose chunks come long after the host's records) */
	bool guests_last;
};

/* The host streams of raw trace @dir into @f (buffers 0..nbuf-1), then,
 * with @guests, its guest CPU streams (guestV-cpuC.vtf); @h given the
 * number of host streams and a map (nbuf, map: what the live source
 * looks at). 0, or -1 (said on stderr). */
int feed_open(struct feed *f, const char *dir, bool guests, struct hb *h);

/*
 * Every sub-buffer through @tap(@ctx): the streams in turn, each at most
 * one sub-buffer ahead of the others; with @ahead, the first stream whole
 * before the others (a reader far ahead of the rest). 0; the first
 * non-zero @tap returned; -1 when a chunk does not decode (said).
 */
int feed_run(struct feed *f, bool ahead, rec_tap_fn *tap, void *ctx);

void feed_close(struct feed *f);

#endif
