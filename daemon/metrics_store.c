// SPDX-License-Identifier: GPL-2.0
/* The metrics store: see metrics_store.h. */
#include <errno.h>
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

int ms_render(struct mstore *st, FILE *out)
{
	pthread_mutex_lock(&st->mu);
	mr_render(out, st->e, st->n, st->refused, st->bad_frames);
	pthread_mutex_unlock(&st->mu);
	return fflush(out) || ferror(out) ? -EIO : 0;
}
