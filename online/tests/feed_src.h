/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tests that feed a recorded trace to the live source without the
 * module (test_live_feed, test_metrics_feed): one host stream file of a
 * raw trace read back as the recorder's tap sees its sub-buffers.
 */
#ifndef VMSCOPE_ONLINE_TESTS_FEED_SRC_H
#define VMSCOPE_ONLINE_TESTS_FEED_SRC_H

#include <stdbool.h>

#include "reader.h"
#include "record.h"
#include "stream.pb-c.h"

struct src {
	struct tf_reader *r;
	bool done;
};

/* The next StreamChunk of @s as the tap's sub-buffer of buffer @buf
 * (*@keep: its message, to free after the tap): 1, 0 at its end, -1 when
 * it does not decode (said on stderr). */
int next_chunk(struct src *s, uint32_t buf, struct rec_chunk *out,
	       Vmscope__Trace__StreamChunk **keep);

#endif
