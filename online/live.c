// SPDX-License-Identifier: GPL-2.0
/* The pipeline's live host source: see live.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "live.h"
#include "live_order.h"
#include "out.h"
#include "pipe_int.h"
#include "scan.h"

struct live {
	const struct ol_opts *o;
	char path[300];			/* the recording's folder */
	struct hb *hb;
	/* from the first sub-buffer on (the session, its buffers and the
	 * metadata exist then) */
	struct lo lo;
	uint32_t *cpu;			/* [nbuf]: each buffer's host CPU */
	uint32_t nbuf;
	struct an_walk *w;
	struct an_hooks h;
	struct pipe p;
	bool piped;
	const struct vr_events *ev;	/* the host's table, as stored */
	/* the thread each host CPU runs, as the online merge keeps it */
	struct mg_scan scan;
	struct mg_result res;
	bool scanned;
	int error;
	char why[700];
};

static void fail(struct live *l, int e, const char *why)
{
	if (l->error)
		return;
	l->error = e;
	snprintf(l->why, sizeof(l->why), "%s", why);
}

/* Host-only: no guest sync record to pull, no exchange to keep. */
static int no_guest(void *user, uint32_t vm, uint32_t cpu, struct mp_guest *out)
{
	(void)user, (void)vm, (void)cpu, (void)out;
	return 0;
}

static void no_accept(void *user, uint32_t vm, const struct mp_exchange *x, int64_t seg)
{
	(void)user, (void)vm, (void)x, (void)seg;
}

static int emit(void *ctx, const struct lo_rec *r);

static size_t queue_cap(uint32_t nbuf)
{
	size_t cap = OL_LIVE_QUEUE_BYTES / sizeof(struct lo_rec) / (nbuf ? nbuf : 1);

	if (cap < OL_LIVE_CAP_MIN)
		return OL_LIVE_CAP_MIN;
	return cap > OL_LIVE_CAP_MAX ? OL_LIVE_CAP_MAX : cap;
}

/* The ordering stage over the session's buffers, the walk over the
 * recording's metadata, the pipeline, the host thread tracking: once
 * they exist (the first sub-buffer). */
static int start(struct live *l)
{
	struct mg_opts mo = { 0 };
	char err[600];
	int e;

	l->nbuf = l->hb->nbuf;
	l->cpu = calloc(l->nbuf ? l->nbuf : 1, sizeof(*l->cpu));
	e = l->cpu ? lo_init(&l->lo, l->nbuf ? l->nbuf : 1, queue_cap(l->nbuf), OL_LIVE_LAG_NS,
			     emit, l) : -ENOMEM;
	if (e) {
		fail(l, e, "out of memory");
		return e;
	}
	/* a buffer without a reader (an impossible CPU's) is not waited for */
	for (uint32_t i = 0; i < l->nbuf; i++)
		if (!l->hb->map[i])
			lo_skip(&l->lo, i);
	e = an_walk_open_fed(&l->w, l->path, err, sizeof(err));
	if (e) {
		fail(l, e, err);
		return e;
	}
	l->ev = vr_trace_events(an_walk_fed_trace(l->w), VMSCOPE__TRACE__SIDE__SIDE_HOST, 0);
	l->piped = true;
	e = ol_pipe_open(&l->p, l->w, l->o, &l->h);
	if (!e) {
		l->scanned = true;
		e = mg_scan_init(&l->scan, an_walk_fed_trace(l->w), &mo, &l->res, no_guest,
				 no_accept, NULL);
	}
	if (e)
		fail(l, e, "out of memory");
	return e;
}

/* A released record into the walk, with its host CPU's thread. */
static int emit(void *ctx, const struct lo_rec *r)
{
	struct live *l = ctx;
	struct vr_item it = { .kind = (enum vr_item_kind)r->kind, .ts = r->ts,
			      .events = r->events, .loss_kind = r->loss_kind };
	struct mo_origin o = { .orig_ts = r->ts, .cpu = l->cpu[r->buf], .tid = -1,
			       .vcpu = MO_NONE };

	if (r->kind == VR_EVENT) {
		int i = l->ev ? vr_events_index(l->ev, r->id) : -1;

		/* no usable descriptor: counted as a record, not interpreted */
		it.desc = i >= 0 ? &l->ev->desc[i] : NULL;
		it.payload = r->payload;
		it.size = r->size;
	} else if (r->kind == VR_GAP) {
		it.last = r->events - 1;
	}
	if (o.cpu < MP_MAX_CPUS)
		o.tid = l->scan.host_tid[o.cpu];
	if (o.tid >= 0)
		mp_thread_vm(l->res.pair, o.tid, &o.vcpu);
	if (it.desc)
		mg_scan_host(&l->scan, o.cpu, &it);
	an_walk_feed(l->w, &l->h, &it, &o);
	return l->p.quit || l->p.error ? 1 : 0;
}

