/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A valid guest stream in memory, for the guest_link test and as the fuzz
 * target's seed: FileHeader, GuestHello (2 CPUs), then chunks of
 * @nr_chunks alternating between the CPUs (3 records each) and one
 * LossRecord. *len gets the size; caller frees. offs[i] (if not NULL, room
 * for nr_chunks + 4) gets each frame's offset and the total last.
 */
#ifndef GL_STREAM_H
#define GL_STREAM_H

#include <stddef.h>
#include <stdint.h>

#define GL_TEST_CPUS 2
#define GL_TEST_RECORDS_PER_CHUNK 3

uint8_t *gl_test_stream(unsigned nr_chunks, size_t *len, size_t *offs);

#endif
