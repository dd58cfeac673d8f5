/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Frame reader. Iterates the frames of one file (or of a memory image),
 * verifying every header and payload CRC and the frame sequence, and
 * stops at the first frame that is not intact, saying why and where:
 *
 *   TF_END_CLEAN    the file ends exactly after a frame.
 *   TF_END_TORN     the damage is confined to the tail: a short header, a
 *                   payload cut short, or a bad header or payload CRC with
 *                   no intact frame header anywhere after it (a
 *                   zero-filled or half-written end). What a killed writer
 *                   leaves.
 *   TF_END_CORRUPT  damage with intact frames after it: mid-file
 *                   corruption. The reader does not resync (see
 *                   tracefmt/README.md); frames before it were returned.
 *   TF_END_IO       a read error (err holds it).
 *
 * Memory is bounded by the largest frame actually present in the file
 * (never by a length field: a frame longer than what remains of the file
 * is not read), itself at most TF_FRAME_MAX_PAYLOAD.
 */
#ifndef VMSCOPE_TRACEFMT_READER_H
#define VMSCOPE_TRACEFMT_READER_H

#include <stddef.h>
#include <stdint.h>

struct tf_reader;

struct tf_frame {
	uint16_t type;
	uint32_t seq;
	uint64_t offset;	/* of the frame header in the file */
	const uint8_t *payload;	/* valid until the next tf_reader_next() */
	uint32_t length;
};

enum tf_end {
	TF_END_NONE = 0,	/* not stopped yet */
	TF_END_CLEAN,
	TF_END_TORN,
	TF_END_CORRUPT,
	TF_END_IO,
};

struct tf_end_info {
	enum tf_end kind;
	uint64_t offset;	/* of the first byte not returned as a frame */
	uint64_t size;		/* of the file (as seen at open) */
	uint64_t frames;	/* intact frames returned */
	int err;		/* TF_END_IO: negative errno */
	char reason[128];
};

/* Read name in dirfd (size as at open). 0 or negative errno; -EINVAL
 * when it is not a regular file (a FIFO is opened without waiting). */
int tf_reader_open(struct tf_reader **out, int dirfd, const char *name);
/* Read an already open fd (not closed by the reader). */
int tf_reader_open_fd(struct tf_reader **out, int fd);
/* Read a memory image; data must outlive the reader. */
int tf_reader_open_mem(struct tf_reader **out, const void *data, size_t len);

/* 1: *f holds the next frame; 0: stopped, see tf_reader_end(). */
int tf_reader_next(struct tf_reader *r, struct tf_frame *f);

const struct tf_end_info *tf_reader_end(const struct tf_reader *r);

void tf_reader_close(struct tf_reader *r);

const char *tf_end_str(enum tf_end kind);

#endif
