/* SPDX-License-Identifier: GPL-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crc32c.h"
#include "frame.h"
#include "util_endian.h"
#include "writer.h"

struct tf_writer {
	int fd;
	int dirfd;		/* dup of the directory, fsynced once */
	int err;		/* sticky, negative errno */
	int resumable;		/* err came from a write that was cut back
				 * to the file's last complete frame */
	struct tf_io io;	/* every member set */
	uint8_t *buf;		/* complete frames only */
	size_t size, used;
	uint64_t file_off;	/* bytes in the file: complete frames only */
	uint32_t seq;		/* next frame's seq */
	uint64_t frames, frames_lost;
	/* reserve/commit state */
	uint8_t *res;		/* where the payload goes, NULL when idle */
	size_t res_len;
	int res_heap;		/* res is a temporary, not in buf */
};

static ssize_t sys_pwrite(void *ctx, int fd, const void *b, size_t n, off_t off)
{
	(void)ctx;
	return pwrite(fd, b, n, off);
}

static int sys_fsync(void *ctx, int fd)
{
	(void)ctx;
	return fsync(fd);
}

static int sys_ftruncate(void *ctx, int fd, off_t len)
{
	(void)ctx;
	return ftruncate(fd, len);
}


int tf_writer_create(struct tf_writer **out, int dirfd, const char *name,
		     const struct tf_writer_opts *opts)
{
	struct tf_writer *w = calloc(1, sizeof(*w));
	size_t size = opts && opts->buf_size ? opts->buf_size : TF_WRITER_DEFAULT_BUF;
	unsigned int mode = opts && opts->mode ? opts->mode : 0644;
	int e;

	*out = NULL;
	if (size < TF_WRITER_MIN_BUF)
		size = TF_WRITER_MIN_BUF;
	if (!w)
		return -ENOMEM;
	w->buf = malloc(size);
	if (!w->buf) {
		free(w);
		return -ENOMEM;
	}
	/*
	 * Resident from the start: a writer that keeps up flushes after a
	 * few KiB and touches only the buffer's first pages, so the rest
	 * would become resident the first time a backlog fills it (measured
	 * in `vmscope record`: +1.8 MiB 280 s into a recording, 2 host CPU
	 * writers of 1 MiB). Not zeros: malloc + memset(0) becomes calloc,
	 * which skips fresh pages.
	 */
	memset(w->buf, 0x5a, size);
	w->size = size;
	if (opts && opts->io)
		w->io = *opts->io;
	if (!w->io.pwrite)
		w->io.pwrite = sys_pwrite;
	if (!w->io.fsync)
		w->io.fsync = sys_fsync;
	if (!w->io.ftruncate)
		w->io.ftruncate = sys_ftruncate;
	w->fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (w->fd < 0)
		goto fail;
	w->dirfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	if (w->dirfd < 0) {
		e = errno;
		close(w->fd);
		unlinkat(dirfd, name, 0);
		errno = e;
		goto fail;
	}
	*out = w;
	return 0;
fail:
	e = errno;
	free(w->buf);
	free(w);
	return -e;
}

/* Length of the complete frames at the start of buf[0..n). Our own
 * buffer, so the headers are trusted. */
static size_t complete_prefix(const uint8_t *buf, size_t n, uint64_t *frames)
{
	size_t off = 0;

	*frames = 0;
	while (off + TF_FRAME_HDR_SIZE <= n) {
		uint32_t len = le_get32(buf + off + 8);

		if (off + TF_FRAME_HDR_SIZE + len > n)
			break;
		off += TF_FRAME_HDR_SIZE + len;
		(*frames)++;
	}
	return off;
}

static uint64_t count_frames(const uint8_t *buf, size_t n)
{
	uint64_t f;

	complete_prefix(buf, n, &f);
	return f;
}

/*
 * Write buf[0..n) (complete frames) at the end of the file. On failure,
 * cut the file back to the last complete frame that reached it and make
 * the error sticky.
 */