/* The recorder's writer thread: one host sub-buffer. */
static int tap(void *ctx, const struct rec_chunk *c)
{
	struct live *l = ctx;
	struct lo_chunk lc = { .seq = c->seq, .begin_ts = c->begin_ts, .end_ts = c->end_ts,
			       .lost_before = c->lost_before, .nr_records = c->nr_records,
			       .len = c->len, .data = c->data };
	int e;

	if (l->error)
		return 1;
	if (!l->w && start(l))
		return 1;
	if (c->buf >= l->nbuf)
		return 0;	/* not the session's: cannot happen */
	l->cpu[c->buf] = c->cpu;
	e = lo_chunk(&l->lo, c->buf, &lc);
	if (e < 0)
		fail(l, e, "ordering the host buffers' records failed");
	return e;
}

/* Probing is on: from here every exit of the processes is seen. */
static void started(void *ctx, const struct hb *h)
{
	(void)ctx;
	fprintf(stderr, "vmscope top: live from the host module: %u CPUs, %u buffers; "
		"SIGINT or SIGTERM stops\n", h->cfg.nr_cpu_ids, h->nbuf);
}

/* The private folder and what the recording left in it. */
static void remove_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;

	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		closedir(d);
	rmdir(path);
}

/* The private folder for the recording's metadata. 0 or -1 (@err). */
static int make_dir(char *dir, size_t len, char *err, size_t errlen)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, len, "%s/vmscope-top.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

struct live *ol_live_open(struct hb *h, const char *path, const struct ol_opts *o)
{
	struct live *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->o = o;
	l->hb = h;
	snprintf(l->path, sizeof(l->path), "%s", path);
	return l;
}

int ol_live_tap(void *live, const struct rec_chunk *c)
{
	return tap(live, c);
}

uint64_t ol_live_lost(const struct live *l)
{
	return l->lo.st.lost_events + l->lo.st.late;
}

int ol_live_close(struct live *l, int rc, char *err, size_t errlen)
{
	int e;

	/* every sub-buffer was tapped: the rest, in order */
	if (l->w && !l->error && !l->p.quit && !l->p.error && lo_finish(&l->lo) < 0)
		fail(l, -EIO, "ordering the host buffers' records failed");
	if (l->w && l->piped && !l->error)
		an_walk_feed_end(l->w, &l->h);
	if (l->error) {
		snprintf(err, errlen, "%s", l->why);
		e = l->error;
	} else if (rc) {
		snprintf(err, errlen, "the recording failed");
		e = 1;
	} else if (!l->w) {
		snprintf(err, errlen, "no records of the traced processes");
		e = 1;
	} else {
		e = ol_pipe_result(&l->p, 0, err, errlen);
		if (!e && l->lo.st.late)
			snprintf(err, errlen, "%llu records came too late to be ordered "
				 "(counted as losses in their intervals)",
				 (unsigned long long)l->lo.st.late);
	}
	if (l->scanned) {
		mg_scan_free(&l->scan);
		mg_result_free(&l->res);
	}
	if (l->piped)
		ol_pipe_close(&l->p);
	an_walk_close(l->w);
	lo_free(&l->lo);
	free(l->cpu);
	free(l);
	return e;
}

int ol_live(struct hb *h, const struct rec_opts *ro, const struct ol_opts *o,
	    volatile sig_atomic_t *stop, char *err, size_t errlen)
{
	struct rec_opts r = *ro;
	char dir[256], path[300];
	struct live *l;
	int e;

	if (make_dir(dir, sizeof(dir), err, errlen))
		return -EIO;
	snprintf(path, sizeof(path), "%s/session", dir);
	l = ol_live_open(h, path, o);
	if (!l) {
		snprintf(err, errlen, "out of memory");
		rmdir(dir);
		return -ENOMEM;
	}
	r.path = path;
	r.tap = tap;
	r.tap_ctx = l;
	r.tap_started = started;
	r.no_streams = true;
	r.status = 0;
	e = ol_live_close(l, rec_run(h, &r, stop), err, errlen);
	remove_dir(path);
	rmdir(dir);
	return e;
}
