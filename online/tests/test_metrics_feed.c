// SPDX-License-Identifier: GPL-2.0
/*
 * `vmscope record --metrics-fd`'s path without the module
 * (cli/tests/metrics-feed-test.sh): the host sub-buffers of a raw trace
 * (with `guests`, its guest CPU streams' chunks and losses too, as the
 * agents' connections deliver them) handed in turn per stream (as
 * test_live_feed does) to the metrics feed's tap (online/live_metrics.h)
 * with one end of a SOCK_SEQPACKET socketpair, every frame read from the
 * other end after each sub-buffer and parsed as vmscoped parses it. Every
 * frame must parse, their seq follow 0, 1, ... without a gap, and no
 * counter may fall from one frame to the next (nor a guest figure, once
 * present, go absent); the last frame goes to OUT as JSON. With exit=NS
 * or stall=NS, the feed's trigger thresholds (trigger.h): every trigger
 * frame must parse too, and they go to OUT's "triggers". With snap=DIR
 * (and before=NS, after=NS), the feed keeps snapshot windows in DIR and
 * this plays vmscoped admitting one trigger only, the first or with
 * pick=K the K-th from 0 (its frame sent back); from what it fed, in the order it fed it, this computes apart
 * from the store which items that window must hold (a host chunk by its
 * end, a guest item by the largest host chunk end fed before it) and
 * writes, per stream file, the chunks, records, ring losses and skipped
 * sub-buffers after the first chunk (and guest loss records' events), and
 * that first chunk's seq, to OUT's "window".
 *
 *   test_metrics_feed RAW_TRACE OUT INTERVAL_NS [guests] [exit=NS] [stall=NS]
 *                     [snap=DIR [before=NS] [after=NS] [pick=K]]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "feed_src.h"
#include "merge.h"
#include "transform.h"
#include "tracefmt.h"
#include "live_metrics.h"
#include "metrics_frame.h"
#include "trigger_frame.h"
#include "util_endian.h"

#define MAX_TRIGGERS 256

/* What was fed, as this test keeps it (not the store's). */
struct fed {
	char name[32];		/* the stream's file */
	uint64_t seq, lost_before, records, loss_events, stamp;
	bool loss, guest;
	uint32_t vm;
	uint64_t g_begin, g_end;	/* a guest chunk's span, its clock */
	bool in;			/* the window's (write_window) */
};

#define MAX_FED 200000

struct seen {
	struct ol_msnap last;
	uint64_t frames;
	int bad;
	struct ol_trig trig[MAX_TRIGGERS];
	size_t n_trig;
};

/* No counter of @b below @a's (same reason names: a reason never moves). */
static int monotonic(const struct ol_msnap *a, const struct ol_msnap *b)
{
	if (b->guest_ns < a->guest_ns || b->kernel_ns < a->kernel_ns ||
	    b->user_ns < a->user_ns || b->halted_ns < a->halted_ns ||
	    b->preempted_ns < a->preempted_ns || b->events_lost < a->events_lost ||
	    b->n_reasons < a->n_reasons || (a->has_steal && (!b->has_steal ||
	    b->steal_ns < a->steal_ns)) || (a->has_stall && !b->has_stall) ||
	    (a->has_bound && !b->has_bound))
		return 0;
	for (int st = 0; st < OL_MX_STALL_STATES; st++)
		for (int c = 0; c < OL_MX_STALL_CAUSES; c++)
			if (b->stall_ns[st][c] < a->stall_ns[st][c])
				return 0;
	for (uint32_t i = 0; i < a->n_reasons; i++) {
		if (strcmp(a->r[i].name, b->r[i].name) || b->r[i].count < a->r[i].count ||
		    b->r[i].sum_ns < a->r[i].sum_ns)
			return 0;
		for (int k = 0; k < OL_MX_BUCKETS; k++)
			if (b->r[i].bucket[k] < a->r[i].bucket[k])
				return 0;
	}
	return 1;
}

/* Every frame waiting on @fd. */
static void drain(int fd, struct seen *s)
{
	static uint8_t buf[OL_MX_FRAME_MAX + 1];
	struct ol_msnap snap;
	char why[160];
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		if (n >= 4 && le_get32(buf) == OL_TG_MAGIC) {
			struct ol_trig t;

			if (ol_trig_parse(buf, (size_t)n, &t, why, sizeof(why))) {
				fprintf(stderr, "test_metrics_feed: a trigger: %s\n", why);
				s->bad++;
			} else if (s->n_trig < MAX_TRIGGERS) {
				s->trig[s->n_trig++] = t;
			} else {
				fprintf(stderr, "test_metrics_feed: over %d triggers\n", MAX_TRIGGERS);
				s->bad++;
			}
			continue;
		}
		if (ol_msnap_parse(buf, (size_t)n, &snap, why, sizeof(why))) {
			fprintf(stderr, "test_metrics_feed: frame %" PRIu64 ": %s\n", s->frames, why);
			s->bad++;
			continue;
		}
		if (snap.seq != s->frames || (s->frames && !monotonic(&s->last, &snap))) {
			fprintf(stderr, "test_metrics_feed: frame %" PRIu64 " (seq %" PRIu64 "): "
				"out of order or a counter fell\n", s->frames, snap.seq);
			s->bad++;
		}
		s->last = snap;
		s->frames++;
	}
}