static int write_frames(struct tf_writer *w, const uint8_t *buf, size_t n)
{
	size_t done = 0;
	int e = 0;

	while (done < n) {
		ssize_t r = w->io.pwrite(w->io.ctx, w->fd, buf + done, n - done,
					  (off_t)(w->file_off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			e = r < 0 ? errno : EIO;	/* 0 bytes: no progress */
			break;
		}
		done += (size_t)r;
	}
	if (!e) {
		w->file_off += n;
		return 0;
	}
	uint64_t kept_frames;
	size_t keep = complete_prefix(buf, done, &kept_frames);

	w->frames_lost += count_frames(buf, n) - kept_frames;
	/* Shrinking needs no space, so this works on a full disk too; if it
	 * fails, the reader still reports the partial frame as a torn tail. */
	w->resumable = w->io.ftruncate(w->io.ctx, w->fd,
					(off_t)(w->file_off + keep)) == 0;
	w->file_off += keep;
	w->err = -(e ? e : EIO);
	return w->err;
}

int tf_writer_flush(struct tf_writer *w)
{
	int r;

	if (w->err)
		return w->err;
	if (w->used == 0)
		return 0;
	r = write_frames(w, w->buf, w->used);
	w->used = 0;
	return r;
}

uint8_t *tf_writer_reserve(struct tf_writer *w, size_t len, int *err)
{
	*err = w->err;
	if (w->err)
		return NULL;
	if (w->res) {
		*err = -EBUSY;
		return NULL;
	}
	if (len > TF_FRAME_MAX_PAYLOAD) {
		*err = -EMSGSIZE;
		return NULL;
	}
	if (TF_FRAME_HDR_SIZE + len <= w->size) {
		if (w->used + TF_FRAME_HDR_SIZE + len > w->size) {
			*err = tf_writer_flush(w);
			if (*err)
				return NULL;
		}
		w->res = w->buf + w->used + TF_FRAME_HDR_SIZE;
		w->res_heap = 0;
	} else {
		/* Bigger than the buffer: header and payload in one
		 * temporary, written straight through. */
		w->res = malloc(TF_FRAME_HDR_SIZE + (len ? len : 1));
		if (!w->res) {
			*err = -ENOMEM;
			return NULL;
		}
		w->res += TF_FRAME_HDR_SIZE;
		w->res_heap = 1;
	}
	w->res_len = len;
	return w->res;
}

int tf_writer_commit(struct tf_writer *w, uint16_t type)
{
	struct tf_frame_hdr h;
	uint8_t *hdr;
	int r = 0;

	if (!w->res)
		return -EINVAL;
	hdr = w->res - TF_FRAME_HDR_SIZE;
	if (type == 0) {
		r = -EINVAL;
		goto out;
	}
	h.type = type;
	h.flags = 0;
	h.length = (uint32_t)w->res_len;
	h.seq = w->seq;
	h.payload_crc = tf_crc32c(0, w->res, w->res_len);
	tf_frame_hdr_encode(&h, hdr);
	w->seq++;
	if (!w->res_heap) {
		w->used += TF_FRAME_HDR_SIZE + w->res_len;
		w->frames++;
	} else {
		/* Keep file order: buffered frames first. This frame is not
		 * "accepted" unless it reached the file: its error is
		 * returned right here, so it does not count as lost. */
		r = tf_writer_flush(w);
		if (r == 0) {
			r = write_frames(w, hdr, TF_FRAME_HDR_SIZE + w->res_len);
			if (r)
				w->frames_lost--;
			else
				w->frames++;
		}
	}
out:
	if (w->res_heap)
		free(hdr);
	w->res = NULL;
	return r;
}

int tf_writer_append(struct tf_writer *w, uint16_t type, const void *payload,
		     size_t len)
{
	int err;
	uint8_t *p;

	if (type == 0)
		return w->err ? w->err : -EINVAL;
	p = tf_writer_reserve(w, len, &err);
	if (!p)
		return err;
	if (len)
		memcpy(p, payload, len);
	return tf_writer_commit(w, type);
}

int tf_writer_sync(struct tf_writer *w)
{
	int r = tf_writer_flush(w);

	if (r)
		return r;
	if (w->io.fsync(w->io.ctx, w->fd) < 0) {
		w->err = -errno;
		w->resumable = 0;
		return w->err;
	}
	/* The file's directory entry is durable only once the directory
	 * is synced; once is enough. */
	if (w->dirfd >= 0) {
		if (w->io.fsync(w->io.ctx, w->dirfd) < 0) {
			w->err = -errno;
			w->resumable = 0;
			return w->err;
		}
		close(w->dirfd);
		w->dirfd = -1;
	}
	return 0;
}

int tf_writer_close(struct tf_writer *w)
{
	int r;

	if (!w)
		return 0;
	r = tf_writer_sync(w);
	if (w->err && !r)
		r = w->err;
	if (close(w->fd) < 0 && !r)
		r = -errno;
	if (w->dirfd >= 0)
		close(w->dirfd);
	free(w->buf);
	free(w);
	return r;
}

int tf_writer_resume(struct tf_writer *w)
{
	if (!w->err)
		return -EINVAL;
	if (!w->resumable || w->res)
		return w->err;
	/* The file ends at its last complete frame, whose successor is
	 * the next frame: seq counts the frames the file holds. */
	w->seq = (uint32_t)(w->frames - w->frames_lost);
	w->used = 0;
	w->err = 0;
	w->resumable = 0;
	return 0;
}

int tf_writer_error(const struct tf_writer *w)
{
	return w->err;
}

void tf_writer_get_stats(const struct tf_writer *w, struct tf_writer_stats *s)
{
	s->frames = w->frames;
	s->offset = w->file_off + w->used;
	s->durable = w->file_off;
	s->frames_lost = w->frames_lost;
	s->frames_held = w->frames - w->frames_lost;
}
