// SPDX-License-Identifier: GPL-2.0
/* Snapshot windows of a recording: see live_snap.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live.h"
#include "live_snap.h"
#include "record.h"
#include "snap_write.h"

struct ol_lsnap {
	struct ol_snap_cfg c;
	const char *rec_path;
	uint64_t settle_ns;
	struct sn_store st;
	bool pending, failed;
	struct ol_trig t;		/* the pending window's trigger */
	struct sn_window w;
	uint64_t written, refused, nomem;
};

struct ol_lsnap *ol_lsnap_open(const struct ol_snap_cfg *c, const char *rec_path,
			       uint64_t settle_ns)
{
	struct ol_lsnap *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->c = *c;
	s->rec_path = rec_path;
	s->settle_ns = settle_ns;
	sn_init(&s->st, &(struct sn_cfg){ .keep_ns = c->before_ns + OL_SNAP_LAG_NS,
					 .cap_bytes = c->cap_bytes });
	return s;
}

/* Guest stream @gs has sent something since the window began. */
static bool awaited(const struct sn_stream *gs, const struct sn_window *w)
{
	return gs->guest && gs->tail && gs->tail->stamp >= w->begin_ts;
}

/* Awaited guest streams without a record placed past the window. */
static uint32_t guests_pending(const struct ol_lsnap *s)
{
	uint32_t n = 0;

	for (size_t i = 0; i < s->st.ns; i++)
		n += awaited(&s->st.s[i], &s->w) && s->st.s[i].h_placed <= s->w.end_ts;
	return n;
}

static void write_window(struct ol_lsnap *s)
{
	char path[4096], err[512];
	int e;

	s->w.ended_early = s->st.now < s->w.end_ts;
	s->w.guest_incomplete = guests_pending(s);
	e = sn_write(&s->st, s->rec_path, &s->w, s->c.dir, path, sizeof(path), err, sizeof(err));
	s->pending = false;
	sn_hold(&s->st, UINT64_MAX);
	if (e) {
		fprintf(stderr, "vmscope record: snapshot of the %s trigger at host %llu ns not "
			"written: %s\n", s->w.kind, (unsigned long long)s->w.trigger_ts, err);
		s->failed = true;
		return;
	}
	s->written++;
	fprintf(stderr, "vmscope record: snapshot: %s (%s trigger at host %llu ns; host %llu .. "
		"%llu ns%s; guest CPU streams: %u incomplete, %u with chunks placed by "
		"arrival)\n", path, s->w.kind, (unsigned long long)s->w.trigger_ts,
		(unsigned long long)s->w.begin_ts, (unsigned long long)s->w.end_ts,
		s->w.ended_early ? ", the recording ended first" : "", s->w.guest_incomplete,
		s->w.guest_by_arrival);
}

void ol_lsnap_guest(struct ol_lsnap *s, uint32_t vm, uint32_t cpu, uint64_t g, uint64_t h)
{
	sn_placed(&s->st, vm, cpu, g, h);
}

void ol_lsnap_add(struct ol_lsnap *s, const struct rec_chunk *c)
{
	if (sn_add(&s->st, c)) {
		/* a hole in the store would be a hole in a window: drop what
		 * it holds of that time rather than write it as whole */
		if (!s->nomem++)
			fprintf(stderr, "vmscope record: snapshot store: out of memory\n");
		if (s->pending) {
			fprintf(stderr, "vmscope record: snapshot of the %s trigger at host %llu "
				"ns not written: out of memory while collecting it\n",
				s->w.kind, (unsigned long long)s->w.trigger_ts);
			s->pending = false;
			s->failed = true;
			sn_hold(&s->st, UINT64_MAX);
		}
		return;
	}
	if (s->pending && s->st.now >= s->w.end_ts + s->settle_ns &&
	    (!guests_pending(s) ||
	     s->st.now >= s->w.end_ts + s->settle_ns + OL_SNAP_GUEST_WAIT_NS))
		write_window(s);
}

void ol_lsnap_request(struct ol_lsnap *s, const struct ol_trig *t)
{
	uint64_t end = t->start_ns + t->dur_ns;

	if (s->pending) {
		s->refused++;
		fprintf(stderr, "vmscope record: snapshot of the %s trigger at host %llu ns not "
			"written: the window of the one at %llu ns is being collected\n",
			t->kind == OL_TG_EXIT ? "exit" : "stall",
			(unsigned long long)t->start_ns, (unsigned long long)s->w.trigger_ts);
		return;
	}
	s->t = *t;
	s->w = (struct sn_window){
		.kind = t->kind == OL_TG_EXIT ? "exit" : "stall", .what = s->t.what,
		.task = s->t.task, .host_task = s->t.host_task, .dur_ns = t->dur_ns,
		.threshold_ns = t->threshold_ns, .trigger_ts = t->start_ns, .vcpu = t->vcpu,
		.begin_ts = t->start_ns > s->c.before_ns ? t->start_ns - s->c.before_ns : 0,
		.end_ts = end + s->c.after_ns,
	};
	s->pending = true;
	/* a guest chunk is stamped with the host time the store had seen
	 * when it came, which lags the host's records by up to the live
	 * order's wait: one of the window's may be stamped that much
	 * before its start */
	sn_hold(&s->st, s->w.begin_ts > OL_LIVE_LAG_NS ? s->w.begin_ts - OL_LIVE_LAG_NS : 0);
}

int ol_lsnap_close(struct ol_lsnap *s)
{
	int ret;

	if (s->pending)
		write_window(s);
	fprintf(stderr, "vmscope record: snapshots: %llu written, %llu not (one was being "
		"collected); the store held at most %llu bytes\n",
		(unsigned long long)s->written, (unsigned long long)s->refused,
		(unsigned long long)s->st.peak_bytes);
	ret = s->failed ? 1 : 0;
	sn_free(&s->st);
	free(s);
	return ret;
}