static void write_json(FILE *f, const struct seen *s)
{
	const struct ol_msnap *m = &s->last;

	fprintf(f, "{\"frames\": %" PRIu64 ", \"guest_ns\": %" PRIu64 ", \"kernel_ns\": %" PRIu64
		", \"user_ns\": %" PRIu64 ", \"halted_ns\": %" PRIu64 ", \"preempted_ns\": %"
		PRIu64 ", \"events_lost\": %" PRIu64 ", \"has_bound\": %s, ",
		s->frames, m->guest_ns, m->kernel_ns, m->user_ns, m->halted_ns, m->preempted_ns,
		m->events_lost, m->has_bound ? "true" : "false");
	fprintf(f, "\"bound_ns\": %" PRIu64 ", \"has_steal\": %s, \"steal_ns\": %" PRIu64
		", \"has_stall\": %s, \"stall_ns\": [[%" PRIu64 ", %" PRIu64 "], [%" PRIu64
		", %" PRIu64 "]], ", m->bound_ns, m->has_steal ? "true" : "false", m->steal_ns,
		m->has_stall ? "true" : "false", m->stall_ns[0][0], m->stall_ns[0][1],
		m->stall_ns[1][0], m->stall_ns[1][1]);
	fputs("\"reasons\": {", f);
	for (uint32_t i = 0; i < m->n_reasons; i++) {
		/* the names test_online writes need no JSON escape */
		fprintf(f, "%s\"%s\": {\"count\": %" PRIu64 ", \"sum_ns\": %" PRIu64
			", \"buckets\": [", i ? ", " : "", m->r[i].name, m->r[i].count,
			m->r[i].sum_ns);
		for (int k = 0; k < OL_MX_BUCKETS; k++)
			fprintf(f, "%s%" PRIu64, k ? ", " : "", m->r[i].bucket[k]);
		fputs("]}", f);
	}
	fputs("}, \"triggers\": [", f);
	for (size_t i = 0; i < s->n_trig; i++) {
		const struct ol_trig *t = &s->trig[i];

		/* the texts are printable ASCII (the parser checked) and the
		 * test's names carry no quote or backslash */
		fprintf(f, "%s{\"kind\": \"%s\", \"vcpu\": %u, \"start_ns\": %" PRIu64
			", \"dur_ns\": %" PRIu64 ", \"threshold_ns\": %" PRIu64 ", \"what\": \"%s\""
			", \"task\": \"%s\", \"host_task\": \"%s\"}", i ? ", " : "",
			t->kind == OL_TG_EXIT ? "exit" : "stall", t->vcpu, t->start_ns, t->dur_ns,
			t->threshold_ns, t->what, t->task, t->host_task);
	}
	fputs("]", f);
}

struct feed_ctx {
	struct ol_mfeed *mf;
	int peer;			/* the daemon's end */
	struct seen seen;
	bool snap, echoed;		/* snap=; the picked trigger sent back */
	size_t pick;
	uint64_t host_max;		/* the largest host chunk end fed */
	struct fed *fed;
	size_t nfed;
	const char *snap_dir;
	size_t written_at;		/* items fed when the window appeared; 0: not yet */
};

/* Has the window been written (a folder without a leading dot)? */
static bool window_written(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool found = false;

	while (d && !found && (de = readdir(d)))
		found = de->d_name[0] != '.';
	if (d)
		closedir(d);
	return found;
}

static void keep_fed(struct feed_ctx *x, const struct rec_chunk *c)
{
	struct fed *f;

	if (c->kind != REC_TAP_CHUNK && c->kind != REC_TAP_LOSS)
		return;
	if (x->nfed == MAX_FED) {
		fprintf(stderr, "test_metrics_feed: over %d items fed\n", MAX_FED);
		x->seen.bad++;
		return;
	}
	f = &x->fed[x->nfed++];
	if (c->guest)
		tf_trace_guest_name(f->name, sizeof(f->name), c->vm, c->cpu);
	else
		tf_trace_host_name(f->name, sizeof(f->name), c->chan, c->cpu);
	if (!c->guest && c->end_ts > x->host_max)
		x->host_max = c->end_ts;
	f->stamp = c->guest ? x->host_max : c->end_ts;
	f->loss = c->kind == REC_TAP_LOSS;
	f->guest = c->guest;
	f->vm = c->vm;
	f->g_begin = c->begin_ts;
	f->g_end = c->end_ts;
	f->seq = c->seq;
	f->lost_before = c->lost_before;
	f->records = f->loss ? 0 : c->nr_records;
	f->loss_events = f->loss ? c->loss_events : 0;
}

