// SPDX-License-Identifier: GPL-2.0
/*
 * `vmscope record --metrics-fd`'s path without the module
 * (cli/tests/metrics-feed-test.sh): the host sub-buffers of a raw trace
 * handed in turn per host stream (as test_live_feed does) to the metrics
 * feed's tap (online/live_metrics.h) with one end of a SOCK_SEQPACKET
 * socketpair, every frame read from the other end after each sub-buffer
 * and parsed as vmscoped parses it. Every frame must parse, their seq
 * follow 0, 1, ... without a gap, and no counter may fall from one frame
 * to the next; the last frame goes to OUT as JSON.
 *
 *   test_metrics_feed RAW_TRACE OUT INTERVAL_NS
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "feed_src.h"
#include "live_metrics.h"
#include "metrics_frame.h"

#define MAX_STREAMS 64

struct seen {
	struct ol_msnap last;
	uint64_t frames;
	int bad;
};

/* No counter of @b below @a's (same reason names: a reason never moves). */
static int monotonic(const struct ol_msnap *a, const struct ol_msnap *b)
{
	if (b->guest_ns < a->guest_ns || b->kernel_ns < a->kernel_ns ||
	    b->user_ns < a->user_ns || b->halted_ns < a->halted_ns ||
	    b->preempted_ns < a->preempted_ns || b->events_lost < a->events_lost ||
	    b->n_reasons < a->n_reasons)
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
		PRIu64 ", \"events_lost\": %" PRIu64 ", \"has_bound\": %s, \"reasons\": {",
		s->frames, m->guest_ns, m->kernel_ns, m->user_ns, m->halted_ns, m->preempted_ns,
		m->events_lost, m->has_bound ? "true" : "false");
	for (uint32_t i = 0; i < m->n_reasons; i++) {
		/* the names test_online writes need no JSON escape */
		fprintf(f, "%s\"%s\": {\"count\": %" PRIu64 ", \"sum_ns\": %" PRIu64
			", \"buckets\": [", i ? ", " : "", m->r[i].name, m->r[i].count,
			m->r[i].sum_ns);
		for (int k = 0; k < OL_MX_BUCKETS; k++)
			fprintf(f, "%s%" PRIu64, k ? ", " : "", m->r[i].bucket[k]);
		fputs("]}", f);
	}
	fputs("}}\n", f);
}

int main(int argc, char **argv)
{
	static const unsigned char mapped;
	const unsigned char *map[MAX_STREAMS];
	struct src src[MAX_STREAMS] = { 0 };
	static struct seen seen;
	struct hb h = { 0 };
	struct ol_mfeed *mf;
	struct dirent *de;
	unsigned int n = 0, left;
	int sv[2], e = 0;
	FILE *out;
	DIR *d;

	if (argc != 4) {
		fprintf(stderr, "usage: test_metrics_feed RAW_TRACE OUT INTERVAL_NS\n");
		return 2;
	}
	d = opendir(argv[1]);
	out = fopen(argv[2], "w");
	if (!d || !out || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		fprintf(stderr, "test_metrics_feed: %s\n", strerror(errno));
		return 1;
	}
	while ((de = readdir(d)) && n < MAX_STREAMS) {
		if (strncmp(de->d_name, "host-", 5))
			continue;
		if (tf_reader_open(&src[n].r, dirfd(d), de->d_name)) {
			fprintf(stderr, "test_metrics_feed: %s: cannot open\n", de->d_name);
			return 1;
		}
		map[n++] = &mapped;
	}
	h.nbuf = n;
	h.map = map;
	mf = ol_mfeed_open(&h, argv[1], sv[0], strtoull(argv[3], NULL, 10));
	if (!mf)
		return 1;
	do {
		left = 0;
		for (unsigned int i = 0; i < n && !e; i++) {
			Vmscope__Trace__StreamChunk *c = NULL;
			struct rec_chunk rc;
			int got = next_chunk(&src[i], i, &rc, &c);

			if (got < 0)
				e = 1;
			if (got == 1) {
				left++;
				e = ol_mfeed_tap(mf, &rc);
				drain(sv[1], &seen);
			}
			if (c)
				tf_msg_free(&c->base);
		}
	} while (left && !e);
	e |= ol_mfeed_close(mf, e);
	drain(sv[1], &seen);
	if (recv(sv[1], &left, 1, MSG_DONTWAIT) != 0) {
		fprintf(stderr, "test_metrics_feed: the feed was not closed at the end\n");
		e = 1;
	}
	write_json(out, &seen);
	for (unsigned int i = 0; i < n; i++)
		tf_reader_close(src[i].r);
	closedir(d);
	close(sv[1]);
	if (fclose(out) || seen.bad || !seen.frames)
		e = 1;
	return e ? 1 : 0;
}
