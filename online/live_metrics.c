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
#include "metrics.h"

struct ol_mfeed {
	struct ol_opts o;
	struct live *l;
	int fd;				/* -1 once the metrics ended */
	bool failed;			/* the pipeline failed: ended early */
	uint64_t seq, sent, dropped, no_bucket;
	struct ol_msnap snap;
	uint8_t frame[OL_MX_FRAME_MAX];
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

/* The pipeline's view, at each second of host time and at the end. */
static int view(void *ctx, const struct ol_report *r)
{
	struct ol_mfeed *f = ctx;
	uint64_t nb;
	size_t n;

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
	if (send(f->fd, f->frame, n, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)n) {
		f->sent++;
	} else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
		f->dropped++;	/* the next snapshot is cumulative */
	} else {
		char why[160];

		snprintf(why, sizeof(why), "sending a snapshot: %s", strerror(errno));
		end_feed(f, why);
	}
	return 0;
}

struct ol_mfeed *ol_mfeed_open(struct hb *h, const char *path, int fd, uint64_t interval_ns)
{
	struct ol_mfeed *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->fd = fd;
	f->o = (struct ol_opts){ .interval_ns = interval_ns, .sort = AN_SORT_COUNT,
				 .view = view, .view_ctx = f };
	f->l = ol_live_open(h, path, &f->o);
	if (!f->l) {
		free(f);
		return NULL;
	}
	return f;
}

int ol_mfeed_tap(void *ctx, const struct rec_chunk *c)
{
	struct ol_mfeed *f = ctx;

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
	if (f->fd >= 0)
		close(f->fd);
	fprintf(stderr, "vmscope record: metrics: %llu snapshots sent, %llu dropped (the "
		"reader was behind)%s\n", (unsigned long long)f->sent,
		(unsigned long long)f->dropped, f->failed ? ", ended early" : "");
	free(f);
	return ret;
}