/* The recorder's tap, then every frame it sent, read as the daemon would. */
static int tap(void *ctx, const struct rec_chunk *c)
{
	struct feed_ctx *x = ctx;
	int e;

	if (x->snap)
		keep_fed(x, c);
	e = ol_mfeed_tap(x->mf, c);
	if (x->snap && x->echoed && !x->written_at && window_written(x->snap_dir))
		x->written_at = x->nfed;
	drain(x->peer, &x->seen);
	if (x->snap && !x->echoed && x->seen.n_trig > x->pick) {
		uint8_t b[OL_TG_FRAME_MAX];
		size_t n = ol_trig_encode(&x->seen.trig[x->pick], b);

		x->echoed = true;
		if (send(x->peer, b, n, 0) != (ssize_t)n) {
			fprintf(stderr, "test_metrics_feed: sending the trigger back: %s\n",
				strerror(errno));
			x->seen.bad++;
		}
	}
	return e;
}

/*
 * Which items fed before the window was written are its: a host chunk by
 * its end; a guest chunk by its records' host times as `vmscope merge`
 * converts them (the whole trace's segments, not the live merge's), when
 * its span meets [b, e], with the guest losses next to such chunks; a
 * guest item of a VM without a segment, or a loss away from them, by the
 * largest host chunk end fed before it. Guest chunks that meet the span
 * but came after the window was written: *late.
 */
static int mark_window(struct feed_ctx *x, const char *raw, uint64_t b, uint64_t e, size_t upto,
		       uint64_t *late)
{
	struct vr_trace *t;
	struct mg_result r;
	struct mg_opts o = { 0 };
	char err[256];

	if (vr_trace_open(&t, raw, err, sizeof(err)) || mg_sync(t, &o, &r, err, sizeof(err))) {
		fprintf(stderr, "test_metrics_feed: merging %s: %s\n", raw, err);
		return -1;
	}
	*late = 0;
	for (size_t k = 0; k < x->nfed; k++) {
		struct fed *f = &x->fed[k];
		const struct vmscope_sync_segment *sg;
		uint64_t hb, he;

		f->in = false;
		if (!f->guest || f->loss || f->vm >= r.n_vms ||
		    !(sg = mt_segment_for(&r.mt.vm[f->vm], f->g_begin)) ||
		    !mt_convert(&r.mt.vm[f->vm], &sg, f->g_begin, &hb) ||
		    !mt_convert(&r.mt.vm[f->vm], &sg, f->g_end, &he)) {
			f->in = k < upto && f->stamp >= b && f->stamp <= e;
			continue;
		}
		if (hb > e || he < b)
			continue;
		if (k < upto)
			f->in = true;
		else
			(*late)++;
	}
	/* a guest loss next to a chunk of the window is the window's */
	for (size_t k = 0; k < upto; k++) {
		struct fed *f = &x->fed[k];

		if (!f->guest || f->in || !f->loss)
			continue;
		for (size_t j = k; j-- > 0;) {
			if (strcmp(x->fed[j].name, f->name))
				continue;
			if (!x->fed[j].loss) {
				f->in = x->fed[j].in;
				break;
			}
		}
		for (size_t j = k + 1; !f->in && j < upto; j++) {
			if (strcmp(x->fed[j].name, f->name))
				continue;
			if (!x->fed[j].loss) {
				f->in = x->fed[j].in;
				break;
			}
		}
	}
	mg_result_free(&r);
	vr_trace_close(t);
	return 0;
}

