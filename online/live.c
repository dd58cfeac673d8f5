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
#include "online.h"
#include "guest.pb-c.h"

/* A guest CPU's chunk state (lo_decode) and its last record's guest time. */
struct gcpu {
	struct lo_buf b;
	uint64_t last_ts;
	bool any;
};

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
	/* the host records and the guests' through the online merge: the
	 * pairing, the clock segments, the order (merge/online.h, fed) */
	struct om *om;
	uint32_t n_vms;
	struct gcpu *g;			/* [n_vms][OL_LIVE_GUEST_CPUS] */
	struct vr_events **gev;		/* [n_vms]: the table of the last hello */
	/* [n_vms]: the views' alignment figures: the bound of the VM's
	 * latest guest record (not bounded: none yet, or an unbounded one);
	 * kept when its agent is gone, which the metrics do not show
	 * (ol_live_bound) */
	struct ol_sync *sync;
	bool *agent_gone;
	ol_guest_placed_fn *placed;	/* ol_live_on_guest */
	void *placed_ctx;
	struct lo_stats gst;		/* the guests' chunks decoded */
	uint64_t hellos, gone;		/* guest connections begun, ended */
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

static int emit(void *ctx, const struct lo_rec *r);

static size_t queue_cap(uint32_t nbuf)
{
	size_t cap = OL_LIVE_QUEUE_BYTES / sizeof(struct lo_rec) / (nbuf ? nbuf : 1);

	if (cap < OL_LIVE_CAP_MIN)
		return OL_LIVE_CAP_MIN;
	return cap > OL_LIVE_CAP_MAX ? OL_LIVE_CAP_MAX : cap;
}

static int om_emit(void *ctx, const struct om_rec *r);

/* The ordering stage over the session's buffers, the walk over the
 * recording's metadata, the pipeline, the online merge: once they exist
 * (the first sub-buffer, or a guest's first news). */
static int start(struct live *l)
{
	struct om_opts mo = { .cap = OL_LIVE_MERGE_CAP };
	const Vmscope__Trace__SessionMetadata *s;
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
	s = vr_trace_session(an_walk_fed_trace(l->w));
	l->n_vms = s ? (uint32_t)s->n_vms : 0;
	l->g = calloc((size_t)(l->n_vms ? l->n_vms : 1) * OL_LIVE_GUEST_CPUS, sizeof(*l->g));
	l->gev = calloc(l->n_vms ? l->n_vms : 1, sizeof(*l->gev));
	l->sync = calloc(l->n_vms ? l->n_vms : 1, sizeof(*l->sync));
	l->agent_gone = calloc(l->n_vms ? l->n_vms : 1, sizeof(*l->agent_gone));
	l->piped = true;
	if (l->g && l->gev && l->sync && l->agent_gone)
		e = ol_pipe_open(&l->p, l->w, l->o, &l->h);
	else
		e = -ENOMEM;
	if (e) {
		fail(l, e, "out of memory");
		return e;
	}
	l->p.sync = l->sync;
	l->p.n_sync = l->n_vms;
	e = om_live_open(&l->om, an_walk_fed_trace(l->w), &mo, OL_LIVE_GUEST_CPUS,
			 OL_LIVE_LAG_NS, om_emit, l, err, sizeof(err));
	if (e)
		fail(l, e, err);
	return e;
}

/* A merged record into the walk. */
static int om_emit(void *ctx, const struct om_rec *r)
{
	struct live *l = ctx;
	struct vr_item it;

	om_rec_item(r, &it);
	an_walk_feed(l->w, &l->h, &it, &r->o);
	if (l->placed && r->kind == VR_EVENT && r->o.origin)
		l->placed(l->placed_ctx, r->o.origin - 1, r->o.cpu, r->o.orig_ts, r->ts);
	/* a guest record: its VM's clock bound is the one it was converted
	 * with; after the feed: an interval it closed ended before this
	 * record */
	if (r->kind == VR_EVENT && r->o.origin && r->o.origin <= l->n_vms &&
	    !l->agent_gone[r->o.origin - 1])
		l->sync[r->o.origin - 1] = (struct ol_sync){
			.bounded = r->bound_ns != UINT64_MAX, .bound_ns = r->bound_ns };
	return l->p.quit || l->p.error ? 1 : 0;
}

/* A decoded record (host or guest) as the online merge takes it, its
 * event interpreted through @ev, the table of the side it came from. */
static struct vr_item item_of(const struct lo_rec *r, const struct vr_events *ev)
{
	struct vr_item it = { .kind = (enum vr_item_kind)r->kind, .ts = r->ts,
			      .events = r->events, .loss_kind = r->loss_kind };

	if (r->kind == VR_EVENT) {
		int i = ev ? vr_events_index(ev, r->id) : -1;

		/* no usable descriptor: counted as a record, not interpreted */
		it.desc = i >= 0 ? &ev->desc[i] : NULL;
		it.payload = r->payload;
		it.size = r->size;
	} else if (r->kind == VR_GAP) {
		it.last = r->events - 1;
	}
	return it;
}

