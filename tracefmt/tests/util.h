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

/*
 * A test's own folder (tf_test_mkdir) and, in it, @name: the reference
 * file of tf_test_build with @n frames, frame i of size_of(i) bytes.
 * tf_test_file_free removes the folder and frees the rest.
 */
struct tf_test_file {
	char dir[64];
	int dfd;
	uint32_t *sizes;	/* [n] */
	uint64_t *offs;		/* [n + 1]: each frame's offset, then the size */
	uint8_t *img;		/* the file's bytes, as read back */
	size_t len;
};
void tf_test_file(struct tf_test_file *t, const char *name, size_t n,
		  uint32_t (*size_of)(size_t i));
void tf_test_file_free(struct tf_test_file *t);

/* Read all frames of a memory image; checks each frame's content
 * against the reference pattern. Returns frames read. */
size_t tf_test_read_all(const uint8_t *img, size_t len, struct tf_end_info *end);


#endif
