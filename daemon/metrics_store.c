// SPDX-License-Identifier: GPL-2.0
/* The metrics store: see metrics_store.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "metrics_render.h"
#include "metrics_store.h"

void ms_init(struct mstore *st)
{
	memset(st, 0, sizeof(*st));
	pthread_mutex_init(&st->mu, NULL);
}

void ms_destroy(struct mstore *st)
{
	pthread_mutex_destroy(&st->mu);
}

int ms_put(struct mstore *st, uint64_t key, const char *domain, const char *uuid,
	   const struct ol_msnap *s)
{
	struct ms_entry *e = NULL;
	int rc = 0;

	pthread_mutex_lock(&st->mu);
	for (unsigned int i = 0; i < st->n && !e; i++)
		if (st->e[i].key == key)
			e = &st->e[i];
	if (!e && st->n < MS_MAX_DOMAINS) {
		e = &st->e[st->n++];
		e->key = key;
		snprintf(e->domain, sizeof(e->domain), "%s", domain);
		snprintf(e->uuid, sizeof(e->uuid), "%s", uuid);
		memset(e->triggers, 0, sizeof(e->triggers));
		e->snapshots = 0;
	}
	if (e) {
		e->snap = *s;
	} else {
		st->refused++;
		rc = -ENOSPC;
	}
	pthread_mutex_unlock(&st->mu);
	return rc;
}

void ms_remove(struct mstore *st, uint64_t key)
{
	pthread_mutex_lock(&st->mu);
	for (unsigned int i = 0; i < st->n; i++) {
		if (st->e[i].key != key)
			continue;
		st->e[i] = st->e[--st->n];
		break;
	}
	pthread_mutex_unlock(&st->mu);
}

void ms_bad_frame(struct mstore *st)
{
	pthread_mutex_lock(&st->mu);
	st->bad_frames++;
	pthread_mutex_unlock(&st->mu);
}

int ms_trigger(struct mstore *st, uint64_t key, int kind)
{
	int rc = -ENOENT;

	pthread_mutex_lock(&st->mu);
	for (unsigned int i = 0; i < st->n; i++)
		if (st->e[i].key == key) {
			st->e[i].triggers[kind == OL_TG_STALL]++;
			rc = 0;
			break;
		}
	pthread_mutex_unlock(&st->mu);
	return rc;
}

int ms_snapshot(struct mstore *st, uint64_t key)
{
	int rc = -ENOENT;

	pthread_mutex_lock(&st->mu);
	for (unsigned int i = 0; i < st->n; i++)
		if (st->e[i].key == key) {
			st->e[i].snapshots++;
			rc = 0;
			break;
		}
	pthread_mutex_unlock(&st->mu);
	return rc;
}

void ms_trigger_suppressed(struct mstore *st)
{
	pthread_mutex_lock(&st->mu);
	st->triggers_suppressed++;
	pthread_mutex_unlock(&st->mu);
}

int ms_render(struct mstore *st, FILE *out)
{
	struct ms_entry *copy = malloc(sizeof(st->e));
	uint64_t refused, bad, suppressed;
	unsigned int n;

	if (!copy)
		return -ENOMEM;
	/* the lock only for a copy: rendering 64 domains of 31 reasons
	 * (40 067 samples, 5.5 MB) took 65 ms, which the poll loop, putting
	 * the next snapshot, would otherwise wait for */
	pthread_mutex_lock(&st->mu);
	n = st->n;
	memcpy(copy, st->e, n * sizeof(*copy));
	refused = st->refused;
	bad = st->bad_frames;
	suppressed = st->triggers_suppressed;
	pthread_mutex_unlock(&st->mu);
	mr_render(out, copy, n, refused, bad, suppressed);
	free(copy);
	return fflush(out) || ferror(out) ? -EIO : 0;
}