/* A host record released in order into the online merge. */
static int emit(void *ctx, const struct lo_rec *r)
{
	struct live *l = ctx;
	struct vr_item it = item_of(r, l->ev);
	int e;

	e = om_live_host(l->om, l->cpu[r->buf], &it);
	if (e < 0)
		fail(l, e, "merging the host's records with the guests' failed");
	return e;
}

/* The guest CPU whose records lo_decode gives (its VM, CPU, table). */
struct gsrc {
	struct live *l;
	uint32_t vm, cpu;
	const struct vr_events *ev;
};

/* A guest CPU's record, in its order, into the online merge. */
static int guest_rec(void *ctx, const struct lo_rec *r)
{
	struct gsrc *g = ctx;
	struct live *l = g->l;
	struct gcpu *c = &l->g[(size_t)g->vm * OL_LIVE_GUEST_CPUS + g->cpu];
	struct vr_item it = item_of(r, g->ev);
	int e;

	c->last_ts = r->ts;
	c->any = true;
	e = om_live_guest(l->om, g->vm, g->cpu, &it);
	if (e < 0)
		fail(l, e, "merging a guest's records failed");
	return e < 0 ? e : e == 1 ? 0 : e;
}

/* The table VM @vm's guest records are decoded with: its hello's, else
 * the one the metadata had when the walk read it. */
static const struct vr_events *guest_table(struct live *l, uint32_t vm)
{
	if (l->gev[vm])
		return l->gev[vm];
	return vr_trace_events(an_walk_fed_trace(l->w), VMSCOPE__TRACE__SIDE__SIDE_GUEST, vm);
}

/* A guest agent's hello: its event table for the merge's sync records
 * and the walk's guest roles (the metadata the walk read may predate it). */
static int guest_hello(struct live *l, const struct rec_chunk *c)
{
	Vmscope__Trace__GuestHello *h = vmscope__trace__guest_hello__unpack(NULL, c->len,
									     c->data);
	struct vr_events *ev = NULL;
	int e = h && h->events ? vr_events_from_pb(&ev, h->events) : -EINVAL;
	uint32_t ncpus = h && h->state ? h->state->nr_cpu_ids : 0;

	if (h)
		vmscope__trace__guest_hello__free_unpacked(h, NULL);
	l->hellos++;
	if (e)
		return 0;	/* its records stay undecoded: counted, not interpreted */
	e = an_walk_fed_guest_table(l->w, c->vm, ev);
	if (e) {
		vr_events_free(ev);
		return 0;
	}
	om_live_guest_table(l->om, c->vm, ev, ncpus);
	l->agent_gone[c->vm] = false;
	vr_events_free(l->gev[c->vm]);
	l->gev[c->vm] = ev;
	return 0;
}

/* A guest connection ended: a loss record in each of its CPUs that
 * delivered (where it is), so the windows show the guest side broke;
 * nothing more of it is waited for. */
static int guest_gone(struct live *l, uint32_t vm)
{
	int e = 0;

	l->gone++;
	l->agent_gone[vm] = true;	/* the views keep its last bound */
	for (uint32_t cpu = 0; cpu < OL_LIVE_GUEST_CPUS && !e; cpu++) {
		struct gcpu *c = &l->g[(size_t)vm * OL_LIVE_GUEST_CPUS + cpu];
		struct vr_item it = { .kind = VR_LOSS, .ts = c->last_ts,
				      .loss_kind = VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_STREAM };

		if (c->any)
			e = om_live_guest(l->om, vm, cpu, &it);
	}
	if (e >= 0)
		e = om_live_gone(l->om, vm);
	if (e < 0)
		fail(l, e, "merging a guest's records failed");
	return e;
}

/* A guest connection's chunk, loss, hello or end. */
static int guest_news(struct live *l, const struct rec_chunk *c)
{
	struct gsrc g = { .l = l, .vm = c->vm, .cpu = c->cpu };
	struct lo_chunk lc = { .seq = c->seq, .begin_ts = c->begin_ts, .end_ts = c->end_ts,
			       .lost_before = c->lost_before, .nr_records = c->nr_records,
			       .len = c->len, .data = c->data };
	struct lo_rec r = { .kind = VR_LOSS, .loss_kind = (uint8_t)c->loss_kind,
			    .events = c->loss_events };

	if (c->vm >= l->n_vms)
		return 0;	/* not the session's: cannot happen */
	switch (c->kind) {
	case REC_TAP_HELLO:
		return guest_hello(l, c);
	case REC_TAP_GONE:
		return guest_gone(l, c->vm);
	}
	if (c->cpu >= OL_LIVE_GUEST_CPUS) {
		l->gst.bad++;	/* left out: counted by the merge */
		return 0;
	}
	g.ev = guest_table(l, c->vm);
	if (c->kind == REC_TAP_CHUNK)
		return lo_decode(&l->g[(size_t)c->vm * OL_LIVE_GUEST_CPUS + c->cpu].b, c->cpu,
				 &lc, &l->gst, guest_rec, &g);
	/* a loss: where the stream is, as the recorder writes it */
	r.ts = c->begin_ts ? c->begin_ts : l->g[(size_t)c->vm * OL_LIVE_GUEST_CPUS + c->cpu].last_ts;
	return guest_rec(&g, &r);
}

