// SPDX-License-Identifier: GPL-2.0
/* A snapshot window's store: see snap_store.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "snap_store.h"

void sn_init(struct sn_store *st, const struct sn_cfg *cfg)
{
	memset(st, 0, sizeof(*st));
	st->cfg = *cfg;
	st->hold_from = UINT64_MAX;
}

void sn_free(struct sn_store *st)
{
	for (size_t i = 0; i < st->ns; i++) {
		struct sn_item *it = st->s[i].head;

		while (it) {
			struct sn_item *n = it->next;

			free(it);
			it = n;
		}
	}
	free(st->s);
	memset(st, 0, sizeof(*st));
	st->hold_from = UINT64_MAX;
}

uint64_t sn_item_cost(const struct sn_item *it)
{
	return SN_ITEM_COST + it->c.len;
}

static struct sn_stream *stream_of(struct sn_store *st, const struct rec_chunk *c)
{
	struct sn_stream *s;

	for (size_t i = 0; i < st->ns; i++) {
		s = &st->s[i];
		if (s->guest == c->guest &&
		    (c->guest ? s->vm == c->vm && s->cpu == c->cpu : s->buf == c->buf))
			return s;
	}
	if (st->ns == st->caps) {
		size_t nc = st->caps ? 2 * st->caps : 16;

		s = realloc(st->s, nc * sizeof(*s));
		if (!s)
			return NULL;
		st->s = s;
		st->caps = nc;
	}
	s = &st->s[st->ns++];
	memset(s, 0, sizeof(*s));
	s->guest = c->guest;
	s->buf = c->buf;
	s->chan = c->chan;
	s->vm = c->vm;
	s->cpu = c->cpu;
	return s;
}

static void drop_head(struct sn_store *st, struct sn_stream *s)
{
	struct sn_item *it = s->head;

	s->head = it->next;
	if (!s->head)
		s->tail = NULL;
	if (s->placing == it)
		s->placing = NULL;
	s->bytes -= sn_item_cost(it);
	st->bytes -= sn_item_cost(it);
	s->items--;
	free(it);
}

/* Items too old: at the head of each stream (stamps never go back in a
 * stream: host end_ts rise, guest stamps are the rising "now"). */
static void evict_age(struct sn_store *st)
{
	if (st->now < st->cfg.keep_ns)
		return;
	for (size_t i = 0; i < st->ns; i++) {
		struct sn_stream *s = &st->s[i];

		while (s->head && s->head->stamp < st->now - st->cfg.keep_ns &&
		       s->head->stamp < st->hold_from) {
			drop_head(st, s);
			s->evicted_age++;
		}
	}
}

int sn_add(struct sn_store *st, const struct rec_chunk *c)
{
	struct sn_stream *s;
	struct sn_item *it;

	if (c->kind != REC_TAP_CHUNK && c->kind != REC_TAP_LOSS)
		return 0;
	s = stream_of(st, c);
	it = s ? malloc(sizeof(*it) + c->len) : NULL;
	if (!it)
		return -ENOMEM;
	it->next = NULL;
	it->placed = false;
	it->c = *c;
	if (c->len)
		memcpy(it->data, c->data, c->len);
	it->c.data = it->data;
	if (!c->guest && c->kind == REC_TAP_CHUNK && c->end_ts > st->now)
		st->now = c->end_ts;
	/* a host chunk's own end (a ring's sub-buffers end in order); a
	 * guest's, when the host saw it */
	it->stamp = c->guest ? st->now : c->end_ts;
	if (s->tail)
		s->tail->next = it;
	else
		s->head = it;
	s->tail = it;
	s->items++;
	s->bytes += sn_item_cost(it);
	st->bytes += sn_item_cost(it);
	while (s->bytes > st->cfg.cap_bytes) {
		drop_head(st, s);
		s->evicted_cap++;
	}
	if (st->bytes > st->peak_bytes)
		st->peak_bytes = st->bytes;
	evict_age(st);
	return 0;
}

void sn_hold(struct sn_store *st, uint64_t from)
{
	st->hold_from = from;
	if (from == UINT64_MAX)
		evict_age(st);
}

void sn_placed(struct sn_store *st, uint32_t vm, uint32_t cpu, uint64_t g, uint64_t h)
{
	struct sn_stream *s = NULL;
	struct sn_item *it;

	for (size_t i = 0; i < st->ns && !s; i++)
		if (st->s[i].guest && st->s[i].vm == vm && st->s[i].cpu == cpu)
			s = &st->s[i];
	if (!s)
		return;
	if (h > s->h_placed)
		s->h_placed = h;
	it = s->placing ? s->placing : s->head;
	while (it && (it->c.kind != REC_TAP_CHUNK || it->c.end_ts < g))
		it = it->next;
	if (!it || it->c.begin_ts > g)	/* its chunk is gone */
		return;
	s->placing = it;
	if (!it->placed || h < it->h_lo)
		it->h_lo = h;
	if (!it->placed || h > it->h_hi)
		it->h_hi = h;
	it->placed = true;
}
