/* SPDX-License-Identifier: GPL-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"
#include "frame.h"
#include "reader.h"

/* Window of the forward scan for an intact header (fd source). */
#define SCAN_WINDOW (64u << 10)

struct tf_reader {
	const uint8_t *mem;	/* memory source, or NULL */
	int fd;			/* fd source */
	int own_fd;
	uint64_t size;
	uint64_t off;		/* next frame */
	uint32_t seq;		/* expected next seq */
	uint8_t *buf;		/* fd source: holds the current frame */
	size_t cap;
	struct tf_end_info end;
};

/*
 * Make n bytes at off available in *p. Callers never ask beyond size.
 * Returns 0 or a negative errno.
 */
static int read_at(struct tf_reader *r, uint64_t off, size_t n, const uint8_t **p)
{
	size_t done = 0;

	if (r->mem) {
		*p = r->mem + off;
		return 0;
	}
	if (n > r->cap) {
		uint8_t *nb = realloc(r->buf, n);

		if (!nb)
			return -ENOMEM;
		r->buf = nb;
		r->cap = n;
	}
	while (done < n) {
		ssize_t got = pread(r->fd, r->buf + done, n - done, (off_t)(off + done));

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)	/* shrank under us */
			return -ENODATA;
		done += (size_t)got;
	}
	*p = r->buf;
	return 0;
}

static int stop(struct tf_reader *r, enum tf_end kind, uint64_t off, int err,
		const char *fmt, ...)
{
	va_list ap;

	r->end.kind = kind;
	r->end.offset = off;
	r->end.err = err;
	va_start(ap, fmt);
	vsnprintf(r->end.reason, sizeof(r->end.reason), fmt, ap);
	va_end(ap);
	return 0;
}

/*
 * Is there an intact frame header anywhere in [from, size)? Tells a torn
 * tail (nothing valid follows the damage) from mid-file corruption. A
 * forged header inside a guest's payload can at worst turn "torn" into
 * "corrupt": the reader stops at the damage either way.
 * Returns 1/0, or a negative errno.
 */
static int intact_header_after(struct tf_reader *r, uint64_t from, uint64_t *at)
{
	static const uint8_t magic[4] = { 0x56, 0x4d, 0x53, 0x46 };

	while (from + TF_FRAME_HDR_SIZE <= r->size) {
		uint64_t left;
		size_t n;
		const uint8_t *p;
		int e;

		/* A hole reads as zeros, which hold no header: skip to the
		 * next data, so a huge sparse file is scanned by what it
		 * really stores. */
		if (!r->mem) {
			off_t d = lseek(r->fd, (off_t)from, SEEK_DATA);

			if (d < 0 && errno == ENXIO)
				return 0;
			if (d > (off_t)from)
				from = (uint64_t)d;
			if (from + TF_FRAME_HDR_SIZE > r->size)
				return 0;
		}
		left = r->size - from;
		n = left > SCAN_WINDOW ? SCAN_WINDOW : (size_t)left;
		e = read_at(r, from, n, &p);

		if (e)
			return e;
		for (size_t i = 0; i + TF_FRAME_HDR_SIZE <= n; i++) {
			const uint8_t *q = memchr(p + i, magic[0], n - TF_FRAME_HDR_SIZE + 1 - i);
			struct tf_frame_hdr h;

			if (!q)
				break;
			i = (size_t)(q - p);
			if (memcmp(q, magic, 4) == 0 &&
			    tf_frame_hdr_decode(q, &h) == TF_HDR_OK) {
				*at = from + i;
				return 1;
			}
		}
		/* Next window overlaps so a header across the edge is seen. */
		from += n - TF_FRAME_HDR_SIZE + 1;
	}
	return 0;
}

/*
 * The frame at off is damaged. Torn tail if no intact frame header
 * starts at or after scan_from (where the next frame would be, or
 * off + 1 when the header itself is bad), mid-file corruption otherwise.
 */
static int damaged(struct tf_reader *r, uint64_t off, uint64_t scan_from,
		   const char *what)
{
	uint64_t at = 0;
	int e = intact_header_after(r, scan_from, &at);

	if (e < 0)
		return stop(r, TF_END_IO, off, e, "read error: %s", strerror(-e));
	if (e == 0)
		return stop(r, TF_END_TORN, off, 0,
			    "torn tail: %s, no intact frame after it", what);
	return stop(r, TF_END_CORRUPT, off, 0,
		    "%s; an intact frame header follows at %llu", what,
		    (unsigned long long)at);
}

