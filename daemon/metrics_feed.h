/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One recorder's metrics feed in vmscoped: the frames `vmscope record
 * --metrics-fd` sends on the daemon's end of a SOCK_SEQPACKET socketpair
 * (online/metrics_frame.h), parsed as untrusted input, into the store.
 */
#ifndef VMSCOPE_DAEMON_METRICS_FEED_H
#define VMSCOPE_DAEMON_METRICS_FEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics_store.h"

enum mf_status { MF_OPEN, MF_EOF, MF_BAD, MF_ERROR };

/* A trigger frame parsed (online/trigger_frame.h), for the caller. */
typedef void mf_trigger_fn(void *ctx, const struct ol_trig *t);

/*
 * Every frame waiting on non-blocking @fd: each parsed snapshot replaces
 * the domain's in @st when @keep (the domain still records), else it is
 * dropped; each parsed trigger frame (told apart by its magic) goes to
 * @on_trigger(@ctx, ...) when @keep. MF_OPEN: read them all; MF_EOF: the
 * recorder closed it; MF_BAD: a frame did not parse (@why; counted in
 * @st); MF_ERROR: reading failed (@why). Any status but MF_OPEN: the
 * caller closes @fd and removes the session's series. *@refused: ms_put
 * refused a snapshot.
 */
enum mf_status mf_read(int fd, struct mstore *st, uint64_t key, const char *domain,
		       const char *uuid, bool keep, bool *refused, mf_trigger_fn *on_trigger,
		       void *ctx, char *why, size_t whylen);

struct session;
struct sessions;

/*
 * A recorder's feed (sessions.c, launch_recorder): a SOCK_SEQPACKET
 * socketpair, close-on-exec both; the daemon's end (non-blocking) into
 * s->metrics_fd, the recorder's (its --metrics-fd) returned. -1 when the
 * metrics are off or the pair could not be made (logged: that domain has
 * no series, it is recorded all the same).
 */
int mf_session_pair(const struct sessions *ss, struct session *s);
/* @s's feed is readable: its frames into the store, or its end. */
void mf_session_read(struct sessions *ss, struct session *s);
/* @s's series end (its domain stopped, its recorder exited); the feed is
 * closed when @close_feed. */
void mf_session_end(struct sessions *ss, struct session *s, bool close_feed);

#endif
