/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmscoped's metrics store: the latest snapshot (online/metrics_frame.h)
 * of each domain being recorded, under a mutex: the poll loop puts and
 * removes (metrics_feed.c, sessions.c), the HTTP server's thread renders
 * (metrics_http.c). A domain's entry goes when its recording stops, so
 * its series end with it.
 *
 * Bounded: at most MS_MAX_DOMAINS domains (one per recorder, and the
 * daemon runs at most one per host module session); a snapshot of one
 * more domain is refused and counted
 * (vmscoped_metrics_refused_snapshots_total).
 */
#ifndef VMSCOPE_DAEMON_METRICS_STORE_H
#define VMSCOPE_DAEMON_METRICS_STORE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <vmscope/ioctl.h>

#include "domxml.h"
#include "metrics_frame.h"
#include "trigger_frame.h"

#define MS_MAX_DOMAINS VMSCOPE_HOST_SESSIONS

struct ms_entry {
	uint64_t key;			/* the session's (its start time) */
	char domain[VD_NAME_MAX];
	char uuid[37];			/* "" when libvirt gave none */
	struct ol_msnap snap;
	/* triggers admitted (rate limit passed) by kind: exit, stall */
	uint64_t triggers[2];
	uint64_t snapshots;		/* snapshot windows written (snapshots.h) */
};

struct mstore {
	pthread_mutex_t mu;
	struct ms_entry e[MS_MAX_DOMAINS];
	unsigned int n;
	uint64_t refused;		/* snapshots of domains beyond the bound */
	uint64_t bad_frames;		/* frames refused by the parser */
	uint64_t triggers_suppressed;	/* triggers refused by the rate limit */
};

void ms_init(struct mstore *st);
void ms_destroy(struct mstore *st);

/* Domain @domain's (session @key's) latest snapshot: 0, or -ENOSPC when
 * MS_MAX_DOMAINS other domains are there (counted). */
int ms_put(struct mstore *st, uint64_t key, const char *domain, const char *uuid,
	   const struct ol_msnap *s);
/* Session @key's series end (nothing when it has none). */
void ms_remove(struct mstore *st, uint64_t key);
/* A frame that did not parse (counted). */
void ms_bad_frame(struct mstore *st);
/* A trigger of session @key admitted, of kind @kind (OL_TG_EXIT or
 * OL_TG_STALL): counted in its entry; -ENOENT when the domain has no
 * entry (no snapshot yet, or refused). */
int ms_trigger(struct mstore *st, uint64_t key, int kind);
/* A trigger refused by the rate limit (counted). */
void ms_trigger_suppressed(struct mstore *st);
/* A snapshot window of session @key written: counted in its entry;
 * -ENOENT when the domain has none. */
int ms_snapshot(struct mstore *st, uint64_t key);

/* Everything in the text exposition format (metrics_render.h) into @out,
 * rendered from a copy taken under the lock: 0, -ENOMEM, or -EIO when
 * writing failed. */
int ms_render(struct mstore *st, FILE *out);

#endif
