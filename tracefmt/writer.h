/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Append-only frame writer: one writer per file, one thread at a time.
 *
 * Memory is bounded by the buffer size (plus, for a protobuf message that
 * does not fit in the buffer, one temporary of the message's size, itself
 * bounded by TF_FRAME_MAX_PAYLOAD). The buffer only ever holds complete
 * frames, and the file only ever grows by complete frames: on a write
 * error (ENOSPC, EIO, ...) the writer cuts the file back to the end of the
 * last complete frame, keeps the error, and refuses every later append
 * with it. What was written before stays readable.
 */
#ifndef VMSCOPE_TRACEFMT_WRITER_H
#define VMSCOPE_TRACEFMT_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tf_writer;

/*
 * The system calls the writer makes, replaceable to inject failures; a NULL
 * member is the real call, so a test names only the one it fakes.
 */
struct tf_io {
	ssize_t (*pwrite)(void *ctx, int fd, const void *buf, size_t len, off_t off);
	int (*fsync)(void *ctx, int fd);
	int (*ftruncate)(void *ctx, int fd, off_t len);
	void *ctx;
};

struct tf_writer_opts {
	size_t buf_size;		/* 0: TF_WRITER_DEFAULT_BUF */
	const struct tf_io *io;		/* NULL: the real system calls */
	unsigned int mode;		/* file mode; 0: 0644 */
};

#define TF_WRITER_DEFAULT_BUF	(1u << 20)
#define TF_WRITER_MIN_BUF	4096u

/*
 * Create name in dirfd (O_EXCL: never overwrites a file) and return a
 * writer in *out. Returns 0 or a negative errno.
 */
int tf_writer_create(struct tf_writer **out, int dirfd, const char *name,
		     const struct tf_writer_opts *opts);

/*
 * Append one frame. Returns 0, or a negative errno: -EMSGSIZE (payload
 * above TF_FRAME_MAX_PAYLOAD, nothing written, the writer stays usable),
 * -EINVAL (type 0), or the writer's sticky error.
 */
int tf_writer_append(struct tf_writer *w, uint16_t type, const void *payload,
		     size_t len);

/*
 * Reserve room for a frame of exactly len payload bytes and return where
 * to put them (in the buffer, or in a temporary when len exceeds it);
 * tf_writer_commit() then checksums and appends it. This is how
 * protobuf messages are packed without an extra copy. NULL with *err set
 * on failure. Nothing else may be called between reserve and commit.
 */
uint8_t *tf_writer_reserve(struct tf_writer *w, size_t len, int *err);
int tf_writer_commit(struct tf_writer *w, uint16_t type);

/* Write buffered frames to the file (no fsync). 0 or negative errno. */
int tf_writer_flush(struct tf_writer *w);

/* Flush, fsync the file and, the first time, its directory. */
int tf_writer_sync(struct tf_writer *w);

/*
 * Sync, close and free. Returns 0 or the first error the writer met
 * (including a sticky one from an earlier append). w is freed either way.
 */
int tf_writer_close(struct tf_writer *w);

/*
 * Go on after a write error (ENOSPC, EDQUOT, ...) once the caller has made
 * room: appends continue after the file's last complete frame. The frames
 * the error cost stay lost and counted in frames_lost. 0; -EINVAL when
 * there is no error; else the sticky error itself, when the file's end is
 * not known to be that frame (the cut back failed, or fsync failed: what
 * the file holds is then unknown).
 */
int tf_writer_resume(struct tf_writer *w);

/* The sticky error: 0 while the writer works. */
int tf_writer_error(const struct tf_writer *w);

struct tf_writer_stats {
	uint64_t frames;	/* frames accepted: append returned 0 */
	uint64_t offset;	/* file offset the next frame will have */
	uint64_t durable;	/* bytes of complete frames in the file */
	uint64_t frames_lost;	/* accepted, then lost to a write error
				 * (they were still in the buffer) */
	uint64_t frames_held;	/* frames - frames_lost: in the file, or
				 * buffered before @offset; what a
				 * summary of the file lists */
};

void tf_writer_get_stats(const struct tf_writer *w, struct tf_writer_stats *s);

#endif