/* The window of the picked trigger: each stream's items in it, as fed. */
static int write_window(FILE *out, struct feed_ctx *x, const char *raw, uint64_t before,
			uint64_t after)
{
	const struct ol_trig *t = &x->seen.trig[x->pick];
	uint64_t b = t->start_ns > before ? t->start_ns - before : 0;
	uint64_t e = t->start_ns + t->dur_ns + after;
	size_t upto = x->written_at ? x->written_at : x->nfed;
	uint64_t late;
	bool first = true;

	if (mark_window(x, raw, b, e, upto, &late))
		return -1;
	fprintf(out, ", \"window\": {\"trigger\": %zu, \"begin_ns\": %" PRIu64
		", \"end_ns\": %" PRIu64 ", \"written_at\": %zu, \"fed\": %zu, "
		"\"guest_chunks_late\": %" PRIu64 ", \"streams\": {", x->pick, b, e, upto,
		x->nfed, late);
	for (size_t i = 0; i < upto; i++) {
		uint64_t chunks = 0, records = 0, lost = 0, lbase = 0, gaps = 0, next = 0, seq0 = 0;
		bool seen_chunk = false, any = false;
		bool done = false;

		/* each stream once: at its first item */
		for (size_t k = 0; k < i && !done; k++)
			done = !strcmp(x->fed[k].name, x->fed[i].name);
		if (done)
			continue;
		for (size_t k = i; k < upto; k++) {
			const struct fed *f = &x->fed[k];

			if (strcmp(f->name, x->fed[i].name) || !f->in)
				continue;
			any = true;
			if (f->loss) {
				lost += f->loss_events;
				continue;
			}
			if (seen_chunk) {
				lost += f->lost_before - lbase;
				gaps += f->seq - next;
			}
			if (!seen_chunk)
				seq0 = f->seq;
			lbase = f->lost_before;
			next = f->seq + 1;
			seen_chunk = true;
			chunks++;
			records += f->records;
		}
		if (!any)
			continue;
		fprintf(out, "%s\"%s\": {\"chunks\": %" PRIu64 ", \"records\": %" PRIu64
			", \"lost\": %" PRIu64 ", \"gaps\": %" PRIu64 ", \"first_seq\": %" PRIu64 "}",
			first ? "" : ", ", x->fed[i].name, chunks, records, lost, gaps, seq0);
		first = false;
	}
	fputs("}}", out);
	return 0;
}

int main(int argc, char **argv)
{
	static struct feed_ctx x;
	static struct feed f;
	struct hb h = { 0 };
	int sv[2], e;
	char byte;
	FILE *out;

	struct ol_trig_cfg tc = { 0 };
	struct ol_snap_cfg sc = { .before_ns = OL_SNAP_DEFAULT_BEFORE_NS,
				  .after_ns = OL_SNAP_DEFAULT_AFTER_NS,
				  .cap_bytes = OL_SNAP_DEFAULT_CAP };
	bool guests = false, guests_last = false;

	for (int i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "guests"))
			guests = true;
		else if (!strcmp(argv[i], "guests-last"))
			guests = guests_last = true;
		else if (!strncmp(argv[i], "exit=", 5))
			tc.exit_ns = strtoull(argv[i] + 5, NULL, 10);
		else if (!strncmp(argv[i], "stall=", 6))
			tc.stall_ns = strtoull(argv[i] + 6, NULL, 10);
		else if (!strncmp(argv[i], "snap=", 5))
			sc.dir = argv[i] + 5;
		else if (!strncmp(argv[i], "before=", 7))
			sc.before_ns = strtoull(argv[i] + 7, NULL, 10);
		else if (!strncmp(argv[i], "after=", 6))
			sc.after_ns = strtoull(argv[i] + 6, NULL, 10);
		else if (!strncmp(argv[i], "pick=", 5))
			x.pick = strtoull(argv[i] + 5, NULL, 10);
		else
			argc = 0;
	}
	if (argc < 4) {
		fprintf(stderr, "usage: test_metrics_feed RAW_TRACE OUT INTERVAL_NS [guests|guests-last] "
			"[exit=NS] [stall=NS] [snap=DIR [before=NS] [after=NS] [pick=K]]\n");
		return 2;
	}
	out = fopen(argv[2], "w");
	if (!out || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		fprintf(stderr, "test_metrics_feed: %s\n", strerror(errno));
		return 1;
	}
	if (feed_open(&f, argv[1], guests, &h))
		return 1;
	f.guests_last = guests_last;
	x.peer = sv[1];
	x.snap = sc.dir != NULL;
	x.snap_dir = sc.dir;
	if (x.snap && !(x.fed = calloc(MAX_FED, sizeof(*x.fed))))
		return 1;
	x.mf = ol_mfeed_open(&h, argv[1], sv[0], strtoull(argv[3], NULL, 10), &tc, &sc);
	if (!x.mf)
		return 1;
	e = feed_run(&f, false, tap, &x) ? 1 : 0;
	e |= ol_mfeed_close(x.mf, e);
	drain(sv[1], &x.seen);
	if (recv(sv[1], &byte, 1, MSG_DONTWAIT) != 0) {
		fprintf(stderr, "test_metrics_feed: the feed was not closed at the end\n");
		e = 1;
	}
	write_json(out, &x.seen);
	if (x.snap && x.echoed && write_window(out, &x, argv[1], sc.before_ns, sc.after_ns))
		e = 1;
	fputs("}\n", out);
	free(x.fed);
	feed_close(&f);
	close(sv[1]);
	if (fclose(out) || x.seen.bad || !x.seen.frames)
		e = 1;
	return e ? 1 : 0;
}
