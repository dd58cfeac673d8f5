// SPDX-License-Identifier: GPL-2.0
/*
 * A merged trace (or a raw one, merged as it is read: ex_in.h) as CTF 1.8
 * (ctf.h): the metadata from ctf_tsdl.c and one stream in the merged
 * trace's own order, read through the analysis walk's record hook (the
 * one reader of both kinds of input).
 *
 * One stream with the origin in each event's context, rather than one
 * stream per origin: the merged trace already is one host-time-ordered
 * stream, so the export is a single pass with one packet in memory and no
 * file per CPU and VM to keep open; a reader filters by the _origin, _cpu
 * and _tid context fields. Losses the merged trace recorded (LossRecords)
 * become CTF discarded events: the packet before them is closed and the
 * stream's events_discarded counter grows by their count.
 *
 * Packet layout (all little-endian, byte aligned): header {magic,
 * stream_id}, context {timestamp_begin, timestamp_end, content_size,
 * packet_size, events_discarded} (sizes in bits), then events: header
 * {id, timestamp}, context {origin, cpu, tid, vcpu, orig_ts}, payload.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctf.h"
#include "ex_in.h"
#include "ex_out.h"
#include "out.h"
#include "util_endian.h"
#include "walk.h"

#define CTF_MAGIC	0xc1fc1fc1u
#define PKT_HEADER	(8 + 40)
#define PKT_MAX		(64u << 10)
#define EV_HEADER	(12 + 24)

struct cw {
	int fd;
	uint8_t buf[PKT_MAX];
	size_t len;		/* 0: no packet open */
	uint64_t begin, end, discarded;
	int err;
	struct ex_ctf_stats *st;
};

static void flush(struct cw *w)
{
	uint8_t *p = w->buf;

	if (!w->len || w->err)
		return;
	le_put32(p, CTF_MAGIC);
	le_put32(p + 4, 0);
	le_put64(p + 8, w->begin);
	le_put64(p + 16, w->end);
	le_put64(p + 24, (uint64_t)w->len * 8);
	le_put64(p + 32, (uint64_t)w->len * 8);
	le_put64(p + 40, w->discarded);
	for (size_t off = 0; off < w->len; ) {
		ssize_t n = write(w->fd, p + off, w->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			w->err = n < 0 ? -errno : -EIO;
			return;
		}
		off += (size_t)n;
	}
	w->st->packets++;
	w->len = 0;
}

static void add(struct cw *w, uint32_t id, uint64_t ts, const struct mo_origin *o,
		const uint8_t *payload, uint32_t size)
{
	if (w->len + EV_HEADER + size > PKT_MAX)
		flush(w);
	if (!w->len) {
		w->len = PKT_HEADER;
		w->begin = ts;
	}
	uint8_t *p = w->buf + w->len;

	le_put32(p, id);
	le_put64(p + 4, ts);
	le_put32(p + 12, o->origin);
	le_put32(p + 16, o->cpu);
	le_put32(p + 20, (uint32_t)o->tid);
	le_put32(p + 24, o->vcpu);
	le_put64(p + 28, o->orig_ts);
	memcpy(p + EV_HEADER, payload, size);
	w->len += EV_HEADER + size;
	w->end = ts;
	w->st->events++;
}

static int write_metadata(int dfd, const struct vr_events *ev,
			  const Vmscope__Trace__SessionMetadata *s, bool *raw,
			  struct ex_ctf_stats *st)
{
	int fd = openat(dfd, CTF_METADATA, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	FILE *f;
	int n, e = 0;

	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	n = ctf_tsdl(f, ev, s, raw);
	if (n < 0)
		e = n;
	else
		st->raw_layouts = (unsigned int)n;
	if (fflush(f) || fsync(fileno(f)))
		e = e ? e : -errno;
	if (fclose(f) && !e)
		e = -EIO;
	return e;
}

/* The walk's record hook: every item in the merged order. */
struct ctf_in {
	struct cw *w;
	struct an_walk *walk;
	const struct vr_events *ev;
};

static void ctf_record(void *ctx, const struct vr_item *it, const struct mo_origin *o,
		       bool has, uint64_t ts)
{
	static const struct mo_origin unknown = { .tid = -1, .vcpu = MO_NONE };
	struct ctf_in *c = ctx;
	struct cw *w = c->w;
	ptrdiff_t i;

	if (it->kind == VR_LOSS) {
		flush(w);	/* the loss falls between this packet and the next */
		w->discarded += it->events;
		w->st->discarded += it->events;
	} else if (it->kind == VR_BAD) {
		w->st->bad++;
	} else if (it->kind == VR_EVENT) {
		i = it->desc - c->ev->desc;
		if (i < 0 || (size_t)i >= c->ev->n || it->size < it->desc->payload_size)
			w->st->skipped++;
		else
			add(w, (uint32_t)i, ts, has ? o : &unknown, it->payload,
			    it->desc->payload_size);
	}
	if (w->err)
		an_walk_stop(c->walk);
}

int ex_ctf(const char *in, const char *out, const struct ex_opts *opts,
	   struct ex_ctf_stats *st, char *err, size_t errlen)
{
	static const char *const names[] = { CTF_METADATA, CTF_STREAM, NULL };
	const struct vr_events *ev;
	struct an_walk *walk;
	struct ex_out o;
	struct cw *w = NULL;
	bool *raw = NULL;
	int e;

	memset(st, 0, sizeof(*st));
	e = ex_in_open(&walk, &ev, in, opts, err, errlen);
	if (e)
		return e;
	e = ex_out_dir(&o, out, names, opts->force, err, errlen);
	if (e) {
		an_walk_close(walk);
		return e;
	}
	w = calloc(1, sizeof(*w));
	raw = calloc(ev->n ? ev->n : 1, sizeof(*raw));
	if (!w || !raw) {
		snprintf(err, errlen, "out of memory");
		e = -ENOMEM;
		goto out;
	}
	w->st = st;
	w->fd = -1;
	e = write_metadata(o.fd, ev, an_walk_session(walk), raw, st);
	if (e) {
		snprintf(err, errlen, "writing %s/%s: %s", out, CTF_METADATA, strerror(-e));
		goto out;
	}
	w->fd = openat(o.fd, CTF_STREAM, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		e = -errno;
		snprintf(err, errlen, "creating %s/%s: %s", out, CTF_STREAM, strerror(-e));
		goto out;
	}
	/* the walk's order and host times (ns), its exits unused */
	e = an_walk_run(walk, &(struct an_hooks){ .ctx = &(struct ctf_in){ w, walk, ev },
						  .record = ctf_record }, err, errlen);
	flush(w);
	if (!w->err && fsync(w->fd))
		w->err = -errno;
	if (w->err) {
		e = w->err;
		snprintf(err, errlen, "writing %s/%s: %s", out, CTF_STREAM, strerror(-e));
	} else {
		e = ex_in_check_end(walk, e, in, opts, err, errlen);
	}
out:
	if (w && w->fd >= 0)
		close(w->fd);
	if (!e)
		e = ex_out_commit(&o, err, errlen);
	else
		ex_out_abort(&o);
	free(w);
	free(raw);
	an_walk_close(walk);
	return e;
}
