// SPDX-License-Identifier: GPL-2.0
/* A recorder's metrics feed: see metrics_feed.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <unistd.h>

#include "dmlog.h"
#include "metrics_feed.h"
#include "sessions.h"
#include "snapshots.h"
#include "trigger.h"
#include "util_clock.h"
#include "util_endian.h"

enum mf_status mf_read(int fd, struct mstore *st, uint64_t key, const char *domain,
		       const char *uuid, bool keep, bool *refused, mf_trigger_fn *on_trigger,
		       void *ctx, char *why, size_t whylen)
{
	static struct ol_trig t;
	/* one byte more than a frame can have: a longer message is seen */
	static uint8_t buf[OL_MX_FRAME_MAX + 1];
	static struct ol_msnap s;
	char perr[160];

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);

		if (n == 0)
			return MF_EOF;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return MF_OPEN;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(why, whylen, "reading the metrics feed: %s", strerror(errno));
			return MF_ERROR;
		}
		if ((size_t)n > OL_MX_FRAME_MAX) {
			ms_bad_frame(st);
			snprintf(why, whylen, "a bad metrics frame: %zd bytes (at most %u)", n,
				 OL_MX_FRAME_MAX);
			return MF_BAD;
		}
		if (n >= 4 && le_get32(buf) == OL_TG_MAGIC) {
			if (ol_trig_parse(buf, (size_t)n, &t, perr, sizeof(perr))) {
				ms_bad_frame(st);
				snprintf(why, whylen, "a bad trigger frame: %s", perr);
				return MF_BAD;
			}
			if (keep && on_trigger)
				on_trigger(ctx, &t);
			continue;
		}
		if (ol_msnap_parse(buf, (size_t)n, &s, perr, sizeof(perr))) {
			ms_bad_frame(st);
			snprintf(why, whylen, "a bad metrics frame: %s", perr);
			return MF_BAD;
		}
		if (keep && ms_put(st, key, domain, uuid, &s))
			*refused = true;
	}
}

int mf_session_pair(const struct sessions *ss, struct session *s)
{
	int pair[2];

	s->metrics_fd = -1;
	if (!ss->cfg->metrics)
		return -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair)) {
		dm_log("%s: no metrics: socketpair: %s", s->dom.name, strerror(errno));
		return -1;
	}
	s->metrics_fd = pair[0];
	s->metrics_refused = false;
	s->trig_rate = (struct tg_rate){ 0 };
	/* the daemon never waits for a recorder */
	if (fcntl(pair[0], F_SETFL, O_NONBLOCK))
		dm_log("%s: metrics feed: O_NONBLOCK: %s", s->dom.name, strerror(errno));
	return pair[1];
}

void mf_session_end(struct sessions *ss, struct session *s, bool close_feed)
{
	if (ss->cfg->metrics)
		ms_remove(ss->cfg->metrics, s->start_ns);
	if (close_feed && s->metrics_fd >= 0) {
		close(s->metrics_fd);
		s->metrics_fd = -1;
	}
}

/* A trigger of @s's recorder: admitted by its rate limit (logged and
 * counted per domain), or refused (counted). */
struct trig_ctx {
	struct sessions *ss;
	struct session *s;
};

static void on_trigger(void *ctx, const struct ol_trig *t)
{
	struct trig_ctx *x = ctx;
	struct session *s = x->s;
	struct mstore *st = x->ss->cfg->metrics;
	bool ok = tg_rate_admit(&s->trig_rate, util_mono_s(), x->ss->cfg->trigger.min_gap_s);

	if (!ok) {
		ms_trigger_suppressed(st);
		return;
	}
	ms_trigger(st, s->start_ns, t->kind);
	sp_admitted(s, t);
	dm_log("%s: trigger: %s %s of %.3f ms > %.3f ms on vCPU %u at host %llu ns "
	       "(guest task %s, host task %s)", s->dom.name,
	       t->kind == OL_TG_EXIT ? "exit" : "stall", t->what, t->dur_ns / 1e6,
	       t->threshold_ns / 1e6, t->vcpu, (unsigned long long)t->start_ns, t->task,
	       t->host_task);
}

void mf_session_read(struct sessions *ss, struct session *s)
{
	char why[256] = "";
	bool refused = false;
	enum mf_status st;

	if (!ss->cfg->metrics || s->metrics_fd < 0)
		return;
	/* a stopping domain's last frames are read and dropped: its series
	 * ended with it */
	st = mf_read(s->metrics_fd, ss->cfg->metrics, s->start_ns, s->dom.name, s->dom.uuid,
		     s->state == SS_RECORDING, &refused, on_trigger,
		     &(struct trig_ctx){ .ss = ss, .s = s }, why, sizeof(why));
	if (refused && !s->metrics_refused) {
		s->metrics_refused = true;
		dm_log("%s: metrics not served: %d other domains are", s->dom.name,
		       MS_MAX_DOMAINS);
	}
	if (st == MF_OPEN)
		return;
	if (st != MF_EOF || s->state == SS_RECORDING)
		dm_log("%s: metrics feed ended: %s", s->dom.name,
		       st == MF_EOF ? "the recorder closed it (its record.log says why)" : why);
	mf_session_end(ss, s, true);
}
