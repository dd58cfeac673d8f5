/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the tracefmt unit tests. */
#ifndef TF_TEST_UTIL_H
#define TF_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../../tests/lib/check.h"
#include "tracefmt.h"
#include "util_fs.h"

/* A fresh directory under /var/tmp (removed with all it holds by tf_test_rmdir) and its fd. */
int tf_test_mkdir(char *path, size_t len);
void tf_test_rmdir(const char *path);


/*
 * A reference file: n frames, frame i of type 1 + i % 8 (or RAW) with a
 * pseudo-random payload of sizes[i] bytes, written by the writer with a
 * small buffer (so some frames go straight through). offs gets each
 * frame's offset and offs[n] the file size.
 */
uint8_t *tf_test_build(int dirfd, const char *name, const uint32_t *sizes,
		       size_t n, uint64_t *offs, size_t *len);
uint8_t tf_test_payload_byte(size_t frame, size_t i);
uint16_t tf_test_type(size_t frame);

/* Read all frames of a memory image; checks each frame's content
 * against the reference pattern. Returns frames read. */
size_t tf_test_read_all(const uint8_t *img, size_t len, struct tf_end_info *end);

int tf_test_result(const char *name);

#endif
