// SPDX-License-Identifier: GPL-2.0
/* `vmscope record --metrics-fd`: see live_metrics.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "live.h"
#include "live_metrics.h"
#include "live_snap.h"
#include "metrics.h"

struct ol_mfeed {
	struct ol_opts o;
	struct live *l;
	int fd;				/* -1 once the metrics ended */
	bool failed;			/* the pipeline failed: ended early */
	uint64_t seq, sent, dropped, no_bucket;
	struct ol_trig_cfg tc;
	uint64_t triggers, triggers_dropped;
	struct ol_msnap snap;
	struct ol_lsnap *ls;		/* snapshot windows, or NULL */
	uint64_t bad_requests;
	uint8_t frame[OL_MX_FRAME_MAX];
	uint8_t in[OL_MX_FRAME_MAX + 1];
};

/* The metrics end here (the recording goes on): said once. */
static void end_feed(struct ol_mfeed *f, const char *why)
{
	if (f->fd < 0)
		return;
	fprintf(stderr, "vmscope record: metrics: %s; no more snapshots (the recording "
		"goes on)\n", why);
	close(f->fd);
	f->fd = -1;
	f->failed = true;
}

/* @n bytes of f->frame on the socket: 1 sent, 0 dropped (the daemon is
 * behind), -1 the metrics ended (said). */
static int send_frame(struct ol_mfeed *f, size_t n, const char *what)
{
	char why[160];

	if (send(f->fd, f->frame, n, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)n)
		return 1;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)
		return 0;
	snprintf(why, sizeof(why), "sending a %s: %s", what, strerror(errno));
	end_feed(f, why);
	return -1;
}

/* What of the interval crossed a threshold, after its snapshot: a trigger
 * dropped because the socket is full is counted (the daemon's rate limit
 * would most likely have refused it: it is reading a burst). */
static void send_triggers(struct ol_mfeed *f, const struct ol_report *r)
{
	struct ol_trig t[2];
	unsigned int nt = ol_trig_scan(r, 0, &f->tc, t);

	for (unsigned int i = 0; i < nt && f->fd >= 0; i++) {
		int s = send_frame(f, ol_trig_encode(&t[i], f->frame), "trigger");

		if (s > 0)
			f->triggers++;
		else if (s == 0)
			f->triggers_dropped++;
	}
}

/* The pipeline's view, at each second of host time and at the end. */
static int view(void *ctx, const struct ol_report *r)
{
	struct ol_mfeed *f = ctx;
	uint64_t nb;
	size_t n;
	int s;

	if (f->fd < 0)
		return 0;
	/* the recording has one VM (--metrics-fd takes one --pid) */
	nb = ol_msnap_of(&f->snap, r, 0);
	if (nb > f->no_bucket)
		fprintf(stderr, "vmscope record: metrics: %llu exits without a latency "
			"bucket (out of memory): in +Inf only\n",
			(unsigned long long)(nb - f->no_bucket));
	f->no_bucket = nb;
	f->snap.seq = f->seq++;
	f->snap.events_lost = ol_live_lost(f->l);
	/* absent (not 0) until a guest record of the VM was merged */
	f->snap.bound_ns = 0;
	f->snap.has_bound = ol_live_bound(f->l, 0, &f->snap.bound_ns);
	n = ol_msnap_encode(&f->snap, f->frame);
	s = send_frame(f, n, "snapshot");
	if (s > 0)
		f->sent++;
	else if (s == 0)
		f->dropped++;	/* the next snapshot is cumulative */
	if (f->fd >= 0)
		send_triggers(f, r);
	return 0;
}

/* A guest record placed by the live merge: the snapshot windows' clock. */
static void guest_placed(void *ctx, uint32_t vm, uint32_t cpu, uint64_t g, uint64_t h)
{
	ol_lsnap_guest(ctx, vm, cpu, g, h);
}

struct ol_mfeed *ol_mfeed_open(struct hb *h, const char *path, int fd, uint64_t interval_ns,
			       const struct ol_trig_cfg *tc, const struct ol_snap_cfg *sc)
{
	struct ol_mfeed *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->fd = fd;
	if (tc)
		f->tc = *tc;
	f->o = (struct ol_opts){ .interval_ns = interval_ns, .sort = AN_SORT_COUNT,
				 .view = view, .view_ctx = f };
	if (sc && sc->dir) {
		f->ls = ol_lsnap_open(sc, path, interval_ns);
		if (!f->ls) {
			free(f);
			return NULL;
		}
	}
	f->l = ol_live_open(h, path, &f->o);
	if (!f->l) {
		if (f->ls)
			ol_lsnap_close(f->ls);
		free(f);
		return NULL;
	}
	if (f->ls)
		ol_live_on_guest(f->l, guest_placed, f->ls);
	return f;
}

/* The triggers vmscoped admitted, sent back to us: each a window. A
 * message that is not one is said and ignored (the daemon's, trusted;
 * still parsed as any trigger frame). */
static void read_requests(struct ol_mfeed *f)
{
	struct ol_trig t;
	char why[160];
	ssize_t n;

	while ((n = recv(f->fd, f->in, sizeof(f->in), MSG_DONTWAIT | MSG_TRUNC)) > 0) {
		if ((size_t)n > sizeof(f->in) ||
		    ol_trig_parse(f->in, (size_t)n, &t, why, sizeof(why))) {
			if (!f->bad_requests++)
				fprintf(stderr, "vmscope record: snapshots: a request from the "
					"daemon that is not a trigger frame (%s); ignored\n",
					(size_t)n > sizeof(f->in) ? "too long" : why);
			continue;
		}
		ol_lsnap_request(f->ls, &t);
	}
}

int ol_mfeed_tap(void *ctx, const struct rec_chunk *c)
{
	struct ol_mfeed *f = ctx;

	/* the window is the recording's own, whatever the metrics do */
	if (f->ls) {
		if (f->fd >= 0)
			read_requests(f);
		ol_lsnap_add(f->ls, c);
	}
	if (f->fd < 0)
		return 0;
	if (ol_live_tap(f->l, c))
		end_feed(f, "the live pipeline failed");
	return 0;
}

int ol_mfeed_close(struct ol_mfeed *f, int rc)
{
	char err[700] = "";
	int e = ol_live_close(f->l, rc, err, sizeof(err));
	int ret = f->failed ? 1 : 0;

	/* notes too (records too late to order); a recording that saw no
	 * record of its VM (e = 1) is not a metrics failure */
	if (err[0] && !f->failed)
		fprintf(stderr, "vmscope record: metrics: %s\n", err);
	if (e < 0)
		ret = 1;
	if (f->ls) {
		if (f->fd >= 0)
			read_requests(f);
		ret |= ol_lsnap_close(f->ls);
	}
	if (f->fd >= 0)
		close(f->fd);
	fprintf(stderr, "vmscope record: metrics: %llu snapshots sent, %llu dropped (the "
		"reader was behind)%s\n", (unsigned long long)f->sent,
		(unsigned long long)f->dropped, f->failed ? ", ended early" : "");
	if (f->tc.exit_ns || f->tc.stall_ns)
		fprintf(stderr, "vmscope record: triggers: %llu sent, %llu dropped (the reader "
			"was behind)\n", (unsigned long long)f->triggers,
			(unsigned long long)f->triggers_dropped);
	free(f);
	return ret;
}