int tf_reader_next(struct tf_reader *r, struct tf_frame *f)
{
	uint64_t off = r->off, left;
	const uint8_t *p;
	struct tf_frame_hdr h;
	enum tf_hdr_check c;
	int e;

	if (r->end.kind != TF_END_NONE)
		return 0;
	left = r->size - off;
	if (left == 0)
		return stop(r, TF_END_CLEAN, off, 0, "end of file after %llu frames",
			    (unsigned long long)r->end.frames);
	if (left < TF_FRAME_HDR_SIZE)
		return stop(r, TF_END_TORN, off, 0,
			    "torn tail: %llu bytes, short frame header",
			    (unsigned long long)left);
	e = read_at(r, off, TF_FRAME_HDR_SIZE, &p);
	if (e)
		return stop(r, TF_END_IO, off, e, "read error: %s", strerror(-e));
	c = tf_frame_hdr_decode(p, &h);
	if (c != TF_HDR_OK)
		return damaged(r, off, off + 1, tf_hdr_check_str(c));
	if (h.seq != r->seq)
		return stop(r, TF_END_CORRUPT, off, 0, "frame seq %u, expected %u",
			    h.seq, r->seq);
	if (h.type == 0)
		return stop(r, TF_END_CORRUPT, off, 0, "frame type 0");
	if ((uint64_t)h.length > left - TF_FRAME_HDR_SIZE)
		return stop(r, TF_END_TORN, off, 0,
			    "torn tail: frame of %u payload bytes, %llu present",
			    h.length, (unsigned long long)(left - TF_FRAME_HDR_SIZE));
	e = read_at(r, off, TF_FRAME_HDR_SIZE + h.length, &p);
	if (e)
		return stop(r, TF_END_IO, off, e, "read error: %s", strerror(-e));
	if (tf_crc32c(0, p + TF_FRAME_HDR_SIZE, h.length) != h.payload_crc)
		return damaged(r, off, off + TF_FRAME_HDR_SIZE + h.length,
			       "bad payload CRC");
	f->type = h.type;
	f->seq = h.seq;
	f->offset = off;
	f->payload = p + TF_FRAME_HDR_SIZE;
	f->length = h.length;
	r->off = off + TF_FRAME_HDR_SIZE + h.length;
	r->seq++;
	r->end.frames++;
	return 1;
}

static struct tf_reader *alloc_reader(void)
{
	struct tf_reader *r = calloc(1, sizeof(*r));

	if (r)
		r->fd = -1;
	return r;
}

int tf_reader_open_fd(struct tf_reader **out, int fd)
{
	struct tf_reader *r;
	struct stat st;

	*out = NULL;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	r = alloc_reader();
	if (!r)
		return -ENOMEM;
	r->fd = fd;
	r->size = (uint64_t)st.st_size;
	r->end.size = r->size;
	*out = r;
	return 0;
}

/* O_NONBLOCK: opening a FIFO (or a device) must not wait for a writer;
 * tf_reader_open_fd() then refuses anything but a regular file. */
int tf_reader_open(struct tf_reader **out, int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	int e;

	*out = NULL;
	if (fd < 0)
		return -errno;
	e = tf_reader_open_fd(out, fd);
	if (e) {
		close(fd);
		return e;
	}
	(*out)->own_fd = 1;
	return 0;
}

int tf_reader_open_mem(struct tf_reader **out, const void *data, size_t len)
{
	struct tf_reader *r = alloc_reader();

	*out = NULL;
	if (!r)
		return -ENOMEM;
	/* Any non-NULL pointer: read_at never dereferences it when len is 0. */
	r->mem = data ? data : (const uint8_t *)"";
	r->size = len;
	r->end.size = len;
	*out = r;
	return 0;
}

const struct tf_end_info *tf_reader_end(const struct tf_reader *r)
{
	return &r->end;
}

void tf_reader_close(struct tf_reader *r)
{
	if (!r)
		return;
	if (r->own_fd)
		close(r->fd);
	free(r->buf);
	free(r);
}

const char *tf_end_str(enum tf_end kind)
{
	switch (kind) {
	case TF_END_NONE:	return "reading";
	case TF_END_CLEAN:	return "clean end";
	case TF_END_TORN:	return "torn tail";
	case TF_END_CORRUPT:	return "corrupt";
	case TF_END_IO:		return "I/O error";
	}
	return "?";
}