/*
 * Host buffer @buf was found empty: the ordering stage may move on, and
 * host time with it through the online merge to the walk, so that a VM
 * gone quiet (paused, idle) still has its last interval closed and its
 * figures sent, not held until its next record.
 */
static int drained(struct live *l, uint32_t buf, uint64_t taken_ns)
{
	uint64_t t;
	int e = lo_drained(&l->lo, buf, taken_ns);

	if (e < 0) {
		fail(l, e, "ordering the host buffers' records failed");
		return e;
	}
	t = lo_frontier(&l->lo);
	if (e || !l->om || t == UINT64_MAX)
		return e;
	e = om_live_host_until(l->om, t);
	if (e < 0) {
		fail(l, e, "merging the host's records with the guests' failed");
		return e;
	}
	t = om_live_frontier(l->om);
	if (!e && t != UINT64_MAX)
		an_walk_feed_time(l->w, &l->h, t);
	return e;
}

/* The recorder's writer thread: one host sub-buffer, or a buffer found empty. */
static int tap(void *ctx, const struct rec_chunk *c)
{
	struct live *l = ctx;
	struct lo_chunk lc = { .seq = c->seq, .begin_ts = c->begin_ts, .end_ts = c->end_ts,
			       .lost_before = c->lost_before, .taken_ns = c->taken_ns,
			       .nr_records = c->nr_records, .len = c->len, .data = c->data };
	int e;

	if (l->error)
		return 1;
	if (c->kind == REC_TAP_DRAINED) {
		/* news of records, not records: nothing to start */
		if (!l->w || c->buf >= l->nbuf)
			return 0;
		e = drained(l, c->buf, c->taken_ns);
		return e < 0 ? 1 : e;
	}
	if (!l->w && start(l))
		return 1;
	if (c->guest) {
		e = guest_news(l, c);
		return e < 0 ? 1 : e;
	}
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

bool ol_live_bound(const struct live *l, uint32_t vm, uint64_t *ns)
{
	if (!l->sync || vm >= l->n_vms || l->agent_gone[vm] || !l->sync[vm].bounded)
		return false;
	*ns = l->sync[vm].bound_ns;
	return true;
}

int ol_live_close(struct live *l, int rc, char *err, size_t errlen)
{
	int e;

	/* every sub-buffer was tapped: the rest, in order */
	if (l->w && !l->error && !l->p.quit && !l->p.error && lo_finish(&l->lo) < 0)
		fail(l, -EIO, "ordering the host buffers' records failed");
	if (l->om && !l->error && !l->p.quit && !l->p.error && om_live_end(l->om) < 0)
		fail(l, -EIO, "merging the host's records with the guests' failed");
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
	if (!e && l->om && om_stats(l->om)->late)
		snprintf(err, errlen, "%llu host and guest records came too late to be ordered "
			 "(%llu of the host's counted as losses in their intervals)",
			 (unsigned long long)(l->lo.st.late + om_stats(l->om)->late),
			 (unsigned long long)l->lo.st.late);
	om_close(l->om);
	if (l->piped)
		ol_pipe_close(&l->p);
	an_walk_close(l->w);
	for (uint32_t v = 0; l->gev && v < l->n_vms; v++)
		vr_events_free(l->gev[v]);
	free(l->gev);
	free(l->sync);
	free(l->agent_gone);
	free(l->g);
	lo_free(&l->lo);
	free(l->cpu);
	free(l);
	return e;
}

int ol_live(struct hb *h, const struct rec_opts *ro, const struct ol_opts *o,
	    volatile sig_atomic_t *stop, char *err, size_t errlen)
{
	struct rec_opts r = *ro;
	char dir[256] = "", path[300];
	struct live *l;
	int e;

	/* -o TRACE: record's own trace, written whole as record writes it;
	 * else only its metadata, in a private folder removed at the end */
	if (ro->path)
		snprintf(path, sizeof(path), "%s", ro->path);
	else if (make_dir(dir, sizeof(dir), err, errlen))
		return -EIO;
	else
		snprintf(path, sizeof(path), "%s/session", dir);
	l = ol_live_open(h, path, o);
	if (!l) {
		snprintf(err, errlen, "out of memory");
		if (dir[0])
			rmdir(dir);
		return -ENOMEM;
	}
	r.path = path;
	r.tap = tap;
	r.tap_ctx = l;
	r.tap_started = started;
	r.no_streams = !ro->path;
	r.status = 0;
	e = ol_live_close(l, rec_run(h, &r, stop), err, errlen);
	if (dir[0]) {
		remove_dir(path);
		rmdir(dir);
	}
	return e;
}

void ol_live_on_guest(struct live *l, ol_guest_placed_fn *fn, void *ctx)
{
	l->placed = fn;
	l->placed_ctx = ctx;
}
